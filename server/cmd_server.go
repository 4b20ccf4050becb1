package server

import (
	"net"
	"sort"
	"strings"
	"time"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/internal/version"
	"github.com/keyhive/keyhive/resp"
)

func init() {
	bind("time", timeCommand)
	bind("info", infoCommand)
	bind("shutdown", shutdownCommand)
	bind("role", roleCommand)
	bind("lolwut", lolwutCommand)
	bindSub("module", "help", moduleHelp)
	bindSub("module", "list", func(x *Ctx) { x.W.Array(0) })
	bindSub("module", "load", moduleLoad)
	bindSub("module", "loadex", moduleLoad)
	bindSub("module", "unload", func(x *Ctx) {
		if moduleCommandAllowed(x) {
			x.W.Error("ERR Error unloading module: no such module with that name")
		}
	})
	bind("command", commandInfoAll)
	bindSub("config", "get", func(x *Ctx) { writeStringMap(x, x.s.cfg.GetMany(argStrings(x.Args[2:]))) })
	bindSub("config", "set", configSet)
	bindSub("config", "resetstat", configResetStat)
	bindSub("config", "rewrite", configRewrite)
	bindSub("config", "help", configHelp)
	bindSub("command", "count", func(x *Ctx) { x.W.Int(int64(len(table))) })
	bindSub("command", "info", commandInfo)
	bindSub("command", "docs", commandDocs)
	bindSub("command", "list", commandList)
	bindSub("command", "getkeys", func(x *Ctx) { commandGetKeys(x, false) })
	bindSub("command", "getkeysandflags", func(x *Ctx) { commandGetKeys(x, true) })
	bindSub("command", "help", commandHelp)
}

// MODULE: Keyhive is not a host for Redis modules (C shared libraries), so
// it lists none and cannot load one, with Redis's replies for a module that
// fails to load or is not there.

// moduleCommandAllowed applies enable-module-command to the subcommands
// that load and unload, replying Redis's refusal.
func moduleCommandAllowed(x *Ctx) bool {
	mode := x.s.cfg.EnableModuleCommand()
	if mode == "yes" || (mode == "local" && x.c.isLocal()) {
		return true
	}
	x.W.Error("ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.")
	return false
}

func moduleLoad(x *Ctx) {
	if moduleCommandAllowed(x) {
		x.s.log.Printf("Module %s failed to load: Keyhive does not load modules", cstr.String(x.Args[2]))
		x.W.Error("ERR Error loading the extension. Please check the server logs.")
	}
}

func moduleHelp(x *Ctx) {
	writeHelp(x, "MODULE", []string{
		"LIST", "    Return a list of loaded modules.",
		"LOAD <path> [<arg> ...]", "    Load a module library from <path>, passing to it any optional arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]", "    Load a module library from <path>, while passing it module configurations and optional arguments.",
		"UNLOAD <name>", "    Unload a module.",
	})
}

func argStrings(args [][]byte) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

// writeStrings writes a list of strings as an array.
func writeStrings(x *Ctx, list []string) {
	x.W.Array(len(list))
	for _, s := range list {
		x.W.BulkString(s)
	}
}

// writeStringMap writes a flat name, value list as a map.
func writeStringMap(x *Ctx, kv []string) {
	x.W.Map(len(kv) / 2)
	for _, s := range kv {
		x.W.BulkString(s)
	}
}

func timeCommand(x *Ctx) {
	now := time.Now()
	x.W.Array(2)
	x.W.BulkInt(now.Unix())
	x.W.BulkInt(int64(now.Nanosecond() / 1000))
}

func configSet(x *Ctx) {
	if len(x.Args)%2 != 0 {
		x.W.Error(errSyntax)
		return
	}
	if err := x.s.cfg.Set(argStrings(x.Args[2:])); err != nil {
		x.W.Error(err.Error())
		return
	}
	x.W.OK()
}

func configRewrite(x *Ctx) {
	if err := x.s.cfg.Rewrite(); err != nil {
		x.W.Error(err.Error())
		return
	}
	x.W.OK()
}

func configResetStat(x *Ctx) {
	s := x.s
	st := &s.stats
	for _, c := range []interface{ Store(int64) }{&st.connectionsReceived, &st.rejectedConnections, &s.ks.ExpiredKeys} {
		c.Store(0)
	}
	s.resetTraffic()
	for i := range s.cmdStats {
		st := &s.cmdStats[i]
		st.calls.Store(0)
		st.usec.Store(0)
		st.rejected.Store(0)
		st.failed.Store(0)
		st.latency.Store(nil)
	}
	s.stats.errors.reset()
	s.overMaxmemory.reset()
	s.forks.total.Store(0)
	s.forks.latestUs.Store(0)
	s.compat.ops.Store(0)
	s.slotStats.Reset(func(int) bool { return true })
	s.rates.reset()
	s.expiry.mu.Lock()
	s.expiry.stalePerc, s.expiry.capped, s.expiry.cpuUs = 0, 0, 0
	s.expiry.mu.Unlock()
	x.W.OK()
}

func configHelp(x *Ctx) {
	writeHelp(x, "CONFIG", []string{
		"GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>", "    Set the configuration <directive> to <value>.",
		"RESETSTAT", "    Reset statistics reported by the INFO command.",
		"REWRITE", "    Rewrite the configuration file.",
	})
}

// forEachCommand visits every command and subcommand in name order.
func forEachCommand(fn func(c *Command)) {
	for _, c := range sortedCommands(table) {
		fn(c)
		for _, sub := range sortedCommands(c.Sub) {
			fn(sub)
		}
	}
}

func sortedCommands(m map[string]*Command) []*Command {
	list := make([]*Command, 0, len(m))
	for _, c := range m {
		list = append(list, c)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list
}

// shutdownCommand stops the server, saving first when asked to (SAVE) or
// when save points are configured, unless NOSAVE; a failed save keeps the
// server running unless FORCE. The connection closes without a reply, as in
// Redis.
func shutdownCommand(x *Ctx) {
	var flags config.ShutdownFlags
	var abort bool
	for _, a := range x.Args[1:] {
		switch strings.ToLower(string(a)) {
		case "nosave":
			flags |= config.ShutdownNoSave
		case "save":
			flags |= config.ShutdownSave
		case "force":
			flags |= config.ShutdownForce
		case "now":
			flags |= config.ShutdownNow
		case "abort":
			abort = true
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	if flags&config.ShutdownSave != 0 && flags&config.ShutdownNoSave != 0 || abort && len(x.Args) > 2 {
		x.W.Error(errSyntax)
		return
	}
	srv := x.s
	if abort {
		if srv.abortShutdown() {
			x.W.OK()
		} else {
			x.W.Error("ERR No shutdown in progress.")
		}
		return
	}
	srv.log.Printf("User requested shutdown...")
	const refused = "ERR Errors trying to SHUTDOWN. Check logs."
	run, joined := srv.beginShutdown()
	if x.blockingDenied() { // inside MULTI: no waiting, for replicas or another shutdown
		if joined || srv.prepareShutdown(run, false, flags|config.ShutdownNow) != nil {
			x.W.Error(refused)
			return
		}
		x.c.closeAfterReply = true
		go srv.Close() // Close waits for this client's goroutine, so not inline
		return
	}
	// The client waits, as blocked, while replicas catch up and the data
	// is saved: its event loop serves the others meanwhile.
	x.Block(command.BlockRequest{})
	w := x.c.blocked
	go func() {
		if srv.prepareShutdown(run, joined, flags) != nil {
			srv.blocking.unblock(w, func(rw *resp.Writer) { rw.Error(refused) })
			return
		}
		srv.Close()
	}()
}

func (c *Client) isLocal() bool {
	switch a := c.conn.RemoteAddr().(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

// COMMAND

func commandInfoAll(x *Ctx) {
	cmds := sortedCommands(table)
	x.W.Array(len(cmds))
	for _, c := range cmds {
		writeCommandInfo(x, c)
	}
}

func commandInfo(x *Ctx) {
	if len(x.Args) == 2 {
		commandInfoAll(x)
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, name := range x.Args[2:] {
		if c := commandByFullName(string(name)); c != nil {
			writeCommandInfo(x, c)
		} else {
			x.W.Null()
		}
	}
}

func writeCommandInfo(x *Ctx, c *Command) {
	w := x.W
	w.Array(10)
	w.BulkString(c.Name)
	w.Int(int64(c.Arity))
	flags := c.Flags.Names()
	w.Set(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
	first, last, step := c.spec.LegacyRange()
	w.Int(int64(first))
	w.Int(int64(last))
	w.Int(int64(step))
	cats := c.AllCategories()
	w.Set(len(cats))
	for _, cat := range cats {
		w.Simple(cat)
	}
	tips := strings.Fields(c.spec.Tips)
	w.Set(len(tips))
	for _, tip := range tips {
		w.BulkString(tip)
	}
	writeKeySpecs(w, c.spec.KeySpecs())
	subs := sortedCommands(c.Sub)
	if len(subs) == 0 {
		w.Set(0) // Redis's RESP3 quirk: an empty set, but an array of subcommands
	} else {
		w.Array(len(subs))
	}
	for _, sub := range subs {
		writeCommandInfo(x, sub)
	}
}

// writeKeySpecs writes COMMAND INFO's key specs field.
func writeKeySpecs(w *resp.Writer, specs []cmdspec.KeySpec) {
	w.Set(len(specs))
	for _, ks := range specs {
		if ks.Notes != "" {
			w.Map(4)
			w.BulkString("notes")
			w.BulkString(ks.Notes)
		} else {
			w.Map(3)
		}
		w.BulkString("flags")
		writeKeyFlags(w, ks.Flags)
		w.BulkString("begin_search")
		w.Map(2)
		w.BulkString("type")
		w.BulkString(ks.BeginSearch)
		w.BulkString("spec")
		switch ks.BeginSearch {
		case cmdspec.SearchIndex:
			w.Map(1)
			w.BulkString("index")
			w.Int(int64(ks.Index))
		case cmdspec.SearchKeyword:
			w.Map(2)
			w.BulkString("keyword")
			w.BulkString(ks.Keyword)
			w.BulkString("startfrom")
			w.Int(int64(ks.StartFrom))
		default:
			w.Map(0)
		}
		w.BulkString("find_keys")
		w.Map(2)
		w.BulkString("type")
		w.BulkString(ks.FindKeys)
		w.BulkString("spec")
		switch ks.FindKeys {
		case cmdspec.FindRange:
			writeIntMap(w, "lastkey", ks.LastKey, "keystep", ks.KeyStep, "limit", ks.Limit)
		case cmdspec.FindKeynum:
			writeIntMap(w, "keynumidx", ks.KeyNumIdx, "firstkey", ks.FirstKey, "keystep", ks.KeyStep)
		default:
			w.Map(0)
		}
	}
}

func writeIntMap(w *resp.Writer, k1 string, v1 int, k2 string, v2 int, k3 string, v3 int) {
	w.Map(3)
	w.BulkString(k1)
	w.Int(int64(v1))
	w.BulkString(k2)
	w.Int(int64(v2))
	w.BulkString(k3)
	w.Int(int64(v3))
}

func writeKeyFlags(w *resp.Writer, f cmdspec.KeyFlags) {
	names := f.Names()
	w.Set(len(names))
	for _, n := range names {
		w.Simple(n)
	}
}

func commandDocs(x *Ctx) {
	var cmds []*Command
	if len(x.Args) == 2 {
		cmds = sortedCommands(table)
	} else {
		for _, name := range x.Args[2:] {
			if c := commandByFullName(string(name)); c != nil {
				cmds = append(cmds, c)
			}
		}
	}
	x.W.Map(len(cmds))
	for _, c := range cmds {
		writeCommandDoc(x, c)
	}
}

// writeCommandDoc writes a command's COMMAND DOCS entry in Redis's order.
// Keyhive gives no history and no per-argument since: those are Redis's
// release notes, not the interface.
func writeCommandDoc(x *Ctx, c *Command) {
	w := x.W
	sp := c.spec
	w.BulkString(c.Name)
	n := 3 // summary, since, group
	for _, field := range []string{sp.Complexity, sp.DocFlags, sp.DeprecatedSince, sp.ReplacedBy} {
		if field != "" {
			n++
		}
	}
	if len(sp.Arguments()) > 0 {
		n++
	}
	if len(c.Sub) > 0 {
		n++
	}
	w.Map(n)
	w.BulkString("summary")
	w.BulkString(sp.Summary)
	w.BulkString("since")
	w.BulkString(sp.Since)
	w.BulkString("group")
	w.BulkString(sp.Group)
	if sp.Complexity != "" {
		w.BulkString("complexity")
		w.BulkString(sp.Complexity)
	}
	if sp.DocFlags != "" {
		w.BulkString("doc_flags")
		flags := strings.Fields(sp.DocFlags)
		w.Set(len(flags))
		for _, f := range flags {
			w.Simple(f)
		}
	}
	if sp.DeprecatedSince != "" {
		w.BulkString("deprecated_since")
		w.BulkString(sp.DeprecatedSince)
	}
	if sp.ReplacedBy != "" {
		w.BulkString("replaced_by")
		w.BulkString(sp.ReplacedBy)
	}
	if args := sp.Arguments(); len(args) > 0 {
		w.BulkString("arguments")
		writeDocArgs(w, args)
	}
	if len(c.Sub) > 0 {
		w.BulkString("subcommands")
		subs := sortedCommands(c.Sub)
		w.Map(len(subs))
		for _, sub := range subs {
			writeCommandDoc(x, sub)
		}
	}
}

func writeDocArgs(w *resp.Writer, args []cmdspec.Arg) {
	w.Array(len(args))
	for i := range args {
		a := &args[i]
		flags := a.Flags()
		n := 2
		hasToken := a.Token != "" || a.Type == "pure-token" // MIGRATE's "" is a token
		for _, present := range []bool{a.KeySpecIndex >= 0, hasToken, a.DeprecatedSince != "", len(flags) > 0, a.Type == "oneof" || a.Type == "block"} {
			if present {
				n++
			}
		}
		w.Map(n)
		w.BulkString("name")
		w.BulkString(a.Name)
		w.BulkString("type")
		w.BulkString(a.Type)
		if a.KeySpecIndex >= 0 {
			w.BulkString("key_spec_index")
			w.Int(int64(a.KeySpecIndex))
		}
		if hasToken {
			w.BulkString("token")
			w.BulkString(a.Token)
		}
		if a.DeprecatedSince != "" {
			w.BulkString("deprecated_since")
			w.BulkString(a.DeprecatedSince)
		}
		if len(flags) > 0 {
			w.BulkString("flags")
			w.Set(len(flags))
			for _, f := range flags {
				w.Simple(f)
			}
		}
		if a.Type == "oneof" || a.Type == "block" {
			w.BulkString("arguments")
			writeDocArgs(w, a.Args)
		}
	}
}

func commandList(x *Ctx) {
	var filter func(c *Command) bool
	if len(x.Args) > 2 {
		if len(x.Args) != 5 || !strings.EqualFold(string(x.Args[2]), "filterby") {
			x.W.Error(errSyntax)
			return
		}
		arg := string(x.Args[4])
		switch strings.ToLower(string(x.Args[3])) {
		case "module":
			filter = func(*Command) bool { return false }
		case "aclcat":
			filter = func(c *Command) bool { return has(c.AllCategories(), "@"+strings.ToLower(arg)) }
		case "pattern":
			filter = func(c *Command) bool { return glob.MatchString(arg, c.Name, true) }
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	var names []string
	forEachCommand(func(c *Command) {
		if filter == nil || filter(c) {
			names = append(names, c.Name)
		}
	})
	writeStrings(x, names)
}

// commandGetKeys answers COMMAND GETKEYS and GETKEYSANDFLAGS with the keys
// ACL checks use, in Redis's order of checks and errors.
func commandGetKeys(x *Ctx, withFlags bool) {
	args := x.Args[2:]
	c := findCommand(args)
	switch {
	case c == nil:
		x.W.Error("ERR Invalid command specified")
		return
	case !c.spec.HasKeys():
		x.W.Error("ERR The command has no key arguments")
		return
	case !c.hasArity(len(args)):
		x.W.Error("ERR Invalid number of arguments specified for command")
		return
	}
	keys := c.keyRefs(args, nil)
	if len(keys) == 0 && c.Flags&cmdspec.FlagNoMandatoryKeys == 0 {
		x.W.Error("ERR Invalid arguments specified for command")
		return
	}
	x.W.Array(len(keys))
	for _, k := range keys {
		if withFlags {
			x.W.Array(2)
			x.W.Bulk(args[k.Pos])
			writeKeyFlags(x.W, k.Flags)
			continue
		}
		x.W.Bulk(args[k.Pos])
	}
}

func commandHelp(x *Ctx) {
	writeHelp(x, "COMMAND", []string{
		"(no subcommand)", "    Return details about all Redis commands.",
		"COUNT", "    Return the total number of commands in this Redis server.",
		"LIST", "    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"GETKEYS <full-command>", "    Return the keys from a full Redis command.",
		"GETKEYSANDFLAGS <full-command>", "    Return the keys and the access flags from a full Redis command.",
	})
}

// LOLWUT draws a piece of our own generative art (VERSION 5 and 6 take
// Redis's size arguments and limits; other versions draw nothing) and ends
// with the server's version, in words that name Keyhive and keep the
// "Redis ver." clients' tests look for.
func lolwutCommand(x *Ctx) {
	art := int64(7)
	args := x.Args[1:]
	if len(args) >= 2 && strings.EqualFold(string(args[0]), "version") {
		v, ok := strnum.ParseInt(args[1])
		if !ok {
			x.W.Error(errNotInt)
			return
		}
		art, args = v, args[2:]
	}
	var params []int64
	if art == 5 || art == 6 { // the other versions ignore their arguments
		for _, a := range args {
			v, ok := strnum.ParseInt(a)
			if !ok {
				x.W.Error(errNotInt)
				return
			}
			params = append(params, v)
		}
	}
	param := func(i int, def, hi int64) int {
		if i < len(params) {
			return int(min(max(params[i], 1), hi))
		}
		return int(def)
	}
	var b strings.Builder
	switch art {
	case 5:
		lolwutTiles(&b, param(0, 66, 1000), param(1, 8, 200), param(2, 12, 200))
	case 6:
		lolwutSkyline(&b, param(0, 80, 1000), param(1, 20, 1000))
	}
	b.WriteString("Keyhive, Redis ver. " + version.Redis + " compatible\n")
	x.W.Verbatim("txt", b.String())
}

// lolwutTiles draws rows of tiles that fall into disorder row by row: each
// tile is shaded by a hash of its place, more varied the lower it is.
func lolwutTiles(b *strings.Builder, cols, perRow, perCol int) {
	shades := []string{" ", "░", "▒", "▓", "█"}
	width := max(cols/perRow, 1)
	for row := range perCol {
		for line := 0; line < max(width/2, 1); line++ {
			for col := range cols {
				tile := col / width
				h := uint32(row*7919+tile*104729) * 2654435761
				spread := 1 + row*len(shades)/max(perCol, 1)
				b.WriteString(shades[len(shades)-1-int(h>>28)%spread%len(shades)])
			}
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
}

// lolwutSkyline draws a night skyline: towers of hashed heights under a
// sky with a few stars.
func lolwutSkyline(b *strings.Builder, cols, rows int) {
	heights := make([]int, cols)
	for i := range heights {
		tower := uint32(i/6+1) * 2654435761
		heights[i] = int(tower>>24) % max(rows*2/3, 1)
	}
	for r := rows; r >= 1; r-- {
		for c := range cols {
			switch {
			case heights[c] >= r && (c%6 == 0 || c%6 == 5):
				b.WriteByte('|')
			case heights[c] >= r && c%6 != 0:
				if (c+r)%3 == 0 {
					b.WriteByte('o')
				} else {
					b.WriteByte('#')
				}
			case heights[c] == r-1 && c%6 != 0:
				b.WriteByte('_')
			case (uint32(c*31+r*17)*2654435761)>>27 == 0:
				b.WriteByte('*')
			default:
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
}
