package persistence

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/keyhive/keyhive/internal/stream"
)

// streamPayload builds a stream value of type t: one node of two entries
// (the second deleted, with other fields), a group whose PEL has one entry
// for the consumer "c", and a consumer "d" with none.
func streamPayload(t byte) []byte {
	var e Encoder
	master := stream.ID{Ms: 10, Seq: 1}
	second := stream.ID{Ms: 12, Seq: 0}
	lp := &e.Listpack
	lp.BeginStreamNode(1, 1, [][]byte{[]byte("f")})
	lp.AppendStreamEntry(master, master, false, true, [][]byte{[]byte("f"), []byte("v")})
	lp.AppendStreamEntry(master, second, true, false, [][]byte{[]byte("x"), []byte("-12")})
	b := AppendLen([]byte{t}, 1)
	b = e.AppendStreamNode(b, master, lp.Bytes())
	b = AppendLen(b, 1)
	b = appendStreamID(b, stream.ID{Ms: 20})
	if t != TypeStreamListpacks {
		b = appendStreamID(b, master)
		b = appendStreamID(b, second)
		b = AppendLen(b, 2)
	}
	b = AppendLen(b, 1)
	b = e.AppendString(b, []byte("g"))
	b = appendStreamID(b, master)
	if t != TypeStreamListpacks {
		b = AppendLen(b, 1)
	}
	b = AppendLen(b, 1)
	b = AppendStreamPending(b, master, 1700000000000, 3)
	b = AppendLen(b, 2)
	for _, name := range []string{"c", "d"} {
		b = e.AppendString(b, []byte(name))
		b = binary.LittleEndian.AppendUint64(b, 5) // seen time
		if t == TypeStreamListpack3 {
			b = binary.LittleEndian.AppendUint64(b, 6) // active time
		}
		if name == "c" {
			b = AppendRawStreamID(AppendLen(b, 1), master)
		} else {
			b = AppendLen(b, 0)
		}
	}
	return AppendDumpFooter(b)
}

// streamFile is an RDB file holding streamPayload(t) as key "s".
func streamFile(t byte) []byte {
	var e Encoder
	p := streamPayload(t)
	b := AppendSelectDB(e.AppendHeader(nil), 0, 1, 0)
	b = append(b, t)
	b = e.AppendString(b, []byte("s"))
	b = append(b, p[1:len(p)-10]...)
	b = append(b, OpEOF)
	return binary.LittleEndian.AppendUint64(b, CRC64(0, b))
}

func TestDecodeStreamTypes(t *testing.T) {
	for _, typ := range []byte{TypeStreamListpacks, TypeStreamListpack2, TypeStreamListpack3} {
		v, err := DecodeDump(streamPayload(typ))
		if err != nil || v.Type != TypeStream {
			t.Fatalf("type %d: %v", typ, err)
		}
		s := v.Stream
		if s.Legacy != (typ == TypeStreamListpacks) || s.Length != 1 || s.LastID != (stream.ID{Ms: 20}) || len(s.Nodes) != 1 {
			t.Fatalf("type %d: %+v", typ, s)
		}
		if !s.Legacy && (s.EntriesAdded != 2 || s.MaxDeletedID != (stream.ID{Ms: 12})) {
			t.Fatalf("type %d: counters %+v", typ, s)
		}
		var got []string
		_, err = s.Nodes[0].Walk(func(f [][]byte) { got = append(got, "master "+string(f[0])) },
			func(id stream.ID, deleted bool, pairs [][]byte) {
				got = append(got, id.String(), string(pairs[0])+"="+string(pairs[1]))
				if deleted {
					got = append(got, "deleted")
				}
			})
		want := []string{"master f", "10-1", "f=v", "12-0", "x=-12", "deleted"}
		if err != nil || len(got) != len(want) {
			t.Fatalf("type %d: walk %v %v", typ, got, err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("type %d: walk %v, want %v", typ, got, want)
			}
		}
		g := s.Groups[0]
		if string(g.Name) != "g" || len(g.PEL) != 1 || g.PEL[0].Consumer != 0 || g.PEL[0].DeliveryCount != 3 ||
			len(g.Consumers) != 2 || g.Consumers[1].SeenTime != 5 {
			t.Fatalf("type %d: group %+v", typ, g)
		}
		if typ == TypeStreamListpacks && g.EntriesRead != -1 || typ != TypeStreamListpacks && g.EntriesRead != 1 {
			t.Fatalf("type %d: entries read %d", typ, g.EntriesRead)
		}
	}
	for _, typ := range []byte{TypeStreamListpacks, TypeStreamListpack2, TypeStreamListpack3} {
		keys := 0
		if err := Load(streamFile(typ), true, Handler{Key: func(r *Record) error {
			keys++
			return nil
		}}); err != nil || keys != 1 {
			t.Fatalf("file with a type %d stream: %d keys, %v", typ, keys, err)
		}
	}
	// A truncation is an error, never a panic (or, as in Redis, a value
	// read on into the footer).
	p := streamPayload(TypeStreamListpack2)
	body := p[:len(p)-10]
	for n := 1; n < len(body); n++ {
		if _, err := DecodeDump(AppendDumpFooter(append([]byte(nil), body[:n]...))); err != nil && !errors.Is(err, ErrBadData) {
			t.Fatalf("truncated at %d: %v", n, err)
		}
	}
}
