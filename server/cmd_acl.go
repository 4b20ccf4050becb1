package server

import (
	"github.com/keyhive/keyhive/acl"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
)

// The ACL command's handlers; the users, their rules and the ACL LOG are
// package acl's.

func init() {
	bindSub("acl", "cat", aclCat)
	bindSub("acl", "deluser", aclDelUser)
	bindSub("acl", "dryrun", aclDryRun)
	bindSub("acl", "genpass", aclGenPass)
	bindSub("acl", "getuser", aclGetUser)
	bindSub("acl", "list", func(x *Ctx) { writeStrings(x, x.s.acl.List()) })
	bindSub("acl", "load", aclLoad)
	bindSub("acl", "log", aclLog)
	bindSub("acl", "save", aclSave)
	bindSub("acl", "setuser", aclSetUser)
	bindSub("acl", "users", func(x *Ctx) { writeStrings(x, x.s.acl.Names()) })
	bindSub("acl", "whoami", func(x *Ctx) { x.W.BulkString(x.c.userName()) })
	bindSub("acl", "help", func(x *Ctx) { writeHelp(x, "ACL", acl.Help) })
}

func errACLSubSyntax(x *Ctx) {
	x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + cstr.String(x.Args[1]) + "'. Try ACL HELP.")
}

func aclSetUser(x *Ctx) {
	name := string(x.Args[2])
	rules := make([]string, len(x.Args)-3)
	for i, a := range x.Args[3:] {
		rules[i] = string(a)
	}
	if err := x.s.acl.Set(name, rules); err != nil {
		x.W.Error("ERR " + err.Error())
		return
	}
	x.s.killUnpermittedSubscribers(x.s.user(name), x.c)
	x.W.OK()
}

func aclDelUser(x *Ctx) {
	names := make([]string, len(x.Args)-2)
	for i, a := range x.Args[2:] {
		names[i] = string(a)
	}
	gone, err := x.s.acl.Delete(names)
	if err != nil {
		x.W.Error("ERR " + err.Error())
		return
	}
	x.s.killUserClients(gone, x.c)
	x.W.Int(int64(len(gone)))
}

func aclGetUser(x *Ctx) {
	if u := x.s.user(string(x.Args[2])); u != nil {
		u.Perms().WriteUser(x.W)
	} else {
		x.W.Null()
	}
}

func aclCat(x *Ctx) {
	if len(x.Args) > 3 {
		errACLSubSyntax(x)
		return
	}
	if len(x.Args) == 2 {
		writeStrings(x, acl.Categories[:])
		return
	}
	names, ok := aclCatalog().InCategory(string(x.Args[2]))
	if !ok {
		x.W.Error("ERR Unknown category '" + cstr.String(x.Args[2]) + "'")
		return
	}
	writeStrings(x, names)
}

func aclGenPass(x *Ctx) {
	if len(x.Args) > 3 {
		errACLSubSyntax(x)
		return
	}
	bits := int64(256)
	if len(x.Args) == 3 {
		n, ok := strnum.ParseInt(x.Args[2])
		if !ok {
			x.W.Error(errNotInt)
			return
		}
		if n <= 0 || n > 4096 {
			x.W.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
			return
		}
		bits = n
	}
	x.W.BulkString(acl.GenPass(bits))
}

func aclDryRun(x *Ctx) {
	u := x.s.user(string(x.Args[2]))
	if u == nil {
		x.W.Error("ERR User '" + cstr.String(x.Args[2]) + "' not found")
		return
	}
	args := x.Args[3:]
	cmd := findCommand(args)
	if cmd == nil {
		x.W.Error("ERR Command '" + cstr.String(args[0]) + "' not found")
		return
	}
	if !cmd.hasArity(len(args)) {
		x.W.Error(errArity(cmd.Name))
		return
	}
	if v, obj := u.Perms().Check(cmd.id, args, cmd.keyRefs(args, nil)); v != acl.OK {
		x.W.BulkString(acl.DryRunText(v, u.Name, cmd.Name, obj))
		return
	}
	x.W.OK()
}

func aclLog(x *Ctx) {
	if len(x.Args) > 3 {
		errACLSubSyntax(x)
		return
	}
	count := int64(10)
	if len(x.Args) == 3 {
		if cstr.ArgIs(x.Args[2], "reset") {
			x.s.acl.Log.Reset()
			x.W.OK()
			return
		}
		n, ok := strnum.ParseInt(x.Args[2])
		if !ok {
			x.W.Error(errNotInt)
			return
		}
		count = max(n, 0)
	}
	x.s.acl.Log.Write(x.W, count, x.s.clock.UnixMilli())
}

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

func aclSave(x *Ctx) {
	f := x.s.cfg.ACLFile()
	if f == "" {
		x.W.Error(errNoACLFile)
		return
	}
	if err := x.s.acl.Save(f); err != nil {
		x.s.log.Printf("Opening temp ACL file for ACL SAVE: %v", err)
		x.W.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	x.W.OK()
}

// aclLoad replaces the users with the ACL file's: the clients of users it
// drops are disconnected, and those subscribed where their user may no
// longer listen.
func aclLoad(x *Ctx) {
	s := x.s
	f := s.cfg.ACLFile()
	if f == "" {
		x.W.Error(errNoACLFile)
		return
	}
	dropped, err := s.acl.Load(f)
	if err != nil {
		x.W.Error("ERR " + err.Error())
		return
	}
	s.killUserClients(dropped, nil)
	for _, n := range s.acl.Names() {
		if u := s.user(n); u != nil {
			s.killUnpermittedSubscribers(u, nil)
		}
	}
	x.W.OK()
}
