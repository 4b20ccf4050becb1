// Package cmdspec is Keyhive's one description of its commands: for every
// command and subcommand its arity, flags, ACL categories, tips, key specs,
// arguments, documentation, and the facts the server asks of it instead of
// switching on its name (the value type it writes, its effect on TTLs, the
// script it runs). The server builds its command table from it and derives
// everything else (COMMAND INFO and DOCS, key extraction for locks, MULTI,
// ACL checks and COMMAND GETKEYS) from it.
//
// A command is one Spec value written in the group's file (strings.go,
// lists.go, ...). Its key specs and arguments are written in two small
// grammars, parsed once when the package initializes:
//
// Key specs (one string per spec, as Redis 7.0's COMMAND INFO reports them):
//
//	"RW access delete; index 1; range 0 1 0"
//	"RO access; keyword STREAMS 1; range -1 1 2"
//	"RW access update; index 2; keynum 0 1 1"
//	"OW update; unknown; unknown; why the spec is so, in words"
//
// flags, then begin_search (index <pos> | keyword <word> <startfrom> |
// unknown), then find_keys (range <lastkey> <keystep> <limit> |
// keynum <keynumidx> <firstkey> <keystep> | unknown), then optionally notes.
//
// Arguments (one string per command, items separated by spaces):
//
//	name:type          string, integer, double, pattern, unix-time
//	name:key#0         a key argument and its key spec index
//	name:pattern#1     (a pattern naming keys, as SORT's BY, has one too)
//	TOKEN=name:type    an argument introduced by a token
//	TOKEN              a pure token named after it in lower case
//	TOKEN=name         a pure token with another name
//	"~"=name           tokens that are not plain words are quoted
//	name:<a|b>         oneof; name:{a b} block (items nest)
//	[item]             optional
//	item...            multiple; item...* also repeats the token
//	item(deprecated 6.2.0)
//
// For example SET:
//
//	&Spec{Name: "set", Arity: -3, Flags: FlagWrite | FlagDenyOOM, ACL: "@write @string @slow",
//		Keys:    []string{"RW access update variable_flags; index 1; range 0 1 0"},
//		KeyFunc: setKeys,
//		Args:    "key:key#0 value:string [condition:<NX|XX>] [GET] [expiration:<EX=seconds:integer|...|KEEPTTL>]",
//		Since:   "1.0.0", Complexity: "O(1)",
//		Summary: "Sets a key's string value, with options for expiry and conditions."},
//
// The structure (flags, key specs, arguments) is Redis 7.0's interface, as
// its COMMAND INFO and COMMAND DOCS report it; the summaries and
// complexities, and the notes of the key specs that have them, are
// Keyhive's own words. There is no history and no per-argument since: those
// are Redis's release notes.
package cmdspec

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Spec describes one command or subcommand.
type Spec struct {
	Name  string // lower case; a subcommand's own name, without its parent
	Arity int    // exact when positive, minimum when negative (name included)
	// Flags are Redis's command flags (movablekeys is derived from the key
	// specs) and Keyhive's own (see the constants).
	Flags Flags
	ACL   string   // every ACL category COMMAND INFO lists, in its order
	Tips  string   // COMMAND INFO's tips, space separated
	Keys  []string // key specs, in the key spec grammar
	// KeyFunc finds the keys where Redis uses a function instead of (or
	// besides) the key specs; nil when the specs say it all.
	KeyFunc KeyFunc
	// Redact, when set, is the range of arguments the slow log hides
	// (credentials).
	Redact func(args [][]byte) (lo, hi int)
	Args   string // arguments, in the argument grammar

	// Writes is the type of value the command writes, which namespaces
	// restricted to some types check; Untyped for the commands that work
	// on any key (DEL, EXPIRE, RENAME) and for those that do not write.
	Writes ValueType
	// TTL is the command's effect on the TTL of the keys it writes, which
	// namespaces that require a TTL check. With TTLOptions, its expiration
	// options (EX, PX, EXAT, PXAT give a TTL, KEEPTTL keeps it, PERSIST
	// removes it), found by the argument grammar, override TTL.
	TTL        TTLEffect
	TTLOptions bool
	// Runs is the script or function the command runs, which its first
	// argument names.
	Runs Runs
	// ScriptCallable lets a script call this noscript command while DEBUG
	// SET-DISABLE-DENY-SCRIPTS is on, as Redis's test suite has scripts
	// do; except with an argument after the command's name that
	// ScriptCallableExcept lists, which would re-enter the script engine or
	// swap the data under it.
	ScriptCallable       bool
	ScriptCallableExcept []string

	Group, Since, Summary, Complexity string
	DocFlags                          string // COMMAND DOCS doc_flags, space separated
	DeprecatedSince, ReplacedBy       string

	Subcommands []*Spec

	// Filled once by the package from the fields above.
	FullName string // "parent|sub" for subcommands
	Parent   *Spec
	keySpecs []KeySpec
	args     []Arg
	// simple is set when the keys are one index+range spec, as for most
	// commands: then the keys are found without looking at the arguments.
	simple                              bool
	first, lastKey, step                int
	simpleFlags                         KeyFlags
	legacyFirst, legacyLast, legacyStep int
	movable                             bool
	// ttlArg is the position of the ttl argument (TTLByArgument);
	// optionsFrom that of the first option, after countArg's count of
	// repeatWidth words when repeatWidth is set, and options the tokens
	// they may start with (TTLOptions).
	ttlArg, optionsFrom   int
	countArg, repeatWidth int
	options               []option
}

// KeySpecs are the parsed key specs.
func (s *Spec) KeySpecs() []KeySpec { return s.keySpecs }

// Arguments are the parsed arguments.
func (s *Spec) Arguments() []Arg { return s.args }

// MovableKeys reports Redis's movablekeys flag: the keys are not one plain
// range that COMMAND INFO's first/last/step fields can describe.
func (s *Spec) MovableKeys() bool { return s.movable }

// LegacyRange is COMMAND INFO's first key, last key and step.
func (s *Spec) LegacyRange() (first, last, step int) {
	return s.legacyFirst, s.legacyLast, s.legacyStep
}

// ValueType is a type of value, as Spec.Writes names it.
type ValueType uint8

// The value types of Redis's data commands.
const (
	Untyped ValueType = iota
	TypeString
	TypeList
	TypeSet
	TypeZSet
	TypeHash
	TypeStream
	TypeJSON
)

// Runs says what a command runs on its caller's behalf.
type Runs uint8

const (
	RunsNothing     Runs = iota
	RunsScript           // its first argument is a script's source (EVAL)
	RunsScriptBySHA      // its first argument is a script's SHA1 (EVALSHA)
	RunsFunction         // its first argument is a function's name (FCALL)
)

// ScriptMayCall reports whether a script may call the command with args
// while DEBUG SET-DISABLE-DENY-SCRIPTS is on (see ScriptCallable).
func (s *Spec) ScriptMayCall(args [][]byte) bool {
	if !s.ScriptCallable {
		return false
	}
	next := 1
	if s.Parent != nil {
		next = 2
	}
	if next < len(args) {
		for _, w := range s.ScriptCallableExcept {
			if equalFold(args[next], w) {
				return false
			}
		}
	}
	return true
}

var commands = map[string]*Spec{}

// add registers the commands of one group; a file per group calls it from
// its init function.
func add(group string, specs ...*Spec) {
	for _, s := range specs {
		if _, dup := commands[s.Name]; dup {
			panic("cmdspec: command declared twice: " + s.Name)
		}
		prepare(s, nil, group)
		commands[s.Name] = s
	}
}

func prepare(s *Spec, parent *Spec, group string) {
	s.Parent = parent
	s.FullName = s.Name
	if parent != nil {
		s.FullName = parent.Name + "|" + s.Name
	}
	if s.Group == "" {
		s.Group = group
	}
	fail := func(err error) { panic(fmt.Sprintf("cmdspec: %s: %v", s.FullName, err)) }
	if s.Flags&FlagMovableKeys != 0 {
		fail(errors.New("movablekeys is derived from the key specs, not declared"))
	}
	for _, k := range s.Keys {
		ks, err := ParseKeySpec(k)
		if err != nil {
			fail(err)
		}
		s.keySpecs = append(s.keySpecs, ks)
	}
	args, err := ParseArgs(s.Args)
	if err != nil {
		fail(err)
	}
	s.args = args
	s.deriveKeys()
	if err := s.prepareTTL(); err != nil {
		fail(err)
	}
	for _, sub := range s.Subcommands {
		prepare(sub, s, s.Group)
	}
}

// Commands returns every top-level command, sorted by name.
func Commands() []*Spec {
	list := make([]*Spec, 0, len(commands))
	for _, s := range commands {
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list
}

// Lookup finds a command by its lower-case name, or a subcommand by
// "parent|sub".
func Lookup(name string) *Spec {
	parent, sub, isSub := strings.Cut(name, "|")
	s := commands[parent]
	if s == nil || !isSub {
		return s
	}
	for _, c := range s.Subcommands {
		if c.Name == sub {
			return c
		}
	}
	return nil
}
