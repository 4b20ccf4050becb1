package stream

import "testing"

func TestIDMPBounds(t *testing.T) {
	s := New()
	s.IDMPConfigure(10, 2)
	for i, iid := range []string{"a", "b", "c"} {
		s.IDMPRecord([]byte("p"), []byte(iid), ID{Ms: uint64(i + 1)}, 1000, true)
	}
	// IDMP-MAXSIZE 2: the oldest went.
	if _, ok := s.IDMPLookup([]byte("p"), []byte("a"), 1000); ok {
		t.Error("a kept past the maximum size")
	}
	if id, ok := s.IDMPLookup([]byte("p"), []byte("c"), 1000); !ok || id != (ID{Ms: 3}) {
		t.Errorf("c: %v %v", id, ok)
	}
	c := s.Clone()
	// IDMP-DURATION 10 s: at 11 s everything recorded at 1 s is gone.
	if st := s.IDMPInfo(11000); st.Producers != 0 || st.Tracked != 0 || st.Added != 3 || st.Duplicates != 1 {
		t.Errorf("after the duration: %+v", st)
	}
	if st := c.IDMPInfo(10999); st.Producers != 1 || st.Tracked != 2 {
		t.Errorf("the clone, before the duration: %+v", st)
	}
}

func TestAutoIIDOrder(t *testing.T) {
	a := AutoIID([][]byte{[]byte("f"), []byte("1"), []byte("g"), []byte("2")})
	b := AutoIID([][]byte{[]byte("g"), []byte("2"), []byte("f"), []byte("1")})
	c := AutoIID([][]byte{[]byte("f1"), []byte(""), []byte("g"), []byte("2")})
	if a != b || a == c {
		t.Errorf("AutoIID: %x %x %x", a, b, c)
	}
}
