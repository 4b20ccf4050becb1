package persistence

import "github.com/keyhive/keyhive/internal/osmem"

// LZF is liblzf 3.6's format as Redis builds it (HLOG 16, VERY_FAST), so
// compressed strings are byte-identical to redis-server's.

const (
	lzfHashLog = 16
	lzfMaxLit  = 1 << 5
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = 1<<8 + 1<<3
)

// Compressor compresses with a reused hash table: entries of earlier calls
// are told apart by a generation number, so the table starts empty without
// being cleared (a 64K-entry clear per string would dominate a save).
type Compressor struct {
	htab   []uint64 // generation<<32 | position
	gen    uint64
	out    []byte
	mapped []byte // the output of a big Compress until Release
}

// Compress returns in compressed, or nil when the result would not fit in
// outLen bytes. The result is valid until the next call. Offset 0 is never
// matched, a quirk of the original kept here.
func (c *Compressor) Compress(in []byte, outLen int) []byte {
	inLen := len(in)
	if inLen < 2 || outLen <= 0 {
		return nil
	}
	if c.htab == nil {
		c.htab = make([]uint64, 1<<lzfHashLog)
	}
	c.gen++
	gen := c.gen << 32
	if outLen+4 > bigOut {
		// A big value's output is mapped for this call only: kept, or
		// left to the collector, it would count in used memory long after.
		if c.mapped != nil {
			osmem.Unmap(c.mapped)
		}
		c.mapped = osmem.Map(osmem.Round(outLen + 4))
		out := c.compress(in, c.mapped[:outLen+4], gen)
		if out == nil {
			c.Release()
		}
		return out
	}
	if cap(c.out) < outLen+4 {
		c.out = make([]byte, outLen+4)
	}
	return c.compress(in, c.out[:outLen+4], gen)
}

// Release unmaps the output of the last big Compress, once it is copied.
func (c *Compressor) Release() {
	if c.mapped != nil {
		osmem.Unmap(c.mapped)
		c.mapped = nil
	}
}

// bigOut is the output size past which Compress maps its output.
const bigOut = 1 << 20

func (c *Compressor) compress(in, out []byte, gen uint64) []byte {
	idx := func(h uint32) uint32 { return ((h >> (3*8 - lzfHashLog)) - h*5) & (1<<lzfHashLog - 1) }
	inLen := len(in)
	outLen := len(out) - 4
	ip, op, lit := 0, 1, 0
	hval := uint32(in[0])<<8 | uint32(in[1])
	for ip < inLen-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := idx(hval)
		ref := 0
		if v := c.htab[slot]; v&^(1<<32-1) == gen {
			ref = int(uint32(v))
		}
		c.htab[slot] = gen | uint64(ip)
		off := ip - ref - 1
		if ref < ip && off < lzfMaxOff && ref > 0 && in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			length := 2
			maxlen := min(inLen-ip-length, lzfMaxRef)
			if op+3+1 >= outLen {
				notLit := 0
				if lit == 0 {
					notLit = 1
				}
				if op-notLit+3+1 >= outLen {
					return nil
				}
			}
			out[op-lit-1] = byte(lit - 1)
			if lit == 0 {
				op--
			}
			stopped := false
			if maxlen > 16 {
				for k := 0; k < 16; k++ {
					length++
					if in[ref+length] != in[ip+length] {
						stopped = true
						break
					}
				}
			}
			if !stopped {
				for {
					length++
					if !(length < maxlen && in[ref+length] == in[ip+length]) {
						break
					}
				}
			}
			length -= 2
			ip++
			if length < 7 {
				out[op] = byte(off>>8) + byte(length<<5)
				op++
			} else {
				out[op] = byte(off>>8) + 7<<5
				out[op+1] = byte(length - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++
			ip += length + 1
			if ip >= inLen-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			c.htab[idx(hval)] = gen | uint64(ip)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			c.htab[idx(hval)] = gen | uint64(ip)
			ip++
			continue
		}
		if op >= outLen {
			return nil
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > outLen {
		return nil
	}
	for ip < inLen {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	return out[:op]
}

// Decompress expands LZF data that must produce exactly n bytes.
func Decompress(in []byte, n int) ([]byte, bool) {
	// A 3-byte back reference expands to at most 264 bytes, so a claimed
	// size beyond that ratio is corrupt: reject it before allocating.
	if n > 88*len(in)+32 {
		return nil, false
	}
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 1<<5 {
			run := ctrl + 1
			if i+run > len(in) || len(out)+run > n {
				return nil, false
			}
			out = append(out, in[i:i+run]...)
			i += run
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if i >= len(in) {
				return nil, false
			}
			length += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, false
		}
		ref := len(out) - (ctrl&0x1f)<<8 - 1 - int(in[i])
		i++
		length += 2
		if ref < 0 || len(out)+length > n {
			return nil, false
		}
		for k := 0; k < length; k++ {
			out = append(out, out[ref+k])
		}
	}
	return out, len(out) == n
}
