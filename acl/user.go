package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/resp"
)

// User is a named user; clients point to it while authenticated as it.
type User struct {
	Name  string
	perms atomic.Pointer[Perms]
}

// Perms are the user's permissions as of now.
func (u *User) Perms() *Perms { return u.perms.Load() }

// Perms is what a user may do: a value never modified once published.
type Perms struct {
	enabled   bool
	nopass    bool
	sanitize  string // "", "sanitize-payload" or "skip-sanitize-payload"
	passwords []string
	root      *selector
	selectors []*selector
	// unrestricted: every command, key and channel; no check needed.
	unrestricted bool
}

// Unrestricted reports whether the user may run every command on every key
// and channel, so that no check is needed.
func (p *Perms) Unrestricted() bool { return p.unrestricted }

// NoPass reports whether any password is accepted.
func (p *Perms) NoPass() bool { return p.nopass }

// AdmitsAnyone reports whether a client may act as the user without
// authenticating: it is on and needs no password.
func (p *Perms) AdmitsAnyone() bool { return p.enabled && p.nopass }

// Accepts reports whether pass authenticates as the user. The comparison
// runs over every password hash, so its time does not tell which one came
// close.
func (p *Perms) Accepts(pass []byte) bool {
	if !p.enabled {
		return false
	}
	if p.nopass {
		return true
	}
	h := []byte(hashPassword(pass))
	found := false
	for _, x := range p.passwords {
		if subtle.ConstantTimeCompare([]byte(x), h) == 1 {
			found = true
		}
	}
	return found
}

// Verdict is the outcome of a permission check; denials are ordered as
// Redis ranks which of several selectors' to report.
type Verdict int

const (
	OK Verdict = iota
	DeniedCommand
	DeniedKey
	DeniedAuth
	DeniedChannel
)

// Check is Redis's ACLCheckAllUserCommandPerm for the command of the
// catalog's id, its arguments and its key arguments: OK if one selector
// allows it; otherwise the most relevant denial and the key or channel it
// concerns.
func (p *Perms) Check(id int, args [][]byte, keys []cmdspec.KeyRef) (verdict Verdict, object []byte) {
	verdict = DeniedCommand
	lastIdx := -1
	check := func(s *selector) bool {
		v, idx, obj := s.check(id, args, keys)
		if v == OK {
			return true
		}
		if v > verdict || (v == verdict && idx > lastIdx) {
			verdict, lastIdx, object = v, idx, obj
		}
		return false
	}
	if check(p.root) {
		return OK, nil
	}
	for _, s := range p.selectors {
		if check(s) {
			return OK, nil
		}
	}
	return verdict, object
}

// ReadsAllKeys reports whether a selector allowing the command reads every
// key (SORT BY and GET patterns need it, as in Redis).
func (p *Perms) ReadsAllKeys(id int, args [][]byte, keys []cmdspec.KeyRef) bool {
	if p.unrestricted {
		return true
	}
	for _, s := range append([]*selector{p.root}, p.selectors...) {
		if v, _, _ := s.check(id, args, keys); v != OK {
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

// MayRead reports whether one of the user's selectors lets it read key,
// whatever the command: the console shows a key's name only then.
func (p *Perms) MayRead(key []byte) bool {
	if p.unrestricted {
		return true
	}
	for _, s := range append([]*selector{p.root}, p.selectors...) {
		if s.allKeys || s.keyAllowed(key, permRead) {
			return true
		}
	}
	return false
}

// AllChannels reports whether the user's root selector allows every channel.
func (p *Perms) AllChannels() bool { return p.root.allChannels }

// ChannelAllowed reports whether one of the user's selectors allows the
// channel (a pattern: literally).
func (p *Perms) ChannelAllowed(ch []byte, isPattern bool) bool {
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

func (p *Perms) clone() *Perms {
	n := *p
	n.passwords = slices.Clone(p.passwords)
	n.root = p.root.clone()
	n.selectors = make([]*selector, len(p.selectors))
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
func (p *Perms) apply(op string, allChannels bool) error {
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
	case op[0] == '>':
		p.addPassword(hashPassword([]byte(op[1:])))
	case op[0] == '#':
		if !validPasswordHash(op[1:]) {
			return errBadHash
		}
		p.addPassword(op[1:])
	case op[0] == '<' || op[0] == '!':
		h := op[1:]
		if op[0] == '<' {
			h = hashPassword([]byte(h))
		} else if !validPasswordHash(h) {
			return errBadHash
		}
		i := slices.Index(p.passwords, h)
		if i < 0 {
			return errNoPassword
		}
		p.passwords = append(p.passwords[:i:i], p.passwords[i+1:]...)
	case len(op) >= 2 && op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector(p.root.cat, allChannels)
		rules, ok := resp.SplitArgs([]byte(op[1:len(op)-1]), nil)
		if !ok {
			return errSyntax
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

func (p *Perms) addPassword(h string) {
	if !slices.Contains(p.passwords, h) {
		p.passwords = append(p.passwords, h)
	}
	p.nopass = false
}

// seal computes the derived fields before the value is published.
func (p *Perms) seal() *Perms {
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

// newPerms is a new user: off, no passwords, no commands, channels per
// acl-pubsub-default, and (since Redis 7.2) sanitize-payload.
func newPerms(cat *Catalog, allChannels bool) *Perms {
	return &Perms{root: newSelector(cat, allChannels), sanitize: "sanitize-payload"}
}

// defaultPerms is the default user Redis starts with.
func defaultPerms(cat *Catalog) *Perms {
	p := &Perms{enabled: true, nopass: true, root: newSelector(cat, true), sanitize: "sanitize-payload"}
	p.root.allKeys = true
	p.root.setAll(true)
	return p.seal()
}

func (p *Perms) flags() []string {
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
func (p *Perms) describe() string {
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
