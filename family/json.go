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
	bind("json.strlen", jsonStrLen)
	bind("json.arrappend", jsonArrAppend)
	bind("json.arrindex", jsonArrIndex)
	bind("json.arrinsert", jsonArrInsert)
	bind("json.arrlen", jsonArrLen)
	bind("json.arrpop", jsonArrPop)
	bind("json.arrtrim", jsonArrTrim)
	bind("json.objkeys", jsonObjKeys)
	bind("json.objlen", jsonObjLen)
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

const (
	errJSONNoKey   = "ERR could not perform this operation on a key that doesn't exist"
	errJSONRoot    = "ERR new objects must be created at the root"
	errJSONPath    = "ERR Invalid JSONPath"
	errJSONTooMuch = "ERR JSONPath evaluation exceeds its work limit"
	errJSONIndex   = "ERR index out of bounds"
	errJSONNotANum = "ERR result is not a number"
)

func errJSONNoPath(path []byte) string {
	return "ERR Path '" + string(path) + "' does not exist"
}

func errJSONWrongKind(want string, got jsondoc.Kind) string {
	return "ERR wrong type of path value - expected " + want + " but found " + got.Name()
}

// jsonRootPath is the path a command without one uses: `.` in RESP2, `$`
// in RESP3.
func jsonRootPath(x *command.Ctx) []byte {
	if x.W.Proto >= 3 {
		return []byte("$")
	}
	return []byte(".")
}

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
		x.W.Error("ERR " + err.Error())
		return nil, false
	}
	return v, true
}

// jsonRead finds a document for reading: found=false for no key, ok=false
// after replying WRONGTYPE.
func jsonRead(x *command.Ctx, key []byte) (doc []byte, found, ok bool) {
	e, found, ok := x.ReadTyped(key, keyspace.TypeJSON)
	if !found || !ok {
		return nil, found, ok
	}
	return e.Value(), true, true
}

// jsonEdit is a document being changed by one command. Changes of the same
// size are written into doc where it is (the entry's bytes, until a splice
// moved the document into a scratch buffer); commit stores the result.
type jsonEdit struct {
	x      *command.Ctx
	key    []byte
	e      keyspace.Entry
	found  bool
	doc    []byte
	copied bool // doc is a scratch copy: commit stores it
	dirty  bool
}

// jsonOpen looks key up for writing; ok=false after replying WRONGTYPE.
func jsonOpen(x *command.Ctx, key []byte) (ed jsonEdit, ok bool) {
	ed = jsonEdit{x: x, key: key}
	ed.e, ed.found = x.LookupWrite(key)
	if x.WrongType(&ed.e, ed.found, keyspace.TypeJSON) {
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
func (ed *jsonEdit) splice(parent, start, end int, repl []byte, countDelta int) {
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
	default:
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
	v, ok := jsonParseValue(x, x.Args[3])
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
// match, or as a new member of the parent objects when the path's last step
// names a missing member. set=false when nothing was set (cond, or no
// place); ok=false after replying an error.
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
		for _, m := range descending(ms) {
			ed.replace(m, v)
		}
		return true, true
	}
	if cond == jsonSetXX {
		return false, true
	}
	name, parent, named := p.LastName()
	if !named {
		return false, true
	}
	parents, ok := jsonEval(ed.x, parent, ed.doc)
	if !ok {
		return false, false
	}
	member := append(jsondoc.AppendKey(nil, name), v...)
	set = false
	for _, m := range descending(parents) {
		if jsondoc.KindAt(ed.doc, m.Off) == jsondoc.Object {
			end := jsondoc.End(ed.doc, m.Off)
			ed.splice(m.Off, end, end, member, 1)
			set = true
		}
	}
	return set, true
}

func jsonMSet(x *command.Ctx) {
	args := x.Args[1:]
	if len(args)%3 != 0 {
		x.W.Error(command.ErrArity("json.mset"))
		return
	}
	// Everything is checked before anything changes: MSET is atomic.
	paths := make([]*jsonpath.Path, 0, len(args)/3)
	vals := make([][]byte, 0, len(args)/3)
	for i := 0; i < len(args); i += 3 {
		p, ok := jsonParsePath(x, args[i+1])
		if !ok {
			return
		}
		v, ok := jsonParseValue(x, args[i+2])
		if !ok {
			return
		}
		e, found := x.LookupWrite(args[i])
		if x.WrongType(&e, found, keyspace.TypeJSON) {
			return
		}
		if !found && !p.IsRoot() && !slices.ContainsFunc(args[:i], func(k []byte) bool { return bytes.Equal(k, args[i]) }) {
			x.W.Error(errJSONRoot)
			return
		}
		paths, vals = append(paths, p), append(vals, v)
	}
	for i := 0; i < len(args); i += 3 {
		ed, _ := jsonOpen(x, args[i])
		if !ed.found && !paths[i/3].IsRoot() {
			continue
		}
		if _, ok := jsonSetAt(&ed, paths[i/3], vals[i/3], jsonSetAny); !ok {
			return
		}
		ed.commit("json.mset")
	}
	x.W.OK()
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
		ed.store(mergePatch(nil, nil, -1, patch, 0))
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
		if _, ok := jsonSetAt(&ed, p, mergePatch(nil, nil, -1, patch, 0), jsonSetAny); !ok {
			return
		}
	}
	ms = outermost(ed.doc, ms)
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.Parent < 0 {
			ed.store(mergePatch(nil, ed.doc, m.Off, patch, 0))
			continue
		}
		merged := mergePatch(nil, ed.doc, m.Off, patch, 0)
		if jsondoc.KindAt(patch, 0) == jsondoc.Null {
			ed.remove(m)
			continue
		}
		ed.replace(m, merged)
	}
	ed.commit("json.merge")
	x.W.OK()
}

// mergePatch appends RFC 7396's merge of the patch at pOff into the target
// at tOff of doc (-1: no target). Members the patch sets to null go, the
// object's last member taking their place; new members come last.
func mergePatch(dst, doc []byte, tOff int, patch []byte, pOff int) []byte {
	if jsondoc.KindAt(patch, pOff) != jsondoc.Object {
		return append(dst, patch[pOff:jsondoc.End(patch, pOff)]...)
	}
	var members []int // the target's member offsets, in their order
	if tOff >= 0 && jsondoc.KindAt(doc, tOff) == jsondoc.Object {
		for p, end := jsondoc.First(doc, tOff), jsondoc.End(doc, tOff); p < end; {
			members = append(members, p)
			_, v := jsondoc.Member(doc, p)
			p = v + jsondoc.Size(doc, v)
		}
	}
	pEnd := jsondoc.End(patch, pOff)
	// Removals first, each filled by the last member.
	for q := jsondoc.First(patch, pOff); q < pEnd; {
		k, v := jsondoc.Member(patch, q)
		if jsondoc.KindAt(patch, v) == jsondoc.Null {
			for i, mp := range members {
				if mk, _ := jsondoc.Member(doc, mp); bytes.Equal(mk, k) {
					members[i] = members[len(members)-1]
					members = members[:len(members)-1]
					break
				}
			}
		}
		q = v + jsondoc.Size(patch, v)
	}
	dst, start := jsondoc.BeginObject(dst)
	n := 0
	for _, mp := range members {
		k, v := jsondoc.Member(doc, mp)
		dst = jsondoc.AppendKey(dst, k)
		if pv, _, ok := jsondoc.Lookup(patch, pOff, k); ok {
			dst = mergePatch(dst, doc, v, patch, pv)
		} else {
			dst = append(dst, doc[v:jsondoc.End(doc, v)]...)
		}
		n++
	}
	for q := jsondoc.First(patch, pOff); q < pEnd; {
		k, v := jsondoc.Member(patch, q)
		q = v + jsondoc.Size(patch, v)
		if jsondoc.KindAt(patch, v) == jsondoc.Null {
			continue
		}
		if tOff >= 0 && jsondoc.KindAt(doc, tOff) == jsondoc.Object {
			if _, _, ok := jsondoc.Lookup(doc, tOff, k); ok {
				continue
			}
		}
		dst = mergePatch(jsondoc.AppendKey(dst, k), nil, -1, patch, v)
		n++
	}
	jsondoc.EndContainer(dst, start, n)
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
		args = [][]byte{jsonRootPath(x)}
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
		if out, ok = jsonGetOne(x, out, doc, ps[0], args[0], &f); !ok {
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
				x.W.Error(errJSONNoPath(args[i]))
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
func jsonGetOne(x *command.Ctx, out, doc []byte, p *jsonpath.Path, text []byte, f *jsondoc.Format) ([]byte, bool) {
	ms, ok := jsonEval(x, p, doc)
	if !ok {
		return out, false
	}
	if p.IsLegacy() {
		if len(ms) == 0 {
			x.W.Error(errJSONNoPath(text))
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
	text := x.Args[len(x.Args)-1]
	p, ok := jsonParsePath(x, text)
	if !ok {
		return
	}
	x.W.Array(len(keys))
	for _, key := range keys {
		e, found := x.LookupRead(key)
		if !found || e.Type() != keyspace.TypeJSON {
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
	doc, p, text, ok := jsonReadPath(x)
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
			x.W.Error(errJSONNoPath(text))
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
// booleans as simple strings, integers as integers, doubles and strings as
// bulk strings, an array as "[" and its elements, an object as "{" and its
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
		x.W.Bulk(jsondoc.AppendNumber(nil, jsondoc.Float(doc, off)))
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
// Args[2]; doc=nil for no key.
func jsonReadPath(x *command.Ctx) (doc []byte, p *jsonpath.Path, text []byte, ok bool) {
	text = jsonRootPath(x)
	if len(x.Args) > 2 {
		text = x.Args[2]
	}
	if p, ok = jsonParsePath(x, text); !ok {
		return nil, nil, nil, false
	}
	doc, _, ok = jsonRead(x, x.Args[1])
	return doc, p, text, ok
}

// ---- JSON.DEL, JSON.CLEAR, JSON.TOGGLE ----

func jsonDel(x *command.Ctx) {
	text := []byte("$")
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
	if p.IsRoot() {
		x.DB.DeleteEntry(&ed.e)
		x.Dirty++
		x.Notify(config.EventModule, "json.del", ed.key)
		x.W.Int(1)
		return
	}
	ms, ok := jsonEval(x, p, ed.doc)
	if !ok {
		return
	}
	ms = outermost(ed.doc, ms)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Parent < 0 {
			continue
		}
		ed.remove(ms[i])
	}
	ed.commit("json.del")
	x.W.Int(int64(len(ms)))
}

func jsonClear(x *command.Ctx) {
	text := []byte("$")
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
	ms = outermost(ed.doc, ms)
	cleared := 0
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		switch jsondoc.KindAt(ed.doc, m.Off) {
		case jsondoc.Array:
			ed.replace(m, jsondoc.EmptyArray)
		case jsondoc.Object:
			ed.replace(m, jsondoc.EmptyObject)
		case jsondoc.Integer, jsondoc.Number:
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
	ed, ok := jsonOpenExisting(x, x.Args[1])
	if !ok {
		return
	}
	ms, ok := jsonEval(x, p, ed.doc)
	if !ok {
		return
	}
	if p.IsLegacy() {
		if len(ms) == 0 {
			x.W.Error(errJSONNoPath(x.Args[2]))
			return
		}
		for _, m := range ms {
			if k := jsondoc.KindAt(ed.doc, m.Off); k != jsondoc.Bool {
				x.W.Error(errJSONWrongKind("boolean", k))
				return
			}
		}
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
	doc, p, _, ok := jsonReadPath(x)
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
			x.W.Null()
			return
		}
		x.W.BulkString(jsondoc.KindAt(doc, ms[0].Off).Name())
		return
	}
	if x.W.Proto >= 3 { // RESP3 wraps the list in an array
		x.W.Array(1)
	}
	x.W.Array(len(ms))
	for _, m := range ms {
		x.W.BulkString(jsondoc.KindAt(doc, m.Off).Name())
	}
}

// jsonLengths is STRLEN, ARRLEN and OBJLEN: the length of each match of
// kind, by measure.
func jsonLengths(x *command.Ctx, kind jsondoc.Kind, want string, measure func(doc []byte, off int) int) {
	doc, p, text, ok := jsonReadPath(x)
	if !ok {
		return
	}
	if doc == nil {
		if p.IsLegacy() {
			x.W.Null()
		} else {
			x.W.Error(errJSONNoKey)
		}
		return
	}
	ms, ok := jsonEval(x, p, doc)
	if !ok {
		return
	}
	if p.IsLegacy() {
		if len(ms) == 0 {
			x.W.Error(errJSONNoPath(text))
			return
		}
		if k := jsondoc.KindAt(doc, ms[0].Off); k != kind {
			x.W.Error(errJSONWrongKind(want, k))
			return
		}
		x.W.Int(int64(measure(doc, ms[0].Off)))
		return
	}
	x.W.Array(len(ms))
	for _, m := range ms {
		if jsondoc.KindAt(doc, m.Off) == kind {
			x.W.Int(int64(measure(doc, m.Off)))
		} else {
			x.W.Null()
		}
	}
}

func jsonStrLen(x *command.Ctx) {
	jsonLengths(x, jsondoc.String, "string", func(doc []byte, off int) int { return len(jsondoc.Str(doc, off)) })
}

func jsonArrLen(x *command.Ctx) { jsonLengths(x, jsondoc.Array, "array", jsondoc.Len) }

func jsonObjLen(x *command.Ctx) { jsonLengths(x, jsondoc.Object, "object", jsondoc.Len) }

func jsonObjKeys(x *command.Ctx) {
	doc, p, text, ok := jsonReadPath(x)
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
	keys := func(off int) {
		x.W.Array(jsondoc.Len(doc, off))
		for q, end := jsondoc.First(doc, off), jsondoc.End(doc, off); q < end; {
			k, v := jsondoc.Member(doc, q)
			x.W.Bulk(k)
			q = v + jsondoc.Size(doc, v)
		}
	}
	if p.IsLegacy() {
		if len(ms) == 0 {
			x.W.Error(errJSONNoPath(text))
			return
		}
		if k := jsondoc.KindAt(doc, ms[0].Off); k != jsondoc.Object {
			x.W.Error(errJSONWrongKind("object", k))
			return
		}
		keys(ms[0].Off)
		return
	}
	x.W.Array(len(ms))
	for _, m := range ms {
		if jsondoc.KindAt(doc, m.Off) == jsondoc.Object {
			keys(m.Off)
		} else {
			x.W.NullArray()
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
		x.W.Error(errJSONWrongKind("a number", k))
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
	if p.IsLegacy() {
		if len(ms) == 0 {
			x.W.Error(errJSONNoPath(x.Args[2]))
			return
		}
		for _, m := range ms {
			if k := jsondoc.KindAt(ed.doc, m.Off); k != jsondoc.Integer && k != jsondoc.Number {
				x.W.Error(errJSONWrongKind("a number", k))
				return
			}
		}
	}
	// Compute every result first: an overflow changes nothing.
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
	if p.IsLegacy() {
		last := results[len(results)-1]
		if x.W.Proto >= 3 {
			writeNumber(x, last)
		} else {
			x.W.Bulk(jsondoc.AppendScalar(nil, last, 0))
		}
		return
	}
	if x.W.Proto >= 3 {
		x.W.Array(len(results))
		for _, r := range results {
			if r == nil {
				x.W.Null()
			} else {
				writeNumber(x, r)
			}
		}
		return
	}
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

func writeNumber(x *command.Ctx, v []byte) {
	if jsondoc.KindAt(v, 0) == jsondoc.Integer {
		x.W.Int(jsondoc.Int(v, 0))
	} else {
		x.W.Double(jsondoc.Float(v, 0))
	}
}

// numOp applies the increment or factor by to the number at off: integer
// arithmetic when both are integers and it does not overflow, else double
// arithmetic, whose integral results are kept as integers (as RedisJSON's
// numbers keep them). ok=false for a result that is not a finite number.
func numOp(doc []byte, off int, by []byte, mult bool) ([]byte, bool) {
	if jsondoc.KindAt(doc, off) == jsondoc.Integer && jsondoc.KindAt(by, 0) == jsondoc.Integer {
		a, b := jsondoc.Int(doc, off), jsondoc.Int(by, 0)
		if mult {
			if r := a * b; a == 0 || (r/a == b && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)) {
				return jsondoc.AppendInt(nil, r), true
			}
		} else if r := a + b; (b >= 0) == (r >= a) {
			return jsondoc.AppendInt(nil, r), true
		}
	}
	a, b := jsondoc.Num(doc, off), jsondoc.Num(by, 0)
	r := a + b
	if mult {
		r = a * b
	}
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return nil, false
	}
	if r == math.Trunc(r) && r >= -(1<<63) && r < 1<<63 {
		return jsondoc.AppendInt(nil, int64(r)), true
	}
	return jsondoc.AppendFloat(nil, r), true
}

// ---- JSON.STRAPPEND ----

func jsonStrAppend(x *command.Ctx) {
	text, arg := jsonRootPath(x), x.Args[2]
	if len(x.Args) > 3 {
		text, arg = x.Args[2], x.Args[3]
	}
	v, ok := jsonParseValue(x, arg)
	if !ok {
		return
	}
	if k := jsondoc.KindAt(v, 0); k != jsondoc.String {
		x.W.Error(errJSONWrongKind("string", k))
		return
	}
	add := jsondoc.Str(v, 0)
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
	if !jsonLegacyCheck(x, p, text, ed.doc, ms, jsondoc.String, "string") {
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

// jsonLegacyCheck replies the legacy path's errors: nothing matched, or a
// match not of kind.
func jsonLegacyCheck(x *command.Ctx, p *jsonpath.Path, text, doc []byte, ms []jsonpath.Match, kind jsondoc.Kind, want string) bool {
	if !p.IsLegacy() {
		return true
	}
	if len(ms) == 0 {
		x.W.Error(errJSONNoPath(text))
		return false
	}
	for _, m := range ms {
		if k := jsondoc.KindAt(doc, m.Off); k != kind {
			x.W.Error(errJSONWrongKind(want, k))
			return false
		}
	}
	return true
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
	ed, ok := jsonOpenExisting(x, x.Args[1])
	if !ok {
		return
	}
	ms, ok := jsonEval(x, p, ed.doc)
	if !ok {
		return
	}
	if !jsonLegacyCheck(x, p, text, ed.doc, ms, jsondoc.Array, "array") {
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
		x.W.Error(command.ErrSyntax)
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
		x.W.Error(errJSONNoKey)
		return
	}
	ms, ok := jsonEval(x, p, doc)
	if !ok {
		return
	}
	if !jsonLegacyCheck(x, p, x.Args[2], doc, ms, jsondoc.Array, "array") {
		return
	}
	found64 := make([]int64, len(ms))
	for i, m := range ms {
		found64[i] = -2 // null
		if jsondoc.KindAt(doc, m.Off) != jsondoc.Array {
			continue
		}
		found64[i] = arrIndex(doc, m.Off, v, start, stop)
	}
	if p.IsLegacy() {
		x.W.Int(found64[0])
		return
	}
	x.W.Array(len(found64))
	for _, f := range found64 {
		if f == -2 {
			x.W.Null()
		} else {
			x.W.Int(f)
		}
	}
}

// arrIndex finds v in the array at off between start and stop (exclusive;
// negative from the end; stop 0 or past the end meaning the end), -1 when
// absent.
func arrIndex(doc []byte, off int, v []byte, start, stop int64) int64 {
	n := int64(jsondoc.Len(doc, off))
	if start < 0 {
		start = max(start+n, 0)
	}
	if stop < 0 {
		stop += n
	} else if stop == 0 || stop > n {
		stop = n
	}
	p := jsondoc.First(doc, off)
	for i := int64(0); i < stop && i < n; i++ {
		if i >= start && jsondoc.Equal(doc, p, v, 0) {
			return i
		}
		p += jsondoc.Size(doc, p)
	}
	return -1
}

func jsonArrPop(x *command.Ctx) {
	text := jsonRootPath(x)
	if len(x.Args) > 2 {
		text = x.Args[2]
	}
	index := int64(-1)
	if len(x.Args) > 3 {
		var ok bool
		if index, ok = x.IntArgOrReply(x.Args[3]); !ok {
			return
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
	ed, ok := jsonOpenExisting(x, x.Args[1])
	if !ok {
		return
	}
	ms, ok := jsonEval(x, p, ed.doc)
	if !ok {
		return
	}
	if !jsonLegacyCheck(x, p, text, ed.doc, ms, jsondoc.Array, "array") {
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
	ed, ok := jsonOpenExisting(x, x.Args[1])
	if !ok {
		return
	}
	ms, ok := jsonEval(x, p, ed.doc)
	if !ok {
		return
	}
	if !jsonLegacyCheck(x, p, x.Args[2], ed.doc, ms, jsondoc.Array, "array") {
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
		from, to := start, stop
		if from < 0 {
			from = max(from+n, 0)
		}
		if to < 0 {
			to += n
		}
		to = min(to, n-1)
		if from >= n || from > to {
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

// ---- JSON.DEBUG MEMORY ----

func jsonDebugMemory(x *command.Ctx) {
	text := jsonRootPath(x)
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
			x.W.Error(errJSONNoPath(text))
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
