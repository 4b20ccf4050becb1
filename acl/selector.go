package acl

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/internal/cstr"
)

// perm is what a key pattern grants, or what a key argument needs.
type perm uint8

const (
	permRead perm = 1 << iota
	permWrite
	permAll = permRead | permWrite
)

type keyPattern struct {
	pattern string
	perm    perm
}

// selector is one set of permissions.
type selector struct {
	cat  *Catalog
	cmds []uint64 // allowed commands, a bit per Command.ID
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

// keyPerm is what a key needs, from its key spec's flags as Redis reads
// them: read for access, write for insert, delete or update; neither (the
// key must only match a pattern) for EXISTS, TYPE and the like.
func keyPerm(flags cmdspec.KeyFlags) perm {
	var p perm
	if flags.Reads() {
		p |= permRead
	}
	if flags.Writes() {
		p |= permWrite
	}
	return p
}

func newSelector(cat *Catalog, allChannels bool) *selector {
	return &selector{cat: cat, cmds: make([]uint64, cat.words), allChannels: allChannels}
}

func (s *selector) clone() *selector {
	n := *s
	n.cmds = slices.Clone(s.cmds)
	n.keys = slices.Clone(s.keys)
	n.channels = slices.Clone(s.channels)
	n.rules = slices.Clone(s.rules)
	if s.firstArgs != nil {
		n.firstArgs = map[int][]string{}
		for id, a := range s.firstArgs {
			n.firstArgs[id] = slices.Clone(a)
		}
	}
	return &n
}

func (s *selector) bit(id int) bool { return s.cmds[id/64]&(1<<(id%64)) != 0 }

func (s *selector) setBit(id int, on bool) {
	if on {
		s.cmds[id/64] |= 1 << (id % 64)
	} else {
		s.cmds[id/64] &^= 1 << (id % 64)
	}
}

// changePerm allows or denies a command and, for a container, all its
// subcommands.
func (s *selector) changePerm(id int, on bool) {
	s.setBit(id, on)
	delete(s.firstArgs, id)
	for _, sub := range s.cat.byID[id].subs {
		s.setBit(sub, on)
	}
}

func (s *selector) setCategory(cat int, on bool) {
	for _, id := range s.cat.sorted {
		if s.cat.byID[id].categories&(1<<cat) != 0 {
			s.changePerm(id, on)
		}
	}
}

func (s *selector) setAll(on bool) {
	for _, id := range s.cat.sorted {
		s.changePerm(id, on)
	}
	s.future = on
	s.firstArgs = nil
	s.rules = nil
}

// allCommands reports whether every command is allowed.
func (s *selector) allCommands() bool {
	for _, id := range s.cat.sorted {
		if !s.bit(id) {
			return false
		}
	}
	return true
}

// Errors of a rule, worded as Redis's ACLSetUserStringError.
var (
	errSyntax         = errors.New("Syntax error")
	errUnknown        = errors.New("Unknown command or category name in ACL")
	errKeysAfterAll   = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	errChannelsAfter  = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	errNoPassword     = errors.New("The password you are trying to remove from the user does not exist")
	errBadHash        = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	errFirstArgOfSub  = errors.New("Allowing first-arg of a subcommand is not supported")
	errDuplicateUser  = errors.New("Duplicate user found. A user can only be defined once in config files")
	errDeleteDefault  = errors.New("The 'default' user cannot be removed")
	errUsersAndFile   = errors.New("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.")
	errUserNameSpaces = errors.New("Usernames can't contain spaces or null characters")
)

// apply applies one selector rule (commands, keys, channels).
func (s *selector) apply(op string) error {
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
	case op[0] == '~' || op[0] == '%':
		return s.addKeyPattern(op)
	case op[0] == '&':
		if s.allChannels {
			return errChannelsAfter
		}
		if !slices.Contains(s.channels, op[1:]) {
			s.channels = append(s.channels, op[1:])
		}
	case len(op) > 1 && (op[0] == '+' || op[0] == '-') && op[1] == '@':
		cat := categoryIndex(op[2:])
		if cat < 0 {
			return errUnknown
		}
		s.setCategory(cat, op[0] == '+')
		s.recordRule(lower)
	case len(op) > 1 && op[0] == '+':
		if err := s.allowCommand(op[1:]); err != nil {
			return err
		}
		s.recordRule(lower)
	case len(op) > 1 && op[0] == '-':
		id, ok := s.cat.lookup(op[1:])
		if !ok {
			return errUnknown
		}
		s.changePerm(id, false)
		s.recordRule(lower)
	default:
		return errSyntax
	}
	return nil
}

// recordRule appends a command rule ("+get", "-@hash", "+client|id") to the
// description, dropping the earlier rules it overrides as Redis 7.2 does: those
// for the same command or category and, for a whole command, its subcommands'
// and first arguments'.
func (s *selector) recordRule(rule string) {
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

func (s *selector) addKeyPattern(op string) error {
	if s.allKeys {
		return errKeysAfterAll
	}
	p, offset := permAll, 1
	if op[0] == '%' {
		p = 0
		for ; offset < len(op); offset++ {
			c := op[offset]
			if (c == 'R' || c == 'r') && p&permRead == 0 {
				p |= permRead
			} else if (c == 'W' || c == 'w') && p&permWrite == 0 {
				p |= permWrite
			} else if c == '~' {
				offset++
				break
			} else {
				return errSyntax
			}
		}
		if p == 0 {
			return errSyntax
		}
	}
	pattern := op[offset:]
	if pattern == "*" && p == permAll {
		s.allKeys, s.keys = true, nil
		return nil
	}
	for i := range s.keys {
		if s.keys[i].pattern == pattern {
			s.keys[i].perm |= p
			return nil
		}
	}
	s.keys = append(s.keys, keyPattern{pattern, p})
	return nil
}

func (s *selector) allowCommand(name string) error {
	bar := strings.LastIndexByte(name, '|')
	if bar < 0 {
		id, ok := s.cat.lookup(name)
		if !ok {
			return errUnknown
		}
		s.changePerm(id, true)
		return nil
	}
	id, ok := s.cat.lookup(name[:bar])
	if !ok {
		return errUnknown
	}
	if strings.Contains(s.cat.byID[id].name, "|") {
		return errFirstArgOfSub
	}
	arg := name[bar+1:]
	if arg == "" {
		return errSyntax
	}
	if s.cat.byID[id].subs != nil {
		sub, ok := s.cat.lookup(name)
		if !ok {
			return errUnknown
		}
		s.changePerm(sub, true)
		return nil
	}
	// Redis keeps the first arguments of a command that is not allowed as
	// a whole (SELECT 0 only); its bit stays as it is.
	if s.firstArgs == nil {
		s.firstArgs = map[int][]string{}
	}
	for _, a := range s.firstArgs[id] {
		if strings.EqualFold(a, arg) {
			return nil
		}
	}
	s.firstArgs[id] = append(s.firstArgs[id], arg)
	return nil
}

// check is one selector's verdict on a command, with the index of the
// argument it concerns (to rank denials) and that argument.
func (s *selector) check(id int, args [][]byte, keys []cmdspec.KeyRef) (Verdict, int, []byte) {
	info := &s.cat.byID[id]
	if !info.noAuth && !s.bit(id) && !s.firstArgAllowed(id, args) {
		return DeniedCommand, 0, nil
	}
	if !s.allKeys {
		for i, k := range keys {
			if !s.keyAllowed(args[k.Pos], keyPerm(k.Flags)) {
				return DeniedKey, i, args[k.Pos]
			}
		}
	}
	if !s.allChannels && info.channels != 0 {
		channels := args[1:]
		if info.channels&Publish != 0 {
			channels = args[1:2]
		}
		for i, ch := range channels {
			if !s.channelAllowed(ch, info.channels&Pattern != 0) {
				return DeniedChannel, i + 1, ch
			}
		}
	}
	return OK, 0, nil
}

func (s *selector) firstArgAllowed(id int, args [][]byte) bool {
	if len(args) < 2 {
		return false
	}
	for _, a := range s.firstArgs[id] {
		if cstr.ArgIs(args[1], strings.ToLower(a)) {
			return true
		}
	}
	return false
}

func (s *selector) keyAllowed(key []byte, need perm) bool {
	for _, p := range s.keys {
		if p.perm&need == need && glob.Match([]byte(p.pattern), key, false) {
			return true
		}
	}
	return false
}

// channelAllowed matches a channel against the patterns; a pattern a client
// subscribes to must equal one of them literally, as in Redis.
func (s *selector) channelAllowed(ch []byte, isPattern bool) bool {
	for _, p := range s.channels {
		if isPattern {
			if bytes.Equal(cstr.Bytes([]byte(p)), cstr.Bytes(ch)) {
				return true
			}
		} else if glob.Match([]byte(p), ch, false) {
			return true
		}
	}
	return false
}

// describe is the selector in rules, as ACL LIST writes it.
func (s *selector) describe() string {
	parts := s.describeKeys()
	if s.allChannels {
		parts = append(parts, "&*")
	} else {
		parts = append(append(parts, "resetchannels"), s.describeChannels()...)
	}
	return strings.Join(append(parts, s.describeCommands()), " ")
}

func (s *selector) describeKeys() []string {
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

func (s *selector) describeChannels() []string {
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return parts
}

// describeCommands is +@all or -@all (the last reset) and then the command
// rules in the order given, as Redis 7.2+ describes them.
func (s *selector) describeCommands() string {
	first := "-@all"
	if s.future {
		first = "+@all"
	}
	return strings.Join(append([]string{first}, s.rules...), " ")
}
