// Package family holds the handlers of Redis's data commands, one file per
// Redis command group: keys.go (the generic keyspace commands), strings.go,
// bitmaps.go, lcs.go, hashes.go, lists.go, sets.go, zsets.go, streams.go and
// streams_groups.go (consumer groups), hll.go, geo.go, sort.go; collection.go
// and propagate.go hold what several of them share.
//
// A handler is a func(x *command.Ctx): it works through what package command
// gives it (lookups, typed edits of package values, notifications,
// propagation verbs, block requests, the server's Host and its client's
// Conn) and never reaches the server itself. Register binds the handlers
// to the command table's names; the server calls it once as it builds its
// table.
package family
