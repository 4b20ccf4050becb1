package server

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/keyhive/keyhive/internal/strnum"
)

// The ACL command: users (acl.go), their description in Redis's rule
// syntax, ACL LOG, and the ACL file.

func init() {
	bindSub("acl", "cat", aclCat)
	bindSub("acl", "deluser", aclDelUser)
	bindSub("acl", "dryrun", aclDryRun)
	bindSub("acl", "genpass", aclGenPass)
	bindSub("acl", "getuser", aclGetUser)
	bindSub("acl", "list", aclList)
	bindSub("acl", "load", aclLoad)
	bindSub("acl", "log", aclLogCommand)
	bindSub("acl", "save", aclSave)
	bindSub("acl", "setuser", aclSetUser)
	bindSub("acl", "users", aclUsers)
	bindSub("acl", "whoami", func(x *Ctx) { x.W.BulkString(x.c.userName()) })
	bindSub("acl", "help", aclHelp)
}

func errACLSubSyntax(x *Ctx) {
	x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + cString(x.Args[1]) + "'. Try ACL HELP.")
}

func aclSetUser(x *Ctx) {
	name := x.Args[2]
	if strings.ContainsAny(string(name), " \x00") {
		x.W.Error("ERR Usernames can't contain spaces or null characters")
		return
	}
	rules := make([]string, len(x.Args)-3)
	for i, a := range x.Args[3:] {
		rules[i] = string(a)
	}
	if err := x.s.setUser(string(name), rules, false); err != nil {
		x.W.Error("ERR " + err.Error())
		return
	}
	x.s.killUnpermittedSubscribers(x.s.user(string(name)), x.c)
	x.W.OK()
}

func aclDelUser(x *Ctx) {
	s := x.s
	gone := map[*aclUser]bool{}
	s.acl.mu.Lock()
	for _, a := range x.Args[2:] {
		name := string(a)
		if name == "default" {
			s.acl.mu.Unlock()
			x.W.Error("ERR The 'default' user cannot be removed")
			return
		}
	}
	for _, a := range x.Args[2:] {
		if u := s.acl.users[string(a)]; u != nil {
			gone[u] = true
			delete(s.acl.users, string(a))
		}
	}
	s.acl.mu.Unlock()
	s.killUserClients(gone, x.c)
	x.W.Int(int64(len(gone)))
}

func aclGetUser(x *Ctx) {
	u := x.s.user(string(x.Args[2]))
	if u == nil {
		x.W.Null()
		return
	}
	p := u.perms.Load()
	w := x.W
	w.Map(6)
	w.BulkString("flags")
	flags := p.flags()
	w.Set(len(flags))
	for _, f := range flags {
		w.BulkString(f)
	}
	w.BulkString("passwords")
	w.Array(len(p.passwords))
	for _, h := range p.passwords {
		w.BulkString(h)
	}
	writeSelectorFields(x, p.root)
	w.BulkString("selectors")
	w.Array(len(p.selectors))
	for _, s := range p.selectors {
		w.Map(3)
		writeSelectorFields(x, s)
	}
}

func writeSelectorFields(x *Ctx, s *aclSelector) {
	w := x.W
	w.BulkString("commands")
	w.BulkString(s.describeCommands())
	w.BulkString("keys")
	w.BulkString(strings.Join(s.describeKeys(), " "))
	w.BulkString("channels")
	if s.allChannels {
		w.BulkString("&*")
	} else {
		w.BulkString(strings.Join(s.describeChannels(), " "))
	}
}

func (p *userPerms) flags() []string {
	f := []string{"off"}
	if p.enabled {
		f[0] = "on"
	}
	if p.nopass {
		f = append(f, "nopass")
	}
	if p.sanitize != "" {
		f = append(f, p.sanitize)
	}
	return f
}

// describe is the user's rules as ACL LIST and ACL SAVE write them.
func (p *userPerms) describe() string {
	parts := p.flags()
	for _, h := range p.passwords {
		parts = append(parts, "#"+h)
	}
	parts = append(parts, p.root.describe())
	for _, s := range p.selectors {
		parts = append(parts, "("+s.describe()+")")
	}
	return strings.Join(parts, " ")
}

func (s *aclSelector) describe() string {
	parts := s.describeKeys()
	if s.allChannels {
		parts = append(parts, "&*")
	} else {
		parts = append(append(parts, "resetchannels"), s.describeChannels()...)
	}
	return strings.Join(append(parts, s.describeCommands()), " ")
}

func (s *aclSelector) describeKeys() []string {
	if s.allKeys {
		return []string{"~*"}
	}
	var parts []string
	for _, k := range s.keys {
		switch k.perm {
		case permRead:
			parts = append(parts, "%R~"+k.pattern)
		case permWrite:
			parts = append(parts, "%W~"+k.pattern)
		default:
			parts = append(parts, "~"+k.pattern)
		}
	}
	return parts
}

func (s *aclSelector) describeChannels() []string {
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return parts
}

// describeCommands is +@all or -@all (the last reset) and then the command
// rules in the order given, as Redis 7.2+ describes them.
func (s *aclSelector) describeCommands() string {
	first := "-@all"
	if s.future {
		first = "+@all"
	}
	return strings.Join(append([]string{first}, s.rules...), " ")
}

// userNames returns the users' names in order.
func (s *Server) userNames() []string {
	s.acl.mu.Lock()
	defer s.acl.mu.Unlock()
	names := make([]string, 0, len(s.acl.users))
	for n := range s.acl.users {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func aclUsers(x *Ctx) {
	names := x.s.userNames()
	writeStrings(x, names)
}

// aclLines are the users in ACL LIST's format.
func (s *Server) aclLines() []string {
	var lines []string
	for _, n := range s.userNames() {
		if u := s.user(n); u != nil {
			lines = append(lines, "user "+n+" "+u.perms.Load().describe())
		}
	}
	return lines
}

func aclList(x *Ctx) {
	lines := x.s.aclLines()
	writeStrings(x, lines)
}

func aclCat(x *Ctx) {
	if len(x.Args) > 3 {
		errACLSubSyntax(x)
		return
	}
	if len(x.Args) == 2 {
		x.W.Array(len(aclCategories))
		for _, c := range aclCategories {
			x.W.BulkString(c[1:])
		}
		return
	}
	cat := categoryIndex(string(x.Args[2]))
	if cat < 0 {
		x.W.Error("ERR Unknown category '" + cString(x.Args[2]) + "'")
		return
	}
	var names []string
	for _, c := range aclCommands {
		if aclInfo[c.id].categories&(1<<cat) != 0 {
			names = append(names, c.Name)
		}
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
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	rand.Read(buf)
	x.W.BulkString(hex.EncodeToString(buf)[:chars])
}

func aclDryRun(x *Ctx) {
	u := x.s.user(string(x.Args[2]))
	if u == nil {
		x.W.Error("ERR User '" + cString(x.Args[2]) + "' not found")
		return
	}
	args := x.Args[3:]
	cmd := findCommand(args)
	if cmd == nil {
		x.W.Error("ERR Command '" + cString(args[0]) + "' not found")
		return
	}
	if !cmd.hasArity(len(args)) {
		x.W.Error(errArity(cmd.Name))
		return
	}
	v, obj := checkCommand(u.perms.Load(), cmd, args, cmd.keyRefs(args, nil))
	switch v {
	case aclOK:
		x.W.OK()
	case aclDeniedCmd:
		x.W.BulkString("User " + u.name + " has no permissions to run the '" + cmd.Name + "' command")
	case aclDeniedKey:
		x.W.BulkString("User " + u.name + " has no permissions to access the '" + string(obj) + "' key")
	default:
		x.W.BulkString("User " + u.name + " has no permissions to access the '" + string(obj) + "' channel")
	}
}

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

func aclSave(x *Ctx) {
	f := x.s.cfg.ACLFile()
	if f == "" {
		x.W.Error(errNoACLFile)
		return
	}
	var b strings.Builder
	for _, l := range x.s.aclLines() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	tmp := f + ".tmp-" + strconv.Itoa(os.Getpid())
	err := os.WriteFile(tmp, []byte(b.String()), 0o644)
	if err == nil {
		err = os.Rename(tmp, f)
	}
	if err != nil {
		os.Remove(tmp)
		x.s.log.Printf("Opening temp ACL file for ACL SAVE: %v", err)
		x.W.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	x.W.OK()
}

func aclLoad(x *Ctx) {
	f := x.s.cfg.ACLFile()
	if f == "" {
		x.W.Error(errNoACLFile)
		return
	}
	if err := x.s.loadACLFile(f); err != "" {
		x.W.Error("ERR " + err)
		return
	}
	x.W.OK()
}

// loadACLFile replaces the users with those of an ACL file, or reports the
// file's errors (Redis's texts) and changes nothing. A user the file keeps
// keeps its clients, with the new permissions; the clients of users it drops
// are disconnected.
func (s *Server) loadACLFile(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "Error loading ACLs, opening file '" + path + "': " + errnoText(err)
	}
	users, errs := parseACLFile(path, string(data), s.aclPubsubDefault())
	if errs != "" {
		return errs + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	}
	if users["default"] == nil {
		users["default"] = defaultUserPerms()
	}
	s.acl.mu.Lock()
	dropped := map[*aclUser]bool{}
	for name, u := range s.acl.users {
		if users[name] == nil {
			dropped[u] = true
			delete(s.acl.users, name)
		}
	}
	for name, p := range users {
		u := s.acl.users[name]
		if u == nil {
			u = &aclUser{name: name}
			s.acl.users[name] = u
		}
		u.perms.Store(p)
	}
	s.acl.mu.Unlock()
	s.killUserClients(dropped, nil)
	for _, n := range s.userNames() {
		if u := s.user(n); u != nil {
			s.killUnpermittedSubscribers(u, nil)
		}
	}
	return ""
}

// parseACLFile reads ACL file lines ("user <name> <rules>...", split on
// single spaces as Redis does); errs lists the errors of every bad line.
func parseACLFile(path, data string, allChannels bool) (users map[string]*userPerms, errs string) {
	users = map[string]*userPerms{}
	for i, line := range strings.Split(data, "\n") {
		n := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		args := strings.Split(line, " ")
		if args[0] != "user" || len(args) < 2 {
			errs += path + ":" + strconv.Itoa(n) + " should start with user keyword followed by the username. "
			continue
		}
		name := args[1]
		if users[name] != nil {
			errs += "WARNING: Duplicate user '" + name + "' found on line " + strconv.Itoa(n) + ". "
			continue
		}
		p := newUserPerms(allChannels)
		users[name] = p
		merged, open := mergeSelectorArgs(args[2:])
		if open >= 0 {
			errs += path + ":" + strconv.Itoa(n) + ": Unmatched parenthesis in selector definition."
			continue
		}
		if errs != "" {
			continue
		}
		// Unknown commands are all reported (naming them tells nothing
		// secret); of the other errors only the first, as in Redis.
		syntaxError := false
		for _, r := range merged {
			r = strings.Trim(r, "\t\r\n")
			err := p.apply(r, allChannels)
			switch {
			case err == errACLUnknown:
				errs += path + ":" + strconv.Itoa(n) + ": Error in applying operation '" + r + "': " + err.Error() + ". "
			case err != nil && !syntaxError:
				errs += path + ":" + strconv.Itoa(n) + ": " + err.Error() + ". "
				syntaxError = true
			}
		}
		p.seal()
	}
	return users, errs
}

// errnoText is an OS error as C's strerror words it.
func errnoText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	s := err.Error()
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

func aclHelp(x *Ctx) {
	writeHelp(x, "ACL", []string{
		"CAT [<category>]",
		"    List all commands that belong to <category>, or all command categories",
		"    when no category is specified.",
		"DELUSER <username> [<username> ...]",
		"    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>",
		"    Get the user's details.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"LOAD",
		"    Reload users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the ACL log entries.",
		"SAVE",
		"    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Create or modify a user with the specified attributes.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.",
	})
}
