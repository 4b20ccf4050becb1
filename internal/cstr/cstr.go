// Package cstr reads command arguments as Redis's C code reads them: a
// string ends at its first NUL byte, options are compared with strcasecmp,
// and "%.<n>s" prints at most n bytes. Handlers, ACL rules and the
// replication handshake all match arguments this way, so they share it.
package cstr

import "bytes"

// Bytes is b up to its first NUL byte: what Redis sees of an argument when
// it compares it with strcasecmp or prints it with %s.
func Bytes(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// String is Bytes as a string.
func String(b []byte) string { return string(Bytes(b)) }

// Truncate is b as C's "%.<n>s" prints it: up to a NUL byte, at most n bytes.
func Truncate(b []byte, n int) []byte {
	b = Bytes(b)
	if len(b) > n {
		return b[:n]
	}
	return b
}

// ArgIs reports whether arg names the option s (lower case), compared as
// Redis's strcasecmp does.
func ArgIs(arg []byte, s string) bool {
	arg = Bytes(arg)
	if len(arg) != len(s) {
		return false
	}
	for i, c := range arg {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
