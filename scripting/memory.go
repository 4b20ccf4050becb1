package scripting

import (
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// What scripts cost, and keeping that small. gopher-lua's compiler leaves a
// function's slices at their starting capacity (1024 instructions and as
// many line numbers, 128 debug calls...): 16.7 KB for "return 1". Compiled
// functions are trimmed to their length, and the script cache keeps every
// script's text but compiled form only for the scripts run lately, within
// compiledBudget bytes; the others are compiled again from their text when
// run (0.1 ms for seed 002's enqueue script: BenchmarkLoadScript). 50,000
// one-line scripts then cost about 0.2 KB each, and a script run often
// stays compiled.

// compiledBudget bounds the estimated bytes of compiled EVAL scripts kept.
const compiledBudget = 8 << 20

// luaStateBytes is about what a fresh Lua state with Redis's libraries
// holds (measured: TestLuaStateBytes), reported as its share of
// used_memory_vm_eval and used_memory_vm_functions.
const luaStateBytes = 160 << 10

// scriptEntryBytes is a cached script's bookkeeping besides its text: the
// Script, its SHA1 string and its map slot.
const scriptEntryBytes = int64(unsafe.Sizeof(Script{})) + 40 + 32

func scriptBytes(s *Script) int64 { return scriptEntryBytes + int64(cap(s.Body)) }

// trimProto gives p and its nested functions' slices exactly their length,
// dropping the compiler's spare capacity.
func trimProto(p *lua.FunctionProto) {
	p.Code = clone(p.Code)
	p.Constants = clone(p.Constants)
	p.FunctionPrototypes = clone(p.FunctionPrototypes)
	p.DbgSourcePositions = clone(p.DbgSourcePositions)
	p.DbgLocals = clone(p.DbgLocals)
	p.DbgCalls = clone(p.DbgCalls)
	p.DbgUpvalues = clone(p.DbgUpvalues)
	for _, child := range p.FunctionPrototypes {
		trimProto(child)
	}
}

// clone copies s into a slice of its length (nil when empty).
func clone[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// protoBytes estimates what p and its nested functions hold, with a
// closure of it. The string constants' index (unexported in gopher-lua)
// keeps the compiler's capacity of 32.
func protoBytes(p *lua.FunctionProto) int64 {
	n := int64(unsafe.Sizeof(*p)) + int64(unsafe.Sizeof(lua.LFunction{}))
	n += int64(cap(p.Code))*4 + int64(cap(p.Constants))*16 + int64(cap(p.FunctionPrototypes))*8
	n += int64(cap(p.DbgSourcePositions))*8 + int64(cap(p.DbgCalls))*int64(unsafe.Sizeof(lua.DbgCall{}))
	n += int64(cap(p.DbgUpvalues))*16 + int64(max(32, len(p.Constants)))*16
	for _, c := range p.Constants {
		if s, ok := c.(lua.LString); ok {
			n += 16 + int64(len(s)) // boxed, plus the bytes
		}
	}
	for _, l := range p.DbgLocals {
		n += 8 + int64(unsafe.Sizeof(*l)) + int64(len(l.Name))
	}
	for _, child := range p.FunctionPrototypes {
		n += protoBytes(child)
	}
	return n
}

// compiledScripts is the set of EVAL scripts whose compiled form is kept,
// evicted in CLOCK order: the hand passes over the ring, a script run again
// since it last passed gets another round, and a new script takes the slot
// freed behind the hand, so it lasts a whole round. Marking a run is a
// store, so running a kept script costs nothing more.
type compiledScripts struct {
	ring  []*Script // nil: a free slot, listed in free
	free  []int
	hand  int
	bytes int64
}

// keep records that s now holds its compiled form, evicting others over
// the budget.
func (c *compiledScripts) keep(s *Script, proto *lua.FunctionProto) {
	size := protoBytes(proto)
	for c.bytes > 0 && c.bytes+size > compiledBudget {
		c.evictOne()
	}
	s.proto, s.compiledBytes, s.used = proto, size, false
	c.bytes += size
	if n := len(c.free); n > 0 {
		c.ring[c.free[n-1]] = s
		c.free = c.free[:n-1]
		return
	}
	c.ring = append(c.ring, s)
}

// evictOne drops the compiled form of the first script the hand finds not
// run since its last pass. There is one (c.bytes > 0).
func (c *compiledScripts) evictOne() {
	for ; ; c.hand++ {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		s := c.ring[c.hand]
		switch {
		case s == nil:
		case s.used:
			s.used = false
		default:
			c.bytes -= s.compiledBytes
			s.proto, s.fn, s.compiledBytes = nil, nil, 0
			c.ring[c.hand] = nil
			c.free = append(c.free, c.hand)
			c.hand++
			return
		}
	}
}

// reset forgets every compiled script (SCRIPT FLUSH).
func (c *compiledScripts) reset() { *c = compiledScripts{} }

// dropClosures forgets the closures made in a Lua state being closed; the
// compiled functions stay.
func (c *compiledScripts) dropClosures() {
	for _, s := range c.ring {
		if s != nil {
			s.fn = nil
		}
	}
}

// MemoryStats are the figures of Redis 7.0's INFO memory about scripts.
type MemoryStats struct {
	Scripts     int   // number_of_cached_scripts
	ScriptBytes int64 // used_memory_scripts_eval: the cached scripts' text and bookkeeping
	EvalVM      int64 // used_memory_vm_eval: the EVAL Lua state and the compiled scripts it keeps
	Functions   int   // number_of_functions
	Libraries   int   // number_of_libraries
	FunctionVM  int64 // used_memory_vm_functions: the functions' Lua state and compiled libraries
	// FunctionBytes is used_memory_functions: the libraries' code, names
	// and bookkeeping.
	FunctionBytes int64
}

// MemoryStats reports the scripts' and functions' memory. It may run
// concurrently with the other methods.
func (e *Engine) MemoryStats() MemoryStats {
	e.cacheMu.RLock()
	defer e.cacheMu.RUnlock()
	m := MemoryStats{
		Scripts:     len(e.scripts),
		ScriptBytes: e.scriptBytes,
		EvalVM:      e.evalVMBytes,
		Functions:   len(e.libs.functions),
		Libraries:   len(e.libs.byName),
	}
	if e.fnStateLive {
		m.FunctionVM = luaStateBytes
	}
	for _, lib := range e.libs.byName {
		m.FunctionVM += lib.vmBytes
		m.FunctionBytes += int64(unsafe.Sizeof(Library{})) + int64(len(lib.Name)+cap(lib.Code)) + 32
		for _, f := range lib.Functions {
			m.FunctionBytes += int64(unsafe.Sizeof(Function{})) + int64(len(f.Name)) + 32
			if f.Description != nil {
				m.FunctionBytes += 16 + int64(len(*f.Description))
			}
		}
	}
	return m
}
