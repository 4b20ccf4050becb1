package scripting

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// concatHelper is the global that holds the Lua 5.1 concatenation helper.
// The NUL byte keeps it out of reach of any identifier a script can write;
// pairs and next skip it.
const concatHelper = "\x00concat"

// tickHelper is the global that holds the kill check (see checkpoint), and
// budgetLocal the chunk's local counting checkpoints down to the next call
// of it. Both names are out of reach of scripts, as concatHelper is.
const (
	tickHelper  = "\x00tick"
	budgetLocal = "\x00budget"
)

// compileChunk parses body and compiles it with every ".." rewritten into a
// call of the concatenation helper, because gopher-lua's OP_CONCAT formats
// numbers with Go's rules instead of Lua 5.1's "%.14g", and with a
// checkpoint at the top of every loop body, function body and after every
// label, where SCRIPT KILL stops the script. The helpers a chunk uses are
// read once into locals at its top, so using them costs an upvalue access
// rather than a global lookup.
func compileChunk(body []byte, chunkName string) (*lua.FunctionProto, error) {
	stmts, err := parse.Parse(bytes.NewReader(body), chunkName)
	if err != nil {
		return nil, errors.New(describeParseError(err, chunkName, body))
	}
	r := rewriter{fn: &funcScope{}, hoist: chunkName == evalChunk, hoisted: map[string]bool{}, assigned: map[string]bool{}}
	stmts = r.stmts(stmts)
	var prologue []ast.Stmt
	if helpers := r.helperLocals(); helpers != nil {
		prologue = append(prologue, helpers)
	}
	if hoisted := r.hoistedLocals(); hoisted != nil {
		prologue = append(prologue, hoisted)
	}
	proto, err := lua.Compile(append(prologue, stmts...), chunkName)
	if err != nil {
		return nil, errors.New(compileErrorText(err.Error(), chunkName))
	}
	// The main chunk has no "arg" local, but gopher-lua would still build
	// the Lua 5.0 arg table on every call of it.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	trimProto(proto)
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
	if pe.Pos.Line == parse.EOF && pe.Message == "syntax error" {
		if msg, ok := unclosedAtEOF(body, chunkName, line); ok {
			return msg
		}
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

// unclosedAtEOF words a parse error at the end of the input as Lua does
// when a block or bracket is left open: "'end' expected (to close
// 'function' at line 1) near '<eof>'". It finds the innermost open
// construct by scanning tokens and confirms that closing it is all the
// body lacks by parsing it with the closer appended.
func unclosedAtEOF(body []byte, chunkName string, line int) (string, bool) {
	type open struct {
		who  string
		line int
	}
	var stack []open
	push := func(who string, line int) { stack = append(stack, open{who, line}) }
	pop := func() {
		if len(stack) > 0 {
			stack = stack[:len(stack)-1]
		}
	}
	sc := parse.NewScanner(bytes.NewReader(body), chunkName)
	lexer := &parse.Lexer{}
	loopHeader := false // a while/for whose "do" is still to come
	for {
		tok, err := sc.Scan(lexer)
		if err != nil || tok.Type == parse.EOF {
			break
		}
		lexer.PrevTokenType = tok.Type
		switch tok.Type {
		case parse.TFunction:
			push("function", tok.Pos.Line)
		case parse.TIf:
			push("if", tok.Pos.Line)
		case parse.TWhile:
			push("while", tok.Pos.Line)
			loopHeader = true
		case parse.TFor:
			push("for", tok.Pos.Line)
			loopHeader = true
		case parse.TDo:
			if !loopHeader {
				push("do", tok.Pos.Line)
			}
			loopHeader = false
		case parse.TRepeat:
			push("repeat", tok.Pos.Line)
		case '(', '{':
			push(string(rune(tok.Type)), tok.Pos.Line)
		case parse.TEnd, parse.TUntil, ')', '}':
			pop()
		}
	}
	if len(stack) == 0 {
		return "", false
	}
	top := stack[len(stack)-1]
	what, closer := "end", " end"
	switch top.who {
	case "repeat":
		what, closer = "until", " until true"
	case "(":
		what, closer = ")", ")"
	case "{":
		what, closer = "}", "}"
	}
	if _, err := parse.Parse(bytes.NewReader(append(append([]byte{}, body...), closer...)), chunkName); err != nil {
		return "", false
	}
	if top.line == line {
		return fmt.Sprintf("%s:%d: '%s' expected near '<eof>'", chunkName, line, what), true
	}
	return fmt.Sprintf("%s:%d: '%s' expected (to close '%s' at line %d) near '<eof>'", chunkName, line, what, top.who, top.line), true
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

// rewriter rewrites concatenations, tracking local variables so an error
// can name the operand as Lua does ("local 'x'", "global 'x'", "field
// 'k'", "upvalue 'x'"), and collects the globals to hoist.
type rewriter struct {
	fn *funcScope
	// concats and checkpoints tell which helpers the chunk uses.
	concats, checkpoints bool

	// EVAL scripts read their globals through the read-only proxy of _G
	// (three table lookups each), and redis.call through redis's proxy.
	// Globals are read-only and these always exist, so reading each once
	// per run into a local of the same name at the top of the chunk
	// changes nothing but the cost; redis.call and redis.pcall become
	// hidden locals. Not for globals a script assigns (that must still
	// fail on the proxy), nor for functions, whose chunk runs at FUNCTION
	// LOAD with other globals.
	hoist    bool
	hoisted  map[string]bool // global names read, and redisFieldLocal names
	assigned map[string]bool
}

// hoistable are the globals an EVAL state always has that scripts read
// most (TestHoistedGlobalsExist keeps the list true).
var hoistable = map[string]bool{
	"redis": true, "KEYS": true, "ARGV": true, "tonumber": true, "tostring": true, "type": true,
	"pairs": true, "ipairs": true, "unpack": true, "math": true, "string": true, "table": true, "cjson": true,
}

// redisFieldLocal is the hidden local holding redis.<name>.
func redisFieldLocal(name string) string { return "\x00redis." + name }

// maxHoistingLocals leaves hoisting out of chunks with that many top-level
// locals, so the hoisted ones cannot hit the 200 registers limit.
const maxHoistingLocals = 150

func (r *rewriter) global(name string) bool {
	for fn := r.fn; fn != nil; fn = fn.parent {
		for _, l := range fn.locals {
			if l == name {
				return false
			}
		}
	}
	return true
}

// hoistedLocals is the prologue statement declaring the hoisted locals, or
// nil for none.
func (r *rewriter) hoistedLocals() ast.Stmt {
	if len(r.fn.locals) > maxHoistingLocals {
		return nil
	}
	var names []string
	for name := range r.hoisted {
		if !r.assigned[name] {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	stmt := &ast.LocalAssignStmt{Names: names}
	for _, name := range names {
		var e ast.Expr
		if field, ok := strings.CutPrefix(name, redisFieldLocal("")); ok {
			obj, key := &ast.IdentExpr{Value: "redis"}, &ast.StringExpr{Value: field}
			setLines(1, 1, obj, key)
			e = &ast.AttrGetExpr{Object: obj, Key: key}
		} else {
			e = &ast.IdentExpr{Value: name}
		}
		setLines(1, 1, e)
		stmt.Exprs = append(stmt.Exprs, e)
	}
	setLines(1, 1, stmt)
	return stmt
}

// assign rewrites an assignment's target: a global named there is not
// hoisted, and a field target stays a field.
func (r *rewriter) assign(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.IdentExpr:
		if r.global(e.Value) {
			r.assigned[e.Value] = true
		}
		return e
	case *ast.AttrGetExpr:
		e.Object = r.expr(e.Object)
		e.Key = r.expr(e.Key)
		return e
	}
	return r.expr(e)
}

type funcScope struct {
	locals []string
	parent *funcScope
}

func (r *rewriter) declare(names ...string) { r.fn.locals = append(r.fn.locals, names...) }

// block runs f in a nested block: locals declared inside go out of scope.
func (r *rewriter) block(f func()) {
	n := len(r.fn.locals)
	f()
	r.fn.locals = r.fn.locals[:n]
}

func (r *rewriter) function(e *ast.FunctionExpr, self bool) {
	r.fn = &funcScope{parent: r.fn}
	if self {
		r.declare("self")
	}
	if e.ParList != nil {
		r.declare(e.ParList.Names...)
	}
	e.Stmts = append(r.checkpoint(e.Line(), true), r.stmts(e.Stmts)...)
	r.fn = r.fn.parent
}

// checkpoint is where a running script notices SCRIPT KILL: gopher-lua can
// only interrupt a script through a context, which costs a channel select
// on every VM instruction, so the check is compiled in instead where a
// script can spend unbounded time (loops, calls, gotos). It counts down a
// budget and calls the Go tick only when it runs out:
//
//	budget = budget - 1
//	if budget < 1 then budget = tick() end
//
// The only constant it adds is 1: a 0 would merge with a script's -0.0 in
// the constant table.
func (r *rewriter) checkpoint(line int, entry bool) []ast.Stmt {
	r.checkpoints = true
	budget := func() ast.Expr { return &ast.IdentExpr{Value: budgetLocal} }
	one, alsoOne := &ast.NumberExpr{Value: "1"}, &ast.NumberExpr{Value: "1"}
	minus := &ast.ArithmeticOpExpr{Operator: "-", Lhs: budget(), Rhs: one}
	dec := &ast.AssignStmt{Lhs: []ast.Expr{budget()}, Rhs: []ast.Expr{minus}}
	tick := &ast.FuncCallExpr{Func: &ast.IdentExpr{Value: tickHelper}, AdjustRet: true}
	if entry { // tick(true): see luaState.tick
		arg := &ast.TrueExpr{}
		setLines(line, line, arg)
		tick.Args = []ast.Expr{arg}
	}
	refill := &ast.AssignStmt{Lhs: []ast.Expr{budget()}, Rhs: []ast.Expr{tick}}
	below := &ast.RelationalOpExpr{Operator: "<", Lhs: budget(), Rhs: alsoOne}
	check := &ast.IfStmt{Condition: below, Then: []ast.Stmt{refill}}
	setLines(line, line, dec, dec.Lhs[0], minus, minus.Lhs, one, alsoOne, tick, tick.Func, refill, refill.Lhs[0], below, below.Lhs, check)
	return []ast.Stmt{dec, check}
}

func (r *rewriter) withCheckpoint(stmts []ast.Stmt, line int) []ast.Stmt {
	return append(r.checkpoint(line, false), stmts...)
}

// helperLocals declares the helpers the chunk uses, or is nil for none.
func (r *rewriter) helperLocals() ast.Stmt {
	stmt := &ast.LocalAssignStmt{}
	if r.concats {
		stmt.Names = append(stmt.Names, concatHelper)
		stmt.Exprs = append(stmt.Exprs, &ast.IdentExpr{Value: concatHelper})
	}
	if r.checkpoints {
		stmt.Names = append(stmt.Names, tickHelper, budgetLocal)
		stmt.Exprs = append(stmt.Exprs, &ast.IdentExpr{Value: tickHelper}, &ast.NumberExpr{Value: "1"})
	}
	if len(stmt.Names) == 0 {
		return nil
	}
	for _, e := range stmt.Exprs {
		setLines(1, 1, e)
	}
	setLines(1, 1, stmt)
	return stmt
}

func setLines(line, last int, nodes ...ast.PositionHolder) {
	for _, n := range nodes {
		n.SetLine(line)
		n.SetLastLine(last)
	}
}

// describe names an operand for an error message, or returns "" for a
// temporary value (a call result, a constant...).
func (r *rewriter) describe(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.IdentExpr:
		for fn, kind := r.fn, "local"; fn != nil; fn, kind = fn.parent, "upvalue" {
			for i := len(fn.locals) - 1; i >= 0; i-- {
				if fn.locals[i] == e.Value {
					return kind + " '" + e.Value + "'"
				}
			}
		}
		return "global '" + e.Value + "'"
	case *ast.AttrGetExpr:
		if k, ok := e.Key.(*ast.StringExpr); ok {
			return "field '" + k.Value + "'"
		}
		return "field '?'"
	}
	return ""
}

func (r *rewriter) stmts(stmts []ast.Stmt) []ast.Stmt {
	out := stmts[:0:0]
	for _, s := range stmts {
		r.stmt(s)
		out = append(out, s)
		if label, ok := s.(*ast.LabelStmt); ok {
			out = append(out, r.checkpoint(label.Line(), false)...)
		}
	}
	return out
}

func (r *rewriter) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		for i, e := range s.Lhs {
			s.Lhs[i] = r.assign(e)
		}
		r.exprs(s.Rhs)
	case *ast.LocalAssignStmt:
		if len(s.Names) == 1 && len(s.Exprs) == 1 {
			if _, ok := s.Exprs[0].(*ast.FunctionExpr); ok {
				r.declare(s.Names...) // local function f: f is visible inside
				r.exprs(s.Exprs)
				return
			}
		}
		r.exprs(s.Exprs)
		r.declare(s.Names...)
	case *ast.FuncCallStmt:
		s.Expr = r.expr(s.Expr)
	case *ast.DoBlockStmt:
		r.block(func() { s.Stmts = r.stmts(s.Stmts) })
	case *ast.WhileStmt:
		s.Condition = r.expr(s.Condition)
		r.block(func() { s.Stmts = r.withCheckpoint(r.stmts(s.Stmts), s.Line()) })
	case *ast.RepeatStmt:
		r.block(func() {
			s.Stmts = r.withCheckpoint(r.stmts(s.Stmts), s.Line())
			s.Condition = r.expr(s.Condition)
		})
	case *ast.IfStmt:
		s.Condition = r.expr(s.Condition)
		r.block(func() { s.Then = r.stmts(s.Then) })
		r.block(func() { s.Else = r.stmts(s.Else) })
	case *ast.NumberForStmt:
		s.Init = r.expr(s.Init)
		s.Limit = r.expr(s.Limit)
		if s.Step != nil {
			s.Step = r.expr(s.Step)
		}
		r.block(func() {
			r.declare(s.Name)
			s.Stmts = r.withCheckpoint(r.stmts(s.Stmts), s.Line())
		})
	case *ast.GenericForStmt:
		r.exprs(s.Exprs)
		r.block(func() {
			r.declare(s.Names...)
			s.Stmts = r.withCheckpoint(r.stmts(s.Stmts), s.Line())
		})
	case *ast.FuncDefStmt:
		if s.Name != nil && s.Name.Func != nil {
			s.Name.Func = r.assign(s.Name.Func)
		}
		if s.Name != nil && s.Name.Receiver != nil {
			s.Name.Receiver = r.expr(s.Name.Receiver)
		}
		r.function(s.Func, s.Name != nil && s.Name.Method != "")
	case *ast.ReturnStmt:
		r.exprs(s.Exprs)
	}
}

func (r *rewriter) exprs(es []ast.Expr) {
	for i, e := range es {
		es[i] = r.expr(e)
	}
}

func (r *rewriter) expr(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.StringConcatOpExpr:
		var operands []ast.Expr
		flattenConcat(e, &operands)
		allStrings := true
		names := make([]string, len(operands))
		for i, op := range operands {
			names[i] = r.describe(op)
			operands[i] = r.expr(op)
			if _, ok := operands[i].(*ast.StringExpr); !ok {
				allStrings = false
			}
		}
		if allStrings {
			return e // no number can be involved: the VM's concat is exact
		}
		r.concats = true
		fn := &ast.IdentExpr{Value: concatHelper}
		desc := &ast.StringExpr{Value: strings.Join(names, "\x00")}
		for _, n := range []ast.Expr{fn, desc} {
			n.SetLine(e.Line())
			n.SetLastLine(e.LastLine())
		}
		call := &ast.FuncCallExpr{Func: fn, Args: append([]ast.Expr{desc}, operands...), AdjustRet: true}
		call.SetLine(e.Line())
		call.SetLastLine(e.LastLine())
		return call
	case *ast.IdentExpr:
		if r.hoist && hoistable[e.Value] && r.global(e.Value) {
			r.hoisted[e.Value] = true
		}
	case *ast.AttrGetExpr:
		obj, isIdent := e.Object.(*ast.IdentExpr)
		key, isString := e.Key.(*ast.StringExpr)
		if r.hoist && isIdent && obj.Value == "redis" && isString && (key.Value == "call" || key.Value == "pcall") && r.global("redis") {
			name := redisFieldLocal(key.Value)
			r.hoisted[name] = true
			local := &ast.IdentExpr{Value: name}
			setLines(e.Line(), e.LastLine(), local)
			return local
		}
		e.Object = r.expr(e.Object)
		e.Key = r.expr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			if f.Key != nil {
				f.Key = r.expr(f.Key)
			}
			f.Value = r.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		if e.Func != nil {
			e.Func = r.expr(e.Func)
		}
		if e.Receiver != nil {
			e.Receiver = r.expr(e.Receiver)
		}
		r.exprs(e.Args)
	case *ast.LogicalOpExpr:
		e.Lhs = r.expr(e.Lhs)
		e.Rhs = r.expr(e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs = r.expr(e.Lhs)
		e.Rhs = r.expr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs = r.expr(e.Lhs)
		e.Rhs = r.expr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		e.Expr = r.expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		e.Expr = r.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = r.expr(e.Expr)
	case *ast.FunctionExpr:
		r.function(e, false)
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
