package cmdspec

import "errors"

// TTLEffect is what a command does to the TTL of a key it writes, which
// namespaces that require a TTL check before the command runs.
type TTLEffect uint8

const (
	// TTLKept, the zero value: the key keeps the TTL it had, unless its key
	// spec says OW (the value is replaced, its TTL with it).
	TTLKept TTLEffect = iota
	// TTLGiven: the command gives the key a TTL (EXPIRE, SETEX).
	TTLGiven
	// TTLRemoved: the command leaves the key without a TTL (PERSIST, GETSET).
	TTLRemoved
	// TTLOfSource: the command's second key takes the TTL its first key
	// had (RENAME, COPY); other keys follow their key spec.
	TTLOfSource
	// TTLByArgument: the argument named ttl gives one unless it is 0
	// (RESTORE); without one the key spec says.
	TTLByArgument
)

// ttlOptionEffects are the expiration options Spec.TTLOptions reads.
var ttlOptionEffects = []struct {
	token  string
	effect TTLEffect
}{
	{"EX", TTLGiven}, {"PX", TTLGiven}, {"EXAT", TTLGiven}, {"PXAT", TTLGiven},
	{"KEEPTTL", TTLKept}, {"PERSIST", TTLRemoved},
}

// option is one token of a command's optional arguments, and whether a
// value follows it.
type option struct {
	token      string
	takesArg   bool
	expiration bool // an expiration option, with its effect in ttl
	ttl        TTLEffect
}

// prepareTTL finds, from the argument grammar, where the command's
// options begin and what they are (for TTLOptions), and where its ttl
// argument is (for TTLByArgument).
func (s *Spec) prepareTTL() error {
	if s.TTL == TTLOfSource && (len(s.keySpecs) < 2 || s.keySpecs[0].BeginSearch != SearchIndex || s.keySpecs[1].BeginSearch != SearchIndex) {
		return errors.New("TTLOfSource needs two key specs that begin at an index")
	}
	if !s.TTLOptions && s.TTL != TTLByArgument {
		return nil
	}
	// Positional arguments come first: each is one word, except that the
	// last may repeat a block of words as many times as the integer
	// before it says (MSETEX's numkeys and key-value pairs).
	pos := 1
	i := 0
	for ; i < len(s.args) && !s.args[i].Optional; i++ {
		a := &s.args[i]
		if s.repeatWidth > 0 {
			return errors.New("a positional argument after the repeated one")
		}
		switch {
		case a.Multiple && a.Type == "block" && i > 0 && s.args[i-1].Type == "integer" && oneWordEach(a.Args):
			s.countArg, s.repeatWidth = pos-1, len(a.Args)
			continue
		case a.Multiple || a.Token != "" || a.Type == "block" || a.Type == "oneof":
			return errors.New("arguments before the options are not one word each")
		}
		if a.Name == "ttl" {
			s.ttlArg = pos
		}
		pos++
	}
	if s.TTL == TTLByArgument && s.ttlArg == 0 {
		return errors.New("TTLByArgument without a ttl argument")
	}
	if !s.TTLOptions {
		return nil
	}
	s.optionsFrom = pos
	for _, a := range s.args[i:] {
		if !a.Optional {
			return errors.New("a required argument after the options")
		}
		choices := []Arg{a}
		if a.Type == "oneof" {
			choices = a.Args
		}
		for _, c := range choices {
			if c.Token == "" || c.Type == "block" || c.Type == "oneof" {
				return errors.New("option " + c.Name + " is not a token with at most one value")
			}
			o := option{token: c.Token, takesArg: c.Type != "pure-token"}
			for _, e := range ttlOptionEffects {
				if e.token == c.Token {
					o.expiration, o.ttl = true, e.effect
				}
			}
			s.options = append(s.options, o)
		}
	}
	return nil
}

// TTLEffectOn returns what the command, called with args, does to the TTL
// of the key k it writes. For TTLOfSource, from is the position of the key
// whose TTL k takes.
func (s *Spec) TTLEffectOn(args [][]byte, k KeyRef) (effect TTLEffect, from int) {
	effect = s.TTL
	if s.TTLOptions {
		if e, found := s.ttlOption(args); found {
			return e, 0
		}
	}
	switch effect {
	case TTLOfSource:
		if k.Pos == s.keySpecs[1].Index {
			return TTLOfSource, s.keySpecs[0].Index
		}
		effect = TTLKept
	case TTLByArgument:
		if s.ttlArg < len(args) && string(args[s.ttlArg]) != "0" {
			return TTLGiven, 0
		}
		effect = TTLKept
	}
	if effect == TTLKept && k.Flags&OW != 0 {
		return TTLRemoved, 0
	}
	return effect, 0
}

// ttlOption finds the expiration option among the command's options,
// walking them as the grammar says: a token's value is skipped, so a
// value that reads as an option (SET k EX, SET k v IFEQ EX) is not one.
func (s *Spec) ttlOption(args [][]byte) (TTLEffect, bool) {
	from := s.optionsFrom
	if s.repeatWidth > 0 {
		if s.countArg >= len(args) {
			return TTLKept, false
		}
		n, ok := parseCount(args[s.countArg])
		if !ok {
			return TTLKept, false
		}
		from += n * s.repeatWidth
	}
	for i := from; i < len(args); i++ {
		for _, o := range s.options {
			if !equalFold(args[i], o.token) {
				continue
			}
			if o.expiration {
				return o.ttl, true
			}
			if o.takesArg {
				i++
			}
			break
		}
	}
	return TTLKept, false
}

func oneWordEach(args []Arg) bool {
	for _, a := range args {
		if a.Optional || a.Multiple || a.Token != "" || a.Type == "block" || a.Type == "oneof" {
			return false
		}
	}
	return true
}
