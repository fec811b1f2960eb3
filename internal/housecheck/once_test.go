package housecheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// Where the one definition of each repeated concept lives.
const (
	workspaceHome = "internal/boxspec/boxspec.go"   // boxspec.WorkspaceMount (sandbox.WorkspaceMount)
	underHome     = "internal/pathroot/pathroot.go" // pathroot.Under
)

// The workspace mount is spelled once: boxspec.WorkspaceMount, which
// sandbox.WorkspaceMount names.
func TestWorkspaceDefinedOnce(t *testing.T) {
	var at []string
	eachFile(t, func(path string, fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && s == "/workspace" {
				at = append(at, fmt.Sprintf("%s:%d", path, fset.Position(lit.Pos()).Line))
			}
			return true
		})
	})
	for _, a := range at {
		if !strings.HasPrefix(a, workspaceHome+":") {
			t.Errorf(`%s: "/workspace" spelled again; use sandbox.WorkspaceMount (or boxspec.WorkspaceMount in a leaf)`, a)
		}
	}
	if len(at) != 1 {
		t.Errorf(`"/workspace" appears %d times in non-test code, want once (%s): %v`, len(at), workspaceHome, at)
	}
}

// "p is root or lies below it" is coded once: pathroot.Under. The shape
// looked for is `a == b || strings.HasPrefix(a, b+"/")`, either order.
func TestUnderRootDefinedOnce(t *testing.T) {
	eachFile(t, func(path string, fset *token.FileSet, f *ast.File) {
		if path == underHome {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if e, ok := n.(*ast.BinaryExpr); ok && e.Op == token.LOR && (underShape(e.X, e.Y) || underShape(e.Y, e.X)) {
				t.Errorf("%s:%d: a path-under-root test coded again; use pathroot.Under", path, fset.Position(e.Pos()).Line)
			}
			return true
		})
	})
}

// underShape reports eq is `a == b` and pre is strings.HasPrefix(a, b+"/").
func underShape(eq, pre ast.Expr) bool {
	be, ok := eq.(*ast.BinaryExpr)
	if !ok || be.Op != token.EQL {
		return false
	}
	call, ok := pre.(*ast.CallExpr)
	if !ok || len(call.Args) != 2 {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "HasPrefix" {
		return false
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "strings" {
		return false
	}
	add, ok := call.Args[1].(*ast.BinaryExpr)
	if !ok || add.Op != token.ADD {
		return false
	}
	if lit, ok := add.Y.(*ast.BasicLit); !ok || lit.Value != `"/"` {
		return false
	}
	return types(be.X) == types(call.Args[0]) && types(be.Y) == types(add.X)
}

// types renders a simple expression for comparison (identifiers and
// selectors; anything else compares unequal to everything).
func types(e ast.Expr) string {
	switch v := e.(type) {
	case *ast.Ident:
		return v.Name
	case *ast.SelectorExpr:
		return types(v.X) + "." + v.Sel.Name
	}
	return fmt.Sprintf("%p", e)
}

// eachFile calls fn for every non-test, non-generated Go file of the module.
func eachFile(t *testing.T, fn func(path string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	for _, dir := range goDirs(t) {
		for p, f := range parseDir(t, fset, dir, false) {
			if !generated(f) {
				fn(rel(p), fset, f)
			}
		}
	}
}
