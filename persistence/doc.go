// Package persistence reads and writes Redis's persistence formats: RDB
// files as redis-server 7.0 writes them (version 10) and as 7.2 and 7.4
// write them (11 and 12, read only), DUMP payloads, and the
// listpack, intset, ziplist, zipmap, LZF and CRC-64 encodings inside them.
// It knows nothing of the keyspace: the server turns its values into the
// building blocks here (Encoder) and builds its values from the decoded
// Value.
package persistence
