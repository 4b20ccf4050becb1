package cluster

import (
	"reflect"
	"testing"
)

// FuzzParse: no input makes the parser panic, and whatever it accepts
// encodes to bytes that parse back to the same message. The seed corpus
// (testdata/fuzz/FuzzParse) holds messages captured from redis-server
// 7.0.15 (TestClusterBusCapture), plus an UPDATE built here.
func FuzzParse(f *testing.F) {
	slots := new(Slots)
	slots.Set(0)
	slots.Set(SlotCount - 1)
	update := &Message{Header: Header{Type: TypeUpdate, Sender: randomName()}, UpdateEpoch: 7, UpdateNode: randomName(), UpdateSlots: slots}
	f.Add(update.Encode(nil))
	f.Add([]byte("RCmb\x00\x00\x00\x10"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		switch m.Type {
		case TypePing, TypePong, TypeMeet, TypeFail, TypePublish, TypePublishShard, TypeUpdate:
		default:
			return // bodies the parser does not read are not re-encoded
		}
		m.ShardID = "" // read, never sent
		again, err := Parse(m.Encode(nil))
		if err != nil {
			t.Fatalf("type %d: its own encoding does not parse: %v", m.Type, err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("type %d: encodes back to another message:\n%+v\n%+v", m.Type, again, m)
		}
	})
}
