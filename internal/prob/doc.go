// Package prob holds the probabilistic structures of Redis 8's Bloom
// module as flat byte strings: a scalable Bloom filter, a Cuckoo filter, a
// Count-Min sketch, a HeavyKeeper Top-K and a merging t-digest. Each is one
// keyspace value (the entry's bytes, outside the Go heap) read and changed
// in place through a view type over its bytes, so a key costs the
// collector nothing; a structure that grows (a Bloom or Cuckoo filter
// adding a sub-filter, a Top-K's item names) is resized by its caller and
// laid out again here.
//
// All integers and floats are little-endian and unaligned. The layouts are
// Keyhive's own, so SCANDUMP chunks load into Keyhive only. Every choice a
// structure makes is a function of its bytes and the command's arguments
// (Top-K's decay draws from a generator kept in the value), so a replica
// or an AOF replaying the same commands gets the same bytes.
package prob
