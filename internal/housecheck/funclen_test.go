package housecheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"testing"
)

// MaxFuncLines is the house rule's hard limit on a function's length
// (STYLE.md: under ~80, never over 100).
const MaxFuncLines = 100

// owned lists functions over the limit that a branch in progress is
// splitting, by file and name ("path/file.go:Recv.Func"); each entry goes
// when that branch lands. Every branch has landed: it is empty.
var owned = map[string]string{}

func TestFunctionLength(t *testing.T) {
	var long []string
	fset := token.NewFileSet()
	for _, dir := range goDirs(t) {
		for p, f := range parseDir(t, fset, dir, false) {
			if generated(f) {
				continue
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
				if n <= MaxFuncLines || isOwned(rel(p), funcName(fn)) {
					continue
				}
				long = append(long, fmt.Sprintf("%s:%d %s is %d lines", rel(p), fset.Position(fn.Pos()).Line, funcName(fn), n))
			}
		}
	}
	sort.Strings(long)
	for _, l := range long {
		t.Errorf("%s (limit %d): split it", l, MaxFuncLines)
	}
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if g, ok := typ.(*ast.IndexExpr); ok {
		typ = g.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

func isOwned(file, name string) bool {
	_, ok := owned[file+":"+name]
	return ok
}
