package keyspace

// Active expiry, as Redis does it: sample keys with a TTL, remove the expired
// ones, and go on while more than a tenth of a sample had expired.
const (
	expireSample     = 20  // volatile keys looked at per step
	expireSlotsLimit = 400 // index slots walked per step, so sparse TTLs stay cheap
	expireStalePct   = 10
)

// ActiveExpire runs expiry steps over every database until few sampled keys are
// expired or stop reports that the time budget is spent. stop runs between
// samples with no lock held, so it may also pause to let commands run. It
// returns the number of keys sampled and removed. Each database's average
// TTL estimate is updated from the live keys sampled. Nothing expires while
// the keyspace is Still (CLIENT PAUSE).
func (ks *Keyspace) ActiveExpire(now int64, stop func() bool) (sampledAll, removed int) {
	if ks.Still.Load() {
		return 0, 0
	}
	for i := range ks.dbs {
		for !stop() {
			// Judge a whole sample, gathered over as many steps as it takes.
			sampled, expired, shards := 0, 0, 0
			var ttls ttlSum
			ks.all.RLock()
			db := ks.DB(i)
			if db.expires.Load() == 0 {
				db.avgTTL.Store(0)
				ks.all.RUnlock()
				break
			}
			for db.expires.Load() > 0 && sampled < expireSample && shards < Shards {
				s, e, n := db.expireStep(now, expireSample-sampled, &ttls)
				sampled, expired, shards = sampled+s, expired+e, shards+n
			}
			db.noteTTLs(ttls)
			ks.all.RUnlock()
			sampledAll += sampled
			removed += expired
			if sampled == 0 || expired*100 <= sampled*expireStalePct {
				break
			}
		}
	}
	return sampledAll, removed
}

// ttlSum adds up the TTLs of the live keys a sample saw.
type ttlSum struct{ ms, keys int64 }

// noteTTLs folds a sample's average TTL into the estimate, each sample
// weighing a fiftieth, as Redis's activeExpireCycle does.
func (db *DB) noteTTLs(t ttlSum) {
	if t.keys == 0 {
		return
	}
	avg := t.ms / t.keys
	if old := db.avgTTL.Load(); old != 0 {
		avg = old/50*49 + avg/50
	}
	db.avgTTL.Store(avg)
}

// expireStep samples up to want volatile keys, walking at most expireSlotsLimit
// index slots from where the previous step stopped. It reports how many shards
// it finished.
func (db *DB) expireStep(now int64, want int, ttls *ttlSum) (sampled, expired, shards int) {
	walked := 0
	for walked < expireSlotsLimit && sampled < want && shards < Shards {
		finished := true
		db.withShard(db.cycle, func(sh *shard) {
			for sh.volatile > 0 && sh.expireAt < len(sh.slots) {
				if sampled >= want || walked >= expireSlotsLimit {
					finished = false
					return
				}
				walked++
				i := sh.expireAt
				if sh.slots[i] == 0 {
					sh.expireAt++
					continue
				}
				e := entryAt(sh, i)
				if e.h.expire == 0 {
					sh.expireAt++
					continue
				}
				sampled++
				if e.h.expire <= now {
					db.expire(&e) // a later slot may shift into i: look at i again
					expired++
					continue
				}
				ttls.ms += e.h.expire - now
				ttls.keys++
				sh.expireAt++
			}
			sh.expireAt = 0
		})
		if !finished {
			break
		}
		shards++
		db.cycle = (db.cycle + 1) % Shards
	}
	return sampled, expired, shards
}
