package cmdspec

// Key functions: how Redis finds the keys of commands whose key specs
// cannot say it alone (a count argument that may be invalid, a keyword that
// may appear anywhere, flags that depend on the options). They follow
// Redis's get-keys functions, including the flags they give (none, for
// the count-based ones) and what they make of odd arguments, which
// COMMAND GETKEYS shows.

// countKeys finds num keys from firstAt, num read at countAt as C's atoi
// does, then the destination at storeAt (0: none); no keys when the count
// does not fit the arguments.
func countKeys(storeAt, countAt, firstAt int) KeyFunc {
	return func(args [][]byte, dst []KeyRef) []KeyRef {
		num := atoi(args[countAt])
		if num < 1 || num > len(args)-firstAt {
			return dst
		}
		for i := range num {
			dst = append(dst, KeyRef{Pos: firstAt + i})
		}
		if storeAt > 0 {
			dst = append(dst, KeyRef{Pos: storeAt})
		}
		return dst
	}
}

var (
	// zunionstoreKeys: ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE.
	zunionstoreKeys = countKeys(1, 2, 3)
	// numkeysKeys: a count at 1, keys from 2 (ZUNION, SINTERCARD, LMPOP...).
	numkeysKeys = countKeys(0, 1, 2)
	// scriptKeys: EVAL, FCALL and the blocking pops' count at 2.
	scriptKeys = countKeys(0, 2, 3)
)

// atoi is C's atoi: leading blanks, a sign, digits up to the first other
// byte; 0 when there are none.
func atoi(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	n := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
		if n > 1<<31 {
			n = 1 << 31
		}
	}
	if neg {
		return -n
	}
	return n
}

// sortKeys: the sorted key, and the last STORE's destination; LIMIT, GET
// and BY skip their values (a STORE's own key is then read as an option).
func sortKeys(args [][]byte, dst []KeyRef) []KeyRef {
	dst = append(dst, KeyRef{1, RO | Access})
	store := 0
	for i := 2; i < len(args); i++ {
		switch {
		case equalFold(args[i], "limit"):
			i += 2
		case equalFold(args[i], "get"), equalFold(args[i], "by"):
			i++
		case equalFold(args[i], "store") && i+1 < len(args):
			store = i + 1
		}
	}
	if store > 0 {
		dst = append(dst, KeyRef{store, OW | Update})
	}
	return dst
}

// georadiusKeys: the source, and the last STORE or STOREDIST destination.
func georadiusKeys(args [][]byte, dst []KeyRef) []KeyRef {
	dst = append(dst, KeyRef{1, RO | Access})
	store := 0
	for i := 5; i+1 < len(args); i++ {
		if equalFold(args[i], "store") || equalFold(args[i], "storedist") {
			store = i + 1
			i++
		}
	}
	if store > 0 {
		dst = append(dst, KeyRef{store, OW | Update})
	}
	return dst
}

// xreadKeys: the keys after STREAMS (the first half of what follows it),
// past the options before it; none when the arguments are malformed.
func xreadKeys(args [][]byte, dst []KeyRef) []KeyRef {
	for i := 1; i < len(args); i++ {
		switch {
		case equalFold(args[i], "block"), equalFold(args[i], "count"):
			i++
		case equalFold(args[i], "group"):
			i += 2
		case equalFold(args[i], "noack"):
		case equalFold(args[i], "streams"):
			n := len(args) - i - 1
			if n == 0 || n%2 != 0 {
				return dst
			}
			for j := range n / 2 {
				dst = append(dst, KeyRef{Pos: i + 1 + j})
			}
			return dst
		default:
			return dst
		}
	}
	return dst
}

// setKeys: SET's key is read too when GET or an IF condition (Redis 8.4)
// is among the options.
func setKeys(args [][]byte, dst []KeyRef) []KeyRef {
	for _, a := range args[min(3, len(args)):] {
		if equalFold(a, "get") || isIfCondition(a) {
			return append(dst, KeyRef{1, RW | Access | Update})
		}
	}
	return append(dst, KeyRef{1, OW | Update})
}

// delexKeys: DELEX reads its key's value only under a condition.
func delexKeys(args [][]byte, dst []KeyRef) []KeyRef {
	if len(args) > 2 && isIfCondition(args[2]) {
		return append(dst, KeyRef{1, RW | Access | Delete})
	}
	return append(dst, KeyRef{1, RW | Delete})
}

func isIfCondition(a []byte) bool {
	return equalFold(a, "ifeq") || equalFold(a, "ifne") || equalFold(a, "ifdeq") || equalFold(a, "ifdne")
}

// bitfieldKeys: BITFIELD only reads when every operation is a GET (or
// OVERFLOW); anything else, valid or not, may write.
func bitfieldKeys(args [][]byte, dst []KeyRef) []KeyRef {
	for i := 2; i < len(args); i++ {
		left := len(args) - i - 1
		switch {
		case equalFold(args[i], "get") && left >= 2:
			i += 2
		case equalFold(args[i], "overflow") && left >= 1:
			i++
		default:
			return append(dst, KeyRef{1, RW | Access | Update})
		}
	}
	return append(dst, KeyRef{1, RO | Access})
}

// redactAuth hides every argument of AUTH.
func redactAuth(args [][]byte) (lo, hi int) { return 1, len(args) }

// redactSetuser hides ACL SETUSER's user name and rules (passwords among
// them), as Redis does.
func redactSetuser(args [][]byte) (lo, hi int) { return 2, len(args) }

// redactHello hides the user name and password after HELLO's AUTH.
func redactHello(args [][]byte) (lo, hi int) {
	for i := 2; i < len(args); i++ {
		if equalFold(args[i], "auth") {
			return i + 1, i + 3
		}
	}
	return 0, 0
}

// sortROKeys: SORT_RO's sorted key (its BY and GET keys are unknown).
func sortROKeys(args [][]byte, dst []KeyRef) []KeyRef {
	return append(dst, KeyRef{1, RO | Access})
}

// migrateKeys: MIGRATE's key is at 3, or, with an empty key there, the
// arguments after KEYS (the AUTH and AUTH2 arguments skipped on the way).
func migrateKeys(args [][]byte, dst []KeyRef) []KeyRef {
	first, num := 3, 1
	if len(args) > 6 {
	search:
		for i := 6; i < len(args); i++ {
			switch {
			case equalFold(args[i], "keys"):
				if len(args[3]) > 0 {
					num = 0 // a syntax error MIGRATE reports
				} else {
					first, num = i+1, len(args)-i-1
				}
				break search
			case equalFold(args[i], "auth"):
				i++
			case equalFold(args[i], "auth2"):
				i += 2
			}
		}
	}
	for i := range num {
		dst = append(dst, KeyRef{first + i, RW | Access | Delete})
	}
	return dst
}

// redactMigrate hides the password after MIGRATE's AUTH, or the user name
// and password after AUTH2.
func redactMigrate(args [][]byte) (lo, hi int) {
	for i := 6; i < len(args); i++ {
		switch {
		case equalFold(args[i], "keys"):
			return 0, 0
		case equalFold(args[i], "auth"):
			return i + 1, min(i+2, len(args))
		case equalFold(args[i], "auth2"):
			return i + 1, min(i+3, len(args))
		}
	}
	return 0, 0
}
