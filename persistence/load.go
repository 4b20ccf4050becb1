package persistence

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Record is one key read from a file.
type Record struct {
	DB       int
	Key      []byte
	Value    Value
	ExpireAt int64 // Unix ms, -1 for none
	Idle     int64 // LRU idle seconds, -1 when not saved
	Freq     int   // LFU counter, -1 when not saved
}

// Handler receives what a file holds, in order. A non-nil error stops the
// load and is reported at the record's offset.
type Handler struct {
	Aux      func(name, value []byte) error
	Function func(code []byte) error
	SelectDB func(db int) error
	Key      func(r *Record) error
}

// Load parses a whole RDB file (any version up to NewestVersion) and hands
// its contents to h. With verifyChecksum, a non-zero CRC-64 trailer must
// match (a zero one means the file was saved with rdbchecksum no). Keys
// holding empty collections are skipped, as Redis skips them.
func Load(data []byte, verifyChecksum bool, h Handler) error {
	_, err := LoadPrefix(data, verifyChecksum, h)
	return err
}

// LoadPrefix is Load for data that holds an RDB file followed by more (an
// old-style AOF: an RDB preamble, then commands): it returns the length of
// the RDB file, checksum included.
func LoadPrefix(data []byte, verifyChecksum bool, h Handler) (n int, err error) {
	d := &decoder{b: data}
	defer catch(&err)
	if len(data) < 9 || string(data[:5]) != "REDIS" {
		d.fail("wrong signature trying to load DB from file")
	}
	version, convErr := strconv.Atoi(string(data[5:9]))
	if convErr != nil || version < 1 || version > NewestVersion {
		d.fail("can't handle RDB format version " + string(data[5:9]))
	}
	d.p = 9
	rec := Record{ExpireAt: -1, Idle: -1, Freq: -1}
	handled := func(start int, err error) {
		if err != nil {
			panic(&Error{Offset: int64(start), Msg: err.Error()})
		}
	}
	for {
		start := d.p
		op := d.byte()
		switch op {
		case OpEOF:
			if version >= 5 {
				sum := CRC64(0, data[:d.p])
				stored := binary.LittleEndian.Uint64(d.take(8))
				if verifyChecksum && stored != 0 && stored != sum {
					panic(&Error{Offset: int64(d.p - 8), Msg: "RDB CRC error (wrong checksum)"})
				}
			}
			return d.p, nil
		case OpSelectDB:
			n, enc := d.length()
			if enc || n > 1<<31 {
				d.fail("invalid database number")
			}
			rec.DB = int(n)
			if h.SelectDB != nil {
				handled(start, h.SelectDB(rec.DB))
			}
		case OpResizeDB:
			d.length()
			d.length()
		case OpSlotInfo: // sizing hints (slot, keys, expires)
			d.length()
			d.length()
			d.length()
		case OpAux:
			name, value := d.str(), d.str()
			if h.Aux != nil {
				handled(start, h.Aux(name, value))
			}
		case OpModuleAux:
			d.fail("module data is not supported")
		case OpFunction:
			d.fail("pre-release function format not supported")
		case OpFunction2:
			code := d.str()
			if h.Function != nil {
				handled(start, h.Function(code))
			}
		case OpExpireTime:
			rec.ExpireAt = int64(int32(binary.LittleEndian.Uint32(d.take(4)))) * 1000
		case OpExpireTimeMS:
			rec.ExpireAt = int64(binary.LittleEndian.Uint64(d.take(8)))
		case OpIdle:
			n, enc := d.length()
			if enc || n > 1<<40 {
				d.fail("invalid idle time")
			}
			rec.Idle = int64(n)
		case OpFreq:
			rec.Freq = int(d.byte())
		default:
			if !IsValueType(op) {
				d.fail("unknown RDB opcode " + strconv.Itoa(int(op)))
			}
			rec.Key = d.str()
			v, err := d.value(op)
			switch {
			case errors.Is(err, ErrEmptyKey):
			case err != nil:
				handled(start, err)
			default:
				rec.Value = v
				if h.Key != nil {
					handled(start, h.Key(&rec))
				}
			}
			rec = Record{DB: rec.DB, ExpireAt: -1, Idle: -1, Freq: -1}
		}
	}
}
