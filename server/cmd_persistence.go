package server

import (
	"errors"

	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
)

func init() {
	bind("save", saveCommand)
	bind("bgsave", bgsaveCommand)
	bind("lastsave", func(x *Ctx) { x.W.Int(x.s.rdb.lastSave.Load()) })
	bind("dump", dumpCommand)
	bind("restore", restoreCommand)
}

var argABSTTL = []byte("ABSTTL")

func saveCommand(x *Ctx) {
	if err := x.s.saveLocked(x.Now); err != nil {
		if x.s.rdb.bgsaving.Load() {
			x.W.Error(err.Error())
			return
		}
		x.W.Error("ERR")
		return
	}
	x.W.OK()
}

func bgsaveCommand(x *Ctx) {
	schedule := false
	if len(x.Args) > 1 {
		if len(x.Args) != 2 || !cArgIs(x.Args[1], "schedule") {
			x.W.Error(errSyntax)
			return
		}
		schedule = true
	}
	switch {
	case x.s.rdb.bgsaving.Load():
		if schedule {
			x.s.rdb.scheduled.Store(true)
			x.W.Simple("Background saving scheduled")
			return
		}
		x.W.Error("ERR Background save already in progress")
	case x.inExec:
		// EXEC holds locks the snapshot instant would wait for: the cron
		// starts it, as Redis does for a BGSAVE inside MULTI.
		x.s.rdb.scheduled.Store(true)
		x.W.Simple("Background saving scheduled")
	case x.s.bgsave():
		x.W.Simple("Background saving started")
	default:
		x.W.Error("ERR Background save already in progress")
	}
}

func dumpCommand(x *Ctx) {
	e, found := x.lookupRead(x.Args[1])
	if !found {
		x.W.Null()
		return
	}
	enc := x.s.encoder()
	b := x.s.appendValue(enc, x.nextScratch(), &e, nil)
	x.s.rdb.encoders.Put(enc)
	b = persistence.AppendDumpFooter(b)
	x.W.Bulk(b)
	x.keepScratch(b)
}

// restoreCommand is RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME
// seconds] [FREQ frequency], checking its arguments in Redis's order.
func restoreCommand(x *Ctx) {
	key := x.Args[1]
	replace, absTTL := false, false
	freq, idle := int64(-1), int64(-1)
	for j := 4; j < len(x.Args); j++ {
		more := len(x.Args) - j - 1
		switch a := x.Args[j]; {
		case cArgIs(a, "replace"):
			replace = true
		case cArgIs(a, "absttl"):
			absTTL = true
		case cArgIs(a, "idletime") && more >= 1 && freq == -1:
			v, ok := strnum.ParseInt(x.Args[j+1])
			if !ok {
				x.W.Error(errNotInt)
				return
			}
			if v < 0 {
				x.W.Error("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			idle = v
			j++
		case cArgIs(a, "freq") && more >= 1 && idle == -1:
			v, ok := strnum.ParseInt(x.Args[j+1])
			if !ok {
				x.W.Error(errNotInt)
				return
			}
			if v < 0 || v > 255 {
				x.W.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return
			}
			freq = v
			j++
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	e, found := x.lookupWrite(key)
	if found && !replace {
		x.W.Error("BUSYKEY Target key name already exists.")
		return
	}
	ttl, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	if ttl < 0 {
		x.W.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	v, err := persistence.DecodeDump(x.Args[3])
	switch {
	case errors.Is(err, persistence.ErrDumpPayload):
		x.W.Error("ERR DUMP payload version or checksum are wrong")
		return
	case errors.Is(err, persistence.ErrBadData):
		x.W.Error("ERR Bad data format")
		return
	case err != nil:
		x.W.Error("ERR " + err.Error())
		return
	case v.HasDuplicates():
		x.W.Error("ERR Bad data format")
		return
	}
	if found {
		x.DB.DeleteEntry(&e)
	}
	if ttl != 0 && !absTTL {
		ttl += x.Now
	}
	if ttl != 0 && ttl <= x.Now {
		if found {
			x.propagateDel(key, x.s.cfg.LazyFreeLazyServerDel())
			x.notify(notifyGeneric, "del", key)
			x.dirty++
		}
		x.W.OK()
		return
	}
	x.storeValue(key, &v) // no duplicates: it cannot fail
	e, _ = x.DB.Lookup(key, x.Now, false)
	if ttl != 0 {
		x.DB.SetExpire(&e, ttl, x.Now)
		if !absTTL && x.propagating() {
			argv := append([][]byte{x.Args[0], key, intArg(ttl)}, x.Args[3:]...)
			x.propagateAs(append(argv, argABSTTL)...)
		}
	}
	mode := x.s.accessMode()
	x.setAccess(&e, mode, int(freq), idle)
	x.notify(notifyGeneric, "restore", key)
	x.dirty++
	x.W.OK()
}

// reloadCommand is DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save, empty the
// data set and load the file back, under the exclusive lock.
func reloadCommand(x *Ctx) {
	save, flush, merge := true, true, false
	for _, a := range x.Args[2:] {
		switch {
		case cArgIs(a, "merge"):
			merge = true
		case cArgIs(a, "noflush"):
			flush = false
		case cArgIs(a, "nosave"):
			save = false
		default:
			x.W.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	s := x.s
	if save {
		if err := s.saveLocked(x.Now); err != nil {
			x.W.Error("ERR")
			return
		}
	}
	if flush {
		for i := range s.ks.Len() {
			s.ks.DB(i).Flush()
		}
		s.scripts.FlushFunctions()
	}
	if err := s.reloadRDB(merge); err != nil {
		s.log.Printf("DEBUG RELOAD: %v", err)
		x.W.Error("ERR Error trying to load the RDB dump, check server logs.")
		return
	}
	s.log.Printf("DB reloaded by DEBUG RELOAD")
	x.W.OK()
}

// shutdownSave saves before shutting down when asked to (SAVE) or when save
// points are configured, unless NOSAVE, as Redis does. A background save in
// progress is waited for first.
func (s *Server) shutdownSave(save, nosave bool) error {
	if nosave || !save && len(s.cfg.Save()) == 0 {
		return nil
	}
	s.rdb.bgDone.Wait()
	var all keyspace.LockSet
	all.All()
	db := s.ks.Lock(0, &all)
	defer s.ks.Unlock(db, &all)
	s.log.Printf("Saving the final RDB snapshot before exiting.")
	return s.saveLocked(s.clock.UnixMilli())
}

// Shutdown is SIGTERM's shutdown: save if save points are configured, then
// Close.
func (s *Server) Shutdown() error {
	err := s.shutdownSave(false, false)
	s.Close()
	return err
}
