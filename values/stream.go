package values

import (
	"strconv"

	"github.com/keyhive/keyhive/internal/stream"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
	"github.com/keyhive/keyhive/resp"
)

// StreamObject is a stream stored as a keyspace object (OBJECT ENCODING
// "stream"); streams have no inline form, and are changed in place.
type StreamObject struct{ *stream.Stream }

func (o *StreamObject) Clone() keyspace.Object { return &StreamObject{o.Stream.Clone()} }

// EntryStream is a stream entry's stream.
func EntryStream(e *keyspace.Entry) *stream.Stream { return e.Object().(*StreamObject).Stream }

// CreateStream stores a new empty stream at key (e looked up for writing,
// missing).
func CreateStream(env *Env, e *keyspace.Entry, key []byte) *stream.Stream {
	s := stream.New()
	env.DB.PutObject(e, key, keyspace.TypeStream, keyspace.EncStream, &StreamObject{s}, 0, env.Now)
	return s
}

// appendStreamValue appends a stream as Redis 7.0 writes it (type 19): the
// nodes as stream listpacks, the ID bookkeeping, then the groups with their
// PEL and consumers.
func appendStreamValue(enc *persistence.Encoder, b []byte, st *stream.Stream) []byte {
	b = persistence.AppendLen(b, uint64(st.Nodes()))
	lp := &enc.Listpack
	var master stream.ID
	inNode := false
	flush := func() {
		if inNode {
			b = enc.AppendStreamNode(b, master, lp.Bytes())
		}
	}
	st.WalkNodes(func(m stream.ID, live, deleted int, fields [][]byte) {
		flush()
		master, inNode = m, true
		lp.BeginStreamNode(live, deleted, fields)
	}, func(id stream.ID, deleted, sameFields bool, pairs [][]byte) {
		lp.AppendStreamEntry(master, id, deleted, sameFields, pairs)
	})
	flush()
	b = persistence.AppendStreamMeta(b, st.Length, st.LastID, st.FirstID, st.MaxDeletedID, st.EntriesAdded)
	groups := st.Groups()
	b = persistence.AppendLen(b, uint64(len(groups)))
	for _, g := range groups {
		pel := g.Pending()
		b = enc.AppendStreamGroup(b, g.Name, g.LastID, g.EntriesRead, len(pel))
		for _, p := range pel {
			b = persistence.AppendStreamPending(b, p.ID, p.DeliveryTime, p.DeliveryCount)
		}
		b = persistence.AppendLen(b, uint64(len(g.Consumers())))
		g.EachConsumer(func(c *stream.Consumer, ids []stream.ID) {
			b = enc.AppendStreamConsumer(b, c.Name, c.SeenTime, len(ids))
			for _, id := range ids {
				b = persistence.AppendRawStreamID(b, id)
			}
		})
	}
	return b
}

// storeStream stores a decoded stream at key (e its vacancy) with the nodes
// it was saved with (so XINFO's radix-tree figures carry over).
func storeStream(env *Env, e *keyspace.Entry, key []byte, v *persistence.Stream) {
	st := stream.New()
	for i := range v.Nodes {
		n := &v.Nodes[i]
		n.Walk(func(fields [][]byte) { st.LoadNode(n.Master, fields) },
			func(id stream.ID, deleted bool, pairs [][]byte) { st.LoadEntry(id, pairs, deleted) })
	}
	st.LastID = v.LastID
	if v.Legacy {
		// Before 7.0: counters derived as Redis 7.0 derives them.
		st.RefreshFirstID()
		st.EntriesAdded = st.Length
	} else {
		st.FirstID, st.MaxDeletedID, st.EntriesAdded = v.FirstID, v.MaxDeletedID, v.EntriesAdded
	}
	for _, g := range v.Groups {
		entriesRead := g.EntriesRead
		if v.Legacy {
			entriesRead = st.EntriesReadAt(g.LastID)
		}
		sg, _ := st.CreateGroup(g.Name, g.LastID, entriesRead)
		consumers := make([]*stream.Consumer, len(g.Consumers))
		for i, c := range g.Consumers {
			consumers[i], _ = sg.CreateConsumer(c.Name, c.SeenTime)
		}
		for _, p := range g.PEL {
			if p.Consumer < 0 { // NACKed: their release order is not saved, ID order stands for it
				sg.AddNacked(p.ID, p.DeliveryCount)
				continue
			}
			sg.AddPending(p.ID, consumers[p.Consumer], p.DeliveryTime, p.DeliveryCount)
		}
	}
	if m := v.IDMP; m != nil {
		st.LoadIDMP(m.Duration, m.MaxSize, m.Added, m.Duplicates)
		for _, r := range m.IIDs {
			st.IDMPRecord(r.PID, r.IID, r.ID, r.At, false)
		}
	}
	env.DB.PutObject(e, key, keyspace.TypeStream, keyspace.EncStream, &StreamObject{st}, 0, env.Now)
}

// AppendStreamRebuild appends the commands Redis 7.0's AOF rewrite emits
// for a stream: an XADD per entry (XADD MAXLEN 0 for an empty stream),
// XSETID with the counters, then per group XGROUP CREATE with ENTRIESREAD
// and, per consumer, XCLAIM ... JUSTID FORCE for each pending entry or
// XGROUP CREATECONSUMER when it has none; then the entries XNACK released
// (Redis 8.8), in the order it did, as XNACK ... RETRYCOUNT n FORCE.
func AppendStreamRebuild(b, key []byte, st *stream.Stream) []byte {
	var ids [2][48]byte
	idArg := func(i int, id stream.ID) []byte { return id.Append(ids[i][:0]) }
	var argv [][]byte
	if st.Length > 0 {
		st.Range(stream.ID{}, stream.MaxID, false, func(id stream.ID, pairs [][]byte) bool {
			argv = append(append(argv[:0], []byte("XADD"), key, idArg(0, id)), pairs...)
			b = resp.AppendCommand(b, argv)
			return true
		})
	} else {
		b = resp.AppendCommand(b, [][]byte{[]byte("XADD"), key, []byte("MAXLEN"), []byte("0"), []byte("0-1"), []byte("x"), []byte("y")})
	}
	b = resp.AppendCommand(b, [][]byte{[]byte("XSETID"), key, idArg(0, st.LastID),
		[]byte("ENTRIESADDED"), strconv.AppendUint(nil, st.EntriesAdded, 10),
		[]byte("MAXDELETEDID"), idArg(1, st.MaxDeletedID)})
	for _, g := range st.Groups() {
		b = resp.AppendCommand(b, [][]byte{[]byte("XGROUP"), []byte("CREATE"), key, g.Name, idArg(0, g.LastID),
			[]byte("ENTRIESREAD"), strconv.AppendInt(nil, g.EntriesRead, 10)})
		pel := g.Pending()
		g.EachConsumer(func(c *stream.Consumer, pending []stream.ID) {
			if len(pending) == 0 {
				b = resp.AppendCommand(b, [][]byte{[]byte("XGROUP"), []byte("CREATECONSUMER"), key, g.Name, c.Name})
				return
			}
			for _, id := range pending {
				i, _ := g.FindPending(id)
				b = resp.AppendCommand(b, [][]byte{[]byte("XCLAIM"), key, g.Name, c.Name, []byte("0"), idArg(0, id),
					[]byte("TIME"), strconv.AppendInt(nil, pel[i].DeliveryTime, 10),
					[]byte("RETRYCOUNT"), strconv.AppendUint(nil, pel[i].DeliveryCount, 10),
					[]byte("JUSTID"), []byte("FORCE")})
			}
		})
		for _, i := range g.NackedOrder() {
			b = resp.AppendCommand(b, [][]byte{[]byte("XNACK"), key, g.Name, []byte("FAIL"), []byte("IDS"), []byte("1"), idArg(0, pel[i].ID),
				[]byte("RETRYCOUNT"), strconv.AppendUint(nil, pel[i].DeliveryCount, 10), []byte("FORCE")})
		}
	}
	return appendIDMPRebuild(b, key, st)
}

// appendIDMPRebuild appends a stream's idempotency state as commands:
// XCFGSET with its configuration when not the default, then XIDMPRECORD
// (Redis 8.8's command for this) per tracked iid whose entry is still in
// the stream, oldest first. The iids-added and iids-duplicates counters
// have no command to carry them.
func appendIDMPRebuild(b, key []byte, st *stream.Stream) []byte {
	if !st.HasIDMP() {
		return b
	}
	if duration, maxSize, _, _ := st.IDMPSettings(); duration != stream.IDMPDefaultDuration || maxSize != stream.IDMPDefaultMaxSize {
		b = resp.AppendCommand(b, [][]byte{[]byte("XCFGSET"), key,
			[]byte("IDMP-DURATION"), strconv.AppendInt(nil, duration, 10),
			[]byte("IDMP-MAXSIZE"), strconv.AppendInt(nil, maxSize, 10)})
	}
	st.EachIDMP(func(pid, iid []byte, id stream.ID, _ int64) {
		if st.Has(id) {
			b = resp.AppendCommand(b, [][]byte{[]byte("XIDMPRECORD"), key, pid, iid, id.Append(nil)})
		}
	})
	return b
}
