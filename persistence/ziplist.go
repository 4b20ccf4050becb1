package persistence

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Encodings older Redis versions wrote and 7.0 still loads: the ziplist
// (lists, hashes and sorted sets before 7.0) and the zipmap (hashes before
// 2.6). They are only read, and converted.

var errZiplist = errors.New("invalid ziplist")

// ziplistEntries validates a ziplist and calls fn for every entry, integers
// formatted as decimal strings, valid only during the call.
func ziplistEntries(b []byte, fn func(e []byte) error) error {
	const header = 10
	if len(b) < header+1 || int(binary.LittleEndian.Uint32(b)) != len(b) || b[len(b)-1] != 0xFF {
		return errZiplist
	}
	declared := int(binary.LittleEndian.Uint16(b[8:]))
	var num [20]byte
	prevLen := 0
	n := 0
	for p := header; ; n++ {
		if p >= len(b)-1 {
			if p != len(b)-1 || declared != 0xFFFF && declared != n {
				return errZiplist
			}
			return nil
		}
		start := p
		var prev int
		if b[p] < 254 {
			prev = int(b[p])
			p++
		} else {
			if b[p] != 254 || p+5 > len(b) {
				return errZiplist
			}
			prev = int(binary.LittleEndian.Uint32(b[p+1:]))
			p += 5
		}
		if prev != prevLen {
			return errZiplist
		}
		if p >= len(b)-1 {
			return errZiplist
		}
		c := b[p]
		var e []byte
		var dataLen int
		switch c >> 6 {
		case 0:
			dataLen = int(c & 0x3f)
			p++
		case 1:
			if p+2 > len(b) {
				return errZiplist
			}
			dataLen = int(c&0x3f)<<8 | int(b[p+1])
			p += 2
		case 2:
			if c != 0x80 || p+5 > len(b) {
				return errZiplist
			}
			l := binary.BigEndian.Uint32(b[p+1:])
			if uint64(l) > uint64(len(b)) {
				return errZiplist
			}
			dataLen = int(l)
			p += 5
		default:
			p++
			var v int64
			width := 0
			switch {
			case c == 0xC0:
				width = 2
			case c == 0xD0:
				width = 4
			case c == 0xE0:
				width = 8
			case c == 0xF0:
				width = 3
			case c == 0xFE:
				width = 1
			case c >= 0xF1 && c <= 0xFD:
				v = int64(c&0x0f) - 1
			default:
				return errZiplist
			}
			if p+width > len(b)-1 {
				return errZiplist
			}
			if width > 0 {
				var u uint64
				for i := width - 1; i >= 0; i-- {
					u = u<<8 | uint64(b[p+i])
				}
				shift := 64 - 8*width
				v = int64(u<<shift) >> shift
			}
			p += width
			e = strconv.AppendInt(num[:0], v, 10)
		}
		if e == nil {
			if p+dataLen > len(b)-1 {
				return errZiplist
			}
			e = b[p : p+dataLen]
			p += dataLen
		}
		prevLen = p - start
		if err := fn(e); err != nil {
			return err
		}
	}
}

var errZipmap = errors.New("invalid zipmap")

// zipmapEntries validates a zipmap and calls fn for every key and value in
// turn.
func zipmapEntries(b []byte, fn func(e []byte) error) error {
	if len(b) < 2 {
		return errZipmap
	}
	p := 1 // the count byte is only a hint
	readLen := func() (int, bool) {
		if p >= len(b) {
			return 0, false
		}
		if b[p] < 254 {
			p++
			return int(b[p-1]), true
		}
		if b[p] != 254 || p+5 > len(b) {
			return 0, false
		}
		n := binary.LittleEndian.Uint32(b[p+1:])
		p += 5
		return int(n), uint64(n) <= uint64(len(b))
	}
	for {
		if p >= len(b) {
			return errZipmap
		}
		if b[p] == 0xFF {
			if p != len(b)-1 {
				return errZipmap
			}
			return nil
		}
		kl, ok := readLen()
		if !ok || p+kl > len(b) {
			return errZipmap
		}
		if err := fn(b[p : p+kl]); err != nil {
			return err
		}
		p += kl
		vl, ok := readLen()
		if !ok || p+1 > len(b) {
			return errZipmap
		}
		free := int(b[p])
		p++
		if p+vl+free > len(b) {
			return errZipmap
		}
		if err := fn(b[p : p+vl]); err != nil {
			return err
		}
		p += vl + free
	}
}
