package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/keyhive/keyhive/internal/strnum"
)

// ---- bind ----

var spBind = &special{
	parse: func(args []string, _ any) (any, error) {
		if len(args) > 16 { // Redis's CONFIG_BINDADDR_MAX
			return nil, errors.New("Too many bind addresses specified.")
		}
		return append([]string{}, args...), nil
	},
	format: func(v any) string { return strings.Join(v.([]string), " ") },
	rewrite: func(v, def any) []rwLine {
		a := v.([]string)
		q := make([]string, len(a))
		for i, s := range a {
			q[i] = quoteIfNeeded(s)
		}
		text := strings.Join(q, " ")
		if len(a) == 0 {
			text = `""`
		}
		return []rwLine{{text, !equalStrings(a, def.([]string))}}
	},
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ---- save ----

var errSave = errors.New("Invalid save parameters")

var spSave = &special{
	parse: func(args []string, _ any) (any, error) {
		if len(args)%2 != 0 {
			return nil, errSave
		}
		pts := make([][2]int64, 0, len(args)/2)
		for i := 0; i < len(args); i += 2 {
			// Redis reads these with strtoll, so "+5" and "05" are fine.
			secs, err1 := strconv.ParseInt(args[i], 10, 64)
			chg, err2 := strconv.ParseInt(args[i+1], 10, 64)
			if err1 != nil || err2 != nil || secs < 1 || chg < 0 {
				return nil, errSave
			}
			pts = append(pts, [2]int64{secs, chg})
		}
		return pts, nil
	},
	format: func(v any) string {
		var b strings.Builder
		for i, p := range v.([][2]int64) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatInt(p[0], 10))
			b.WriteByte(' ')
			b.WriteString(strconv.FormatInt(p[1], 10))
		}
		return b.String()
	},
	rewrite: func(v, def any) []rwLine {
		pts, d := v.([][2]int64), def.([][2]int64)
		force := len(pts) != len(d)
		for i := 0; !force && i < len(pts); i++ {
			force = pts[i] != d[i]
		}
		if len(pts) == 0 {
			return []rwLine{{`""`, force}}
		}
		lines := make([]rwLine, len(pts))
		for i, p := range pts {
			lines[i] = rwLine{strconv.FormatInt(p[0], 10) + " " + strconv.FormatInt(p[1], 10), force}
		}
		return lines
	},
	// Within one configuration, the first save line replaces the default and
	// later ones add save points.
	merge: func(old, new any) any {
		o, n := old.([][2]int64), new.([][2]int64)
		return append(append(make([][2]int64, 0, len(o)+len(n)), o...), n...)
	},
}

// ---- client-output-buffer-limit ----

// ClientClass selects a client-output-buffer-limit class.
type ClientClass int

const (
	ClassNormal ClientClass = iota
	ClassReplica
	ClassPubSub
)

var classNames = [3]string{"normal", "slave", "pubsub"}

// OutputBufferLimit is one class of client-output-buffer-limit: a client is
// disconnected when its pending output exceeds Hard, or stays above Soft for
// SoftSeconds. Zero disables a limit.
type OutputBufferLimit struct {
	Hard, Soft  uint64
	SoftSeconds int64
}

type obufLimits [3]OutputBufferLimit

var spObuf = &special{
	parse: func(args []string, cur any) (any, error) {
		if len(args)%4 != 0 {
			return nil, errors.New("Wrong number of arguments in buffer limit configuration.")
		}
		v := cur.(obufLimits) // a copy: only the named classes change
		for i := 0; i < len(args); i += 4 {
			var class ClientClass
			switch strings.ToLower(args[i]) {
			case "normal":
				class = ClassNormal
			case "slave", "replica":
				class = ClassReplica
			case "pubsub":
				class = ClassPubSub
			default:
				return nil, errors.New("Invalid client class specified in buffer limit configuration.")
			}
			hard, ok1 := strnum.ParseMemory(args[i+1])
			soft, ok2 := strnum.ParseMemory(args[i+2])
			secs := strtoll(args[i+3])
			if !ok1 || !ok2 || secs < 0 {
				return nil, errors.New("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
			}
			v[class] = OutputBufferLimit{hard, soft, secs}
		}
		return v, nil
	},
	format: func(v any) string {
		l := v.(obufLimits)
		parts := make([]string, 0, 12)
		for c := range l {
			parts = append(parts, classNames[c],
				strconv.FormatUint(l[c].Hard, 10),
				strconv.FormatUint(l[c].Soft, 10),
				strconv.FormatInt(l[c].SoftSeconds, 10))
		}
		return strings.Join(parts, " ")
	},
	rewrite: func(v, def any) []rwLine {
		l, d := v.(obufLimits), def.(obufLimits)
		lines := make([]rwLine, 0, 3)
		for c := range l {
			lines = append(lines, rwLine{
				classNames[c] + " " + humanMemory(l[c].Hard) + " " + humanMemory(l[c].Soft) + " " +
					strconv.FormatInt(l[c].SoftSeconds, 10),
				l[c] != d[c]})
		}
		return lines
	},
}

// strtoll mimics C's lenient strtoll: leading spaces, a sign, then as many
// digits as there are; anything else yields what was read so far (often 0).
func strtoll(s string) int64 {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var v int64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := int64(s[i] - '0')
		if v > (1<<63-1-d)/10 {
			if neg {
				return -1 << 63
			}
			return 1<<63 - 1
		}
		v = v*10 + d
	}
	if neg {
		return -v
	}
	return v
}

// ---- notify-keyspace-events ----

// KeyspaceEvents is the parsed notify-keyspace-events bit set.
type KeyspaceEvents uint32

const (
	EventKeyspace KeyspaceEvents = 1 << iota // K: __keyspace@<db>__ channel
	EventKeyevent                            // E: __keyevent@<db>__ channel
	EventGeneric                             // g: DEL, EXPIRE, RENAME, ...
	EventString                              // $
	EventList                                // l
	EventSet                                 // s
	EventHash                                // h
	EventZset                                // z
	EventExpired                             // x
	EventEvicted                             // e
	EventStream                              // t
	EventModule                              // d
	EventNew                                 // n: new key (not part of A)
	EventKeyMiss                             // m: key miss (not part of A)

	// EventAll is what 'A' stands for.
	EventAll = EventGeneric | EventString | EventList | EventSet | EventHash |
		EventZset | EventExpired | EventEvicted | EventStream | EventModule
)

// Redis 8.2's classes, not part of A either.
const (
	EventOverwritten = EventKeyMiss << (iota + 1) // o: a value replaced whole
	EventTypeChanged                              // c: a type changed by an overwrite
)

// Redis 8.8's subkey channels (hash fields named in the payload), enabled
// apart from K and E; the event classes gate them as they gate those.
const (
	EventSubkeyspace      = EventTypeChanged << (iota + 1) // S: __subkeyspace@<db>__:<key>
	EventSubkeyevent                                       // T: __subkeyevent@<db>__:<event>
	EventSubkeyspaceItem                                   // I: __subkeyspaceitem@<db>__:<key>\n<subkey>
	EventSubkeyspaceEvent                                  // V: __subkeyspaceevent@<db>__:<event>|<key>

	// EventSubkeyChannels is any of the four.
	EventSubkeyChannels = EventSubkeyspace | EventSubkeyevent | EventSubkeyspaceItem | EventSubkeyspaceEvent
)

// The channel flags in the order CONFIG GET lists them, after the classes.
var channelChars = []struct {
	c byte
	f KeyspaceEvents
}{
	{'K', EventKeyspace}, {'E', EventKeyevent},
	{'S', EventSubkeyspace}, {'T', EventSubkeyevent}, {'I', EventSubkeyspaceItem}, {'V', EventSubkeyspaceEvent},
}

// Order in which CONFIG GET lists the classes when 'A' does not apply.
var eventChars = []struct {
	c byte
	f KeyspaceEvents
}{
	{'g', EventGeneric}, {'$', EventString}, {'l', EventList}, {'s', EventSet},
	{'h', EventHash}, {'z', EventZset}, {'x', EventExpired}, {'e', EventEvicted},
	{'t', EventStream}, {'d', EventModule}, {'n', EventNew},
	{'o', EventOverwritten}, {'c', EventTypeChanged},
}

func parseKeyspaceEvents(s string) (KeyspaceEvents, bool) {
	var f KeyspaceEvents
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 'A':
			f |= EventAll
		case 'm':
			f |= EventKeyMiss
		default:
			e, ok := flagOf(c)
			if !ok {
				return 0, false
			}
			f |= e
		}
	}
	return f, true
}

// flagOf is the class or channel flag character c stands for.
func flagOf(c byte) (KeyspaceEvents, bool) {
	for _, table := range [...][]struct {
		c byte
		f KeyspaceEvents
	}{eventChars, channelChars} {
		for _, e := range table {
			if e.c == c {
				return e.f, true
			}
		}
	}
	return 0, false
}

// String formats the set as CONFIG GET shows it. Like Redis 7.0, 'n' is only
// listed when the set is not "A" (a quirk kept for identical replies).
func (f KeyspaceEvents) String() string {
	var b []byte
	if f&EventAll == EventAll {
		b = append(b, 'A')
	} else {
		for _, e := range eventChars {
			if f&e.f != 0 {
				b = append(b, e.c)
			}
		}
	}
	for _, e := range channelChars {
		if f&e.f != 0 {
			b = append(b, e.c)
		}
	}
	if f&EventKeyMiss != 0 {
		b = append(b, 'm')
	}
	return string(b)
}

var spKeyspace = &special{
	parse: func(args []string, _ any) (any, error) {
		f, ok := parseKeyspaceEvents(args[0])
		if !ok {
			return nil, errors.New("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
		}
		return f, nil
	},
	format: func(v any) string { return v.(KeyspaceEvents).String() },
	rewrite: func(v, def any) []rwLine {
		return []rwLine{{repr(v.(KeyspaceEvents).String()), v != def}}
	},
}

// ---- oom-score-adj-values ----

type oomValues [3]int64

var spOOMValues = &special{
	parse: func(args []string, _ any) (any, error) {
		if len(args) != 3 {
			return nil, errWrongArgs
		}
		var v oomValues
		for i, a := range args {
			n, err := strconv.ParseInt(a, 10, 64)
			if err != nil || n < -2000 || n > 2000 {
				return nil, errors.New("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
			}
			v[i] = n
		}
		return v, nil
	},
	format: func(v any) string {
		o := v.(oomValues)
		return strconv.FormatInt(o[0], 10) + " " + strconv.FormatInt(o[1], 10) + " " + strconv.FormatInt(o[2], 10)
	},
	rewrite: func(v, def any) []rwLine {
		o := v.(oomValues)
		return []rwLine{{strconv.FormatInt(o[0], 10) + " " + strconv.FormatInt(o[1], 10) + " " + strconv.FormatInt(o[2], 10), v != def}}
	},
}

// ---- latency-tracking-info-percentiles ----

var spPercentiles = &special{
	parse: func(args []string, _ any) (any, error) {
		v := make([]float64, 0, len(args))
		for _, a := range args {
			f, err := strconv.ParseFloat(a, 64)
			if err != nil {
				return nil, errors.New("Invalid latency-tracking-info-percentiles parameters")
			}
			if f < 0 || f > 100 {
				return nil, errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
			}
			v = append(v, f)
		}
		return v, nil
	},
	format: formatPercentiles,
	rewrite: func(v, def any) []rwLine {
		s := formatPercentiles(v)
		if s == "" {
			s = `""`
		}
		return []rwLine{{s, formatPercentiles(v) != formatPercentiles(def)}}
	},
}

func formatPercentiles(v any) string {
	var b strings.Builder
	for i, f := range v.([]float64) {
		if i > 0 {
			b.WriteByte(' ')
		}
		// C's "%f" with the trailing zeros (and a bare dot) removed.
		s := strconv.FormatFloat(f, 'f', 6, 64)
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
		b.WriteString(s)
	}
	return b.String()
}

// ---- replicaof ----

type hostPort struct {
	host string
	port int64
}

var spReplicaof = &special{
	parse: func(args []string, _ any) (any, error) {
		if len(args) != 2 {
			return nil, errWrongArgs
		}
		if strings.EqualFold(args[0], "no") && strings.EqualFold(args[1], "one") {
			return hostPort{}, nil
		}
		p, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || p < 0 || p > 65535 {
			return nil, errors.New("Invalid master port")
		}
		return hostPort{args[0], p}, nil
	},
	format: func(v any) string {
		hp := v.(hostPort)
		if hp.host == "" {
			return ""
		}
		return hp.host + " " + strconv.FormatInt(hp.port, 10)
	},
	rewrite: func(v, _ any) []rwLine {
		hp := v.(hostPort)
		if hp.host == "" {
			return nil
		}
		return []rwLine{{quoteIfNeeded(hp.host) + " " + strconv.FormatInt(hp.port, 10), true}}
	},
}

// ---- dir ----

// dir is kept as an absolute path instead of calling chdir like Redis: a
// relative value is resolved against the current one, which is what the
// chdir would have done.
var spDir = &special{
	parse: func(args []string, cur any) (any, error) {
		if len(args) != 1 {
			return nil, errWrongArgs
		}
		p := args[0]
		if p == "" {
			return nil, errors.New("No such file or directory")
		}
		if !filepath.IsAbs(p) {
			base, _ := cur.(string)
			p = filepath.Join(base, p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, errors.New(errnoText(err))
		}
		st, err := os.Stat(real)
		if err != nil {
			return nil, errors.New(errnoText(err))
		}
		if !st.IsDir() {
			return nil, errors.New("Not a directory")
		}
		return real, nil
	},
	format: func(v any) string { return v.(string) },
	rewrite: func(v, _ any) []rwLine {
		return []rwLine{{repr(v.(string)), true}}
	},
}

// errnoText renders an OS error like C's strerror ("No such file or
// directory") since that is what Redis puts in its messages.
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" && s[0] >= 'a' && s[0] <= 'z' {
			s = string(s[0]-'a'+'A') + s[1:]
		}
		return s
	}
	return err.Error()
}

// ---- value checks ----

func baseName(msg string) func(any) error {
	return func(v any) error {
		if strings.ContainsAny(v.(string), `/\`) {
			return errors.New(msg)
		}
		return nil
	}
}

func oneByte(msg string) func(any) error {
	return func(v any) error {
		if len(v.(string)) != 1 {
			return errors.New(msg)
		}
		return nil
	}
}

func powerOfTwo(msg string) func(any) error {
	return func(v any) error {
		if n := v.(int64); n&(n-1) != 0 {
			return errors.New(msg)
		}
		return nil
	}
}

func checkHostname(v any) error {
	s := v.(string)
	if len(s) >= 256 {
		return errors.New("Hostnames must be less than 256 characters")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return errors.New("Hostnames may only contain alphanumeric characters, hyphens or dots")
		}
	}
	return nil
}

// checkProcTitle accepts a template whose variables are all known ("{{" and
// "}}" are literal braces) and which does not expand to only blanks, the
// title itself counting as empty.
func checkProcTitle(v any) error {
	bad := errors.New("template format is invalid or contains unknown variables")
	s := v.(string)
	nonBlank := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '{' && i+1 < len(s) && s[i+1] == '{', s[i] == '}' && i+1 < len(s) && s[i+1] == '}':
			nonBlank = true
			i++
		case s[i] == '{':
			end := strings.IndexByte(s[i+1:], '}')
			if end < 0 {
				return bad
			}
			switch s[i+1 : i+1+end] {
			case "title", "server-mode", "unixsocket", "config-file":
				// may expand to nothing
			case "listen-addr", "port", "tls-port":
				nonBlank = true
			default:
				return bad
			}
			i += end + 1
		default:
			if s[i] != ' ' {
				nonBlank = true
			}
		}
	}
	if !nonBlank {
		return bad
	}
	return nil
}

func checkShutdown(v any) error {
	if f := v.(int64); f&1 != 0 && f&2 != 0 {
		return errors.New("shutdown options SAVE and NOSAVE can't be used simultaneously")
	}
	return nil
}
