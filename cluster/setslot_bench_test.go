package cluster

import (
	"testing"
)

// BenchmarkSetSlot is the cost of the SETSLOTs a resharding sends: a slot
// set to its owner and made stable, on a node serving every slot, with the
// config saver running.
func BenchmarkSetSlot(b *testing.B) {
	s, err := Open(testOptions(b, b.TempDir()), nopHost{})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.AddSlots([][2]int{{0, SlotCount - 1}}, false); err != nil {
		b.Fatal(err)
	}
	me := s.MyName()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		action := "node"
		if i%2 == 1 {
			action = "stable"
		}
		if err := s.SetSlot(i%SlotCount, action, me, 0); err != nil {
			b.Fatal(err)
		}
	}
}
