package server

import (
	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/keyspace"
)

// The server is the command.Host of its handlers, a client their
// command.Conn.

// Config is the server's configuration.
func (s *Server) Config() *config.Config { return s.cfg }

// Propagating reports whether anything consumes the change stream.
func (s *Server) Propagating() bool { return s.stream.Active() }

// IsReplica reports whether the server replicates a master.
// A promoted master that still reconciles (replication/reconcile.go) is
// one too: it writes, expires and evicts nothing of its own yet.
func (s *Server) IsReplica() bool { return s.repl.IsReplica() || s.repl.Reconciling() }

// LRM reports whether eviction is least-recently-modified.
func (s *Server) LRM() bool { return s.evict.lrm.Load() }

// SubkeyEvents reports whether a subkey channel is enabled for events of
// class.
func (s *Server) SubkeyEvents(class config.KeyspaceEvents) bool {
	f := config.KeyspaceEvents(s.notifyFlags.Load())
	return f&class != 0 && f&config.EventSubkeyChannels != 0
}

// ctxOf is the server's side of x, a command of c's: its own context, its
// blocked command's, or (for the script client) a script's.
func (c *Client) ctxOf(x *command.Ctx) *Ctx {
	if w := c.waiting.Load(); w != nil && &w.ctx.Ctx == x {
		return &w.ctx
	}
	if &c.ctx.Ctx != x {
		panic("server: a command context that is not its client's")
	}
	return &c.ctx
}

// NoTouch reports CLIENT NO-TOUCH.
func (c *Client) NoTouch() bool { return c.noTouch.Load() }

// CountLookup counts a keyspace hit or miss, in INFO and in the key
// schema's statistics.
func (c *Client) CountLookup(db int, key []byte, hit, touch bool) {
	if hit {
		c.traffic.hits.add(1)
	} else {
		c.traffic.misses.add(1)
	}
	if t := c.s.schema.Load(); t != nil {
		if hit {
			t.Hit(db, key, touch, &c.reads)
		} else {
			t.Miss(db, key, &c.reads)
		}
	}
}

// Notify publishes a keyspace event raised by c's command.
func (c *Client) Notify(class config.KeyspaceEvents, event string, key []byte, db int) {
	c.s.notifyIn(c, class, event, key, db)
}

// NotifySubkeys publishes a subkey event raised by c's command.
func (c *Client) NotifySubkeys(class config.KeyspaceEvents, event string, key []byte, subkeys *command.Subkeys, db int) {
	c.s.notifySubkeysIn(c, class, event, key, subkeys, db)
}

// ElementExpired propagates the removal (HDEL, SREM) of an element x's
// command found expired.
func (c *Client) ElementExpired(x *command.Ctx, t keyspace.Type, key, element []byte) {
	if x.Propagating() { // building argv allocates
		c.ctxOf(x).propagateEffect(removalOf(t), key, element)
	}
}

// ByScript reports whether c is the client scripts call commands through.
func (c *Client) ByScript() bool { return c == c.s.scriptClient }

// Obeys reports whether c's commands ran already elsewhere.
func (c *Client) Obeys() bool { return c.obeys }

// ReadsAllKeys reports whether the user of x, a command of c's, may read
// every key.
func (c *Client) ReadsAllKeys(x *command.Ctx) bool { return c.ctxOf(x).readsAllKeys() }

// ClusterEnabled reports whether the server is a cluster node.
func (s *Server) ClusterEnabled() bool { return s.cluster != nil }

// TouchWatched tells WATCH that the keys of database db existing in one of
// dbs changed.
// FlushedAll implements command.Host.
func (s *Server) FlushedAll(now int64) bool {
	s.saver.Abort()
	if len(s.cfg.Save()) == 0 || s.saver.Save(now) != nil {
		return false
	}
	// FLUSHALL then counts its own change (it propagates by it), which
	// dispatch adds after this save; Redis's save covers it: no change
	// since the save (rdb_changes_since_last_save 0).
	s.stats.dirty.Add(-1)
	return true
}

func (s *Server) TouchWatched(db int, now int64, dbs ...*keyspace.DB) {
	s.watches.touchedExisting(db, now, dbs...)
}

// InvalidateAll tells tracking clients that every key changed by c's command.
func (c *Client) InvalidateAll() { c.s.invalidateAll(c) }
