package scripting

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// concatHelper is the global that holds the Lua 5.1 concatenation helper.
// The NUL byte keeps it out of reach of any identifier a script can write;
// pairs and next skip it.
const concatHelper = "\x00concat"

// compileChunk parses body and compiles it with every ".." rewritten into a
// call of the concatenation helper, because gopher-lua's OP_CONCAT formats
// numbers with Go's rules instead of Lua 5.1's "%.14g". The helper is read
// once into a local at the top of the chunk, so calls to it cost an upvalue
// access rather than a global lookup.
func compileChunk(body []byte, chunkName string) (*lua.FunctionProto, error) {
	stmts, err := parse.Parse(bytes.NewReader(body), chunkName)
	if err != nil {
		return nil, errors.New(describeParseError(err, chunkName, body))
	}
	rewriteStmts(stmts)
	global := &ast.IdentExpr{Value: concatHelper}
	global.SetLine(1)
	local := &ast.LocalAssignStmt{Names: []string{concatHelper}, Exprs: []ast.Expr{global}}
	local.SetLine(1)
	proto, err := lua.Compile(append([]ast.Stmt{local}, stmts...), chunkName)
	if err != nil {
		return nil, errors.New(compileErrorText(err.Error(), chunkName))
	}
	// The main chunk has no "arg" local, but gopher-lua would still build
	// the Lua 5.0 arg table on every call of it.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return proto, nil
}

func lastLine(body []byte) int { return bytes.Count(body, []byte{'\n'}) + 1 }

// describeParseError turns gopher-lua's parse error into Lua 5.1's form
// "name:line: message near 'token'". The messages are the closest Lua 5.1
// equivalents; Lua's parser words some cases differently.
func describeParseError(err error, chunkName string, body []byte) string {
	var pe *parse.Error
	if !errors.As(err, &pe) {
		return compileErrorText(err.Error(), chunkName)
	}
	line, token := pe.Pos.Line, "'"+pe.Token+"'"
	if line == parse.EOF {
		line, token = lastLine(body), "'<eof>'"
	}
	msg := "unexpected symbol"
	switch {
	case strings.Contains(pe.Message, "unterminated multiline"):
		msg = "unfinished long string"
	case strings.Contains(pe.Message, "unterminated string"):
		msg = "unfinished string"
	case strings.Contains(pe.Message, "number"):
		msg = "malformed number"
	case pe.Message != "syntax error":
		msg = pe.Message
	}
	return fmt.Sprintf("%s:%d: %s near %s", chunkName, line, msg, token)
}

// compileErrorText strips gopher-lua's decoration from a compiler error
// (e.g. "'break' outside a loop") and prefixes the chunk name as Lua does.
func compileErrorText(msg, chunkName string) string {
	msg = strings.TrimSpace(msg)
	if strings.HasPrefix(msg, chunkName) {
		return msg
	}
	return chunkName + ": " + msg
}

func rewriteStmts(stmts []ast.Stmt) {
	for _, s := range stmts {
		rewriteStmt(s)
	}
}

func rewriteStmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		rewriteExprs(s.Lhs)
		rewriteExprs(s.Rhs)
	case *ast.LocalAssignStmt:
		rewriteExprs(s.Exprs)
	case *ast.FuncCallStmt:
		s.Expr = rewriteExpr(s.Expr)
	case *ast.DoBlockStmt:
		rewriteStmts(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = rewriteExpr(s.Condition)
		rewriteStmts(s.Stmts)
	case *ast.RepeatStmt:
		s.Condition = rewriteExpr(s.Condition)
		rewriteStmts(s.Stmts)
	case *ast.IfStmt:
		s.Condition = rewriteExpr(s.Condition)
		rewriteStmts(s.Then)
		rewriteStmts(s.Else)
	case *ast.NumberForStmt:
		s.Init = rewriteExpr(s.Init)
		s.Limit = rewriteExpr(s.Limit)
		if s.Step != nil {
			s.Step = rewriteExpr(s.Step)
		}
		rewriteStmts(s.Stmts)
	case *ast.GenericForStmt:
		rewriteExprs(s.Exprs)
		rewriteStmts(s.Stmts)
	case *ast.FuncDefStmt:
		rewriteStmts(s.Func.Stmts)
		if s.Name != nil && s.Name.Func != nil {
			s.Name.Func = rewriteExpr(s.Name.Func)
		}
		if s.Name != nil && s.Name.Receiver != nil {
			s.Name.Receiver = rewriteExpr(s.Name.Receiver)
		}
	case *ast.ReturnStmt:
		rewriteExprs(s.Exprs)
	}
}

func rewriteExprs(es []ast.Expr) {
	for i, e := range es {
		es[i] = rewriteExpr(e)
	}
}

func rewriteExpr(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.StringConcatOpExpr:
		var operands []ast.Expr
		flattenConcat(e, &operands)
		allStrings := true
		for i, op := range operands {
			operands[i] = rewriteExpr(op)
			if _, ok := operands[i].(*ast.StringExpr); !ok {
				allStrings = false
			}
		}
		if allStrings {
			return e // no number can be involved: the VM's concat is exact
		}
		fn := &ast.IdentExpr{Value: concatHelper}
		fn.SetLine(e.Line())
		fn.SetLastLine(e.LastLine())
		call := &ast.FuncCallExpr{Func: fn, Args: operands, AdjustRet: true}
		call.SetLine(e.Line())
		call.SetLastLine(e.LastLine())
		return call
	case *ast.AttrGetExpr:
		e.Object = rewriteExpr(e.Object)
		e.Key = rewriteExpr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			if f.Key != nil {
				f.Key = rewriteExpr(f.Key)
			}
			f.Value = rewriteExpr(f.Value)
		}
	case *ast.FuncCallExpr:
		if e.Func != nil {
			e.Func = rewriteExpr(e.Func)
		}
		if e.Receiver != nil {
			e.Receiver = rewriteExpr(e.Receiver)
		}
		rewriteExprs(e.Args)
	case *ast.LogicalOpExpr:
		e.Lhs = rewriteExpr(e.Lhs)
		e.Rhs = rewriteExpr(e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs = rewriteExpr(e.Lhs)
		e.Rhs = rewriteExpr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs = rewriteExpr(e.Lhs)
		e.Rhs = rewriteExpr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		e.Expr = rewriteExpr(e.Expr)
	case *ast.UnaryNotOpExpr:
		e.Expr = rewriteExpr(e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = rewriteExpr(e.Expr)
	case *ast.FunctionExpr:
		rewriteStmts(e.Stmts)
	}
	return e
}

// flattenConcat collects the operands of a right-associative a..b..c chain
// in order, so the helper concatenates them in one call.
func flattenConcat(e ast.Expr, out *[]ast.Expr) {
	if c, ok := e.(*ast.StringConcatOpExpr); ok {
		flattenConcat(c.Lhs, out)
		flattenConcat(c.Rhs, out)
		return
	}
	*out = append(*out, e)
}
