package cmdspec

import (
	"errors"
	"strconv"
	"strings"
)

// KeyFlags are a key spec's flags, as Redis names them.
type KeyFlags uint16

// Key spec flags, in the order COMMAND INFO lists them.
const (
	RO KeyFlags = 1 << iota
	RW
	OW
	RM
	Access
	Update
	Insert
	Delete
	NotKey
	Incomplete
	VariableFlags
)

var keyFlagNames = []string{"RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key", "incomplete", "variable_flags"}

// Names lists the flags in Redis's order.
func (f KeyFlags) Names() []string {
	var names []string
	for i, n := range keyFlagNames {
		if f&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return names
}

// Reads reports whether a key with these flags needs ACL read permission;
// Writes whether it needs write permission.
func (f KeyFlags) Reads() bool  { return f&Access != 0 }
func (f KeyFlags) Writes() bool { return f&(Insert|Delete|Update) != 0 }

// Where a key spec starts searching and how it finds the keys from there.
const (
	SearchIndex   = "index"
	SearchKeyword = "keyword"
	FindRange     = "range"
	FindKeynum    = "keynum"
	Unknown       = "unknown"
)

// KeySpec is one of Redis 7.0's key specs.
type KeySpec struct {
	Flags KeyFlags
	// BeginSearch is SearchIndex (Index), SearchKeyword (Keyword searched
	// from StartFrom, negative from the end) or Unknown.
	BeginSearch string
	Index       int
	Keyword     string
	StartFrom   int
	// FindKeys is FindRange (LastKey relative to the start, negative from
	// the end; KeyStep; Limit divides what is left), FindKeynum (the count
	// at KeyNumIdx, keys from FirstKey, every KeyStep) or Unknown.
	FindKeys            string
	LastKey, Limit      int
	KeyNumIdx, FirstKey int
	KeyStep             int
	// Notes say, in Keyhive's words, why the spec is as it is, where
	// Redis's spec carries a note too.
	Notes string
}

// ParseKeySpec reads the key spec grammar: "flags; begin_search;
// find_keys", then optionally "; notes" (free text).
func ParseKeySpec(text string) (KeySpec, error) {
	var ks KeySpec
	parts := strings.SplitN(text, ";", 4)
	if len(parts) < 3 {
		return ks, errors.New("key spec needs flags; begin_search; find_keys: " + text)
	}
	if len(parts) == 4 {
		ks.Notes = strings.TrimSpace(parts[3])
	}
	for _, w := range strings.Fields(parts[0]) {
		i := indexOf(keyFlagNames, w)
		if i < 0 {
			return ks, errors.New("unknown key spec flag " + w)
		}
		ks.Flags |= 1 << i
	}
	nums := func(words []string, n int, dst ...*int) error {
		if len(words) != n+1 {
			return errors.New("wrong number of values in " + strings.Join(words, " "))
		}
		for i, p := range dst {
			v, err := strconv.Atoi(words[1+len(words)-1-len(dst)+i])
			if err != nil {
				return err
			}
			*p = v
		}
		return nil
	}
	bs := strings.Fields(parts[1])
	if len(bs) == 0 {
		return ks, errors.New("empty begin_search")
	}
	ks.BeginSearch = bs[0]
	var err error
	switch bs[0] {
	case SearchIndex:
		err = nums(bs, 1, &ks.Index)
	case SearchKeyword:
		if len(bs) == 3 {
			ks.Keyword = bs[1]
		}
		err = nums(bs, 2, &ks.StartFrom)
	case Unknown:
		if len(bs) != 1 {
			err = errors.New("unknown takes no values")
		}
	default:
		err = errors.New("unknown begin_search " + bs[0])
	}
	if err != nil {
		return ks, err
	}
	fk := strings.Fields(parts[2])
	if len(fk) == 0 {
		return ks, errors.New("empty find_keys")
	}
	ks.FindKeys = fk[0]
	switch fk[0] {
	case FindRange:
		err = nums(fk, 3, &ks.LastKey, &ks.KeyStep, &ks.Limit)
	case FindKeynum:
		err = nums(fk, 3, &ks.KeyNumIdx, &ks.FirstKey, &ks.KeyStep)
	case Unknown:
		if len(fk) != 1 {
			err = errors.New("unknown takes no values")
		}
	default:
		err = errors.New("unknown find_keys " + fk[0])
	}
	return ks, err
}

// String writes the key spec in the grammar ParseKeySpec reads.
func (ks KeySpec) String() string {
	var b strings.Builder
	b.WriteString(strings.Join(ks.Flags.Names(), " "))
	b.WriteString("; ")
	switch ks.BeginSearch {
	case SearchIndex:
		b.WriteString("index " + strconv.Itoa(ks.Index))
	case SearchKeyword:
		b.WriteString("keyword " + ks.Keyword + " " + strconv.Itoa(ks.StartFrom))
	default:
		b.WriteString(Unknown)
	}
	b.WriteString("; ")
	switch ks.FindKeys {
	case FindRange:
		b.WriteString("range " + strconv.Itoa(ks.LastKey) + " " + strconv.Itoa(ks.KeyStep) + " " + strconv.Itoa(ks.Limit))
	case FindKeynum:
		b.WriteString("keynum " + strconv.Itoa(ks.KeyNumIdx) + " " + strconv.Itoa(ks.FirstKey) + " " + strconv.Itoa(ks.KeyStep))
	default:
		b.WriteString(Unknown)
	}
	if ks.Notes != "" {
		b.WriteString("; " + ks.Notes)
	}
	return b.String()
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func (ks *KeySpec) isRange() bool { return ks.BeginSearch == SearchIndex && ks.FindKeys == FindRange }

// deriveKeys computes what COMMAND INFO derives from the key specs (the
// legacy first/last/step and movablekeys, as Redis does) and the fast path.
func (s *Spec) deriveKeys() {
	specs := s.keySpecs
	if len(specs) == 1 && specs[0].isRange() && specs[0].Flags&(NotKey|Incomplete) == 0 && specs[0].Limit == 0 {
		ks := specs[0]
		s.simple = true
		s.first, s.lastKey, s.step, s.simpleFlags = ks.Index, ks.LastKey, ks.KeyStep, ks.Flags
	}
	if len(specs) == 0 {
		return
	}
	if len(specs) == 1 && specs[0].isRange() {
		ks := specs[0]
		s.legacyFirst, s.legacyStep = ks.Index, ks.KeyStep
		s.legacyLast = ks.LastKey
		if ks.LastKey >= 0 {
			s.legacyLast += ks.Index
		}
		s.movable = ks.Flags&Incomplete != 0
		return
	}
	first, last, prevLast := int(^uint(0)>>1), 0, 0
	for _, ks := range specs {
		if !ks.isRange() {
			s.movable = true
			continue
		}
		if ks.KeyStep != 1 || (prevLast != 0 && prevLast != ks.Index-1) {
			s.movable = true
			continue
		}
		if ks.Flags&Incomplete != 0 {
			s.movable = true
		}
		first = min(first, ks.Index)
		abs := ks.LastKey
		if abs >= 0 {
			abs += ks.Index
		}
		last = int(max(uint32(last), uint32(abs))) // unsigned: a negative (from the end) wins
		if last > 1<<31 {
			last -= 1 << 32
		}
		prevLast = last
	}
	if first == int(^uint(0)>>1) {
		s.movable = true
		return
	}
	s.legacyFirst, s.legacyStep = first, 1
	s.legacyLast = last
}

// KeyRef is one key argument: its position in the command's arguments
// (the name is 0) and its key spec's flags.
type KeyRef struct {
	Pos   int
	Flags KeyFlags
}

// KeyFunc finds a command's keys as Redis's get-keys functions do,
// appending to dst; ok=false when the arguments are not valid enough to
// tell.
type KeyFunc func(args [][]byte, dst []KeyRef) []KeyRef

// HasKeys reports whether the command may name keys at all (COMMAND
// GETKEYS answers "no key arguments" otherwise).
func (s *Spec) HasKeys() bool {
	if s.KeyFunc != nil {
		return true
	}
	for i := range s.keySpecs {
		if s.keySpecs[i].Flags&NotKey == 0 {
			return true
		}
	}
	return false
}

// GetKeys appends the command's keys to dst as Redis finds them for COMMAND
// GETKEYS and ACL checks: from the key specs when they are reliable, else
// with the command's key function.
func (s *Spec) GetKeys(args [][]byte, dst []KeyRef) []KeyRef {
	if s.simple && s.simpleFlags&VariableFlags == 0 {
		return s.simpleKeys(args, dst)
	}
	useSpecs, variable := false, false
	for i := range s.keySpecs {
		if s.keySpecs[i].Flags&NotKey == 0 {
			useSpecs = true
		}
		if s.keySpecs[i].Flags&VariableFlags != 0 {
			variable = true
		}
	}
	if useSpecs && !variable {
		if keys, ok := s.SpecKeys(args, dst); ok {
			return keys
		}
	}
	if s.KeyFunc != nil {
		return s.KeyFunc(args, dst)
	}
	return dst
}

// LockKeys appends every key the command may touch, for locking: the key
// function's exact reading of the arguments when there is one (a key spec
// can be fooled by a key named like its keyword), else the key specs, where
// a spec whose keys would lie beyond the arguments has none (PFMERGE with
// no source). all reports that the keys cannot be known (an unknown or
// incomplete spec, an unreadable key count): the caller must lock
// everything.
func (s *Spec) LockKeys(args [][]byte, dst []KeyRef) (keys []KeyRef, all bool) {
	if s.simple {
		return s.simpleKeys(args, dst), false
	}
	if s.KeyFunc != nil {
		return s.KeyFunc(args, dst), false
	}
	return s.SpecLockKeys(args, dst)
}

// SpecLockKeys is LockKeys for a command without a key function. Unlike
// LockKeys, it lets a caller's stack buffer stay on the stack.
func (s *Spec) SpecLockKeys(args [][]byte, dst []KeyRef) (keys []KeyRef, all bool) {
	keys, ok := s.specKeys(args, dst, true)
	return keys, !ok
}

// SimpleKeys reports the one index+range key spec most commands have, so
// callers can walk the keys without a KeyRef buffer; ok=false otherwise.
func (s *Spec) SimpleKeys() (first, lastKey, step int, ok bool) {
	return s.first, s.lastKey, s.step, s.simple
}

func (s *Spec) simpleKeys(args [][]byte, dst []KeyRef) []KeyRef {
	last := s.lastKey
	if last >= 0 {
		last += s.first
	} else {
		last += len(args)
	}
	for i := s.first; i <= last && i < len(args); i += s.step {
		dst = append(dst, KeyRef{i, s.simpleFlags})
	}
	return dst
}

// SpecKeys is Redis's getKeysUsingKeySpecs: the keys the key specs find,
// ok=false when a spec cannot tell (unknown, incomplete, or out of the
// arguments), with dst as it was. Unlike the key function, it lets a
// caller's stack buffer stay on the stack.
func (s *Spec) SpecKeys(args [][]byte, dst []KeyRef) ([]KeyRef, bool) {
	return s.specKeys(args, dst, false)
}

// specKeys is SpecKeys; with skipOutOfRange a spec whose keys would lie
// beyond the arguments finds none instead of making the result unknown.
func (s *Spec) specKeys(args [][]byte, dst []KeyRef, skipOutOfRange bool) ([]KeyRef, bool) {
	start := len(dst)
	argc := len(args)
	for i := range s.keySpecs {
		ks := &s.keySpecs[i]
		if ks.Flags&NotKey != 0 {
			continue
		}
		first := 0
		switch ks.BeginSearch {
		case SearchIndex:
			first = ks.Index
		case SearchKeyword:
			from, end := ks.StartFrom, argc-1
			if from <= 0 {
				from, end = argc+ks.StartFrom, 1
			}
			// Redis's search stops before end: the keyword cannot be the
			// last argument, nor (searching back) the first.
			for j := from; j != end && j < argc && j >= 1; {
				if equalFold(args[j], ks.Keyword) {
					first = j + 1
					break
				}
				if from <= end {
					j++
				} else {
					j--
				}
			}
			if first == 0 {
				continue
			}
		default:
			return dst[:start], false
		}
		var last, step int
		switch ks.FindKeys {
		case FindRange:
			step = ks.KeyStep
			switch {
			case ks.LastKey >= 0:
				last = first + ks.LastKey
			case ks.Limit == 0:
				last = argc + ks.LastKey
			default:
				last = first + (argc-first)/ks.Limit + ks.LastKey
			}
		case FindKeynum:
			step = ks.KeyStep
			if first+ks.KeyNumIdx >= argc {
				return dst[:start], false
			}
			n, ok := parseCount(args[first+ks.KeyNumIdx])
			if !ok {
				return dst[:start], false
			}
			first += ks.FirstKey
			last = first + (n-1)*step // every step-th argument (MSETEX: key value pairs)
		default:
			return dst[:start], false
		}
		if last >= argc || last < first || first >= argc {
			if skipOutOfRange {
				continue
			}
			return dst[:start], false
		}
		for j := first; j <= last; j += step {
			dst = append(dst, KeyRef{j, ks.Flags})
		}
		if ks.Flags&Incomplete != 0 {
			return dst[:start], false
		}
	}
	return dst, true
}

// parseCount reads a non-negative count as Redis's string2ll does.
func parseCount(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 10 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= 1<<31-1
}

// equalFold compares an argument with a keyword as Redis's strcasecmp
// does: up to a NUL byte.
func equalFold(arg []byte, word string) bool {
	for i, c := range arg {
		if c == 0 {
			arg = arg[:i]
			break
		}
	}
	if len(arg) != len(word) {
		return false
	}
	for i, c := range arg {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		w := word[i]
		if w >= 'A' && w <= 'Z' {
			w += 'a' - 'A'
		}
		if c != w {
			return false
		}
	}
	return true
}
