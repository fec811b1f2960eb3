package housecheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The job kinds' packages, and what package daemon may name in each: the
// kinds' constructors (in Kinds, below) and the few functions massd's one
// Services implementation is made of. Anything else (an Env, Parts,
// Request or episode adapter of a kind) is per-kind glue, which lives with
// the kind.
var kindPackages = map[string][]string{
	module + "/cycle/search":          {"Kind", "LoadTemplate"}, // LoadTemplate: the episode runner's teacher prompt
	module + "/cycle/generation":      {"Kind", "CycleKind"},
	module + "/cycle/rollout":         {"Kind"},
	module + "/cycle/eval/judgepairs": {"Kind"},
	module + "/trainer/trainjob":      {"Kind", "Binary", "PickBinary", "Run"},
}

// kindConstructors are the names a kind's constructor has.
var kindConstructors = map[string]bool{"Kind": true, "CycleKind": true, "WaitKind": true}

// Every kind massd runs is constructed in Builtins.Kinds from the one
// Services value (or from nothing), and package daemon holds no per-kind
// glue: it names nothing of a kind's package but its constructor and the
// functions its Services implementation uses.
func TestKindsFromServices(t *testing.T) {
	fset := token.NewFileSet()
	files := parseDir(t, fset, filepath.Join(repoRoot, "daemon"), false)
	var kinds *ast.FuncDecl
	var bad []string
	for _, path := range sortedKeys(files) {
		f := files[path]
		alias := kindImports(f)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if ok && fd.Name.Name == "Kinds" && fd.Recv != nil {
				kinds = fd
			}
			ast.Inspect(d, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				id, ok := sel.X.(*ast.Ident)
				if !ok || alias[id.Name] == "" {
					return true
				}
				allowed := false
				for _, a := range kindPackages[alias[id.Name]] {
					allowed = allowed || a == sel.Sel.Name
				}
				if !allowed || (kindConstructors[sel.Sel.Name] && d != ast.Decl(kinds)) {
					bad = append(bad, fmt.Sprintf("%s:%d: %s.%s", rel(path), fset.Position(sel.Pos()).Line, id.Name, sel.Sel.Name))
				}
				return true
			})
		}
	}
	for _, b := range bad {
		t.Errorf("%s: per-kind glue in package daemon; wire the kind in its own package from services.Services", b)
	}
	if kinds == nil {
		t.Fatal("no Builtins.Kinds in package daemon")
	}
	checkKindsList(t, fset, kinds)
}

// checkKindsList: Kinds is `s := b.Services()` and one list of calls
// pkg.Kind(s) (or pkg.WaitKind(), which needs nothing).
func checkKindsList(t *testing.T, fset *token.FileSet, fd *ast.FuncDecl) {
	t.Helper()
	body := fd.Body.List
	if len(body) != 2 {
		t.Fatalf("Builtins.Kinds has %d statements, want s := b.Services() and return []jobkind.Kind{...}", len(body))
	}
	as, ok := body[0].(*ast.AssignStmt)
	if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 || callName(as.Rhs[0]) != "Services" {
		t.Fatalf("Builtins.Kinds must start with s := b.Services()")
	}
	svc := as.Lhs[0].(*ast.Ident).Name
	ret, ok := body[1].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		t.Fatal("Builtins.Kinds must return one list")
	}
	lit, ok := ret.Results[0].(*ast.CompositeLit)
	if !ok {
		t.Fatal("Builtins.Kinds must return a list literal, []jobkind.Kind{...}")
	}
	for _, e := range lit.Elts {
		call, ok := e.(*ast.CallExpr)
		at := fset.Position(e.Pos()).Line
		if !ok || !kindConstructors[callName(call)] {
			t.Errorf("daemon/builtins.go:%d: a kind in Kinds that is not a kind package's constructor", at)
			continue
		}
		for _, a := range call.Args {
			if id, ok := a.(*ast.Ident); !ok || id.Name != svc {
				t.Errorf("daemon/builtins.go:%d: %s takes something besides the Services value %s", at, callName(call), svc)
			}
		}
	}
	if len(lit.Elts) < 8 {
		t.Errorf("Builtins.Kinds lists %d kinds, want all eight", len(lit.Elts))
	}
}

// kindImports maps the names f imports the kind packages under to them.
func kindImports(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if _, ok := kindPackages[p]; !ok {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		out[name] = p
	}
	return out
}

// callName is the name a call calls: F of pkg.F(...), x.F(...) or F(...).
func callName(e ast.Expr) string {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return ""
	}
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		return fn.Sel.Name
	case *ast.Ident:
		return fn.Name
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
