package keyspace

import "testing"

// TestSubexpiryRegistry: the earliest element expiry is recorded, lowered,
// carried by SetFrom, forgotten with the key and by a flush, and the cycle
// visits only the keys due.
func TestSubexpiryRegistry(t *testing.T) {
	ks := New(2, Hooks{})
	db := ks.DB(0)
	db.Set([]byte("h"), TypeHash, EncListpack, []byte{0}, 0, 0)
	db.Set([]byte("later"), TypeHash, EncListpack, []byte{0}, 0, 0)
	db.SetSubexpiry([]byte("h"), 100)
	db.LowerSubexpiry([]byte("h"), 200) // not earlier: kept at 100
	db.LowerSubexpiry([]byte("later"), 500)
	if db.Subexpiry() != 2 {
		t.Fatalf("subexpiry %d", db.Subexpiry())
	}
	var visited []string
	ks.ActiveSubexpire(150, func() bool { return false }, func(db *DB, e *Entry) {
		visited = append(visited, string(e.Key()))
		db.SetSubexpiry(e.Key(), 0)
	})
	if len(visited) != 1 || visited[0] != "h" || db.Subexpiry() != 1 {
		t.Fatalf("visited %q, subexpiry %d", visited, db.Subexpiry())
	}
	src, _ := db.Lookup([]byte("later"), 0, false)
	other := ks.DB(1)
	other.SetFrom([]byte("copy"), &src, false, 0)
	if other.Subexpiry() != 1 {
		t.Fatalf("SetFrom did not carry the subexpiry")
	}
	db.Delete([]byte("later"))
	if db.Subexpiry() != 0 {
		t.Fatalf("deleting the key did not forget it")
	}
	other.Flush()
	if other.Subexpiry() != 0 {
		t.Fatalf("flush did not forget it")
	}
}
