package prob

import "testing"

// FuzzValid: bytes a RESTORE payload or a file may hold are checked
// before any view reads them; whatever passes the check must survive
// every read and write without a panic.
func FuzzValid(f *testing.F) {
	f.Add(byte(0), []byte(InitBloom(make([]byte, BloomSize(10, 0.01, false)), 10, 0.01, 2, false)))
	f.Add(byte(1), []byte(InitCuckoo(make([]byte, CuckooSize(4, 2)), 4, 2, 5, 1)))
	f.Add(byte(2), []byte(InitCMS(make([]byte, CMSSize(4, 2)), 4, 2)))
	tk := InitTopK(make([]byte, TopKSize(2, 4, 2)), 2, 4, 2, 0.9)
	if c := tk.Add([]byte("a"), 1); c.Enter {
		tk = tk.Enter(nil, []byte("a"), c)
	}
	f.Add(byte(3), []byte(tk))
	td := InitTDigest(make([]byte, TDigestSize(2)), 2)
	td.Add(1, 1, nil)
	f.Add(byte(4), []byte(td))
	f.Fuzz(func(t *testing.T, kind byte, b []byte) {
		item := []byte("item")
		switch kind % 5 {
		case 0:
			if ValidBloom(b) {
				f := Bloom(b)
				f.Exists(item)
				if _, grow, err := f.Add(item); grow > 0 && err == nil {
					g := Bloom(append(b, make([]byte, grow)...))
					g.Grown()
					g.Add(item)
				}
				f.BitsAt(0, f.BitBytes(), func([]byte) {})
				f.Header()
			}
		case 1:
			if ValidCuckoo(b) {
				f := Cuckoo(b)
				f.Exists(item)
				f.Count(item)
				if grow, err := f.Add(item); grow > 0 && err == nil {
					g := Cuckoo(append(b, make([]byte, grow)...))
					g.Grown()
					g.Add(item)
				}
				f.Delete(item)
			}
		case 2:
			if ValidCMS(b) {
				s := CMS(b)
				if s.CanIncr(item, 1) {
					s.Incr(item, 1)
				}
				s.Query(item)
				s.Merge([]CMS{s}, []int64{1})
			}
		case 3:
			if ValidTopK(b) {
				t := TopK(b)
				if c := t.Add(item, 3); c.Enter {
					t = t.Enter(nil, item, c)
				}
				t.Query(item)
				t.Count(item)
				for _, i := range t.Ranked() {
					t.Item(i)
				}
			}
		case 4:
			if ValidTDigest(b) {
				t := TDigest(b)
				s := t.Summary(nil)
				s.Quantile(0.5)
				s.CDF(1)
				s.TrimmedMean(0.1, 0.9)
				for range t.Capacity() + 1 {
					t.Add(2, 1, nil)
				}
			}
		}
	})
}
