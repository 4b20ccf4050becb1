package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/resp"
)

// Users and their permissions, as Redis 7.0's ACL: a user has passwords and
// a root selector (commands, key patterns, channel patterns) plus any number
// of further selectors; a command is allowed if one selector allows it.
//
// A user's permissions are an immutable value swapped atomically: ACL SETUSER
// builds the new value on a copy (so a failing rule changes nothing, as in
// Redis) and clients of the user see it from their next command. A client of
// a user that may do everything pays one load and one branch per command.

// aclPerm is what a key pattern grants, or what a key argument needs.
type aclPerm uint8

const (
	permRead aclPerm = 1 << iota
	permWrite
	permAll = permRead | permWrite
)

type keyPattern struct {
	pattern string
	perm    aclPerm
}

// aclSelector is one set of permissions.
type aclSelector struct {
	cmds []uint64 // allowed commands, a bit per Command.id
	// future is set by +@all: the selector grants commands added later
	// (Redis describes it as starting from +@all).
	future bool
	// firstArgs allows a command without subcommands only with one of
	// these first arguments (+select|0).
	firstArgs map[int][]string
	// rules are the command rules in the order given, as Redis 7.2+
	// describes them after its +@all or -@all (see recordRule).
	rules       []string
	allKeys     bool
	keys        []keyPattern
	allChannels bool
	channels    []string
}

// userPerms is the value of a user; never modified once published.
type userPerms struct {
	enabled   bool
	nopass    bool
	sanitize  string // "", "sanitize-payload" or "skip-sanitize-payload"
	passwords []string
	root      *aclSelector
	selectors []*aclSelector
	// unrestricted: every command, key and channel; no check needed.
	unrestricted bool
}

// aclUser is a named user; clients point to it while authenticated as it.
type aclUser struct {
	name  string
	perms atomic.Pointer[userPerms]
}

// Verdicts of a permission check, ordered as Redis ranks which error of
// several selectors to report.
const (
	aclOK = iota
	aclDeniedCmd
	aclDeniedKey
	aclDeniedAuth
	aclDeniedChannel
)

// Contexts of an ACL LOG entry.
const (
	aclCtxToplevel = "toplevel"
	aclCtxMulti    = "multi"
	aclCtxLua      = "lua"
)

// aclState holds a server's users and its ACL LOG.
type aclState struct {
	mu          sync.Mutex
	users       map[string]*aclUser
	defaultUser *aclUser
	log         aclLog
}

// Per-command ACL facts derived once from the command table.
type cmdACL struct {
	categories uint32 // bit i: aclCategories[i]
	channels   uint8  // channelPublish/channelSubscribe/channelPattern
}

const (
	channelPublish uint8 = 1 << iota
	channelSubscribe
	channelPattern
)

var (
	aclPrepareOnce sync.Once
	aclInfo        []cmdACL   // indexed by Command.id
	aclCommands    []*Command // every command and subcommand, by name
	aclWords       int        // uint64 words of a command bitmap
)

// aclPrepare derives the per-command facts after every family registered.
func aclPrepare() {
	aclPrepareOnce.Do(func() {
		aclInfo = make([]cmdACL, commandCount)
		aclWords = (commandCount + 63) / 64
		forEachCommand(func(c *Command) { aclCommands = append(aclCommands, c) })
		sort.Slice(aclCommands, func(i, j int) bool { return aclCommands[i].Name < aclCommands[j].Name })
		for _, c := range aclCommands {
			info := &aclInfo[c.id]
			for _, cat := range c.AllCategories() {
				if i := categoryIndex(cat[1:]); i >= 0 {
					info.categories |= 1 << i
				}
			}
			if c.Flags&cmdspec.FlagChannelPublish != 0 {
				info.channels |= channelPublish
			}
			if c.Flags&cmdspec.FlagChannelSubscribe != 0 {
				info.channels |= channelSubscribe
			}
			if c.Flags&cmdspec.FlagChannelPattern != 0 {
				info.channels |= channelPattern
			}
		}
	})
}

func categoryIndex(name string) int {
	for i, c := range aclCategories {
		if strings.EqualFold(c[1:], name) {
			return i
		}
	}
	return -1
}

// keyPerm is what a key needs, from its key spec's flags as Redis reads
// them: read for access, write for insert, delete or update; neither (the
// key must only match a pattern) for EXISTS, TYPE and the like.
func keyPerm(flags cmdspec.KeyFlags) aclPerm {
	var p aclPerm
	if flags.Reads() {
		p |= permRead
	}
	if flags.Writes() {
		p |= permWrite
	}
	return p
}

func newSelector(allChannels bool) *aclSelector {
	return &aclSelector{cmds: make([]uint64, aclWords), allChannels: allChannels}
}

func (s *aclSelector) clone() *aclSelector {
	n := *s
	n.cmds = append([]uint64(nil), s.cmds...)
	n.keys = append([]keyPattern(nil), s.keys...)
	n.channels = append([]string(nil), s.channels...)
	n.rules = append([]string(nil), s.rules...)
	if s.firstArgs != nil {
		n.firstArgs = map[int][]string{}
		for id, a := range s.firstArgs {
			n.firstArgs[id] = append([]string(nil), a...)
		}
	}
	return &n
}

func (s *aclSelector) bit(id int) bool { return s.cmds[id/64]&(1<<(id%64)) != 0 }

func (s *aclSelector) setBit(id int, on bool) {
	if on {
		s.cmds[id/64] |= 1 << (id % 64)
	} else {
		s.cmds[id/64] &^= 1 << (id % 64)
	}
}

// changePerm allows or denies cmd and, for a container, all its subcommands.
func (s *aclSelector) changePerm(cmd *Command, on bool) {
	s.setBit(cmd.id, on)
	delete(s.firstArgs, cmd.id)
	for _, sub := range cmd.Sub {
		s.setBit(sub.id, on)
	}
}

func (s *aclSelector) setCategory(cat int, on bool) {
	for _, c := range aclCommands {
		if aclInfo[c.id].categories&(1<<cat) != 0 {
			s.changePerm(c, on)
		}
	}
}

func (s *aclSelector) setAll(on bool) {
	for _, c := range aclCommands {
		s.changePerm(c, on)
	}
	s.future = on
	s.firstArgs = nil
	s.rules = nil
}

// allCommands reports whether every command is allowed.
func (s *aclSelector) allCommands() bool {
	for _, c := range aclCommands {
		if !s.bit(c.id) {
			return false
		}
	}
	return true
}

// Errors of a rule, worded as Redis's ACLSetUserStringError.
var (
	errACLSyntax       = errors.New("Syntax error")
	errACLUnknown      = errors.New("Unknown command or category name in ACL")
	errACLKeysAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	errACLChansAfter   = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	errACLNoPassword   = errors.New("The password you are trying to remove from the user does not exist")
	errACLBadHash      = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	errACLFirstArgSub  = errors.New("Allowing first-arg of a subcommand is not supported")
	errACLDuplicate    = errors.New("Duplicate user found. A user can only be defined once in config files")
)

// apply applies one selector rule (commands, keys, channels).
func (s *aclSelector) apply(op string) error {
	switch lower := strings.ToLower(op); {
	case op == "":
	case lower == "allkeys" || op == "~*":
		s.allKeys, s.keys = true, nil
	case lower == "resetkeys":
		s.allKeys, s.keys = false, nil
	case lower == "allchannels" || op == "&*":
		s.allChannels, s.channels = true, nil
	case lower == "resetchannels":
		s.allChannels, s.channels = false, nil
	case lower == "allcommands" || lower == "+@all":
		s.setAll(true)
	case lower == "nocommands" || lower == "-@all":
		s.setAll(false)
	case op != "" && (op[0] == '~' || op[0] == '%'):
		return s.addKeyPattern(op)
	case op != "" && op[0] == '&':
		if s.allChannels {
			return errACLChansAfter
		}
		if !has(s.channels, op[1:]) {
			s.channels = append(s.channels, op[1:])
		}
	case len(op) > 1 && (op[0] == '+' || op[0] == '-') && op[1] == '@':
		cat := categoryIndex(op[2:])
		if cat < 0 {
			return errACLUnknown
		}
		s.setCategory(cat, op[0] == '+')
		s.recordRule(lower)
	case len(op) > 1 && op[0] == '+':
		if err := s.allowCommand(op[1:]); err != nil {
			return err
		}
		s.recordRule(lower)
	case len(op) > 1 && op[0] == '-':
		cmd := commandByFullName(op[1:])
		if cmd == nil {
			return errACLUnknown
		}
		s.changePerm(cmd, false)
		s.recordRule(lower)
	default:
		return errACLSyntax
	}
	return nil
}

// recordRule appends a command rule ("+get", "-@hash", "+client|id") to the
// description, dropping the earlier rules it overrides as Redis 7.2 does: those
// for the same command or category and, for a whole command, its subcommands'
// and first arguments'.
func (s *aclSelector) recordRule(rule string) {
	target := rule[1:]
	whole := !strings.Contains(target, "|") && target[0] != '@'
	kept := s.rules[:0]
	for _, r := range s.rules {
		t := r[1:]
		if t == target || whole && strings.HasPrefix(t, target) && t[len(target)] == '|' {
			continue
		}
		kept = append(kept, r)
	}
	s.rules = append(kept, rule)
}

func (s *aclSelector) addKeyPattern(op string) error {
	if s.allKeys {
		return errACLKeysAfterAll
	}
	perm, offset := permAll, 1
	if op[0] == '%' {
		perm = 0
		for ; offset < len(op); offset++ {
			c := op[offset]
			if (c == 'R' || c == 'r') && perm&permRead == 0 {
				perm |= permRead
			} else if (c == 'W' || c == 'w') && perm&permWrite == 0 {
				perm |= permWrite
			} else if c == '~' {
				offset++
				break
			} else {
				return errACLSyntax
			}
		}
		if perm == 0 {
			return errACLSyntax
		}
	}
	pattern := op[offset:]
	if pattern == "*" && perm == permAll {
		s.allKeys, s.keys = true, nil
		return nil
	}
	for i := range s.keys {
		if s.keys[i].pattern == pattern {
			s.keys[i].perm |= perm
			return nil
		}
	}
	s.keys = append(s.keys, keyPattern{pattern, perm})
	return nil
}

func (s *aclSelector) allowCommand(name string) error {
	bar := strings.LastIndexByte(name, '|')
	if bar < 0 {
		cmd := commandByFullName(name)
		if cmd == nil {
			return errACLUnknown
		}
		s.changePerm(cmd, true)
		return nil
	}
	cmd := commandByFullName(name[:bar])
	if cmd == nil {
		return errACLUnknown
	}
	if strings.Contains(cmd.Name, "|") {
		return errACLFirstArgSub
	}
	arg := name[bar+1:]
	if arg == "" {
		return errACLSyntax
	}
	if cmd.Sub != nil {
		sub := commandByFullName(name)
		if sub == nil {
			return errACLUnknown
		}
		s.changePerm(sub, true)
		return nil
	}
	// Redis keeps the first arguments of a command that is not allowed as
	// a whole (SELECT 0 only); its bit stays as it is.
	if s.firstArgs == nil {
		s.firstArgs = map[int][]string{}
	}
	for _, a := range s.firstArgs[cmd.id] {
		if strings.EqualFold(a, arg) {
			return nil
		}
	}
	s.firstArgs[cmd.id] = append(s.firstArgs[cmd.id], arg)
	return nil
}

func (p *userPerms) clone() *userPerms {
	n := *p
	n.passwords = append([]string(nil), p.passwords...)
	n.root = p.root.clone()
	n.selectors = make([]*aclSelector, len(p.selectors))
	for i, s := range p.selectors {
		n.selectors[i] = s.clone()
	}
	return &n
}

func hashPassword(pass []byte) string {
	sum := sha256.Sum256(pass)
	return hex.EncodeToString(sum[:])
}

func validPasswordHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// apply applies one rule of ACL SETUSER to the user (a selector in
// parentheses as one rule). allChannels is acl-pubsub-default for new
// selectors and reset.
func (p *userPerms) apply(op string, allChannels bool) error {
	switch lower := strings.ToLower(op); {
	case op == "": // a no-op, as in Redis
	case lower == "on":
		p.enabled = true
	case lower == "off":
		p.enabled = false
	case lower == "skip-sanitize-payload", lower == "sanitize-payload":
		p.sanitize = lower
	case lower == "nopass":
		p.nopass, p.passwords = true, nil
	case lower == "resetpass":
		p.nopass, p.passwords = false, nil
	case op != "" && op[0] == '>':
		p.addPassword(hashPassword([]byte(op[1:])))
	case op != "" && op[0] == '#':
		if !validPasswordHash(op[1:]) {
			return errACLBadHash
		}
		p.addPassword(op[1:])
	case op != "" && (op[0] == '<' || op[0] == '!'):
		h := op[1:]
		if op[0] == '<' {
			h = hashPassword([]byte(h))
		} else if !validPasswordHash(h) {
			return errACLBadHash
		}
		i := indexOf(p.passwords, h)
		if i < 0 {
			return errACLNoPassword
		}
		p.passwords = append(p.passwords[:i:i], p.passwords[i+1:]...)
	case len(op) >= 2 && op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector(allChannels)
		rules, ok := resp.SplitArgs([]byte(op[1:len(op)-1]), nil)
		if !ok {
			return errACLSyntax
		}
		for _, r := range rules {
			if err := s.apply(string(r)); err != nil {
				return err
			}
		}
		p.selectors = append(p.selectors, s)
	case lower == "clearselectors":
		p.selectors = nil
	case lower == "reset":
		p.nopass, p.passwords = false, nil
		p.root.allKeys, p.root.keys = false, nil
		p.root.allChannels, p.root.channels = allChannels, nil
		p.enabled = false
		p.sanitize = "sanitize-payload"
		p.selectors = nil
		p.root.setAll(false)
	default:
		return p.root.apply(op)
	}
	return nil
}

func (p *userPerms) addPassword(h string) {
	if indexOf(p.passwords, h) < 0 {
		p.passwords = append(p.passwords, h)
	}
	p.nopass = false
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// seal computes the derived fields before the value is published.
func (p *userPerms) seal() *userPerms {
	r := p.root
	p.unrestricted = r.allKeys && r.allChannels && r.firstArgs == nil && r.allCommands()
	return p
}

// mergeSelectorArgs joins arguments that make up one "(...)" selector, as
// Redis does; it returns the index of an unclosed one.
func mergeSelectorArgs(args []string) ([]string, int) {
	var merged []string
	open := -1
	var sel string
	for i, a := range args {
		if open < 0 && strings.HasPrefix(a, "(") && !strings.HasSuffix(a, ")") {
			open, sel = i, a
			continue
		}
		if open >= 0 {
			sel += " " + a
			if strings.HasSuffix(a, ")") {
				merged = append(merged, sel)
				open = -1
			}
			continue
		}
		merged = append(merged, a)
	}
	if open >= 0 {
		return nil, open
	}
	return merged, -1
}

// newUserPerms is a new user: off, no passwords, no commands, channels per
// acl-pubsub-default, and (since Redis 7.2) sanitize-payload.
func newUserPerms(allChannels bool) *userPerms {
	return &userPerms{root: newSelector(allChannels), sanitize: "sanitize-payload"}
}

// defaultUserPerms is the default user Redis starts with.
func defaultUserPerms() *userPerms {
	p := &userPerms{enabled: true, nopass: true, root: newSelector(true), sanitize: "sanitize-payload"}
	p.root.allKeys = true
	p.root.setAll(true)
	return p.seal()
}

func (s *Server) aclPubsubDefault() bool { return s.cfg.ACLPubsubDefault() == "allchannels" }

// initACL creates the users: default (with requirepass) and those of the
// config file's user directives, or of the aclfile.
func (s *Server) initACL() error {
	aclPrepare()
	s.acl.users = map[string]*aclUser{}
	def := &aclUser{name: "default"}
	def.perms.Store(defaultUserPerms())
	s.acl.users["default"] = def
	s.acl.defaultUser = def
	s.applyRequirePass()
	s.cfg.OnChange("requirepass", s.applyRequirePass)
	if len(s.cfg.Users()) > 0 && s.cfg.ACLFile() != "" {
		return errors.New("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.")
	}
	for _, u := range s.cfg.Users() {
		if len(u) < 1 {
			continue
		}
		rules := u[1:]
		if u[0] == "default" { // Redis resets it before a user directive's rules
			rules = append([]string{"reset"}, rules...)
		}
		if err := s.setUser(u[0], rules, true); err != nil {
			return errors.New("Error in user declaration '" + u[0] + "': " + err.Error())
		}
	}
	if f := s.cfg.ACLFile(); f != "" {
		if err := s.loadACLFile(f); err != "" {
			return errors.New(err)
		}
	}
	return nil
}

// applyRequirePass makes requirepass the default user's only password, as
// Redis does at startup and on CONFIG SET.
func (s *Server) applyRequirePass() {
	s.acl.mu.Lock()
	defer s.acl.mu.Unlock()
	u := s.acl.defaultUser
	p := u.perms.Load().clone()
	p.nopass, p.passwords = false, nil
	if pass := s.cfg.RequirePass(); pass != "" {
		p.addPassword(hashPassword([]byte(pass)))
	} else {
		p.nopass = true
	}
	u.perms.Store(p.seal())
}

// setUser is ACL SETUSER (and a user directive): the rules apply to a copy,
// published only if all of them are valid. A config directive may not name
// a user twice.
func (s *Server) setUser(name string, rules []string, fromConfig bool) error {
	merged, open := mergeSelectorArgs(rules)
	if open >= 0 {
		return aclSetUserError{"Unmatched parenthesis in acl selector starting at '" + rules[open] + "'."}
	}
	s.acl.mu.Lock()
	defer s.acl.mu.Unlock()
	u := s.acl.users[name]
	var p *userPerms
	if u != nil {
		if fromConfig && u != s.acl.defaultUser {
			return errACLDuplicate
		}
		p = u.perms.Load().clone()
	} else {
		p = newUserPerms(s.aclPubsubDefault())
	}
	for _, r := range merged {
		if err := p.apply(r, s.aclPubsubDefault()); err != nil {
			if fromConfig {
				return err
			}
			return aclSetUserError{"Error in ACL SETUSER modifier '" + r + "': " + err.Error()}
		}
	}
	if u == nil {
		u = &aclUser{name: name}
		s.acl.users[name] = u
	}
	u.perms.Store(p.seal())
	return nil
}

// aclSetUserError is an error replied as it is (with the ERR prefix).
type aclSetUserError struct{ msg string }

func (e aclSetUserError) Error() string { return e.msg }

// user returns the named user, or nil.
func (s *Server) user(name string) *aclUser {
	s.acl.mu.Lock()
	defer s.acl.mu.Unlock()
	return s.acl.users[name]
}

// authenticate checks a user name and password as AUTH and HELLO do,
// logging a failure in ACL LOG. The comparison runs over every password
// hash, so its time does not tell which one came close.
func (c *Client) authenticate(name, pass []byte) bool {
	u := c.s.user(string(name))
	if u != nil {
		p := u.perms.Load()
		if p.enabled && (p.nopass || matchPassword(p.passwords, pass)) {
			c.setUser(u)
			c.authenticated = true
			return true
		}
	}
	ctx := aclCtxToplevel
	if c.multi != nil {
		ctx = aclCtxMulti
	}
	c.s.aclLogAdd(c, aclDeniedAuth, ctx, string(c.ctx.Args[0]), string(name))
	return false
}

func matchPassword(hashes []string, pass []byte) bool {
	h := []byte(hashPassword(pass))
	found := false
	for _, x := range hashes {
		if subtle.ConstantTimeCompare([]byte(x), h) == 1 {
			found = true
		}
	}
	return found
}

// setUser makes the client act as u.
func (c *Client) setUser(u *aclUser) { c.user.Store(u) }

// resetAuth is a new connection's (and RESET's) state: the default user,
// authenticated if it needs no password.
func (c *Client) resetAuth() {
	def := c.s.acl.defaultUser
	c.setUser(def)
	p := def.perms.Load()
	c.authenticated = p.nopass && p.enabled
}

// authRequired reports whether the client must authenticate before running
// commands: the default user needs a password (or is off) and the client has
// not authenticated. Making the default user nopass lets unauthenticated
// clients in, as in Redis.
func (c *Client) authRequired() bool {
	if c.authenticated {
		return false
	}
	p := c.s.acl.defaultUser.perms.Load()
	return !p.nopass || !p.enabled
}

// checkCommand is Redis's ACLCheckAllUserCommandPerm: OK if one selector
// allows the command with its keys and channels; otherwise the most relevant
// denial and the argument it concerns.
func checkCommand(p *userPerms, cmd *Command, args [][]byte, keys []cmdspec.KeyRef) (verdict int, object []byte) {
	verdict = aclDeniedCmd
	lastIdx := -1
	check := func(s *aclSelector) bool {
		v, idx, obj := s.check(cmd, args, keys)
		if v == aclOK {
			return true
		}
		if v > verdict || (v == verdict && idx > lastIdx) {
			verdict, lastIdx, object = v, idx, obj
		}
		return false
	}
	if check(p.root) {
		return aclOK, nil
	}
	for _, s := range p.selectors {
		if check(s) {
			return aclOK, nil
		}
	}
	return verdict, object
}

func (s *aclSelector) check(cmd *Command, args [][]byte, keys []cmdspec.KeyRef) (int, int, []byte) {
	if cmd.Flags&cmdspec.FlagNoAuth == 0 && !s.bit(cmd.id) && !s.firstArgAllowed(cmd, args) {
		return aclDeniedCmd, 0, nil
	}
	info := &aclInfo[cmd.id]
	if !s.allKeys {
		for i, k := range keys {
			if !s.keyAllowed(args[k.Pos], keyPerm(k.Flags)) {
				return aclDeniedKey, i, args[k.Pos]
			}
		}
	}
	if !s.allChannels && info.channels != 0 {
		channels := args[1:]
		if info.channels&channelPublish != 0 {
			channels = args[1:2]
		}
		for i, ch := range channels {
			if !s.channelAllowed(ch, info.channels&channelPattern != 0) {
				return aclDeniedChannel, i + 1, ch
			}
		}
	}
	return aclOK, 0, nil
}

func (s *aclSelector) firstArgAllowed(cmd *Command, args [][]byte) bool {
	if len(args) < 2 {
		return false
	}
	for _, a := range s.firstArgs[cmd.id] {
		if cArgIs(args[1], strings.ToLower(a)) {
			return true
		}
	}
	return false
}

func (s *aclSelector) keyAllowed(key []byte, need aclPerm) bool {
	for _, p := range s.keys {
		if p.perm&need == need && glob.Match([]byte(p.pattern), key, false) {
			return true
		}
	}
	return false
}

// channelAllowed matches a channel against the patterns; a pattern a client
// subscribes to must equal one of them literally, as in Redis.
func (s *aclSelector) channelAllowed(ch []byte, isPattern bool) bool {
	for _, p := range s.channels {
		if isPattern {
			if bytes.Equal(cBytes([]byte(p)), cBytes(ch)) {
				return true
			}
		} else if glob.Match([]byte(p), ch, false) {
			return true
		}
	}
	return false
}

// unrestrictedKeyRead reports whether a selector allowing the command reads
// every key (SORT BY and GET patterns need it, as in Redis).
func unrestrictedKeyRead(p *userPerms, cmd *Command, args [][]byte, keys []cmdspec.KeyRef) bool {
	if p.unrestricted {
		return true
	}
	for _, s := range append([]*aclSelector{p.root}, p.selectors...) {
		if v, _, _ := s.check(cmd, args, keys); v != aclOK {
			continue
		}
		if s.allKeys {
			return true
		}
		for _, k := range s.keys {
			if k.pattern == "*" && k.perm&permRead != 0 {
				return true
			}
		}
	}
	return false
}

// aclAllowed checks a command about to run or be queued; a denied one is
// logged and rejected with NOPERM (inside MULTI that aborts the EXEC).
func (c *Client) aclAllowed(p *userPerms, cmd *Command, args [][]byte) bool {
	ctx := aclCtxToplevel
	if c.multi != nil {
		ctx = aclCtxMulti
	}
	c.lastCmd.Store(cmd) // Redis sets it before checking: ACL LOG's client-info shows it
	v := c.aclDenied(p, cmd, args, ctx)
	if v == aclOK {
		return true
	}
	c.reject(cmd, errNoPerm(v, cmd, c.userName()))
	return false
}

// aclDenied checks the command as the client's user and, if it is denied,
// logs it and returns the verdict.
func (c *Client) aclDenied(p *userPerms, cmd *Command, args [][]byte, ctx string) int {
	keys := cmd.keyRefs(args, c.aclKeys[:0])
	c.aclKeys = keys[:0]
	v, obj := checkCommand(p, cmd, args, keys)
	if v != aclOK {
		if v == aclDeniedCmd {
			obj = []byte(cmd.Name)
		}
		c.s.aclLogAdd(c, v, ctx, string(obj), c.user.Load().name)
	}
	return v
}

const errACLChanged = "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: "

// execDenied checks a queued command again when EXEC runs it (the user's
// permissions may have changed since it was queued), replying Redis's error.
func (x *Ctx) execDenied(cmd *Command, args [][]byte) bool {
	c := x.c
	if c.obeys {
		return false // a master's transaction
	}
	p := c.user.Load().perms.Load()
	if p.unrestricted {
		return false
	}
	switch c.aclDenied(p, cmd, args, aclCtxMulti) {
	case aclOK:
		return false
	case aclDeniedCmd:
		x.W.Error(errACLChanged + "no permission to execute the command or subcommand")
	case aclDeniedKey:
		x.W.Error(errACLChanged + "no permission to touch the specified keys")
	default:
		x.W.Error(errACLChanged + "no permission to access one of the channels used as arguments")
	}
	return true
}

// scriptDenied checks a script's redis.call as the user running the script;
// msg is the error Redis gives then.
func (h *scriptHost) scriptDenied(cmd *Command, args [][]byte, msg *string) bool {
	c := h.x.c
	p := c.user.Load().perms.Load()
	if p.unrestricted {
		return false
	}
	switch c.aclDenied(p, cmd, args, aclCtxLua) {
	case aclOK:
		return false
	case aclDeniedCmd:
		*msg = "ERR ACL failure in script: " + deniedText(aclDeniedCmd, cmd, c.userName())
	case aclDeniedKey:
		*msg = "ERR ACL failure in script: " + deniedText(aclDeniedKey, cmd, "")
	default:
		*msg = "ERR ACL failure in script: " + deniedText(aclDeniedChannel, cmd, "")
	}
	return true
}

// errNoPerm is the reply to a denied command outside scripts and EXEC.
func errNoPerm(v int, cmd *Command, user string) string {
	return "NOPERM " + deniedText(v, cmd, user)
}

// deniedText says why a command was denied, in Redis 7.2's words, which
// NOPERM replies and script errors share.
func deniedText(v int, cmd *Command, user string) string {
	switch v {
	case aclDeniedCmd:
		return "User " + user + " has no permissions to run the '" + cmd.Name + "' command"
	case aclDeniedKey:
		return "No permissions to access a key"
	default:
		return "No permissions to access a channel"
	}
}

// killUserClients disconnects the clients authenticated as one of users;
// the caller's own connection closes after its reply.
func (s *Server) killUserClients(users map[*aclUser]bool, by *Client) {
	for _, c := range s.clientsSnapshot() {
		if users[c.user.Load()] {
			c.kill(by)
		}
	}
}

// userName is the client's user as CLIENT LIST shows it.
func (c *Client) userName() string {
	if u := c.user.Load(); u != nil {
		return u.name
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
	p := c.user.Load().perms.Load()
	return p.unrestricted || unrestrictedKeyRead(p, x.cmd, x.Args, x.cmd.keyRefs(x.Args, nil))
}

// CheckACL answers redis.acl_check_cmd: whether the script's user may run
// the command, without logging.
func (h *scriptHost) CheckACL(args [][]byte) (bool, string) {
	cmd := findCommand(args)
	if cmd == nil {
		return false, "Invalid command passed to redis.acl_check_cmd()"
	}
	p := h.x.c.user.Load().perms.Load()
	if p.unrestricted {
		return true, ""
	}
	v, _ := checkCommand(p, cmd, args, cmd.keyRefs(args, nil))
	return v == aclOK, ""
}

// channelAllowed reports whether one of the user's selectors allows the
// channel (a pattern: literally).
func (p *userPerms) channelAllowed(ch []byte, isPattern bool) bool {
	if p.root.allChannels || p.root.channelAllowed(ch, isPattern) {
		return true
	}
	for _, s := range p.selectors {
		if s.allChannels || s.channelAllowed(ch, isPattern) {
			return true
		}
	}
	return false
}

// killUnpermittedSubscribers disconnects the clients of u subscribed to a
// channel or pattern u may no longer use, as Redis does when a user's
// channel permissions shrink.
func (s *Server) killUnpermittedSubscribers(u *aclUser, by *Client) {
	p := u.perms.Load()
	if p.root.allChannels {
		return
	}
	doomed := map[*Client]bool{}
	check := func(name []byte, clients []*Client, pattern bool) {
		for _, c := range clients {
			if c.user.Load() == u && !doomed[c] && !p.channelAllowed(name, pattern) {
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
