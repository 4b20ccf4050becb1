package server

import (
	"sync"

	"github.com/keyhive/keyhive/acl"
	"github.com/keyhive/keyhive/cmdspec"
)

// ACL's glue: the model is package acl; the server knows which user a
// client acts as, checks commands in admit, and disconnects the clients a
// change of users leaves without permission. A client of a user that may
// do everything pays one load and one branch per command.

// aclCatalog is the command table as ACL sees it, built once.
var aclCatalog = sync.OnceValue(func() *acl.Catalog {
	var cmds []acl.Command
	forEachCommand(func(c *Command) {
		cmds = append(cmds, acl.Command{ID: c.id, Name: c.Name, Categories: c.AllCategories(),
			NoAuth: c.Flags&cmdspec.FlagNoAuth != 0, Channels: channelArgs(c.Flags)})
	})
	return acl.NewCatalog(cmds)
})

func channelArgs(f cmdspec.Flags) acl.Channels {
	var ch acl.Channels
	if f&cmdspec.FlagChannelPublish != 0 {
		ch |= acl.Publish
	}
	if f&cmdspec.FlagChannelSubscribe != 0 {
		ch |= acl.Subscribe
	}
	if f&cmdspec.FlagChannelPattern != 0 {
		ch |= acl.Pattern
	}
	return ch
}

// initACL creates the users: default (with requirepass) and those of the
// config file's user directives, or of the aclfile.
func (s *Server) initACL() error {
	s.acl = acl.New(aclCatalog(), func() bool { return s.cfg.ACLPubsubDefault() == "allchannels" })
	applyRequirePass := func() { s.acl.SetRequirePass(s.cfg.RequirePass()) }
	applyRequirePass()
	s.cfg.OnChange("requirepass", applyRequirePass)
	return s.acl.Configure(s.cfg.Users(), s.cfg.ACLFile())
}

// user returns the named user, or nil.
func (s *Server) user(name string) *acl.User { return s.acl.User(name) }

// authenticate checks a user name and password as AUTH and HELLO do,
// logging a failure in ACL LOG.
func (c *Client) authenticate(name, pass []byte) bool {
	if u := c.s.user(string(name)); u != nil && u.Perms().Accepts(pass) {
		c.setUser(u)
		c.authenticated = true
		return true
	}
	c.s.aclLogAdd(c, acl.DeniedAuth, c.aclContext(), string(c.ctx.Args[0]), string(name))
	return false
}

func (c *Client) aclContext() string {
	if c.multi != nil {
		return acl.Multi
	}
	return acl.Toplevel
}

// aclLogAdd records a denial by client c (for a script, its caller).
func (s *Server) aclLogAdd(c *Client, v acl.Verdict, context, object, username string) {
	s.acl.Log.Add(s.clock.UnixMilli(), s.cfg.ACLLogMaxLen(), v, context, object, username, c.infoLine(c))
}

// setUser makes the client act as u.
func (c *Client) setUser(u *acl.User) { c.user.Store(u) }

// resetAuth is a new connection's (and RESET's) state: the default user,
// authenticated if it needs no password.
func (c *Client) resetAuth() {
	def := c.s.acl.Default()
	c.setUser(def)
	c.authenticated = def.Perms().AdmitsAnyone()
}

// authRequired reports whether the client must authenticate before running
// commands: the default user needs a password (or is off) and the client has
// not authenticated. Making the default user nopass lets unauthenticated
// clients in, as in Redis.
func (c *Client) authRequired() bool {
	return !c.authenticated && !c.s.acl.Default().Perms().AdmitsAnyone()
}

// aclAllowed checks a command about to run or be queued; a denied one is
// logged and rejected with NOPERM (inside MULTI that aborts the EXEC).
func (c *Client) aclAllowed(p *acl.Perms, cmd *Command, args [][]byte) bool {
	c.lastCmd.Store(cmd) // Redis sets it before checking: ACL LOG's client-info shows it
	v := c.aclDenied(p, cmd, args, c.aclContext())
	if v == acl.OK {
		return true
	}
	c.reject(cmd, acl.NoPermError(v, cmd.Name, c.userName()))
	return false
}

// aclDenied checks the command as the client's user and, if it is denied,
// logs it and returns the verdict.
func (c *Client) aclDenied(p *acl.Perms, cmd *Command, args [][]byte, context string) acl.Verdict {
	keys := cmd.keyRefs(args, c.aclKeys[:0])
	c.aclKeys = keys[:0]
	v, obj := p.Check(cmd.id, args, keys)
	if v != acl.OK {
		if v == acl.DeniedCommand {
			obj = []byte(cmd.Name)
		}
		c.s.aclLogAdd(c, v, context, string(obj), c.user.Load().Name)
	}
	return v
}

// execDenied checks a queued command again when EXEC runs it (the user's
// permissions may have changed since it was queued), replying Redis's error.
func (x *Ctx) execDenied(cmd *Command, args [][]byte) bool {
	c := x.c
	if c.obeys {
		return false // a master's transaction
	}
	p := c.user.Load().Perms()
	if p.Unrestricted() {
		return false
	}
	if v := c.aclDenied(p, cmd, args, acl.Multi); v != acl.OK {
		x.W.Error(acl.ExecError(v))
		return true
	}
	return false
}

// scriptDenied checks a script's redis.call as the user running the script;
// msg is the error Redis gives then.
func (h *scriptHost) scriptDenied(cmd *Command, args [][]byte, msg *string) bool {
	c := h.x.c
	p := c.user.Load().Perms()
	if p.Unrestricted() {
		return false
	}
	if v := c.aclDenied(p, cmd, args, acl.Lua); v != acl.OK {
		*msg = acl.ScriptError(v, cmd.Name, c.userName())
		return true
	}
	return false
}

// killUserClients disconnects the clients authenticated as one of users;
// the caller's own connection closes after its reply.
func (s *Server) killUserClients(users map[*acl.User]bool, by *Client) {
	for _, c := range s.clientsSnapshot() {
		if users[c.user.Load()] {
			c.kill(by)
		}
	}
}

// userName is the client's user as CLIENT LIST shows it.
func (c *Client) userName() string {
	if u := c.user.Load(); u != nil {
		return u.Name
	}
	return "default"
}

// readsAllKeys reports whether the command's user may read every key, which
// SORT's BY and GET patterns need; a script's commands run as its caller.
func (x *Ctx) readsAllKeys() bool {
	c := x.c
	if c == x.s.scriptClient {
		c = x.s.scriptHost.x.c
	}
	p := c.user.Load().Perms()
	return p.Unrestricted() || p.ReadsAllKeys(x.cmd.id, x.Args, x.cmd.keyRefs(x.Args, nil))
}

// CheckACL answers redis.acl_check_cmd: whether the script's user may run
// the command, without logging.
func (h *scriptHost) CheckACL(args [][]byte) (bool, string) {
	cmd := findCommand(args)
	if cmd == nil {
		return false, "Invalid command passed to redis.acl_check_cmd()"
	}
	p := h.x.c.user.Load().Perms()
	if p.Unrestricted() {
		return true, ""
	}
	v, _ := p.Check(cmd.id, args, cmd.keyRefs(args, nil))
	return v == acl.OK, ""
}

// killUnpermittedSubscribers disconnects the clients of u subscribed to a
// channel or pattern u may no longer use, as Redis does when a user's
// channel permissions shrink.
func (s *Server) killUnpermittedSubscribers(u *acl.User, by *Client) {
	p := u.Perms()
	if p.AllChannels() {
		return
	}
	doomed := map[*Client]bool{}
	check := func(name []byte, clients []*Client, pattern bool) {
		for _, c := range clients {
			if c.user.Load() == u && !doomed[c] && !p.ChannelAllowed(name, pattern) {
				doomed[c] = true
			}
		}
	}
	r := &s.pubsub
	r.mu.RLock()
	for ch, clients := range r.channels {
		check([]byte(ch), clients, false)
	}
	for ch, clients := range r.shard {
		check([]byte(ch), clients, false)
	}
	for _, ps := range r.patterns {
		check(ps.pattern, ps.clients, true)
	}
	r.mu.RUnlock()
	for c := range doomed {
		c.kill(by)
	}
}
