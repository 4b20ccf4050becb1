package server

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/family"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/resp"
)

// Command is one entry of the command table: the spec it comes from (what
// COMMAND reports, the key specs), what dispatch checks, and the handler.
type Command struct {
	Name  string // lower case; "parent|sub" for subcommands
	Arity int    // exact when positive, minimum when negative (name included)
	Flags cmdspec.Flags
	Run   func(x *Ctx)
	Sub   map[string]*Command

	spec *cmdspec.Spec
	// categories are the ACL categories, in COMMAND INFO's order.
	categories []string

	// id indexes the per-server statistics; the table itself is shared by
	// every server in the process and holds no mutable state.
	id int
}

// table is the one command table: dispatch, COMMAND and INFO commandstats all
// read it. It is built from cmdspec; package family binds the data
// commands' handlers as it is built, the server's own files from their init
// functions.
var table = buildTable()

// commandCount is the number of commands and subcommands.
var commandCount int

// commandStats are one server's counters for one command (INFO commandstats).
type commandStats struct {
	calls, usec, rejected, failed atomic.Int64
	latency                       atomic.Pointer[latencyHistogram] // latency.go
}

func buildTable() map[string]*Command {
	t := map[string]*Command{}
	for _, s := range cmdspec.Commands() {
		c := newCommand(s)
		for _, sub := range s.Subcommands {
			if c.Sub == nil {
				c.Sub = map[string]*Command{}
			}
			c.Sub[sub.Name] = newCommand(sub)
		}
		t[s.Name] = c
	}
	family.Register(func(name string, run func(x *command.Ctx)) { bindFamily(t, name, run) })
	return t
}

func newCommand(s *cmdspec.Spec) *Command {
	c := &Command{
		Name: s.FullName, Arity: s.Arity, Flags: s.Flags, spec: s,
		categories: strings.Fields(s.ACL), id: commandCount,
	}
	commandCount++
	if s.MovableKeys() {
		c.Flags |= cmdspec.FlagMovableKeys
	}
	if c.Flags&cmdspec.FlagAllowBusy != 0 && !s.HasKeys() {
		c.Flags |= cmdspec.FlagNoKeyspace
	}
	return c
}

// bind gives a command its handler; every family file binds its commands.
func bind(name string, run func(x *Ctx)) {
	c := table[name]
	if c == nil || c.Run != nil {
		panic("server: no command to bind, or bound twice: " + name)
	}
	c.Run = run
}

// bindFamily gives a command of package family its handler in table t
// ("parent|sub" names a subcommand).
func bindFamily(t map[string]*Command, name string, run func(x *command.Ctx)) {
	c := t[name]
	if parent, sub, isSub := strings.Cut(name, "|"); isSub {
		c = t[parent].Sub[sub]
	}
	if c == nil || c.Run != nil {
		panic("server: no command to bind, or bound twice: " + name)
	}
	c.Run = func(x *Ctx) { run(&x.Ctx) }
}

// bindSub gives a subcommand (CONFIG GET, ...) its handler.
func bindSub(parent, name string, run func(x *Ctx)) {
	c := table[parent].Sub[name]
	if c == nil || c.Run != nil {
		panic("server: no subcommand to bind, or bound twice: " + parent + "|" + name)
	}
	c.Run = run
}

// AllCategories returns the command's ACL categories as COMMAND INFO lists
// them.
func (c *Command) AllCategories() []string { return c.categories }

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// keyArgs appends the command's key arguments to dst: every key it may
// touch, for locks, MULTI and tracking. all reports that they cannot be
// known from the arguments: the command must take every lock.
func (c *Command) keyArgs(args [][]byte, dst [][]byte) (keys [][]byte, all bool) {
	if first, lastKey, step, ok := c.spec.SimpleKeys(); ok {
		last := lastKey
		if last >= 0 {
			last += first
		} else {
			last += len(args)
		}
		for i := first; i <= last && i < len(args); i += step {
			dst = append(dst, args[i])
		}
		return dst, false
	}
	var refs []cmdspec.KeyRef
	if c.spec.KeyFunc == nil {
		var buf [8]cmdspec.KeyRef
		refs, all = c.spec.SpecLockKeys(args, buf[:0])
		for _, k := range refs {
			dst = append(dst, args[k.Pos])
		}
		return dst, all
	}
	// A key function is called through a pointer, so its buffer would
	// escape: it is pooled.
	buf := keyRefPool.Get().(*[]cmdspec.KeyRef)
	*buf, all = c.spec.LockKeys(args, (*buf)[:0])
	for _, k := range *buf {
		dst = append(dst, args[k.Pos])
	}
	keyRefPool.Put(buf)
	return dst, all
}

var keyRefPool = sync.Pool{New: func() any { return new([]cmdspec.KeyRef) }}

// keyRefs appends the command's keys with their key spec flags as Redis
// finds them for COMMAND GETKEYS and ACL checks.
func (c *Command) keyRefs(args [][]byte, dst []cmdspec.KeyRef) []cmdspec.KeyRef {
	return c.spec.GetKeys(args, dst)
}

// findCommand finds the command args names, descending into its
// subcommand when it is a container and one is named; nil for an unknown
// command or subcommand. Arity is not checked (hasArity).
func findCommand(args [][]byte) *Command {
	cmd := lookupCommand(table, args[0])
	if cmd != nil && cmd.Sub != nil && len(args) >= 2 {
		cmd = lookupCommand(cmd.Sub, args[1])
	}
	return cmd
}

// hasArity reports whether n arguments, the name included, fit the
// command's arity.
func (c *Command) hasArity(n int) bool {
	return (c.Arity <= 0 || n == c.Arity) && n >= -c.Arity
}

// commandByFullName finds "get" or "config|get", as COMMAND INFO and ACL
// rules name commands.
func commandByFullName(name string) *Command {
	parent, sub, isSub := strings.Cut(strings.ToLower(name), "|")
	c := table[parent]
	if c == nil || !isSub {
		return c
	}
	return c.Sub[sub]
}

// lookupCommand finds a command by a client-supplied name without allocating.
func lookupCommand(m map[string]*Command, name []byte) *Command {
	var buf [32]byte
	if len(name) > len(buf) {
		return m[strings.ToLower(string(name))]
	}
	lower := buf[:len(name)]
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	return m[string(lower)]
}

// Ctx is a handler's command.Ctx with what the dispatcher keeps beside it:
// the server, the client, the command, and how commands nest (MULTI,
// scripts), which handlers of package command never see.
type Ctx struct {
	command.Ctx
	s   *Server
	c   *Client
	cmd *Command
	// scriptErrorCounted: the script the command ran replied an error that
	// one of its commands got and INFO counted already (read under the
	// script's lock, as the engine's answer is for its last run).
	scriptErrorCounted bool
	// cannotBlock makes blocking commands reply as on timeout: call sets it
	// inside EXEC and scripts, and for a client that obeys (blockingDenied).
	cannotBlock bool
	keyBuf      [][]byte
	nsRefs      []cmdspec.KeyRef // a write's keys, for the namespace policies
}

// newCtx is the context of c's commands, replying into w.
func newCtx(s *Server, c *Client, w *resp.Writer) Ctx {
	x := Ctx{s: s, c: c}
	x.Attach(s, c)
	x.W = w
	return x
}

// setCommand makes cmd the command x runs.
func (x *Ctx) setCommand(cmd *Command) { x.cmd, x.Name = cmd, cmd.Name }

// Error texts clients match on, as Redis writes them (package command's,
// under the names the server's handlers use).
const (
	errSyntax    = command.ErrSyntax
	errNotInt    = command.ErrNotInt
	errNoSuchKey = command.ErrNoSuchKey
	errDBIndex   = command.ErrDBIndex
	errNoAuth    = "NOAUTH Authentication required."
)

func errArity(name string) string { return command.ErrArity(name) }

func errUnknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.Write(cstr.Truncate(args[0], 128))
	b.WriteString("', with args beginning with: ")
	used := 0
	for _, a := range args[1:] {
		if used >= 128 {
			break
		}
		a = cstr.Truncate(a, 128-used)
		b.WriteByte('\'')
		b.Write(a)
		b.WriteString("' ")
		used += len(a) + 3
	}
	return b.String()
}

func errUnknownSubcommand(parent string, sub []byte) string {
	return "ERR unknown subcommand '" + string(cstr.Truncate(sub, 128)) + "'. Try " + strings.ToUpper(parent) + " HELP."
}

// cloneArgs is package command's, under the name the server's handlers use.
func cloneArgs(args [][]byte) [][]byte { return command.CloneArgs(args) }
