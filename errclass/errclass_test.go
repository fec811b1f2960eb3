package errclass_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mass-dev/mass/errclass"
)

func TestClassesAreDistinct(t *testing.T) {
	all := []error{errclass.ErrNotFound, errclass.ErrInvalid, errclass.ErrConflict, errclass.ErrUnavailable,
		errclass.ErrUnauthorized, errclass.ErrTooLarge, errclass.ErrDenied, errclass.ErrTimeout, errclass.ErrClosed}
	for i, a := range all {
		for j, b := range all {
			if i != j && errors.Is(a, b) {
				t.Errorf("%v matches %v", a, b)
			}
		}
	}
	specific := fmt.Errorf("sandbox engine %w", errclass.ErrUnavailable)
	if !errors.Is(fmt.Errorf("create: %w", specific), errclass.ErrUnavailable) {
		t.Error("a component sentinel wrapping a class does not match the class")
	}
}

// All holds every class declared in this package (each `ErrX =
// errors.New(...)` in its source), so an edge that tests its mapping over
// All also fails for a class added without one.
func TestAllListsEveryDeclaredClass(t *testing.T) {
	fset := token.NewFileSet()
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			f, err := parser.ParseFile(fset, n, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	msgs := map[string]bool{}
	for _, class := range errclass.All {
		msgs[class.Error()] = true
	}
	declared := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					break
				}
				call, ok := vs.Values[i].(*ast.CallExpr)
				if !ok || !strings.HasPrefix(name.Name, "Err") || len(call.Args) != 1 {
					continue
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if sel, isSel := call.Fun.(*ast.SelectorExpr); !ok || !isSel || sel.Sel.Name != "New" {
					continue
				}
				msg, _ := strconv.Unquote(lit.Value)
				declared++
				if !msgs[msg] {
					t.Errorf("class %s (%q) is not in errclass.All: add it there, then map it at the API (daemon/api) and in massctl's exit codes", name.Name, msg)
				}
			}
			return true
		})
	}
	if declared != len(errclass.All) || declared == 0 {
		t.Errorf("%d classes declared, errclass.All has %d", declared, len(errclass.All))
	}
}
