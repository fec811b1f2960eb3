package housecheck

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mass-dev/mass"

// pkg is what `go list -json` says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages runs `go list -json` with args from the module root.
func listPackages(t *testing.T, args ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Imports,Deps"}, args...)...)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
	}
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// topFloor reports whether package path may import daemon/...: the daemon
// itself, massctl's cli and the commands that wire them.
func topFloor(path string) bool {
	rel := strings.TrimPrefix(path, module)
	for _, top := range []string{"/daemon", "/cli", "/cmd"} {
		if rel == top || strings.HasPrefix(rel, top+"/") {
			return true
		}
	}
	return false
}

const sqlite = "modernc.org/sqlite"

func isSQLite(path string) bool { return path == sqlite || strings.HasPrefix(path, sqlite+"/") }

// No package below the composition root imports daemon/..., and only the
// store imports SQLite.
func TestNoArrowIntoTheDaemon(t *testing.T) {
	for _, p := range listPackages(t, "./...") {
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/daemon") && !topFloor(p.ImportPath) {
				t.Errorf("%s imports %s: a domain package must not import the daemon (move what it needs below it)", p.ImportPath, imp)
			}
			if isSQLite(imp) && p.ImportPath != module+"/daemon/store" {
				t.Errorf("%s imports %s: only daemon/store talks to SQLite", p.ImportPath, imp)
			}
		}
	}
}

// The domain wings link neither the daemon nor SQLite, not even through a
// dependency; massctl's binary links no SQLite.
func TestDepsProofs(t *testing.T) {
	for _, p := range listPackages(t, "./cycle/...", "./agents/...", "./trainer/...") {
		for _, d := range p.Deps {
			if strings.HasPrefix(d, module+"/daemon") || isSQLite(d) {
				t.Errorf("%s depends on %s", p.ImportPath, d)
			}
		}
	}
	for _, p := range listPackages(t, "./cmd/massctl") {
		for _, d := range p.Deps {
			if isSQLite(d) || d == module+"/daemon/store" || d == module+"/daemon/jobs" {
				t.Errorf("massctl links %s; it talks to massd through daemon/client only", d)
			}
		}
	}
}

// The shared leaves: the task format, the job contract, the wire types of
// job params, the file formats and the error classes. Every wing imports
// them, so they import no wing: a leaf that linked the sandbox (taskspec
// once did, for three names) would drag it into every kind and the CLI.
var leaves = []string{
	"./taskspec", "./jobkind", "./jobwire", "./errclass", "./datadir",
	"./episodefmt", "./searchfmt", "./generationfmt",
}

// wings are the module's packages a leaf must not depend on.
var wings = []string{"/sandbox", "/daemon", "/agents", "/cycle", "/trainer", "/cuda", "/cli", "/cmd"}

func TestLeavesImportNoWing(t *testing.T) {
	for _, p := range listPackages(t, leaves...) {
		for _, d := range p.Deps {
			rel, ok := strings.CutPrefix(d, module)
			if !ok {
				continue
			}
			for _, w := range wings {
				if rel == w || strings.HasPrefix(rel, w+"/") {
					t.Errorf("%s depends on %s: a shared leaf must not link a wing (move what it needs into a leaf, e.g. internal/boxspec)", p.ImportPath, d)
				}
			}
		}
	}
}
