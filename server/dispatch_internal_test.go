package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneDispatchPath: a command's handler is called in one place only,
// dispatch.go's call, so that every way of running a command (a client,
// EXEC, a script, the AOF loader) gets the same checks, propagation,
// statistics and MONITOR feed. A handler is a Command's Run, called with
// the one *Ctx argument. The data commands' handlers (package family) and
// their toolkit (package command) are checked too.
func TestOneDispatchPath(t *testing.T) {
	var files []string
	for _, pattern := range []string{"*.go", "../family/*.go", "../command/*.go"} {
		matched, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matched...)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Run" {
				if name != "dispatch.go" {
					t.Errorf("%s: a command handler is called outside dispatch.go", fset.Position(call.Pos()))
				}
				calls++
			}
			return true
		})
	}
	if calls == 0 {
		t.Error("no handler call found in dispatch.go: the check no longer sees handlers")
	}
}
