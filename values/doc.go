// Package values holds the collection values of the keyspace (hashes, sets,
// lists, sorted sets, streams): their large forms, read views and edits, and
// their conversion to and from the persistence formats. It knows nothing of
// clients: the command families, the snapshot and AOF writers and the RDB
// loader all use it with an Env.
//
// # Forms
//
// A small collection is stored inline as its entry's value bytes in a
// compact encoding (a listpack for hashes and sorted sets, an intset for sets
// of integers, one packed node for lists and for small sets of strings,
// Redis 7.2's listpack sets). A large one is an object (HashObject,
// SetObject, ListObject, ZSetObject, StreamObject) in the shard's object
// table, the entry holding its handle. Streams have only the large form. A
// view (HashView, SetView, ListView, ZSetView) reads either form; its compact
// bytes are the entry's, valid while the caller holds the key's shard lock.
// A hash's fields may have expire times (hashttl.go): a view skips the
// fields expired at its Now.
//
// # Edits
//
// An edit (HashEdit, SetEdit, ListEdit, ZSetEdit) starts from an entry looked
// up for writing. Each change of a compact form rebuilds it into one of the
// Env's two scratch buffers, reading the other: the entry's bytes are never
// written in place, and the scratch buffers are reused across edits, so a
// change allocates nothing. Past the configured thresholds (Limits) the
// compact form converts to the large form, which is then changed in place.
// Commit writes the result back into the DB keeping the key's TTL: the
// rebuilt bytes are copied into the keyspace, a new object is stored, an
// emptied collection's key is deleted. Commit reports what it did
// (Outcome); keyspace notifications are the caller's.
//
// Entry bytes may move only when the command that changed them releases its
// locks (see docs/architecture.md, "The keyspace"), so an edit may keep
// reading the entry's compact bytes until it commits; after Commit (or any
// other write to the key) the view's bytes must not be used.
package values
