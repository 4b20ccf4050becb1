package difftest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/keyhive/keyhive/resp"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// RESP type bytes, as they appear first on the wire.
const (
	KindSimple    byte = '+' // simple string
	KindError     byte = '-' // simple error
	KindInt       byte = ':' // integer
	KindBulk      byte = '$' // bulk string ($-1 is the RESP2 null)
	KindArray     byte = '*' // array (*-1 is the RESP2 null array)
	KindNull      byte = '_' // RESP3 null
	KindDouble    byte = ',' // RESP3 double
	KindBool      byte = '#' // RESP3 boolean
	KindBlobError byte = '!' // RESP3 bulk error
	KindVerbatim  byte = '=' // RESP3 verbatim string
	KindBigNumber byte = '(' // RESP3 big number
	KindMap       byte = '%' // RESP3 map
	KindSet       byte = '~' // RESP3 set
	KindAttribute byte = '|' // RESP3 attribute; never a Reply's Kind, see Reply.Attrs
	KindPush      byte = '>' // RESP3 push
)

// maxDepth bounds aggregate nesting so a broken server cannot overflow the
// reader's stack; real replies (even EVAL tables) stay far below it.
const maxDepth = 1000

// Reply is one parsed RESP2/RESP3 reply. Which fields are set depends on Kind.
type Reply struct {
	Kind   byte    // RESP type byte, one of the Kind constants (never KindAttribute)
	Str    string  // payload of + - $ ! ( and of = without its format; text of : , #
	Format string  // '=' only: the three-letter format, e.g. "txt"
	Int    int64   // ':' value; '#' is 1 for true, 0 for false
	Float  float64 // ',' value (inf, -inf and nan included)
	Null   bool    // $-1, *-1 or _
	Elems  []Reply // elements of * ~ >; keys and values interleaved for %
	Attrs  []Reply // keys and values interleaved of a '|' attribute sent before this reply
	Raw    []byte  // exact wire bytes of this reply, attribute included
}

// IsError reports whether r is a simple or blob error.
func (r Reply) IsError() bool { return r.Kind == KindError || r.Kind == KindBlobError }

// IsAggregate reports whether r has elements (array, map, set, push), null arrays included.
func (r Reply) IsAggregate() bool {
	switch r.Kind {
	case KindArray, KindMap, KindSet, KindPush:
		return true
	}
	return false
}

// Equal reports whether r and o have identical wire bytes.
func (r Reply) Equal(o Reply) bool { return bytes.Equal(r.Raw, o.Raw) }

// String renders r on one line, roughly as redis-cli would, for log messages.
func (r Reply) String() string {
	var sb strings.Builder
	r.format(&sb)
	return sb.String()
}

func (r Reply) format(sb *strings.Builder) {
	if len(r.Attrs) > 0 {
		sb.WriteString("(attrs ")
		formatPairs(sb, r.Attrs)
		sb.WriteString(") ")
	}
	switch r.Kind {
	case KindSimple:
		sb.WriteString("+" + r.Str)
	case KindError:
		sb.WriteString("(error) " + r.Str)
	case KindInt:
		sb.WriteString("(integer) " + r.Str)
	case KindBulk:
		if r.Null {
			sb.WriteString("(nil)")
		} else {
			sb.WriteString(strconv.Quote(r.Str))
		}
	case KindNull:
		sb.WriteString("(null)")
	case KindDouble:
		sb.WriteString("(double) " + r.Str)
	case KindBool:
		if r.Int == 1 {
			sb.WriteString("(true)")
		} else {
			sb.WriteString("(false)")
		}
	case KindBlobError:
		sb.WriteString("(blob error) " + strconv.Quote(r.Str))
	case KindVerbatim:
		sb.WriteString("(verbatim " + r.Format + ") " + strconv.Quote(r.Str))
	case KindBigNumber:
		sb.WriteString("(big) " + r.Str)
	case KindMap:
		formatPairs(sb, r.Elems)
	case KindArray, KindSet, KindPush:
		if r.Null {
			sb.WriteString("(nil array)")
			return
		}
		switch r.Kind {
		case KindSet:
			sb.WriteString("(set) ")
		case KindPush:
			sb.WriteString("(push) ")
		}
		sb.WriteByte('[')
		for i, e := range r.Elems {
			if i > 0 {
				sb.WriteString(", ")
			}
			e.format(sb)
		}
		sb.WriteByte(']')
	default:
		fmt.Fprintf(sb, "(kind %q) %q", r.Kind, r.Raw)
	}
}

func formatPairs(sb *strings.Builder, kv []Reply) {
	sb.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			sb.WriteString(", ")
		}
		kv[i].format(sb)
		sb.WriteString(": ")
		kv[i+1].format(sb)
	}
	sb.WriteByte('}')
}

// ReadReply reads exactly one complete reply (an attribute and the reply it
// precedes count as one) from br. A clean end of stream before the first byte
// returns io.EOF; a stream ending mid-reply returns io.ErrUnexpectedEOF. On any
// error the returned Reply's Raw holds the bytes consumed so far, for diagnostics.
// The reader is strict (CRLF line ends, exact bulk lengths, valid numbers),
// because the point is to catch a server that is not.
func ReadReply(br *bufio.Reader) (Reply, error) {
	rd := reader{br: br}
	r, err := rd.value(0)
	if err != nil {
		if errors.Is(err, io.EOF) && len(rd.buf) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return Reply{Raw: rd.buf}, err
	}
	return r, nil
}

// Parse parses raw, which must hold exactly one complete reply.
func Parse(raw []byte) (Reply, error) {
	br := bufio.NewReader(bytes.NewReader(raw))
	r, err := ReadReply(br)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return r, err
	}
	if n := br.Buffered(); n > 0 {
		return r, fmt.Errorf("resp: %d trailing bytes after reply", n)
	}
	return r, nil
}

// MustParse is Parse that panics on error, for literals in tests.
func MustParse(raw string) Reply {
	r, err := Parse([]byte(raw))
	if err != nil {
		panic(fmt.Sprintf("difftest.MustParse(%q): %v", raw, err))
	}
	return r
}

// reader accumulates every consumed byte in buf so each Reply can carry its
// exact wire form (Raw) without a second encoding step.
type reader struct {
	br  *bufio.Reader
	buf []byte
}

// line reads one CRLF-terminated line and returns it without the CRLF.
func (rd *reader) line() ([]byte, error) {
	start := len(rd.buf)
	for {
		chunk, err := rd.br.ReadSlice('\n')
		rd.buf = append(rd.buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue // a long simple string or error; keep going
		}
		if err != nil {
			return nil, err
		}
		break
	}
	l := rd.buf[start:]
	if len(l) < 2 || l[len(l)-2] != '\r' {
		return nil, fmt.Errorf("resp: line %q not terminated by CRLF", l)
	}
	l = l[:len(l)-2]
	if bytes.IndexByte(l, '\r') >= 0 {
		return nil, fmt.Errorf("resp: stray CR in line %q", l)
	}
	return l, nil
}

// readN appends exactly n bytes. It grows the buffer in chunks so a bogus
// huge length costs only as much memory as the peer actually sends.
func (rd *reader) readN(n int) error {
	for n > 0 {
		chunk := min(n, 64<<10)
		old := len(rd.buf)
		rd.buf = slices.Grow(rd.buf, chunk)[:old+chunk]
		m, err := io.ReadFull(rd.br, rd.buf[old:])
		rd.buf = rd.buf[:old+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		n -= chunk
	}
	return nil
}

// length parses a bulk length or aggregate count; -1 is allowed only where
// RESP2 uses it for null.
func length(kind byte, s string, nullable bool) (int, bool, error) {
	if nullable && s == "-1" {
		return 0, true, nil
	}
	if s == "?" {
		return 0, false, fmt.Errorf("resp: streamed %q type not supported", kind)
	}
	// Plain decimal only: no sign, no leading zeros, no overflow.
	n, err := strconv.ParseInt(s, 10, 63)
	if err != nil || s[0] < '0' || s[0] > '9' || (len(s) > 1 && s[0] == '0') {
		return 0, false, fmt.Errorf("resp: invalid length %q for type %q", s, kind)
	}
	return int(n), false, nil
}

func (rd *reader) value(depth int) (Reply, error) {
	if depth > maxDepth {
		return Reply{}, errors.New("resp: aggregates nested too deeply")
	}
	start := len(rd.buf)
	l, err := rd.line()
	if err != nil {
		return Reply{}, err
	}
	if len(l) == 0 {
		return Reply{}, errors.New("resp: empty line where a type byte was expected")
	}
	r := Reply{Kind: l[0]}
	body := string(l[1:])
	switch r.Kind {
	case KindSimple, KindError:
		r.Str = body
	case KindInt:
		r.Str = body
		if r.Int, err = strconv.ParseInt(body, 10, 64); err != nil {
			// Redis 8.8's arrays reply indexes past 2^63-1 unsigned; Str
			// has the value, Int its bits.
			var u uint64
			u, err = strconv.ParseUint(body, 10, 64)
			r.Int = int64(u)
		}
		if err != nil || body[0] == '+' {
			return r, fmt.Errorf("resp: invalid integer %q", body)
		}
	case KindDouble:
		r.Str = body
		if r.Float, err = parseDouble(body); err != nil {
			return r, err
		}
	case KindBool:
		r.Str = body
		switch body {
		case "t":
			r.Int = 1
		case "f":
		default:
			return r, fmt.Errorf("resp: invalid boolean %q", body)
		}
	case KindBigNumber:
		r.Str = body
		if !isBigNumber(body) {
			return r, fmt.Errorf("resp: invalid big number %q", body)
		}
	case KindNull:
		if body != "" {
			return r, fmt.Errorf("resp: null with payload %q", body)
		}
		r.Null = true
	case KindBulk, KindBlobError, KindVerbatim:
		n, null, err := length(r.Kind, body, r.Kind == KindBulk)
		if err != nil {
			return r, err
		}
		if null {
			r.Null = true
			break
		}
		from := len(rd.buf)
		if err := rd.readN(n + 2); err != nil {
			return r, err
		}
		data := rd.buf[from:]
		if data[n] != '\r' || data[n+1] != '\n' {
			return r, fmt.Errorf("resp: %d-byte payload not followed by CRLF", n)
		}
		r.Str = string(data[:n])
		if r.Kind == KindVerbatim {
			if n < 4 || r.Str[3] != ':' {
				return r, fmt.Errorf("resp: verbatim string %q lacks a format prefix", r.Str)
			}
			r.Format, r.Str = r.Str[:3], r.Str[4:]
		}
	case KindArray, KindSet, KindPush, KindMap, KindAttribute:
		n, null, err := length(r.Kind, body, r.Kind == KindArray)
		if err != nil {
			return r, err
		}
		if null {
			r.Null = true
			break
		}
		if r.Kind == KindMap || r.Kind == KindAttribute {
			n *= 2
		}
		// Do not trust n for allocation; a broken server may claim billions.
		r.Elems = make([]Reply, 0, min(n, 1024))
		for range n {
			e, err := rd.value(depth + 1)
			if err != nil {
				return r, err
			}
			r.Elems = append(r.Elems, e)
		}
		if r.Kind == KindAttribute {
			// An attribute is metadata about the reply that follows it; fold
			// both into one Reply so callers always read whole replies.
			next, err := rd.value(depth)
			if err != nil {
				return r, err
			}
			next.Attrs = append(r.Elems, next.Attrs...)
			r = next
		}
	default:
		return r, fmt.Errorf("resp: unknown type byte %q", r.Kind)
	}
	// Full slice expression: later appends to buf must never write into it.
	r.Raw = rd.buf[start:len(rd.buf):len(rd.buf)]
	return r, nil
}

func parseDouble(s string) (float64, error) {
	switch s {
	case "inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	case "nan":
		return math.NaN(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("resp: invalid double %q", s)
	}
	return f, nil
}

func isBigNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// EncodeCommand encodes args as a RESP multibulk command, the form clients
// send. Arguments may be string, []byte, any integer type, float64 or bool
// (as "1"/"0"); []string, [][]byte and []any are flattened one level. It
// panics on other types: that is a bug in the test, not in a server.
func EncodeCommand(args ...any) []byte {
	b, err := appendCommand(nil, args)
	if err != nil {
		panic("difftest.EncodeCommand: " + err.Error())
	}
	return b
}

func appendCommand(dst []byte, args []any) ([]byte, error) {
	flat, err := flattenArgs(args)
	if err != nil {
		return dst, err
	}
	return resp.AppendCommand(dst, flat), nil
}

// flattenArgs converts command arguments to their byte strings.
func flattenArgs(args []any) ([][]byte, error) {
	out := make([][]byte, 0, len(args))
	for _, a := range args {
		switch v := a.(type) {
		case []string:
			for _, s := range v {
				out = append(out, []byte(s))
			}
		case [][]byte:
			out = append(out, v...)
		case []any:
			for _, e := range v {
				b, err := argBytes(e)
				if err != nil {
					return nil, err
				}
				out = append(out, b)
			}
		default:
			b, err := argBytes(v)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}

func argBytes(a any) ([]byte, error) {
	switch v := a.(type) {
	case string:
		return []byte(v), nil
	case []byte:
		return v, nil
	case int:
		return strconv.AppendInt(nil, int64(v), 10), nil
	case int8:
		return strconv.AppendInt(nil, int64(v), 10), nil
	case int16:
		return strconv.AppendInt(nil, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(nil, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(nil, v, 10), nil
	case uint:
		return strconv.AppendUint(nil, uint64(v), 10), nil
	case uint8:
		return strconv.AppendUint(nil, uint64(v), 10), nil
	case uint16:
		return strconv.AppendUint(nil, uint64(v), 10), nil
	case uint32:
		return strconv.AppendUint(nil, uint64(v), 10), nil
	case uint64:
		return strconv.AppendUint(nil, v, 10), nil
	case float64:
		return strconv.AppendFloat(nil, v, 'f', -1, 64), nil
	case bool:
		if v {
			return []byte("1"), nil
		}
		return []byte("0"), nil
	}
	return nil, fmt.Errorf("unsupported argument type %T (%v)", a, a)
}
