package guard

import (
	"sort"

	"github.com/mass-dev/mass/sandbox"
)

// Integrity compares the protected files as shipped with the exported workspace.
type Integrity struct {
	Checked bool     `json:"checked"`
	Files   int      `json:"files"` // protected files shipped
	Changes []Change `json:"changes"`
}

// Change is one protected file that differs after the episode: a
// protected-path violation that got through.
type Change struct {
	Path   string `json:"path"`
	Change string `json:"change"` // modified, deleted, created, retyped
	Before string `json:"sha256_before,omitempty"`
	After  string `json:"sha256_after,omitempty"`
}

// CheckIntegrity compares shipped protected files with the export's
// manifest: any difference in a protected path is a change.
func CheckIntegrity(shipped []File, exported []sandbox.FileInfo, protected []string) Integrity {
	in := Integrity{Checked: true, Files: len(shipped), Changes: []Change{}}
	after := map[string]sandbox.FileInfo{}
	for _, e := range exported {
		after[Clean(e.Path)] = e
	}
	before := map[string]bool{}
	for _, f := range shipped {
		before[f.Path] = true
		e, ok := after[f.Path]
		switch {
		case !ok:
			in.Changes = append(in.Changes, Change{Path: f.Path, Change: "deleted", Before: f.SHA256})
		case e.Type != "file":
			in.Changes = append(in.Changes, Change{Path: f.Path, Change: "retyped", Before: f.SHA256})
		case e.SHA256 != f.SHA256:
			in.Changes = append(in.Changes, Change{Path: f.Path, Change: "modified", Before: f.SHA256, After: e.SHA256})
		}
	}
	for p, e := range after {
		if !before[p] && Under(p, protected) != "" && e.Type != "dir" {
			in.Changes = append(in.Changes, Change{Path: p, Change: "created", After: e.SHA256})
		}
	}
	sort.Slice(in.Changes, func(i, j int) bool { return in.Changes[i].Path < in.Changes[j].Path })
	return in
}
