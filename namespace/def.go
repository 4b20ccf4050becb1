// Package namespace is Keyhive's key schema: named groups of keys declared by
// prefix (or by a glob pattern where a prefix cannot say it), each with
// statistics kept as keys change and policies the server enforces.
//
// The model:
//
//   - A Def is one declaration: a name, a PREFIX or a PATTERN, and a Policy
//     (quotas, what happens at them, protection from maxmemory eviction, TTL
//     rules, allowed types). Defs are written and read as the arguments of
//     NAMESPACE DEFINE, which is also how the config file, the RDB aux field
//     and the AOF carry them.
//   - A Table is an immutable set of Defs compiled into a byte trie, plus the
//     namespaces' counters. A key belongs to the namespace with the longest
//     literal prefix that matches it (a pattern's literal prefix is what
//     precedes its first glob character, and a pattern beats a plain prefix of
//     the same length); keys of no namespace belong to the default one, index
//     0. Matching walks the key's bytes once down the trie and allocates
//     nothing.
//   - Counters are per database and namespace, so FLUSHDB and SWAPDB move
//     them as the keyspace moves keys. A Table is the keyspace's Schema
//     (the server sets it): the keyspace reports every creation, deletion,
//     size change and expire-time change (Changed) and every write
//     (Wrote); the server reports hits, misses,
//     evictions, expirations and refusals. Nothing is ever counted by
//     scanning: a new Table is filled once from the keys present when it
//     replaces the old one.
//   - With prefix discovery on, a Table also feeds the discovered prefixes'
//     sketch (package discover) from the same calls, and the server sets a
//     Table even with nothing declared (then only the sketch is fed).
//   - A namespace with a quota and an eviction order keeps an exact eviction
//     index: its keys ordered by the policy's score in a pointer-free sorted
//     set (internal/zset), so quota evictions remove exactly the lowest
//     scored key rather than a sampled approximation.
package namespace

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/keyhive/keyhive/internal/strnum"
)

// Order is how a namespace over its quota chooses the key to evict.
type Order uint8

// Eviction orders.
const (
	OrderNone           Order = iota // refuse the write at the quota
	OrderLRU                         // the least recently accessed (read or written) first
	OrderLFU                         // the fewest hits first, then the least recently accessed
	OrderTTL                         // the nearest expire time first (keys without one last)
	OrderRandom                      // any
	OrderHitsThenOldest              // the fewest hits first, then the oldest (by creation)
	OrderLRFU                        // the lowest hits decayed by age (table.go, lrfuScore)
)

var orderNames = []string{"reject", "lru", "lfu", "ttl", "random", "lowest-hits-then-oldest", "lrfu"}

func (o Order) String() string { return orderNames[o] }

// Type bits for Policy.Types, by the keyspace's type numbers.
const (
	TypeString = 1 << 0
	TypeList   = 1 << 1
	TypeSet    = 1 << 2
	TypeZSet   = 1 << 3
	TypeHash   = 1 << 4
	TypeStream = 1 << 6
	TypeJSON   = 1 << 7 // the keyspace numbers it 15; the one bit left
)

var typeNames = []struct {
	name string
	bit  uint8
}{{"string", TypeString}, {"list", TypeList}, {"set", TypeSet}, {"zset", TypeZSet}, {"hash", TypeHash}, {"stream", TypeStream}, {"json", TypeJSON}}

// TypeNames lists the names of the types in bits.
func TypeNames(bits uint8) []string {
	var out []string
	for _, t := range typeNames {
		if bits&t.bit != 0 {
			out = append(out, t.name)
		}
	}
	return out
}

// Policy is what the server enforces for a namespace.
type Policy struct {
	MaxKeys   int64 // 0: no key quota
	MaxMemory int64 // bytes, 0: no memory quota
	Evict     Order // at a quota: OrderNone refuses the write, else evict in this order
	Protected bool  // never evicted by maxmemory
	// RequireTTL: a write that would leave a key without a TTL is refused,
	// unless DefaultTTL gives such keys one.
	RequireTTL bool
	DefaultTTL int64 // ms, 0: none
	MaxTTL     int64 // ms, 0: none; longer TTLs are shortened to it
	Types      uint8 // allowed value types (Type* bits), 0: any
}

// Def is one namespace declaration.
type Def struct {
	Name    string
	Prefix  string // the literal prefix (of Pattern, when there is one)
	Pattern string // a glob pattern the whole key must match, "" for a plain prefix
	Policy
}

// HasQuota reports whether the namespace has a key or memory quota.
func (d *Def) HasQuota() bool { return d.MaxKeys > 0 || d.MaxMemory > 0 }

// Guards reports whether the namespace checks writes before they run
// (allowed types, REQUIRE-TTL without a TTL to give, REJECT quotas).
func (d *Def) Guards() bool {
	return d.Types != 0 || (d.RequireTTL && d.DefaultTTL == 0 && d.MaxTTL == 0) || (d.HasQuota() && d.Evict == OrderNone)
}

// Indexed reports whether the namespace keeps an eviction index.
func (d *Def) Indexed() bool { return d.HasQuota() && d.Evict != OrderNone }

// DefaultName is the name of the namespace of keys no declaration covers.
const DefaultName = "default"

// Parse reads a declaration from NAMESPACE DEFINE's arguments (after
// DEFINE): name PREFIX p | PATTERN glob, then policy options in any order:
// MAX-KEYS n, MAX-MEMORY bytes, EVICT order | REJECT, PROTECTED,
// REQUIRE-TTL, DEFAULT-TTL seconds, MAX-TTL seconds, TYPES t[,t...].
func Parse(args []string) (Def, error) {
	if len(args) < 3 {
		return Def{}, errors.New("ERR wrong number of arguments for 'namespace|define' command")
	}
	d := Def{Name: args[0]}
	if err := checkName(d.Name); err != nil {
		return Def{}, err
	}
	switch strings.ToLower(args[1]) {
	case "prefix":
		d.Prefix = args[2]
	case "pattern":
		d.Pattern = args[2]
		d.Prefix = literalPrefix(args[2])
	default:
		return Def{}, fmt.Errorf("ERR namespace '%s' needs PREFIX or PATTERN after its name", d.Name)
	}
	if d.Prefix == "" && (d.Pattern == "" || d.Pattern == "*") {
		return Def{}, fmt.Errorf("ERR namespace '%s' would hold every key: the default namespace already does", d.Name)
	}
	rest := args[3:]
	next := func(opt string) (string, error) {
		if len(rest) < 2 {
			return "", fmt.Errorf("ERR %s needs a value", strings.ToUpper(opt))
		}
		v := rest[1]
		rest = rest[1:]
		return v, nil
	}
	evictSet := false
	for ; len(rest) > 0; rest = rest[1:] {
		opt := strings.ToLower(rest[0])
		switch opt {
		case "protected":
			d.Protected = true
		case "require-ttl":
			d.RequireTTL = true
		case "reject":
			d.Evict, evictSet = OrderNone, true
		case "max-keys", "max-memory", "default-ttl", "max-ttl":
			v, err := next(opt)
			if err != nil {
				return Def{}, err
			}
			var n int64
			if opt == "max-memory" {
				m, ok := strnum.ParseMemory(v)
				if !ok || m > 1<<62 {
					return Def{}, fmt.Errorf("ERR invalid MAX-MEMORY '%s'", v)
				}
				n = int64(m)
			} else {
				n, err = strconv.ParseInt(v, 10, 64)
				if err != nil || n < 0 || (opt != "max-keys" && n > 1<<40) {
					return Def{}, fmt.Errorf("ERR invalid %s '%s'", strings.ToUpper(opt), v)
				}
			}
			switch opt {
			case "max-keys":
				d.MaxKeys = n
			case "max-memory":
				d.MaxMemory = n
			case "default-ttl":
				d.DefaultTTL = n * 1000
			case "max-ttl":
				d.MaxTTL = n * 1000
			}
		case "evict":
			v, err := next(opt)
			if err != nil {
				return Def{}, err
			}
			o, ok := parseOrder(v)
			if !ok {
				return Def{}, fmt.Errorf("ERR unknown EVICT order '%s' (lru, lfu, ttl, random, lowest-hits-then-oldest, lrfu)", v)
			}
			d.Evict, evictSet = o, true
		case "types":
			v, err := next(opt)
			if err != nil {
				return Def{}, err
			}
			for _, name := range strings.Split(v, ",") {
				bit, ok := typeBit(name)
				if !ok {
					return Def{}, fmt.Errorf("ERR unknown type '%s' in TYPES", name)
				}
				d.Types |= bit
			}
		default:
			return Def{}, fmt.Errorf("ERR unknown namespace option '%s'", rest[0])
		}
	}
	if evictSet && d.Evict != OrderNone && !d.HasQuota() {
		return Def{}, fmt.Errorf("ERR EVICT needs MAX-KEYS or MAX-MEMORY")
	}
	if d.DefaultTTL > 0 && d.MaxTTL > 0 && d.DefaultTTL > d.MaxTTL {
		return Def{}, fmt.Errorf("ERR DEFAULT-TTL is longer than MAX-TTL")
	}
	return d, nil
}

func checkName(name string) error {
	if name == "" || strings.EqualFold(name, DefaultName) {
		return fmt.Errorf("ERR invalid namespace name '%s'", name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c == ',' || c == '=' || c == ':' || c >= 0x7f {
			return fmt.Errorf("ERR invalid namespace name '%s' (letters, digits, '-', '_' and '.')", name)
		}
	}
	return nil
}

func parseOrder(s string) (Order, bool) {
	for i, n := range orderNames {
		if i > 0 && strings.EqualFold(s, n) {
			return Order(i), true
		}
	}
	return 0, false
}

func typeBit(s string) (uint8, bool) {
	for _, t := range typeNames {
		if strings.EqualFold(strings.TrimSpace(s), t.name) {
			return t.bit, true
		}
	}
	return 0, false
}

// literalPrefix is the part of a glob pattern before its first special
// character.
func literalPrefix(p string) string {
	if i := strings.IndexAny(p, `*?[\`); i >= 0 {
		return p[:i]
	}
	return p
}

// Args returns the declaration as NAMESPACE DEFINE's arguments (after
// DEFINE), in a fixed order: what NAMESPACE LIST shows and what the RDB aux
// field, the AOF and the config file hold.
func (d *Def) Args() []string {
	a := []string{d.Name}
	if d.Pattern != "" {
		a = append(a, "PATTERN", d.Pattern)
	} else {
		a = append(a, "PREFIX", d.Prefix)
	}
	if d.MaxKeys > 0 {
		a = append(a, "MAX-KEYS", strconv.FormatInt(d.MaxKeys, 10))
	}
	if d.MaxMemory > 0 {
		a = append(a, "MAX-MEMORY", strconv.FormatInt(d.MaxMemory, 10))
	}
	if d.HasQuota() {
		if d.Evict == OrderNone {
			a = append(a, "REJECT")
		} else {
			a = append(a, "EVICT", d.Evict.String())
		}
	}
	if d.Protected {
		a = append(a, "PROTECTED")
	}
	if d.RequireTTL {
		a = append(a, "REQUIRE-TTL")
	}
	if d.DefaultTTL > 0 {
		a = append(a, "DEFAULT-TTL", strconv.FormatInt(d.DefaultTTL/1000, 10))
	}
	if d.MaxTTL > 0 {
		a = append(a, "MAX-TTL", strconv.FormatInt(d.MaxTTL/1000, 10))
	}
	if d.Types != 0 {
		a = append(a, "TYPES", strings.Join(TypeNames(d.Types), ","))
	}
	return a
}
