// Package pathroot holds the one "path lies under a root" predicate of
// mass, for clean slash-separated paths (container paths, workspace-relative
// names, mount points). internal/housecheck keeps it the only one.
package pathroot

import "strings"

// Under reports whether clean path p is root or lies below it. Both are
// compared as given: callers clean them and make them both absolute or
// both relative.
func Under(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+"/")
}

// UnderAny returns the first of roots that p is or lies below.
func UnderAny(p string, roots ...string) (string, bool) {
	for _, r := range roots {
		if Under(p, r) {
			return r, true
		}
	}
	return "", false
}
