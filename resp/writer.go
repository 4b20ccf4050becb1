package resp

import (
	"math"
	"strconv"
)

// Writer appends replies to B in the protocol version the client chose with
// HELLO. Aggregates whose shape differs between RESP2 and RESP3 (maps, sets,
// nulls, doubles, booleans) are written in the right form here, so commands
// describe their reply once.
type Writer struct {
	B     []byte
	Proto int // 2 or 3
	// Errors, when set, is told of every error reply written (a server's
	// error statistics count them where they are replied, as Redis does).
	Errors ErrorCounter
}

// ErrorCounter counts error replies; msg is the error without its '-'.
type ErrorCounter interface{ CountError(msg string) }

func (w *Writer) line(prefix byte, s string) {
	w.B = append(w.B, prefix)
	w.B = append(w.B, s...)
	w.B = append(w.B, '\r', '\n')
}

func (w *Writer) header(prefix byte, n int64) {
	w.B = append(w.B, prefix)
	w.B = strconv.AppendInt(w.B, n, 10)
	w.B = append(w.B, '\r', '\n')
}

// Simple writes a status reply such as +OK.
func (w *Writer) Simple(s string) { w.line('+', s) }

// OK writes +OK.
func (w *Writer) OK() { w.B = append(w.B, "+OK\r\n"...) }

// Error writes an error reply. msg carries its code ("ERR ...", "WRONGTYPE ...");
// newlines are replaced as Redis does, since they would break the protocol.
func (w *Writer) Error(msg string) {
	if w.Errors != nil {
		w.Errors.CountError(msg)
	}
	w.B = append(w.B, '-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		w.B = append(w.B, c)
	}
	w.B = append(w.B, '\r', '\n')
}

// Int writes an integer reply.
func (w *Writer) Int(n int64) { w.header(':', n) }

// Uint writes an integer reply of an unsigned value, as Redis 8.8's arrays
// reply indexes past 2^63-1 (clients read them as unsigned).
func (w *Writer) Uint(n uint64) {
	w.B = append(w.B, ':')
	w.B = strconv.AppendUint(w.B, n, 10)
	w.B = append(w.B, '\r', '\n')
}

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) {
	w.header('$', int64(len(b)))
	w.B = append(w.B, b...)
	w.B = append(w.B, '\r', '\n')
}

// BulkString writes a bulk string from a Go string.
func (w *Writer) BulkString(s string) {
	w.header('$', int64(len(s)))
	w.B = append(w.B, s...)
	w.B = append(w.B, '\r', '\n')
}

// BulkInt writes an integer as a bulk string.
func (w *Writer) BulkInt(n int64) {
	var tmp [20]byte
	w.Bulk(strconv.AppendInt(tmp[:0], n, 10))
}

// Null writes a null bulk string ($-1 in RESP2, _ in RESP3).
func (w *Writer) Null() {
	if w.Proto >= 3 {
		w.B = append(w.B, "_\r\n"...)
		return
	}
	w.B = append(w.B, "$-1\r\n"...)
}

// NullArray writes a null array (*-1 in RESP2, _ in RESP3).
func (w *Writer) NullArray() {
	if w.Proto >= 3 {
		w.B = append(w.B, "_\r\n"...)
		return
	}
	w.B = append(w.B, "*-1\r\n"...)
}

// Array starts an array of n elements.
func (w *Writer) Array(n int) { w.header('*', int64(n)) }

// Map starts a map of n key/value pairs (a flat array of 2n in RESP2).
func (w *Writer) Map(n int) {
	if w.Proto >= 3 {
		w.header('%', int64(n))
		return
	}
	w.header('*', 2*int64(n))
}

// Set starts a set of n elements (an array in RESP2).
func (w *Writer) Set(n int) {
	if w.Proto >= 3 {
		w.header('~', int64(n))
		return
	}
	w.header('*', int64(n))
}

// Push starts an out-of-band push message (an array in RESP2).
func (w *Writer) Push(n int) {
	if w.Proto >= 3 {
		w.header('>', int64(n))
		return
	}
	w.header('*', int64(n))
}

// Bool writes a boolean (#t/#f in RESP3, :1/:0 in RESP2).
func (w *Writer) Bool(v bool) {
	switch {
	case w.Proto >= 3 && v:
		w.B = append(w.B, "#t\r\n"...)
	case w.Proto >= 3:
		w.B = append(w.B, "#f\r\n"...)
	case v:
		w.B = append(w.B, ":1\r\n"...)
	default:
		w.B = append(w.B, ":0\r\n"...)
	}
}

// Double writes a double (a RESP3 double, or a bulk string in RESP2) formatted
// as Redis 7.0 does: %.17g, and inf / -inf.
func (w *Writer) Double(f float64) {
	var tmp [48]byte
	w.formattedDouble(AppendDouble(tmp[:0], f))
}

// Double72 writes a double as Double does, formatted as Redis 7.2 and later
// do (AppendDouble72), for the commands no Redis before 8 has.
func (w *Writer) Double72(f float64) {
	var tmp [48]byte
	w.formattedDouble(AppendDouble72(tmp[:0], f))
}

// formattedDouble writes s, a formatted double, as a RESP3 double or a
// RESP2 bulk string.
func (w *Writer) formattedDouble(s []byte) {
	if w.Proto >= 3 {
		w.B = append(w.B, ',')
		w.B = append(w.B, s...)
		w.B = append(w.B, '\r', '\n')
		return
	}
	w.Bulk(s)
}

// Verbatim writes a verbatim string of the given 3-letter format (a bulk
// string in RESP2).
func (w *Writer) Verbatim(format, s string) {
	if w.Proto >= 3 {
		w.header('=', int64(len(s)+4))
		w.B = append(w.B, format...)
		w.B = append(w.B, ':')
		w.B = append(w.B, s...)
		w.B = append(w.B, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// AppendDouble formats f as Redis 7.0 does: C's "%.17g" (which strconv's 'g'
// at precision 17 reproduces: exponent rule, trailing zeros dropped, two-digit
// exponent), with inf and -inf spelled as Redis spells them.
func AppendDouble(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}

// AppendDouble72 formats f as Redis 7.2 and later reply a double: an
// integral value within ±(2^63-1)/2 as an integer, any other with Grisu2's
// digits (see grisu2), laid out plainly while that is short (up to
// six zeros after the digits; up to five zeros after the point, or any
// number of them below 10^-3) and as d.ddde±x beyond (no zero padding of
// the exponent): 0.000015, 1.2345e-4, 1e+19.
func AppendDouble72(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case f >= -math.MaxInt64/2 && f <= math.MaxInt64/2 && f == math.Trunc(f):
		return strconv.AppendInt(b, int64(f), 10)
	}
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	var digitBuf [24]byte
	digits, zeros := grisu2(digitBuf[:0], f) // zeros: the power of ten of the last digit
	n := len(digits)
	exp := zeros + n - 1 // of the first digit
	switch {
	case zeros >= 0 && exp < n+7:
		b = append(b, digits...)
		for range zeros {
			b = append(b, '0')
		}
		return b
	case zeros < 0 && (zeros > -7 || exp > -4 && exp < 4):
		if exp < 0 {
			b = append(b, '0', '.')
			for range -exp - 1 {
				b = append(b, '0')
			}
			return append(b, digits...)
		}
		b = append(b, digits[:exp+1]...)
		b = append(b, '.')
		return append(b, digits[exp+1:]...)
	}
	b = append(b, digits[0])
	if n > 1 {
		b = append(b, '.')
		b = append(b, digits[1:]...)
	}
	b = append(b, 'e')
	if exp < 0 {
		b = append(b, '-')
		exp = -exp
	} else {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, int64(exp), 10)
}

// HumanDouble writes f as Redis's addReplyHumanLongDouble does (a bulk
// string in RESP2, a double in RESP3): see AppendHumanDouble.
func (w *Writer) HumanDouble(f float64) {
	var tmp [48]byte
	w.formattedDouble(AppendHumanDouble(tmp[:0], f))
}

// AppendHumanDouble formats f as Redis's "human" long double format: C's
// "%.17Lf" of the exact value with trailing zeros (and a bare point) dropped,
// "-0" written "0", inf and -inf as Redis spells them.
func AppendHumanDouble(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'f', 17, 64)
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	if b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	if string(b[start:]) == "-0" {
		b = append(b[:start], '0')
	}
	return b
}

// AppendCommand appends args as a RESP multibulk array: the form clients
// send commands in, and the AOF's.
func AppendCommand(b []byte, args [][]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}
