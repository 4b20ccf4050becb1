package cluster

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzParse: no input makes the parser panic, and whatever it accepts
// encodes to bytes that parse back to a message with the same encoding.
// The seed corpus (testdata/fuzz/FuzzParse) holds messages captured from
// redis-server 7.0.15 (TestClusterBusCapture), plus an UPDATE built here.
func FuzzParse(f *testing.F) {
	slots := new(Slots)
	slots.Set(0)
	slots.Set(SlotCount - 1)
	update := &Message{Header: Header{Type: TypeUpdate, Sender: randomName()}, UpdateEpoch: 7, UpdateNode: randomName(), UpdateSlots: slots}
	f.Add(update.Encode(nil))
	f.Add([]byte("RCmb\x00\x00\x00\x10"))
	f.Fuzz(checkRoundTrip)
}

// checkRoundTrip is FuzzParse's property for one input.
func checkRoundTrip(t *testing.T, b []byte) {
	m, err := Parse(b)
	if err != nil {
		return
	}
	switch m.Type {
	case TypePing, TypePong, TypeMeet, TypeFail, TypePublish, TypePublishShard, TypeUpdate:
	default:
		return // bodies the parser does not read are not re-encoded
	}
	encoded := m.Encode(nil)
	again, err := Parse(encoded)
	if err != nil {
		t.Fatalf("type %d: its own encoding does not parse: %v", m.Type, err)
	}
	if !bytes.Equal(again.Encode(nil), encoded) {
		t.Fatalf("type %d: parsing its encoding loses something", m.Type)
	}
}

// TestParseMutations checks FuzzParse's property on 50,000 seeded random
// mutations of the captured messages (a few bytes changed, or the message
// cut), in every test run.
func TestParseMutations(t *testing.T) {
	files, err := filepath.Glob("testdata/fuzz/FuzzParse/*")
	if err != nil || len(files) == 0 {
		t.Fatal("no seed corpus", err)
	}
	var seeds [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Split(string(data), "\n")[1] // go test fuzz v1, then []byte("...")
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"))
		if err != nil {
			t.Fatal(f, err)
		}
		seeds = append(seeds, []byte(s))
	}
	rng := rand.New(rand.NewPCG(26, 7))
	for range 50000 {
		b := bytes.Clone(seeds[rng.IntN(len(seeds))])
		for range 1 + rng.IntN(4) {
			b[rng.IntN(len(b))] = byte(rng.IntN(256))
		}
		if rng.IntN(8) == 0 {
			b = b[:rng.IntN(len(b))]
		}
		checkRoundTrip(t, b)
	}
}
