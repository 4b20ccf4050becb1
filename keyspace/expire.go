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
// returns the number of keys removed.
func (ks *Keyspace) ActiveExpire(now int64, stop func() bool) int {
	removed := 0
	if ks.Still.Load() {
		return 0
	}
	for i := range ks.dbs {
		for !stop() {
			// Judge a whole sample, gathered over as many steps as it takes.
			sampled, expired, shards := 0, 0, 0
			ks.all.RLock()
			db := ks.DB(i)
			for db.expires.Load() > 0 && sampled < expireSample && shards < Shards {
				s, e, n := db.expireStep(now, expireSample-sampled)
				sampled, expired, shards = sampled+s, expired+e, shards+n
			}
			ks.all.RUnlock()
			removed += expired
			if sampled == 0 || expired*100 <= sampled*expireStalePct {
				break
			}
		}
	}
	return removed
}

// expireStep samples up to want volatile keys, walking at most expireSlotsLimit
// index slots from where the previous step stopped. It reports how many shards
// it finished.
func (db *DB) expireStep(now int64, want int) (sampled, expired, shards int) {
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
