package command

import (
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

// Keyspace notifications (notify-keyspace-events): handlers call Notify
// right after a change, in the order Redis emits its events; the keyspace's
// hooks report new keys ("new") and expiries ("expired") themselves.

// Notify publishes event of class for key in the command's database.
func (x *Ctx) Notify(class config.KeyspaceEvents, event string, key []byte) {
	x.conn.Notify(class, event, key, x.DB.ID())
}

// NotifyIn publishes event of class for key in database db (COPY ... DB,
// MOVE).
func (x *Ctx) NotifyIn(db int, class config.KeyspaceEvents, event string, key []byte) {
	x.conn.Notify(class, event, key, db)
}

// Overwrote emits Redis 8.2's events for key, whose value of type was a
// command replaced whole with one of type now (SET and its kin, MSET, BITOP,
// the STORE commands, RENAME, COPY, RESTORE): "overwritten", then
// "type_changed" when the types differ (redis/redis#14141).
func (x *Ctx) Overwrote(key []byte, was, now keyspace.Type) {
	x.OverwroteIn(x.DB.ID(), key, was, now)
}

// OverwroteIn is Overwrote for a key of database db (COPY ... DB).
func (x *Ctx) OverwroteIn(db int, key []byte, was, now keyspace.Type) {
	x.conn.Notify(config.EventOverwritten, "overwritten", key, db)
	if was != now {
		x.conn.Notify(config.EventTypeChanged, "type_changed", key, db)
	}
}

// Committed emits the keyspace events of a committed edit in Redis's order:
// event (none when empty), then "del" when the edit emptied the key.
func (x *Ctx) Committed(c values.Commit, event string) {
	if event != "" {
		x.Notify(TypeEvents[c.Type], event, c.Key)
	}
	if c.Outcome == values.Deleted {
		x.Notify(config.EventGeneric, "del", c.Key)
	}
}

// Stored emits the keyspace events of a collection stored over key (a STORE
// command's result), which held a value of type was when found: event for a
// store (after "overwritten" for a found key), "del" for a deletion. It
// reports whether the data set changed.
func (x *Ctx) Stored(c values.Commit, event string, found bool, was keyspace.Type) bool {
	switch c.Outcome {
	case values.Deleted:
		x.Notify(config.EventGeneric, "del", c.Key)
	case values.Stored:
		if found {
			x.Overwrote(c.Key, was, c.Type)
		}
		x.Notify(TypeEvents[c.Type], event, c.Key)
	}
	return c.Outcome != values.Unchanged
}

// TypeEvents is the keyspace event class of each type's commands.
var TypeEvents = [...]config.KeyspaceEvents{
	keyspace.TypeString: config.EventString,
	keyspace.TypeList:   config.EventList,
	keyspace.TypeSet:    config.EventSet,
	keyspace.TypeZSet:   config.EventZset,
	keyspace.TypeHash:   config.EventHash,
	keyspace.TypeStream: config.EventStream,
	keyspace.TypeJSON:   config.EventModule,
}

// EventIf returns event when a command changed something, else no event.
func EventIf(changed bool, event string) string {
	if changed {
		return event
	}
	return ""
}
