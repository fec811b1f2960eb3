package housecheck

import (
	"go/token"
	"strings"
	"testing"
)

// Every package states what it is for in a doc comment ("// Package x ..."
// or, for a command, "// Command x ..."), in one of its non-test files.
func TestPackageDocs(t *testing.T) {
	fset := token.NewFileSet()
	for _, dir := range goDirs(t) {
		files := parseDir(t, fset, dir, false)
		if len(files) == 0 {
			continue // tests only
		}
		documented, name := false, ""
		for _, f := range files {
			name = f.Name.Name
			if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
				documented = true
				break
			}
		}
		if !documented {
			t.Errorf("package %s in %s has no doc comment: add \"// Package %s ...\" to one file (doc.go)", name, rel(dir), name)
		}
	}
}
