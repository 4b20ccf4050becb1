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

// TestHandlersDoNotSeeNesting: whether a command runs nested (inside EXEC
// or a script) is call's business, so that EXEC, scripts and functions
// share one nesting model. Handlers never read the nesting state, and they
// say what to propagate only through the three verbs (propagateAs,
// propagateNone, alsoPropagate), never by reaching the change stream or
// the server's side of propagation. A handler is a function bound to a
// command, and any function taking a *Ctx declared in a handler file: the
// server's cmd_*.go, and every file of the family package once the data
// commands move there.
func TestHandlersDoNotSeeNesting(t *testing.T) {
	// The nesting state: call's execution (its depth and pending unit), the
	// Client field holding it, and cannotBlock, which call derives from the
	// depth (handlers ask blockingDenied, the block request's answer).
	nesting := []string{"nesting", "execution", "depth", "pending", "cannotBlock"}
	// What handlers may call whose name speaks of propagation, besides the
	// helpers their own files declare: the four verbs; propagateDel, propagateAs
	// of DEL or UNLINK; propagating, whether anything consumes. (A hash
	// field found expired is reported, as the keyspace reports an expired
	// key, by the toolkit's ElementExpired: the server propagates its HDEL.)
	allowed := map[string]bool{}
	for _, name := range []string{"propagateAs", "propagateNone", "alsoPropagate", "propagateToReplicas", "propagateDel", "propagating"} {
		allowed[strings.ToLower(name)] = true
	}
	// Reaching the change stream at all (Publish alone is also Pub/Sub's
	// and the cluster bus's).
	stream := map[string]bool{"stream": true, "PublishBlock": true}

	fset := token.NewFileSet()
	type pkgFiles struct {
		handlers map[string]*ast.File // handler files by name
		all      []*ast.File
	}
	var pkgs []pkgFiles
	for _, dir := range []struct {
		path     string
		handlers func(name string) bool
	}{
		{".", func(name string) bool { return strings.HasPrefix(name, "cmd_") }},
		{"../family", func(string) bool { return true }},
	} {
		names, err := filepath.Glob(filepath.Join(dir.path, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		p := pkgFiles{handlers: map[string]*ast.File{}}
		for _, path := range names {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			p.all = append(p.all, f)
			if dir.handlers(filepath.Base(path)) {
				p.handlers[path] = f
			}
		}
		pkgs = append(pkgs, p) // a missing directory has no files
	}

	takesCtx := func(ft *ast.FuncType, recv *ast.FieldList) bool {
		var fields []*ast.Field
		if recv != nil {
			fields = append(fields, recv.List...)
		}
		fields = append(fields, ft.Params.List...)
		for _, f := range fields {
			star, ok := f.Type.(*ast.StarExpr)
			if !ok {
				continue
			}
			switch typ := star.X.(type) {
			case *ast.Ident:
				if typ.Name == "Ctx" {
					return true
				}
			case *ast.SelectorExpr: // command.Ctx
				if typ.Sel.Name == "Ctx" {
					return true
				}
			}
		}
		return false
	}
	// calledName is the name a call calls: f(...), x.f(...).
	calledName := func(call *ast.CallExpr) string {
		switch fn := call.Fun.(type) {
		case *ast.Ident:
			return fn.Name
		case *ast.SelectorExpr:
			return fn.Sel.Name
		}
		return ""
	}

	checked := map[string]bool{}
	check := func(name string, body *ast.BlockStmt, declared map[string]bool) {
		if body == nil {
			return
		}
		checked[name] = true
		ast.Inspect(body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				for _, field := range nesting {
					if n.Sel.Name == field {
						t.Errorf("%s: handler %s reads the nesting state (%s)", fset.Position(n.Pos()), name, field)
					}
				}
				if stream[n.Sel.Name] {
					t.Errorf("%s: handler %s reaches the change stream (%s)", fset.Position(n.Pos()), name, n.Sel.Name)
				}
			case *ast.CallExpr:
				called := calledName(n)
				if strings.Contains(strings.ToLower(called), "propagat") && !allowed[strings.ToLower(called)] && !declared[called] {
					t.Errorf("%s: handler %s propagates through %s, not a verb", fset.Position(n.Pos()), name, called)
				}
			}
			return true
		})
	}
	for _, p := range pkgs {
		decls := map[string]*ast.FuncDecl{} // the package's functions, for bound names
		declared := map[string]bool{}       // names the handler files declare
		for _, f := range p.all {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
					decls[fd.Name.Name] = fd
				}
			}
		}
		for _, f := range p.handlers {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok {
					declared[fd.Name.Name] = true
				}
			}
		}
		for _, f := range p.handlers {
			ast.Inspect(f, func(n ast.Node) bool {
				switch fn := n.(type) {
				case *ast.FuncDecl:
					if takesCtx(fn.Type, fn.Recv) {
						check(fn.Name.Name, fn.Body, declared)
						return false
					}
				case *ast.FuncLit:
					if takesCtx(fn.Type, nil) {
						check(fset.Position(fn.Pos()).String(), fn.Body, declared)
						return false
					}
				}
				return true
			})
		}
		// Handlers bound outside the handler files (MONITOR, WAIT, ...).
		for _, f := range p.all {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 || !strings.HasPrefix(strings.ToLower(calledName(call)), "bind") {
					return true
				}
				switch fn := call.Args[len(call.Args)-1].(type) {
				case *ast.Ident:
					if fd := decls[fn.Name]; fd != nil && !checked[fn.Name] {
						check(fn.Name, fd.Body, declared)
					}
				case *ast.FuncLit:
					check(fset.Position(fn.Pos()).String(), fn.Body, declared)
				}
				return true
			})
		}
	}

	// The check must still see what it guards: the handlers of EXEC, a
	// script, MONITOR, WAIT, and the nesting state under the names above.
	for _, name := range []string{"execCommand", "runScript", "monitorCommand", "waitCommand", "bgsaveCommand"} {
		if !checked[name] {
			t.Errorf("%s is not checked: the test no longer finds handlers", name)
		}
	}
	seen := map[string]bool{}
	for _, f := range pkgs[0].all {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				seen[n.Sel.Name] = true
			case *ast.Field:
				for _, id := range n.Names {
					seen[id.Name] = true
				}
			}
			return true
		})
	}
	for _, field := range nesting {
		if !seen[field] {
			t.Errorf("the nesting state has no %s any more: update the names this test forbids", field)
		}
	}
}
