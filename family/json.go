package family

import (
	"bytes"
	"math"
	"slices"
	"strconv"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/jsondoc"
	"github.com/keyhive/keyhive/internal/jsonpath"
	"github.com/keyhive/keyhive/keyspace"
)

// The JSON commands (Redis 8's JSON, RedisJSON before). A document is a
// keyspace entry of TypeJSON whose value is package jsondoc's stored form;
// paths (package jsonpath) are walked in it in place. A change of a number
// or a boolean of the same width writes the entry's bytes where they are;
// other changes splice the bytes and fix the enclosing containers' sizes.
//
// Replies follow RedisJSON's two path syntaxes: a JSONPath (`$...`) gets a
// reply per match (null for a match of the wrong type), a legacy path the
// reply of its first (or last, for the updates) match, and an error where
// nothing matches or a match has the wrong type. Without a path, RESP2
// clients get the legacy root `.` and RESP3 clients `$`.
func registerJSON(bind binder) {
	bind("json.set", jsonSet)
	bind("json.get", jsonGet)
	bind("json.mget", jsonMGet)
	bind("json.mset", jsonMSet)
	bind("json.del", jsonDel)
	bind("json.forget", jsonDel)
	bind("json.clear", jsonClear)
	bind("json.toggle", jsonToggle)
	bind("json.type", jsonType)
	bind("json.numincrby", func(x *command.Ctx) { jsonNumOp(x, false) })
	bind("json.nummultby", func(x *command.Ctx) { jsonNumOp(x, true) })
	bind("json.strappend", jsonStrAppend)
	bind("json.strlen", jsonLen(jsondoc.String, errJSONNoKey, errJSONNoPath, errJSONWrongType("string")))
	bind("json.arrappend", jsonArrAppend)
	bind("json.arrindex", jsonArrIndex)
	bind("json.arrinsert", jsonArrInsert)
	bind("json.arrlen", jsonLen(jsondoc.Array, errJSONNoKey, errJSONNoPath, errJSONNoneOf("not an array")))
	bind("json.arrpop", jsonArrPop)
	bind("json.arrtrim", jsonArrTrim)
	bind("json.objkeys", jsonObjKeys)
	bind("json.objlen", jsonLen(jsondoc.Object, errJSONNoneOf("not an object"), "", errJSONWrongType("object")))
	bind("json.merge", jsonMerge)
	bind("json.resp", jsonResp)
	bind("json.debug|memory", jsonDebugMemory)
	bind("json.debug|help", func(x *command.Ctx) {
		x.W.Array(len(jsonDebugHelp))
		for _, l := range jsonDebugHelp {
			x.W.BulkString(l)
		}
	})
}

var jsonDebugHelp = []string{
	"MEMORY <key> [path] - reports memory usage",
	"HELP                - this message",
}

// Error texts as RedisJSON words them: a JSON text that does not parse
// and a failed arithmetic have no error code of their own.
const (
	errJSONNoKey      = "ERR could not perform this operation on a key that doesn't exist"
	errJSONRoot       = "ERR new objects must be created at the root"
	errJSONPath       = "ERR Invalid JSONPath"
	errJSONTooMuch    = "ERR JSONPath evaluation exceeds its work limit"
	errJSONIndex      = "ERR index out of bounds"
	errJSONNotANum    = "result is not a number"
	errJSONBadNum     = "bad input number"
	errJSONNoPath     = "ERR Path does not exist"
	errJSONStatic     = "Err wrong static path"
	errJSONOutOfRange = "ERR array index out of range"
	errJSONOtherType  = "Existing key has wrong Redis type"
)

// errJSONWrongType is a legacy path's match of the wrong type.
func errJSONWrongType(want string) string {
	return "WRONGTYPE wrong type of path value - expected " + want
}

// errJSONNoneOf is a legacy path that names no value of the type the
// command needs.
func errJSONNoneOf(what string) string { return "ERR Path does not exist or " + what }

// jsonRootPath is the path a command without one uses: the legacy root,
// which replies with the value itself (RESP2 and RESP3 alike).
var jsonRootPath = []byte(".")

// jsonParsePath parses a path argument, replying its error.
func jsonParsePath(x *command.Ctx, arg []byte) (*jsonpath.Path, bool) {
	p, err := jsonpath.Parse(arg)
	if err != nil {
		x.W.Error(errJSONPath)
		return nil, false
	}
	return p, true
}

// jsonEval evaluates p on doc, replying when the evaluation gave up.
func jsonEval(x *command.Ctx, p *jsonpath.Path, doc []byte) ([]jsonpath.Match, bool) {
	ms, err := p.Eval(nil, doc)
	if err != nil {
		x.W.Error(errJSONTooMuch)
		return nil, false
	}
	return ms, true
}

// jsonParseValue parses a JSON text argument, replying its error.
func jsonParseValue(x *command.Ctx, text []byte) ([]byte, bool) {
	v, err := jsondoc.Parse(nil, text)
	if err != nil {
		x.W.Error(err.Error())
		return nil, false
	}
	return v, true
}

// jsonWrongType replies RedisJSON's error for a key of another type (a
// line with no error code) and reports true.
func jsonWrongType(x *command.Ctx, e *keyspace.Entry, found bool) bool {
	if found && e.Type() != keyspace.TypeJSON {
		x.W.Error(errJSONOtherType)
		return true
	}
	return false
}

// jsonRead finds a document for reading: found=false for no key, ok=false
// after replying that the key holds another type.
func jsonRead(x *command.Ctx, key []byte) (doc []byte, found, ok bool) {
	e, found := x.LookupRead(key)
	if jsonWrongType(x, &e, found) {
		return nil, true, false
	}
	if !found {
		return nil, false, true
	}
	return e.Value(), true, true
}

// jsonEdit is a document being changed by one command. Changes of the same
// size are written into doc where it is (the entry's bytes, until a splice
// moved the document into a scratch buffer); commit stores the result.
type jsonEdit struct {
	x        *command.Ctx
	key      []byte
	e        keyspace.Entry
	found    bool
	doc      []byte
	copied   bool // doc is a scratch copy: commit stores it
	dirty    bool
	reported bool // the keyspace already reported the change (a grown entry)
}

// jsonOpen looks key up for writing; ok=false after replying that the key
// holds another type.
func jsonOpen(x *command.Ctx, key []byte) (ed jsonEdit, ok bool) {
	ed = jsonEdit{x: x, key: key}
	ed.e, ed.found = x.LookupWrite(key)
	if jsonWrongType(x, &ed.e, ed.found) {
		return ed, false
	}
	if ed.found {
		ed.doc = ed.e.Value()
	}
	return ed, true
}

// jsonOpenExisting is jsonOpen for commands that need the key to exist.
func jsonOpenExisting(x *command.Ctx, key []byte) (ed jsonEdit, ok bool) {
	ed, ok = jsonOpen(x, key)
	if ok && !ed.found {
		x.W.Error(errJSONNoKey)
		return ed, false
	}
	return ed, ok
}

// splice replaces doc[start:end] with repl inside the container at parent.
//
// A splice that grows the entry's own bytes grows the entry instead (a
// large one in place, its mapping extended) and moves only what follows
// the splice: appending to a big document does not copy it.
func (ed *jsonEdit) splice(parent, start, end int, repl []byte, countDelta int) {
	if !ed.copied && ed.found && len(repl) >= end-start {
		old := len(ed.doc)
		ed.doc = ed.x.DB.Resize(&ed.e, keyspace.EncRaw, old+len(repl)-(end-start), ed.x.Now)
		jsondoc.SpliceInPlace(ed.doc, old, parent, start, end, repl, countDelta)
		ed.dirty, ed.reported = true, true
		return
	}
	ed.doc = jsondoc.Splice(ed.x.NextScratch(), ed.doc, parent, start, end, repl, countDelta)
	ed.x.KeepScratch(ed.doc)
	ed.copied, ed.dirty = true, true
}

// replace puts v in place of the value at m.
func (ed *jsonEdit) replace(m jsonpath.Match, v []byte) {
	if m.Parent < 0 {
		ed.doc = append(ed.x.NextScratch()[:0], v...)
		ed.x.KeepScratch(ed.doc)
		ed.copied, ed.dirty = true, true
		return
	}
	end := jsondoc.End(ed.doc, m.Off)
	if end-m.Off == len(v) {
		copy(ed.doc[m.Off:], v)
		ed.dirty = true
		return
	}
	ed.splice(m.Parent, m.Off, end, v, 0)
}

// remove deletes the member or element at m. An object's last member takes
// the removed member's place, as RedisJSON's objects do.
func (ed *jsonEdit) remove(m jsonpath.Match) {
	doc := ed.doc
	end := jsondoc.End(doc, m.Off)
	if jsondoc.KindAt(doc, m.Parent) == jsondoc.Array {
		ed.splice(m.Parent, m.Off, end, nil, -1)
		return
	}
	objEnd := jsondoc.End(doc, m.Parent)
	if end == objEnd {
		ed.splice(m.Parent, m.Member, end, nil, -1)
		return
	}
	last := jsondoc.First(doc, m.Parent)
	for p := last; p < objEnd; {
		last = p
		_, v := jsondoc.Member(doc, p)
		p = v + jsondoc.Size(doc, v)
	}
	repl := make([]byte, 0, objEnd-end)
	repl = append(append(repl, doc[last:objEnd]...), doc[end:last]...)
	ed.splice(m.Parent, m.Member, objEnd, repl, -1)
}

// store writes a whole new document v.
func (ed *jsonEdit) store(v []byte) {
	ed.doc, ed.copied, ed.dirty = v, true, true
}

// commit stores the edited document and raises event.
func (ed *jsonEdit) commit(event string) {
	if !ed.dirty {
		return
	}
	x := ed.x
	switch {
	case !ed.found:
		x.DB.Put(&ed.e, ed.key, keyspace.TypeJSON, keyspace.EncRaw, ed.doc, 0, x.Now)
	case ed.copied:
		x.DB.Replace(&ed.e, keyspace.EncRaw, ed.doc, ed.e.ExpireAt(), x.Now)
	case !ed.reported:
		x.DB.ModifiedEntry(&ed.e) // changed in the entry itself
	}
	x.Dirty++
	x.Notify(config.EventModule, event, ed.key)
}

// descending sorts matches by offset, last first, without repeats: the
// order in which splices leave the offsets still to visit valid.
func descending(ms []jsonpath.Match) []jsonpath.Match {
	slices.SortFunc(ms, func(a, b jsonpath.Match) int { return b.Off - a.Off })
	return slices.CompactFunc(ms, func(a, b jsonpath.Match) bool { return a.Off == b.Off })
}

// outermost drops the matches inside another match (in document order).
func outermost(doc []byte, ms []jsonpath.Match) []jsonpath.Match {
	slices.SortFunc(ms, func(a, b jsonpath.Match) int { return a.Off - b.Off })
	out, cover := ms[:0], -1
	for _, m := range ms {
		if m.Off < cover {
			continue
		}
		out = append(out, m)
		cover = jsondoc.End(doc, m.Off)
	}
	return out
}

// ---- JSON.SET, JSON.MSET, JSON.MERGE ----

const (
	jsonSetAny = iota
	jsonSetNX
	jsonSetXX
)

func jsonSet(x *command.Ctx) {
	cond := jsonSetAny
	for _, a := range x.Args[4:] {
		switch {
		case cstr.ArgIs(a, "nx") && cond == jsonSetAny:
			cond = jsonSetNX
		case cstr.ArgIs(a, "xx") && cond == jsonSetAny:
			cond = jsonSetXX
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	p, ok := jsonParsePath(x, x.Args[2])
	if !ok {
		return
	}
	// A whole document is parsed into a scratch buffer, which the keyspace
	// copies: storing one leaves no garbage. A value spliced into a document
	// needs the scratch buffers for the splices.
	var v []byte
	if p.IsRoot() {
		var err error
		if v, err = jsondoc.Parse(x.NextScratch(), x.Args[3]); err != nil {
			x.W.Error(err.Error())
			return
		}
		x.KeepScratch(v)
	} else if v, ok = jsonParseValue(x, x.Args[3]); !ok {
		return
	}
	ed, ok := jsonOpen(x, x.Args[1])
	if !ok {
		return
	}
	if !ed.found && !p.IsRoot() {
		x.W.Error(errJSONRoot)
		return
	}
	set, ok := jsonSetAt(&ed, p, v, cond)
	if !ok {
		return
	}
	if !set {
		x.W.Null()
		return
	}
	ed.commit("json.set")
	x.W.OK()
}

// jsonSetAt sets v at p in the document being edited: in place of every
// match, or, when nothing matches, as a new member of the objects the
// path's parent names (the path must then name one place, and end with a
// member name). set=false when nothing was set (cond, or no place);
// ok=false after replying an error.
func jsonSetAt(ed *jsonEdit, p *jsonpath.Path, v []byte, cond int) (set, ok bool) {
	if !ed.found || p.IsRoot() {
		if (cond == jsonSetNX && ed.found) || (cond == jsonSetXX && !ed.found) {
			return false, true
		}
		ed.store(v)
		return true, true
	}
	ms, ok := jsonEval(ed.x, p, ed.doc)
	if !ok {
		return false, false
	}
	if len(ms) > 0 {
		if cond == jsonSetNX {
			return false, true
		}
		for _, m := range descending(outermost(ed.doc, ms)) {
			ed.replace(m, v)
		}
		return true, true
	}
	if cond == jsonSetXX {
		return false, true
	}
	if !jsonCanCreate(ed.x, p) {
		return false, false
	}
	name, parent, _ := p.LastName()
	parents, ok := jsonEval(ed.x, parent, ed.doc)
	if !ok {
		return false, false
	}
	member := append(jsondoc.AppendKey(nil, name), v...)
	for _, m := range descending(parents) {
		if jsondoc.KindAt(ed.doc, m.Off) != jsondoc.Object {
			return false, true
		}
		end := jsondoc.End(ed.doc, m.Off)
		ed.splice(m.Off, end, end, member, 1)
		set = true
	}
	return set, true
}

func jsonMSet(x *command.Ctx) {
	args := x.Args[1:]
	if len(args)%3 != 0 {
		x.W.Error(command.ErrArity("json.mset"))
		return
	}
	// Everything is checked against the keys as they are before anything
	// changes: MSET is atomic.
	paths := make([]*jsonpath.Path, 0, len(args)/3)
	vals := make([][]byte, 0, len(args)/3)
	for i := 0; i < len(args); i += 3 {
		e, found := x.LookupWrite(args[i])
		if jsonWrongType(x, &e, found) {
			return
		}
		p, ok := jsonParsePath(x, args[i+1])
		if !ok {
			return
		}
		if !p.IsRoot() {
			if !found {
				x.W.Error(errJSONRoot)
				return
			}
			ms, ok := jsonEval(x, p, e.Value())
			if !ok {
				return
			}
			if len(ms) == 0 && !jsonCanCreate(x, p) {
				return
			}
		}
		v, ok := jsonParseValue(x, args[i+2])
		if !ok {
			return
		}
		paths, vals = append(paths, p), append(vals, v)
	}
	for i := 0; i < len(args); i += 3 {
		ed, _ := jsonOpen(x, args[i])
		if _, ok := jsonSetAt(&ed, paths[i/3], vals[i/3], jsonSetAny); !ok {
			return
		}
		ed.commit("json.mset")
	}
	x.W.OK()
}

// jsonCanCreate reports whether a path that names nothing names a place
// JSON.SET may create (one place, ending with a member name), replying
// RedisJSON's error when not.
func jsonCanCreate(x *command.Ctx, p *jsonpath.Path) bool {
	if !p.Definite() {
		x.W.Error(errJSONStatic)
		return false
	}
	if _, _, named := p.LastName(); !named {
		x.W.Error(errJSONOutOfRange)
		return false
	}
	return true
}

func jsonMerge(x *command.Ctx) {
	patch, ok := jsonParseValue(x, x.Args[3])
	if !ok {
		return
	}
	p, ok := jsonParsePath(x, x.Args[2])
	if !ok {
		return
	}
	ed, ok := jsonOpen(x, x.Args[1])
	if !ok {
		return
	}
	if !ed.found {
		if !p.IsRoot() {
			x.W.Error(errJSONRoot)
			return
		}
		ed.store(patch) // nothing to merge into: the patch as it is
		ed.commit("json.merge")
		x.W.OK()
		return
	}
	ms, ok := jsonEval(x, p, ed.doc)
	if !ok {
		return
	}
	if len(ms) == 0 {
		// A missing last member is created, as JSON.SET creates it.
		set, ok := jsonSetAt(&ed, p, patch, jsonSetAny)
		if !ok {
			return
		}
		if !set {
			x.W.Null()
			return
		}
	}
	ms = outermost(ed.doc, ms)
	for i := len(ms) - 1; i >= 0; i-- {
		merged := mergePatch(nil, ed.doc, ms[i].Off, patch, 0)
		if ms[i].Parent < 0 {
			ed.store(merged)
		} else {
			ed.replace(ms[i], merged)
		}
	}
	ed.commit("json.merge")
	x.W.OK()
}

// mergePatch appends RFC 7396's merge of the patch at pOff into the target
// at tOff of doc (-1: none), as RedisJSON applies one: the patch's members
// in their order, a null one removing the target's member (whose place the
// object's last member takes), another merging into the target's member or
// coming last as a new one.
func mergePatch(dst, doc []byte, tOff int, patch []byte, pOff int) []byte {
	if jsondoc.KindAt(patch, pOff) != jsondoc.Object {
		return append(dst, patch[pOff:jsondoc.End(patch, pOff)]...)
	}
	type entry struct {
		key      []byte
		off, pat int // the value in doc and in the patch, -1 for none
	}
	var entries []entry
	if tOff >= 0 && jsondoc.KindAt(doc, tOff) == jsondoc.Object {
		for q, end := jsondoc.First(doc, tOff), jsondoc.End(doc, tOff); q < end; {
			k, v := jsondoc.Member(doc, q)
			entries = append(entries, entry{k, v, -1})
			q = v + jsondoc.Size(doc, v)
		}
	}
	for q, end := jsondoc.First(patch, pOff), jsondoc.End(patch, pOff); q < end; {
		k, v := jsondoc.Member(patch, q)
		q = v + jsondoc.Size(patch, v)
		i := slices.IndexFunc(entries, func(e entry) bool { return bytes.Equal(e.key, k) })
		switch {
		case jsondoc.KindAt(patch, v) == jsondoc.Null:
			if i >= 0 {
				entries[i] = entries[len(entries)-1]
				entries = entries[:len(entries)-1]
			}
		case i >= 0:
			entries[i].pat = v
		default:
			entries = append(entries, entry{k, -1, v})
		}
	}
	dst, start := jsondoc.BeginObject(dst)
	for _, e := range entries {
		dst = jsondoc.AppendKey(dst, e.key)
		if e.pat >= 0 {
			dst = mergePatch(dst, doc, e.off, patch, e.pat)
		} else {
			dst = append(dst, doc[e.off:jsondoc.End(doc, e.off)]...)
		}
	}
	jsondoc.EndContainer(dst, start, len(entries))
	return dst
}

// ---- JSON.GET, JSON.MGET, JSON.RESP ----

func jsonGet(x *command.Ctx) {
	var f jsondoc.Format
	args := x.Args[2:]
	for len(args) > 0 {
		switch a := args[0]; {
		case cstr.ArgIs(a, "noescape"):
			args = args[1:]
			continue
		case len(args) < 2:
		case cstr.ArgIs(a, "indent"):
			f.Indent = args[1]
		case cstr.ArgIs(a, "newline"):
			f.Newline = args[1]
		case cstr.ArgIs(a, "space"):
			f.Space = args[1]
		default:
			goto paths
		}
		if len(args) < 2 {
			break
		}
		args = args[2:]
	}
paths:
	if len(args) == 0 {
		args = [][]byte{jsonRootPath}
	}
	ps := make([]*jsonpath.Path, len(args))
	anyJSONPath := false
	for i, a := range args {
		p, ok := jsonParsePath(x, a)
		if !ok {
			return
		}
		ps[i] = p
		anyJSONPath = anyJSONPath || !p.IsLegacy()
	}
	doc, found, ok := jsonRead(x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Null()
		return
	}
	out := x.NextScratch()
	if len(ps) == 1 {
		var ok bool
		if out, ok = jsonGetOne(x, out, doc, ps[0], &f); !ok {
			return
		}
		x.W.Bulk(out)
		x.KeepScratch(out)
		return
	}
	// Several paths: an object of path to result, whose form follows the
	// JSONPath syntax when any path has it.
	obj, start := jsondoc.BeginObject(nil)
	n := 0
	for i, p := range ps {
		if slices.ContainsFunc(args[:i], func(a []byte) bool { return bytes.Equal(a, args[i]) }) {
			continue
		}
		ms, ok := jsonEval(x, p, doc)
		if !ok {
			return
		}
		obj = jsondoc.AppendKey(obj, args[i])
		if anyJSONPath {
			obj = appendMatchArray(obj, doc, ms)
		} else {
			if len(ms) == 0 {
				x.W.Error(errJSONNoPath)
				return
			}
			obj = append(obj, doc[ms[0].Off:jsondoc.End(doc, ms[0].Off)]...)
		}
		n++
	}
	jsondoc.EndContainer(obj, start, n)
	out = jsondoc.AppendJSON(out, obj, 0, &f)
	x.W.Bulk(out)
	x.KeepScratch(out)
}

// jsonGetOne appends one path's result: the first match's text for a
// legacy path, the array of the matches for a JSONPath.
func jsonGetOne(x *command.Ctx, out, doc []byte, p *jsonpath.Path, f *jsondoc.Format) ([]byte, bool) {
	ms, ok := jsonEval(x, p, doc)
	if !ok {
		return out, false
	}
	if p.IsLegacy() {
		if len(ms) == 0 {
			x.W.Error(errJSONNoPath)
			return out, false
		}
		return jsondoc.AppendJSON(out, doc, ms[0].Off, f), true
	}
	return jsondoc.AppendJSON(out, appendMatchArray(nil, doc, ms), 0, f), true
}

// appendMatchArray appends an array of copies of the matched values.
func appendMatchArray(dst, doc []byte, ms []jsonpath.Match) []byte {
	dst, start := jsondoc.BeginArray(dst)
	for _, m := range ms {
		dst = append(dst, doc[m.Off:jsondoc.End(doc, m.Off)]...)
	}
	jsondoc.EndContainer(dst, start, len(ms))
	return dst
}

func jsonMGet(x *command.Ctx) {
	keys := x.Args[1 : len(x.Args)-1]
	// Whatever fails for a key (no key, another type, a path that does not
	// parse, no match for a legacy path) is a null in its place.
	p, err := jsonpath.Parse(x.Args[len(x.Args)-1])
	x.W.Array(len(keys))
	for _, key := range keys {
		e, found := x.LookupRead(key)
		if err != nil || !found || e.Type() != keyspace.TypeJSON {
			x.W.Null()
			continue
		}
		doc := e.Value()
		ms, err := p.Eval(nil, doc)
		switch {
		case err != nil || p.IsLegacy() && len(ms) == 0:
			x.W.Null()
		case p.IsLegacy():
			x.W.Bulk(jsondoc.AppendJSON(x.NextScratch(), doc, ms[0].Off, nil))
		default:
			x.W.Bulk(jsondoc.AppendJSON(x.NextScratch(), appendMatchArray(nil, doc, ms), 0, nil))
		}
	}
}

func jsonResp(x *command.Ctx) {
	doc, p, ok := jsonReadPath(x)
	if !ok {
		return
	}
	if doc == nil {
		x.W.Null()
		return
	}
	ms, ok := jsonEval(x, p, doc)
	if !ok {
		return
	}
	if p.IsLegacy() {
		if len(ms) == 0 {
			x.W.Error(errJSONNoPath)
			return
		}
		writeJSONResp(x, doc, ms[0].Off)
		return
	}
	x.W.Array(len(ms))
	for _, m := range ms {
		writeJSONResp(x, doc, m.Off)
	}
}

// writeJSONResp writes a value in JSON.RESP's form: null as a null bulk,
// booleans as simple strings, integers as integers, doubles as doubles,
// strings as bulk strings, an array as "[" and its elements, an object as "{" and its
// keys and values.
func writeJSONResp(x *command.Ctx, doc []byte, off int) {
	switch jsondoc.KindAt(doc, off) {
	case jsondoc.Null:
		x.W.Null()
	case jsondoc.Bool:
		x.W.Simple(strconv.FormatBool(jsondoc.BoolAt(doc, off)))
	case jsondoc.Integer:
		x.W.Int(jsondoc.Int(doc, off))
	case jsondoc.Number:
		x.W.Double72(jsondoc.Float(doc, off))
	case jsondoc.String:
		x.W.Bulk(jsondoc.Str(doc, off))
	case jsondoc.Array:
		x.W.Array(1 + jsondoc.Len(doc, off))
		x.W.Simple("[")
		for p, end := jsondoc.First(doc, off), jsondoc.End(doc, off); p < end; p += jsondoc.Size(doc, p) {
			writeJSONResp(x, doc, p)
		}
	case jsondoc.Object:
		x.W.Array(1 + 2*jsondoc.Len(doc, off))
		x.W.Simple("{")
		for p, end := jsondoc.First(doc, off), jsondoc.End(doc, off); p < end; {
			k, v := jsondoc.Member(doc, p)
			x.W.Bulk(k)
			writeJSONResp(x, doc, v)
			p = v + jsondoc.Size(doc, v)
		}
	}
}

// jsonReadPath reads the document at Args[1] and the optional path at
// Args[2] (the legacy root without one); doc=nil for no key.
func jsonReadPath(x *command.Ctx) (doc []byte, p *jsonpath.Path, ok bool) {
	text := jsonRootPath
	if len(x.Args) > 2 {
		text = x.Args[2]
	}
	if p, ok = jsonParsePath(x, text); !ok {
		return nil, nil, false
	}
	doc, _, ok = jsonRead(x, x.Args[1])
	return doc, p, ok
}

// ---- JSON.DEL, JSON.CLEAR, JSON.TOGGLE ----

func jsonDel(x *command.Ctx) {
	text := jsonRootPath
	if len(x.Args) > 2 {
		text = x.Args[2]
	}
	p, ok := jsonParsePath(x, text)
	if !ok {
		return
	}
	ed, ok := jsonOpen(x, x.Args[1])
	if !ok {
		return
	}
	if !ed.found {
		x.W.Int(0)
		return
	}
	var deleted int
	if p.IsRoot() {
		deleted = 1
	} else {
		ms, ok := jsonEval(x, p, ed.doc)
		if !ok {
			return
		}
		// A value inside another deleted one is not counted.
		ms = outermost(ed.doc, ms)
		for i := len(ms) - 1; i >= 0; i-- {
			if ms[i].Parent >= 0 {
				ed.remove(ms[i])
				deleted++
			}
		}
	}
	// Deleting the root, or the last member or element, deletes the key.
	if p.IsRoot() || deleted > 0 && isEmptyContainer(ed.doc) {
		x.DB.DeleteEntry(&ed.e)
		x.Dirty++
		x.Notify(config.EventModule, "json.del", ed.key)
	} else {
		ed.commit("json.del")
	}
	x.W.Int(int64(deleted))
}

func isEmptyContainer(doc []byte) bool {
	k := jsondoc.KindAt(doc, 0)
	return (k == jsondoc.Array || k == jsondoc.Object) && jsondoc.Len(doc, 0) == 0
}

func jsonClear(x *command.Ctx) {
	text := jsonRootPath
	if len(x.Args) > 2 {
		text = x.Args[2]
	}
	p, ok := jsonParsePath(x, text)
	if !ok {
		return
	}
	ed, ok := jsonOpenExisting(x, x.Args[1])
	if !ok {
		return
	}
	ms, ok := jsonEval(x, p, ed.doc)
	if !ok {
		return
	}
	// Only what clearing changes counts: non-empty arrays and objects,
	// numbers other than 0.
	ms = outermost(ed.doc, ms)
	cleared := 0
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		switch jsondoc.KindAt(ed.doc, m.Off) {
		case jsondoc.Array:
			if jsondoc.Len(ed.doc, m.Off) == 0 {
				continue
			}
			ed.replace(m, jsondoc.EmptyArray)
		case jsondoc.Object:
			if jsondoc.Len(ed.doc, m.Off) == 0 {
				continue
			}
			ed.replace(m, jsondoc.EmptyObject)
		case jsondoc.Integer, jsondoc.Number:
			if jsondoc.Num(ed.doc, m.Off) == 0 {
				continue
			}
			ed.replace(m, jsondoc.AppendInt(nil, 0))
		default:
			continue
		}
		cleared++
	}
	ed.commit("json.clear")
	x.W.Int(int64(cleared))
}

func jsonToggle(x *command.Ctx) {
	p, ok := jsonParsePath(x, x.Args[2])
	if !ok {
		return
	}
	ed, ms, ok := jsonOpenMatches(x, p, jsondoc.Bool, "not a bool")
	if !ok {
		return
	}
	results := make([]int64, len(ms)) // -1: not a boolean
	for i, m := range ms {
		if jsondoc.KindAt(ed.doc, m.Off) != jsondoc.Bool {
			results[i] = -1
			continue
		}
		now := !jsondoc.BoolAt(ed.doc, m.Off)
		jsondoc.SetBoolInPlace(ed.doc, m.Off, now)
		ed.dirty = true
		results[i] = int64(boolInt(now))
	}
	ed.commit("json.toggle")
	if p.IsLegacy() {
		x.W.BulkString(strconv.FormatBool(results[len(results)-1] == 1))
		return
	}
	writeIntsOrNulls(x, results)
}

// writeIntsOrNulls writes a JSONPath reply of integers, -1 standing for null.
func writeIntsOrNulls(x *command.Ctx, vals []int64) {
	x.W.Array(len(vals))
	for _, v := range vals {
		if v < 0 {
			x.W.Null()
		} else {
			x.W.Int(v)
		}
	}
}

// ---- JSON.TYPE, JSON.STRLEN, JSON.ARRLEN, JSON.OBJLEN, JSON.OBJKEYS ----

func jsonType(x *command.Ctx) {
	doc, p, ok := jsonReadPath(x)
	if !ok {
		return
	}
	if x.W.Proto >= 3 { // RESP3 wraps the reply in an array
		x.W.Array(1)
	}
	if doc == nil {
		x.W.Null()
		return
	}
	ms, ok := jsonEval(x, p, doc)
	if !ok {
		return
	}
	if p.IsLegacy() {
		if len(ms) == 0 {
			x.W.Null()
			return
		}
		x.W.BulkString(jsondoc.KindAt(doc, ms[0].Off).Name())
		return
	}
	x.W.Array(len(ms))
	for _, m := range ms {
		x.W.BulkString(jsondoc.KindAt(doc, m.Off).Name())
	}
}

// jsonLengths writes a JSONPath's reply of the lengths of its matches of
// kind (null for the others); a missing key is errNoKey's error.
func jsonLengths(x *command.Ctx, doc []byte, p *jsonpath.Path, kind jsondoc.Kind, noKey string) {
	if doc == nil {
		x.W.Error(noKey)
		return
	}
	ms, ok := jsonEval(x, p, doc)
	if !ok {
		return
	}
	x.W.Array(len(ms))
	for _, m := range ms {
		if jsondoc.KindAt(doc, m.Off) == kind {
			x.W.Int(int64(jsonLength(doc, m.Off)))
		} else {
			x.W.Null()
		}
	}
}

// jsonLength is a string's length in bytes, a container's in elements.
func jsonLength(doc []byte, off int) int {
	if jsondoc.KindAt(doc, off) == jsondoc.String {
		return len(jsondoc.Str(doc, off))
	}
	return jsondoc.Len(doc, off)
}

// jsonFirst is a legacy path's first match; found=false when there is no
// match (nothing replied).
func jsonFirst(x *command.Ctx, doc []byte, p *jsonpath.Path) (off int, found, ok bool) {
	ms, ok := jsonEval(x, p, doc)
	if !ok || len(ms) == 0 {
		return 0, false, ok
	}
	return ms[0].Off, true, true
}

// jsonLen is JSON.STRLEN, JSON.ARRLEN or JSON.OBJLEN: the length of the
// values of kind at the path. Each has its own replies: noKey for a
// missing key under a JSONPath, noPath ("": null) for a legacy path that
// matches nothing, wrongType for a legacy path's value of another kind.
func jsonLen(kind jsondoc.Kind, noKey, noPath, wrongType string) func(*command.Ctx) {
	return func(x *command.Ctx) {
		doc, p, ok := jsonReadPath(x)
		switch {
		case !ok:
		case !p.IsLegacy():
			jsonLengths(x, doc, p, kind, noKey)
		case doc == nil:
			x.W.Null()
		default:
			off, found, ok := jsonFirst(x, doc, p)
			switch {
			case !ok:
			case !found && noPath == "":
				x.W.Null()
			case !found:
				x.W.Error(noPath)
			case jsondoc.KindAt(doc, off) != kind:
				x.W.Error(wrongType)
			default:
				x.W.Int(int64(jsonLength(doc, off)))
			}
		}
	}
}

func jsonObjKeys(x *command.Ctx) {
	doc, p, ok := jsonReadPath(x)
	if !ok {
		return
	}
	keys := func(off int) {
		x.W.Array(jsondoc.Len(doc, off))
		for q, end := jsondoc.First(doc, off), jsondoc.End(doc, off); q < end; {
			k, v := jsondoc.Member(doc, q)
			x.W.Bulk(k)
			q = v + jsondoc.Size(doc, v)
		}
	}
	if p.IsLegacy() {
		if doc == nil {
			x.W.Null()
			return
		}
		off, found, ok := jsonFirst(x, doc, p)
		switch {
		case !ok:
		case !found:
			x.W.Null()
		case jsondoc.KindAt(doc, off) != jsondoc.Object:
			x.W.Error(errJSONNoneOf("not an object"))
		default:
			keys(off)
		}
		return
	}
	if doc == nil {
		x.W.Error(errJSONNoKey)
		return
	}
	ms, ok := jsonEval(x, p, doc)
	if !ok {
		return
	}
	x.W.Array(len(ms))
	for _, m := range ms {
		if jsondoc.KindAt(doc, m.Off) == jsondoc.Object {
			keys(m.Off)
		} else {
			x.W.Null()
		}
	}
}

// ---- JSON.NUMINCRBY, JSON.NUMMULTBY ----

func jsonNumOp(x *command.Ctx, mult bool) {
	by, ok := jsonParseValue(x, x.Args[3])
	if !ok {
		return
	}
	if k := jsondoc.KindAt(by, 0); k != jsondoc.Integer && k != jsondoc.Number {
		x.W.Error(errJSONBadNum)
		return
	}
	p, ok := jsonParsePath(x, x.Args[2])
	if !ok {
		return
	}
	ed, ok := jsonOpenExisting(x, x.Args[1])
	if !ok {
		return
	}
	ms, ok := jsonEval(x, p, ed.doc)
	if !ok {
		return
	}
	if ms, ok = jsonKeepKindOf(x, p, ed.doc, ms, "does not contains a number", jsondoc.Integer, jsondoc.Number); !ok {
		return
	}
	// Compute every result first: a failure changes nothing.
	results := make([][]byte, len(ms)) // stored forms, nil for a non-number
	for i, m := range ms {
		k := jsondoc.KindAt(ed.doc, m.Off)
		if k != jsondoc.Integer && k != jsondoc.Number {
			continue
		}
		r, ok := numOp(ed.doc, m.Off, by, mult)
		if !ok {
			x.W.Error(errJSONNotANum)
			return
		}
		results[i] = r
	}
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return ms[b].Off - ms[a].Off })
	for j, i := range order {
		if results[i] == nil || j > 0 && ms[order[j-1]].Off == ms[i].Off {
			continue
		}
		ed.replace(ms[i], results[i])
	}
	event := "json.numincrby"
	if mult {
		event = "json.nummultby"
	}
	ed.commit(event)
	switch {
	case x.W.Proto >= 3: // numbers, legacy path or not
		x.W.Array(len(results))
		for _, r := range results {
			if r == nil {
				x.W.Null()
			} else if jsondoc.KindAt(r, 0) == jsondoc.Integer {
				x.W.Int(jsondoc.Int(r, 0))
			} else {
				x.W.Double72(jsondoc.Float(r, 0))
			}
		}
	case p.IsLegacy():
		x.W.Bulk(jsondoc.AppendScalar(nil, results[len(results)-1], 0))
	default:
		out := append(x.NextScratch(), '[')
		for i, r := range results {
			if i > 0 {
				out = append(out, ',')
			}
			if r == nil {
				out = append(out, "null"...)
			} else {
				out = jsondoc.AppendScalar(out, r, 0)
			}
		}
		out = append(out, ']')
		x.W.Bulk(out)
		x.KeepScratch(out)
	}
}

// numOp applies the increment or factor by to the number at off: integer
// arithmetic (wrapping, as RedisJSON's) when both are integers, else
// double arithmetic, whose result stays a double. ok=false for a result
// that is not a finite number.
func numOp(doc []byte, off int, by []byte, mult bool) ([]byte, bool) {
	if jsondoc.KindAt(doc, off) == jsondoc.Integer && jsondoc.KindAt(by, 0) == jsondoc.Integer {
		a, b := jsondoc.Int(doc, off), jsondoc.Int(by, 0)
		if mult {
			return jsondoc.AppendInt(nil, a*b), true
		}
		return jsondoc.AppendInt(nil, a+b), true
	}
	a, b := jsondoc.Num(doc, off), jsondoc.Num(by, 0)
	r := a + b
	if mult {
		r = a * b
	}
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return nil, false
	}
	return jsondoc.AppendFloat(nil, r), true
}

// ---- JSON.STRAPPEND ----

func jsonStrAppend(x *command.Ctx) {
	text, arg := jsonRootPath, x.Args[2]
	if len(x.Args) > 3 {
		text, arg = x.Args[2], x.Args[3]
	}
	v, ok := jsonParseValue(x, arg)
	if !ok {
		return
	}
	if jsondoc.KindAt(v, 0) != jsondoc.String {
		x.W.Error(errJSONWrongType("string"))
		return
	}
	add := jsondoc.Str(v, 0)
	p, ok := jsonParsePath(x, text)
	if !ok {
		return
	}
	ed, ms, ok := jsonOpenMatches(x, p, jsondoc.String, "not a string")
	if !ok {
		return
	}
	lens := make([]int64, len(ms))
	for i, m := range ms {
		lens[i] = -1
		if jsondoc.KindAt(ed.doc, m.Off) == jsondoc.String {
			lens[i] = int64(len(jsondoc.Str(ed.doc, m.Off)) + len(add))
		}
	}
	for _, m := range descending(ms) {
		if jsondoc.KindAt(ed.doc, m.Off) != jsondoc.String {
			continue
		}
		s := jsondoc.Str(ed.doc, m.Off)
		joined := make([]byte, 0, len(s)+len(add))
		joined = append(append(joined, s...), add...)
		ed.replace(m, jsondoc.AppendString(nil, joined))
	}
	ed.commit("json.strappend")
	jsonWriteCounts(x, p, lens)
}

// jsonKeepKind returns the matches a legacy path acts on, those of kind,
// replying notKind when there are none; a JSONPath acts on (and replies
// null for) every match.
// jsonOpenMatches opens the command's key for an edit (an error when it
// is missing) and finds p's matches of kind (for a legacy path, another
// kind is an error naming notKind).
func jsonOpenMatches(x *command.Ctx, p *jsonpath.Path, kind jsondoc.Kind, notKind string) (ed jsonEdit, ms []jsonpath.Match, ok bool) {
	if ed, ok = jsonOpenExisting(x, x.Args[1]); !ok {
		return ed, nil, false
	}
	if ms, ok = jsonEval(x, p, ed.doc); !ok {
		return ed, nil, false
	}
	ms, ok = jsonKeepKind(x, p, ed.doc, ms, kind, notKind)
	return ed, ms, ok
}

func jsonKeepKind(x *command.Ctx, p *jsonpath.Path, doc []byte, ms []jsonpath.Match, kind jsondoc.Kind, notKind string) ([]jsonpath.Match, bool) {
	return jsonKeepKindOf(x, p, doc, ms, notKind, kind)
}

func jsonKeepKindOf(x *command.Ctx, p *jsonpath.Path, doc []byte, ms []jsonpath.Match, notKind string, kinds ...jsondoc.Kind) ([]jsonpath.Match, bool) {
	if !p.IsLegacy() {
		return ms, true
	}
	kept := ms[:0]
	for _, m := range ms {
		if slices.Contains(kinds, jsondoc.KindAt(doc, m.Off)) {
			kept = append(kept, m)
		}
	}
	if len(kept) == 0 {
		x.W.Error(errJSONNoneOf(notKind))
		return nil, false
	}
	return kept, true
}

// jsonWriteCounts replies the counts of the updates: per match for a
// JSONPath (-1 is null), the last one for a legacy path.
func jsonWriteCounts(x *command.Ctx, p *jsonpath.Path, counts []int64) {
	if p.IsLegacy() {
		x.W.Int(counts[len(counts)-1])
		return
	}
	writeIntsOrNulls(x, counts)
}

// ---- arrays ----

func jsonArrAppend(x *command.Ctx) {
	jsonArrInsertAt(x, x.Args[2], x.Args[3:], nil)
}

func jsonArrInsert(x *command.Ctx) {
	jsonArrInsertAt(x, x.Args[2], x.Args[4:], x.Args[3])
}

// jsonArrInsertAt inserts the JSON values before index (nil: at the end)
// of every array the path names.
func jsonArrInsertAt(x *command.Ctx, text []byte, values [][]byte, indexArg []byte) {
	var index int64
	if indexArg != nil {
		var ok bool
		if index, ok = x.IntArgOrReply(indexArg); !ok {
			return
		}
	}
	var ins []byte
	for _, a := range values {
		v, ok := jsonParseValue(x, a)
		if !ok {
			return
		}
		ins = append(ins, v...)
	}
	p, ok := jsonParsePath(x, text)
	if !ok {
		return
	}
	ed, ms, ok := jsonOpenMatches(x, p, jsondoc.Array, "not an array")
	if !ok {
		return
	}
	lens := make([]int64, len(ms))
	at := make([]int, len(ms)) // the element index to insert before
	for i, m := range ms {
		lens[i] = -1
		if jsondoc.KindAt(ed.doc, m.Off) != jsondoc.Array {
			continue
		}
		n := jsondoc.Len(ed.doc, m.Off)
		at[i] = n
		if indexArg != nil {
			idx := index
			if idx < 0 {
				idx += int64(n)
			}
			if idx < 0 || idx > int64(n) {
				x.W.Error(errJSONIndex)
				return
			}
			at[i] = int(idx)
		}
		lens[i] = int64(n + len(values))
	}
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return ms[b].Off - ms[a].Off })
	for j, i := range order {
		m := ms[i]
		if lens[i] < 0 || j > 0 && ms[order[j-1]].Off == m.Off {
			continue
		}
		pos := jsondoc.End(ed.doc, m.Off)
		if at[i] < jsondoc.Len(ed.doc, m.Off) {
			pos = jsondoc.Index(ed.doc, m.Off, at[i])
		}
		ed.splice(m.Off, pos, pos, ins, len(values))
	}
	if indexArg != nil {
		ed.commit("json.arrinsert")
	} else {
		ed.commit("json.arrappend")
	}
	jsonWriteCounts(x, p, lens)
}

func jsonArrIndex(x *command.Ctx) {
	v, ok := jsonParseValue(x, x.Args[3])
	if !ok {
		return
	}
	var start, stop int64
	if len(x.Args) > 4 {
		if start, ok = x.IntArgOrReply(x.Args[4]); !ok {
			return
		}
	}
	if len(x.Args) > 5 {
		if stop, ok = x.IntArgOrReply(x.Args[5]); !ok {
			return
		}
	}
	if len(x.Args) > 6 {
		x.W.Error(command.ErrArity("json.arrindex"))
		return
	}
	p, ok := jsonParsePath(x, x.Args[2])
	if !ok {
		return
	}
	doc, found, ok := jsonRead(x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Error(errJSONNoPath)
		return
	}
	if p.IsLegacy() {
		off, found, ok := jsonFirst(x, doc, p)
		switch {
		case !ok:
		case !found:
			x.W.Error(errJSONNoPath)
		case jsondoc.KindAt(doc, off) != jsondoc.Array:
			x.W.Error(errJSONWrongType("array"))
		default:
			x.W.Int(arrIndex(doc, off, v, start, stop))
		}
		return
	}
	ms, ok := jsonEval(x, p, doc)
	if !ok {
		return
	}
	x.W.Array(len(ms))
	for _, m := range ms {
		if jsondoc.KindAt(doc, m.Off) == jsondoc.Array {
			x.W.Int(arrIndex(doc, m.Off, v, start, stop))
		} else {
			x.W.Null()
		}
	}
}

// arrIndex finds v in the array at off between start and stop, exclusive
// (negative counting from the end, a start past the end meaning the last
// element, a stop of 0 the end), -1 when absent. Values are equal when of
// the same type: 1 is not 1.0.
func arrIndex(doc []byte, off int, v []byte, start, stop int64) int64 {
	n := int64(jsondoc.Len(doc, off))
	if n == 0 {
		return -1
	}
	if start < 0 {
		start = max(n+start, 0)
	} else {
		start = min(start, n-1)
	}
	switch {
	case stop == 0:
		stop = n
	case stop < 0:
		stop = max(n+stop, 0)
	default:
		stop = min(stop, n)
	}
	p := jsondoc.First(doc, off)
	for i := int64(0); i < stop; i++ {
		if i >= start && sameValue(doc, p, v, 0) {
			return i
		}
		p += jsondoc.Size(doc, p)
	}
	return -1
}

// sameValue is JSON.ARRINDEX's equality: same types and equal values.
func sameValue(da []byte, a int, db []byte, b int) bool {
	return jsondoc.KindAt(da, a) == jsondoc.KindAt(db, b) && jsondoc.Equal(da, a, db, b) &&
		(jsondoc.KindAt(da, a) != jsondoc.Array || sameElements(da, a, db, b)) &&
		(jsondoc.KindAt(da, a) != jsondoc.Object || sameMembers(da, a, db, b))
}

func sameElements(da []byte, a int, db []byte, b int) bool {
	p, q := jsondoc.First(da, a), jsondoc.First(db, b)
	for end := jsondoc.End(da, a); p < end; p, q = p+jsondoc.Size(da, p), q+jsondoc.Size(db, q) {
		if !sameValue(da, p, db, q) {
			return false
		}
	}
	return true
}

func sameMembers(da []byte, a int, db []byte, b int) bool {
	for p, end := jsondoc.First(da, a), jsondoc.End(da, a); p < end; {
		k, v := jsondoc.Member(da, p)
		w, _, _ := jsondoc.Lookup(db, b, k)
		if !sameValue(da, v, db, w) {
			return false
		}
		p = v + jsondoc.Size(da, v)
	}
	return true
}

func jsonArrPop(x *command.Ctx) {
	text := jsonRootPath
	index := int64(math.MaxInt64) // the last element, without a path
	if len(x.Args) > 2 {
		text, index = x.Args[2], -1
	}
	if len(x.Args) > 3 {
		if n, ok := strconv.ParseInt(string(x.Args[3]), 10, 64); ok == nil {
			index = n // RedisJSON takes an index that does not parse as -1
		}
	}
	if len(x.Args) > 4 {
		x.W.Error(command.ErrSyntax)
		return
	}
	p, ok := jsonParsePath(x, text)
	if !ok {
		return
	}
	ed, ms, ok := jsonOpenMatches(x, p, jsondoc.Array, "not an array")
	if !ok {
		return
	}
	popped := make([][]byte, len(ms)) // JSON texts, nil for null
	victims := make([]jsonpath.Match, 0, len(ms))
	for i, m := range ms {
		if jsondoc.KindAt(ed.doc, m.Off) != jsondoc.Array || jsondoc.Len(ed.doc, m.Off) == 0 {
			continue
		}
		n := int64(jsondoc.Len(ed.doc, m.Off))
		idx := index
		if idx < 0 {
			idx = max(idx+n, 0)
		}
		idx = min(idx, n-1)
		e := jsondoc.Index(ed.doc, m.Off, int(idx))
		popped[i] = jsondoc.AppendJSON(nil, ed.doc, e, nil)
		victims = append(victims, jsonpath.Match{Off: e, Parent: m.Off, Member: e})
	}
	for _, m := range descending(victims) {
		ed.remove(m)
	}
	ed.commit("json.arrpop")
	if p.IsLegacy() {
		if last := popped[len(popped)-1]; last != nil {
			x.W.Bulk(last)
		} else {
			x.W.Null()
		}
		return
	}
	x.W.Array(len(popped))
	for _, s := range popped {
		if s == nil {
			x.W.Null()
		} else {
			x.W.Bulk(s)
		}
	}
}

func jsonArrTrim(x *command.Ctx) {
	start, ok := x.IntArgOrReply(x.Args[3])
	if !ok {
		return
	}
	stop, ok := x.IntArgOrReply(x.Args[4])
	if !ok {
		return
	}
	p, ok := jsonParsePath(x, x.Args[2])
	if !ok {
		return
	}
	ed, ms, ok := jsonOpenMatches(x, p, jsondoc.Array, "not an array")
	if !ok {
		return
	}
	lens := make([]int64, len(ms))
	type trim struct {
		m        jsonpath.Match
		from, to int // elements kept: [from, to)
	}
	var trims []trim
	for i, m := range ms {
		lens[i] = -1
		if jsondoc.KindAt(ed.doc, m.Off) != jsondoc.Array {
			continue
		}
		n := int64(jsondoc.Len(ed.doc, m.Off))
		to := trimIndex(stop, n)
		from := to + 1 // a start past the end keeps nothing
		if start < 0 || start < n {
			from = trimIndex(start, n)
		}
		if from > to || n == 0 {
			from, to = 0, -1
		}
		lens[i] = to - from + 1
		trims = append(trims, trim{m, int(from), int(to + 1)})
	}
	slices.SortFunc(trims, func(a, b trim) int { return b.m.Off - a.m.Off })
	for j, t := range trims {
		if j > 0 && trims[j-1].m.Off == t.m.Off {
			continue
		}
		n := jsondoc.Len(ed.doc, t.m.Off)
		if t.from == 0 && t.to == n {
			continue
		}
		end := jsondoc.End(ed.doc, t.m.Off)
		if t.to < n {
			ed.splice(t.m.Off, jsondoc.Index(ed.doc, t.m.Off, t.to), end, nil, t.to-n)
		}
		if t.from > 0 {
			first := jsondoc.First(ed.doc, t.m.Off)
			ed.splice(t.m.Off, first, jsondoc.Index(ed.doc, t.m.Off, t.from), nil, -t.from)
		}
	}
	ed.commit("json.arrtrim")
	jsonWriteCounts(x, p, lens)
}

// trimIndex places an ARRTRIM bound in an array of n elements: negative
// from the end (at least 0), else at most the last element.
func trimIndex(i, n int64) int64 {
	switch {
	case i < 0:
		return n - min(n, -i)
	case n > 0:
		return min(i, n-1)
	}
	return 0
}

// ---- JSON.DEBUG MEMORY ----

func jsonDebugMemory(x *command.Ctx) {
	text := jsonRootPath
	if len(x.Args) > 3 {
		text = x.Args[3]
	}
	p, ok := jsonParsePath(x, text)
	if !ok {
		return
	}
	doc, found, ok := jsonRead(x, x.Args[2])
	if !ok {
		return
	}
	if !found {
		if p.IsLegacy() {
			x.W.Int(0)
		} else {
			x.W.Array(0)
		}
		return
	}
	ms, ok := jsonEval(x, p, doc)
	if !ok {
		return
	}
	if p.IsLegacy() {
		if len(ms) == 0 {
			x.W.Error(errJSONNoPath)
			return
		}
		x.W.Int(int64(jsondoc.Size(doc, ms[0].Off)))
		return
	}
	x.W.Array(len(ms))
	for _, m := range ms {
		x.W.Int(int64(jsondoc.Size(doc, m.Off)))
	}
}
