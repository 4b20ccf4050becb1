package family

import (
	"bytes"
	"math"
	"slices"
	"time"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/stream"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

func registerStreams(bind binder) {
	bind("xadd", xaddCommand)
	bind("xlen", xlenCommand)
	bind("xrange", func(x *command.Ctx) { xrangeCommand(x, false) })
	bind("xrevrange", func(x *command.Ctx) { xrangeCommand(x, true) })
	bind("xdel", xdelCommand)
	bind("xtrim", xtrimCommand)
	bind("xsetid", xsetidCommand)
	bind("xread", func(x *command.Ctx) { xreadCommand(x, false) })
	bind("xreadgroup", func(x *command.Ctx) { xreadCommand(x, true) })
	bind("xinfo|stream", xinfoStream)
	bind("xinfo|groups", xinfoGroups)
	bind("xinfo|consumers", xinfoConsumers)
	bind("xinfo|help", xinfoHelp)
	bind("xcfgset", xcfgsetCommand)
	bind("xidmprecord", xidmprecordCommand)
}

// Error texts of the stream commands, as Redis writes them.
const (
	errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"
	errInvalidStart    = "ERR invalid start ID for the interval"
	errInvalidEnd      = "ERR invalid end ID for the interval"
	errXaddTooSmall    = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	errNoKeyXgroup     = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
	errEntriesRead     = "ERR value for ENTRIESREAD must be positive or -1"
	// Keyhive's texts: the pages state these cases, not Redis's words.
	errIDMPEmpty      = "ERR IDMP producer ID and idempotent ID must not be empty"
	errIDMPExplicitID = "ERR IDMP and IDMPAUTO can be used only with an auto-generated ID (*)"
)

func writeStreamID(w *resp.Writer, id stream.ID) {
	var buf [48]byte
	w.Bulk(id.Append(buf[:0]))
}

func writeStreamEntry(w *resp.Writer, id stream.ID, fields [][]byte) {
	w.Array(2)
	writeStreamID(w, id)
	w.Array(len(fields))
	for _, f := range fields {
		w.Bulk(f)
	}
}

// idArg formats id as a command argument for propagation (it allocates).
func idArg(id stream.ID) []byte { return id.Append(nil) }

// streamID parses a stream ID argument, replying the error when invalid.
func streamID(x *command.Ctx, arg []byte, missingSeq uint64, strict bool) (stream.ID, bool) {
	id, _, ok := stream.ParseID(arg, missingSeq, strict, false)
	if !ok {
		x.W.Error(errInvalidStreamID)
	}
	return id, ok
}

// intervalStart parses a range start: an ID, or "(" and an ID, exclusive.
func intervalStart(x *command.Ctx, arg []byte) (stream.ID, bool) {
	if len(arg) > 1 && arg[0] == '(' {
		id, ok := streamID(x, arg[1:], 0, true)
		if !ok {
			return id, false
		}
		if id, ok = id.Next(); !ok {
			x.W.Error(errInvalidStart)
		}
		return id, ok
	}
	return streamID(x, arg, 0, false)
}

// intervalEnd parses a range end: an ID (a missing sequence is the
// largest), or "(" and an ID, exclusive.
func intervalEnd(x *command.Ctx, arg []byte) (stream.ID, bool) {
	if len(arg) > 1 && arg[0] == '(' {
		id, ok := streamID(x, arg[1:], math.MaxUint64, true)
		if !ok {
			return id, false
		}
		if id, ok = id.Prev(); !ok {
			x.W.Error(errInvalidEnd)
		}
		return id, ok
	}
	return streamID(x, arg, math.MaxUint64, false)
}

// trimArgs are XADD's and XTRIM's options.
type trimArgs struct {
	trim        stream.Trim
	strategy    bool // MAXLEN or MINID given
	thresholdAt int  // the threshold's argument index
	noMkStream  bool
	id          stream.ID
	idGiven     bool
	seqGiven    bool
	idAt        int // XADD: the ID's argument index
	refs        refPolicy
	refsGiven   bool
	// XADD IDMP pid iid / IDMPAUTO pid (Redis 8.6): idmpAt is the
	// keyword's argument index, 0 when neither was given.
	idmpAt   int
	idmpAuto bool
	pid, iid []byte
}

// parseTrimArgs parses the options from args[2] on, as Redis's
// streamParseAddOrTrimArgsOrReply; for XADD it stops at the ID.
func parseTrimArgs(x *command.Ctx, xadd bool) (a trimArgs, ok bool) {
	args := x.Args
	limitGiven := false
	i := 2
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && string(cstr.Bytes(opt)) == "*":
		case (cstr.ArgIs(opt, "maxlen") || cstr.ArgIs(opt, "minid")) && more > 0:
			if a.strategy {
				x.W.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return a, false
			}
			a.trim.Approx = false
			if next := string(cstr.Bytes(args[i+1])); more >= 2 && (next == "~" || next == "=") {
				a.trim.Approx = next == "~"
				i++
			}
			if cstr.ArgIs(opt, "maxlen") {
				n, ok := x.IntArgOrReply(args[i+1])
				if !ok {
					return a, false
				}
				if n < 0 {
					x.W.Error("ERR The MAXLEN argument must be >= 0.")
					return a, false
				}
				a.trim.MaxLen, a.trim.ByMinID = n, false
			} else {
				id, ok := streamID(x, args[i+1], 0, true)
				if !ok {
					return a, false
				}
				a.trim.MinID, a.trim.ByMinID = id, true
			}
			i++
			a.strategy, a.thresholdAt = true, i
			continue
		case cstr.ArgIs(opt, "limit") && more > 0:
			n, ok := x.IntArgOrReply(args[i+1])
			if !ok {
				return a, false
			}
			if n < 0 {
				x.W.Error("ERR The LIMIT argument must be >= 0.")
				return a, false
			}
			a.trim.Limit, limitGiven = n, true
			i++
			continue
		case xadd && cstr.ArgIs(opt, "nomkstream"):
			a.noMkStream = true
			continue
		case xadd && a.idmpAt == 0 && cstr.ArgIs(opt, "idmpauto") && more > 0:
			a.idmpAt, a.idmpAuto, a.pid = i, true, args[i+1]
			i++
			continue
		case xadd && a.idmpAt == 0 && cstr.ArgIs(opt, "idmp") && more > 1:
			a.idmpAt, a.pid, a.iid = i, args[i+1], args[i+2]
			i += 2
			continue
		case !a.refsGiven && (cstr.ArgIs(opt, "keepref") || cstr.ArgIs(opt, "delref") || cstr.ArgIs(opt, "acked")):
			a.refs, a.refsGiven = parseRefPolicy(opt), true // Redis 8.2
			continue
		case xadd:
			id, seqGiven, ok := stream.ParseID(opt, 0, true, true)
			if !ok {
				x.W.Error(errInvalidStreamID)
				return a, false
			}
			a.id, a.idGiven, a.seqGiven = id, true, seqGiven
		default:
			x.W.Error(command.ErrSyntax)
			return a, false
		}
		break
	}
	a.idAt = i
	switch {
	case a.idmpAt > 0 && (len(a.pid) == 0 || !a.idmpAuto && len(a.iid) == 0):
		x.W.Error(errIDMPEmpty)
		return a, false
	case a.idmpAt > 0 && a.idGiven && !x.Conn().Obeys():
		// A replica and the AOF get the ID the master gave.
		x.W.Error(errIDMPExplicitID)
		return a, false
	case a.trim.Limit != 0 && !a.strategy:
		x.W.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return a, false
	case !xadd && !a.strategy:
		x.W.Error("ERR syntax error, XTRIM must be called with a trimming strategy")
		return a, false
	case x.Conn().Obeys():
		// An approximate trim propagates as the exact one it did, with its
		// LIMIT left in place (as Redis writes it): replayed, the trim is
		// exact and unlimited.
		a.trim.Limit = 0
	case limitGiven && !a.trim.Approx:
		x.W.Error("ERR syntax error, LIMIT cannot be used without the special ~ option")
		return a, false
	case !limitGiven && a.trim.Approx:
		a.trim.Limit = 100 * x.Config().StreamNodeMaxEntries()
		if a.trim.Limit <= 0 || a.trim.Limit > 1<<30 {
			a.trim.Limit = 10000
		}
	case !a.trim.Approx:
		a.trim.Limit = 0
	}
	return a, true
}

// rewriteTrim makes an approximate trim propagate as the exact one it did:
// "=" for "~" and the length (MAXLEN) or first ID (MINID) it left.
func rewriteTrim(x *command.Ctx, argv [][]byte, a *trimArgs, s *stream.Stream) {
	if !a.trim.Approx {
		return
	}
	argv[a.thresholdAt-1] = []byte("=")
	if !a.trim.ByMinID {
		argv[a.thresholdAt] = command.IntArg(int64(s.Length))
		return
	}
	first := stream.MaxID
	if s.Nodes() > 0 {
		first = s.FirstEntry()
	}
	argv[a.thresholdAt] = idArg(first)
}

func xaddCommand(x *command.Ctx) {
	a, ok := parseTrimArgs(x, true)
	if !ok {
		return
	}
	fields := len(x.Args) - a.idAt - 1
	if fields < 2 || fields%2 == 1 {
		x.W.Error(command.ErrArity("xadd"))
		return
	}
	if a.idGiven && a.seqGiven && a.id.IsZero() {
		x.W.Error("ERR The ID specified in XADD must be greater than 0-0")
		return
	}
	key := x.Args[1]
	e, s, ok := x.WriteStream(key)
	if !ok {
		return
	}
	if s == nil && a.noMkStream {
		x.W.Null()
		return
	}
	if a.idmpAuto {
		auto := stream.AutoIID(x.Args[a.idAt+1:])
		a.iid = auto[:]
	}
	if s != nil && a.idmpAt > 0 {
		// A duplicate answers the entry its first XADD added, and changes
		// nothing a replica or the AOF needs: nothing propagates.
		if orig, dup := s.IDMPLookup(a.pid, a.iid, x.Now); dup {
			writeStreamID(x.W, orig)
			return
		}
	}
	last := stream.ID{}
	if s != nil {
		last = s.LastID
	}
	if last == stream.MaxID {
		x.W.Error("ERR The stream has exhausted the last possible ID, unable to add more items")
		return
	}
	id := a.id
	switch {
	case !a.idGiven:
		id = stream.ID{Ms: uint64(x.Now)}
		if id.Compare(last) <= 0 {
			id, _ = last.Next()
		}
	case !a.seqGiven && id.Ms == last.Ms:
		if last.Seq == math.MaxUint64 {
			x.W.Error("ERR The ID specified in XADD is equal or smaller than the target stream top item")
			return
		}
		id = stream.ID{Ms: last.Ms, Seq: last.Seq + 1}
	}
	if id.Compare(last) <= 0 {
		x.W.Error(errXaddTooSmall)
		return
	}
	if s == nil {
		s = values.CreateStream(x.Env(), &e, key)
	} else {
		x.DB.Modified(key)
	}
	s.Add(id, x.Args[a.idAt+1:], x.Config().StreamNodeMaxBytes(), x.Config().StreamNodeMaxEntries())
	if a.idmpAt > 0 {
		s.IDMPRecord(a.pid, a.iid, id, x.Now, true)
	}
	writeStreamID(x.W, id)
	x.Notify(config.EventStream, "xadd", key)
	x.Dirty++
	if a.strategy {
		if trimWithRefs(s, &a) > 0 {
			x.Notify(config.EventStream, "xtrim", key)
		}
	}
	if x.Propagating() && (a.trim.Approx || !a.idGiven || !a.seqGiven || a.idmpAuto) {
		argv := append([][]byte(nil), x.Args...)
		rewriteTrim(x, argv, &a, s)
		if !a.idGiven || !a.seqGiven {
			argv[a.idAt] = idArg(id)
		}
		if a.idmpAuto {
			// IDMPAUTO propagates as IDMP with the iid it computed.
			argv[a.idmpAt] = []byte("IDMP")
			argv = slices.Insert(argv, a.idmpAt+2, slices.Clone(a.iid))
		}
		x.PropagateAs(argv...)
	}
}

func xlenCommand(x *command.Ctx) {
	s, ok := x.ReadStream(x.Args[1])
	switch {
	case !ok:
	case s == nil:
		x.W.Int(0)
	default:
		x.W.Int(int64(s.Length))
	}
}

func xrangeCommand(x *command.Ctx, rev bool) {
	startArg, endArg := x.Args[2], x.Args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, ok := intervalStart(x, startArg)
	if !ok {
		return
	}
	end, ok := intervalEnd(x, endArg)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(x.Args); j++ {
		if !cstr.ArgIs(x.Args[j], "count") || j+1 >= len(x.Args) {
			x.W.Error(command.ErrSyntax)
			return
		}
		j++
		if count, ok = x.IntArgOrReply(x.Args[j]); !ok {
			return
		}
		count = max(count, 0)
	}
	s, ok := x.ReadStream(x.Args[1])
	switch {
	case !ok:
		return
	case s == nil:
		x.W.Array(0)
		return
	case count == 0:
		x.W.NullArray()
		return
	}
	replyRange(x, s, start, end, rev, count)
}

// replyRange replies the entries from start to end, at most count (-1: no
// limit).
func replyRange(x *command.Ctx, s *stream.Stream, start, end stream.ID, rev bool, count int64) int {
	n := 0
	s.Range(start, end, rev, func(stream.ID, [][]byte) bool { n++; return int64(n) != count })
	x.W.Array(n)
	i := 0
	s.Range(start, end, rev, func(id stream.ID, fields [][]byte) bool {
		writeStreamEntry(x.W, id, fields)
		i++
		return i < n
	})
	return n
}

func xdelCommand(x *command.Ctx) {
	key := x.Args[1]
	_, s, ok := x.WriteStream(key)
	if !ok {
		return
	}
	if s == nil {
		x.W.Int(0)
		return
	}
	ids, ok := streamIDs(x, x.Args[2:])
	if !ok {
		return
	}
	deleted, first := 0, false
	for _, id := range ids {
		if deleteEntry(s, id, &first) {
			deleted++
		}
	}
	if deleted > 0 {
		entriesDeleted(x, key, s, first)
		x.Dirty += deleted
	}
	x.W.Int(int64(deleted))
}

// deleteEntry deletes entry id from s, keeping its largest deleted ID; first
// is set when it was the first entry. It reports whether the entry was there.
func deleteEntry(s *stream.Stream, id stream.ID, first *bool) bool {
	if !s.Delete(id) {
		return false
	}
	*first = *first || id == s.FirstID
	if s.MaxDeletedID.Less(id) {
		s.MaxDeletedID = id
	}
	return true
}

// entriesDeleted finishes deleting entries from the stream at key: its first
// ID when the first entry went, WATCH, and the xdel event.
func entriesDeleted(x *command.Ctx, key []byte, s *stream.Stream, first bool) {
	if s.Length == 0 {
		s.FirstID = stream.ID{}
	} else if first {
		s.RefreshFirstID()
	}
	x.DB.Modified(key)
	x.Notify(config.EventStream, "xdel", key)
}

func xtrimCommand(x *command.Ctx) {
	a, ok := parseTrimArgs(x, false)
	if !ok {
		return
	}
	key := x.Args[1]
	_, s, ok := x.WriteStream(key)
	if !ok {
		return
	}
	if s == nil {
		x.W.Int(0)
		return
	}
	deleted := trimWithRefs(s, &a)
	if deleted > 0 {
		x.Notify(config.EventStream, "xtrim", key)
		x.DB.Modified(key)
		x.Dirty += int(deleted)
		if x.Propagating() && a.trim.Approx {
			argv := append([][]byte(nil), x.Args...)
			rewriteTrim(x, argv, &a, s)
			x.PropagateAs(argv...)
		}
	}
	x.W.Int(deleted)
}

func xsetidCommand(x *command.Ctx) {
	id, ok := streamID(x, x.Args[2], 0, true)
	if !ok {
		return
	}
	entriesAdded := int64(-1)
	var maxDeleted stream.ID
	for i := 3; i < len(x.Args); i += 2 {
		more := i+1 < len(x.Args)
		switch {
		case cstr.ArgIs(x.Args[i], "entriesadded") && more:
			if entriesAdded, ok = x.IntArgOrReply(x.Args[i+1]); !ok {
				return
			}
			if entriesAdded < 0 {
				x.W.Error("ERR entries_added must be positive")
				return
			}
		case cstr.ArgIs(x.Args[i], "maxdeletedid") && more:
			if maxDeleted, ok = streamID(x, x.Args[i+1], 0, true); !ok {
				return
			}
			if id.Less(maxDeleted) {
				x.W.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	key := x.Args[1]
	_, s, ok := x.WriteStream(key)
	switch {
	case !ok:
		return
	case s == nil:
		x.W.Error(command.ErrNoSuchKey)
		return
	case id.Less(s.MaxDeletedID):
		// Checked first, whatever MAXDELETEDID says, as Redis 7.2+ does.
		x.W.Error("ERR The ID specified in XSETID is smaller than current max_deleted_entry_id")
		return
	}
	if s.Length > 0 {
		if top, _ := s.Edge(true); id.Less(top) {
			x.W.Error("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if entriesAdded != -1 && s.Length > uint64(entriesAdded) {
			x.W.Error("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	s.LastID = id
	if entriesAdded != -1 {
		s.EntriesAdded = uint64(entriesAdded)
	}
	if !maxDeleted.IsZero() {
		s.MaxDeletedID = maxDeleted
	}
	x.DB.Modified(key)
	x.Notify(config.EventStream, "xsetid", key)
	x.Dirty++
	x.W.OK()
}

// streamRead is a parsed XREAD or XREADGROUP.
type streamRead struct {
	group, consumer []byte // XREADGROUP's
	noack           bool
	count           int64 // 0: no limit
	keys            [][]byte
	ids             []stream.ID  // entries above these; for ">" the group's last ID
	newOnly         []bool       // XREADGROUP ">"
	seen            []streamAdds // a waiter's: the streams' additions it has seen
	now             []bool       // served at once
	claim           int64        // XREADGROUP CLAIM min-idle-time (Redis 8.4); -1: none
	// maxCount and maxSize bound the reply as a whole (MAXCOUNT, MAXSIZE:
	// Redis 8.10; 0: no bound); limits holds each stream's share (plan).
	maxCount, maxSize int64
	limits            []int64
}

func xreadCommand(x *command.Ctx, group bool) {
	r := streamRead{claim: -1}
	timeout, streamsAt := int64(-1), 0
	args := x.Args
	for i := 1; i < len(args) && streamsAt == 0; i++ {
		more := len(args) - i - 1
		switch opt := args[i]; {
		case cstr.ArgIs(opt, "block") && more > 0:
			// From a script it does not block (Block answers at once), as
			// in Redis 7.2+; 7.0 refused it.
			i++
			ms, ok := strnum.ParseInt(args[i])
			if !ok {
				x.W.Error("ERR timeout is not an integer or out of range")
				return
			}
			if ms < 0 {
				x.W.Error("ERR timeout is negative")
				return
			}
			if ms > math.MaxInt64-x.Now {
				x.W.Error(command.ErrTimeoutRange)
				return
			}
			timeout = ms
		case cstr.ArgIs(opt, "count") && more > 0:
			i++
			n, ok := x.IntArgOrReply(args[i])
			if !ok {
				return
			}
			r.count = max(n, 0)
		case cstr.ArgIs(opt, "maxcount") && more > 0:
			i++
			if r.maxCount = positiveOption(x, args[i], "MAXCOUNT"); r.maxCount == 0 {
				return
			}
		case cstr.ArgIs(opt, "maxsize") && more > 0:
			i++
			if r.maxSize = positiveOption(x, args[i], "MAXSIZE"); r.maxSize == 0 {
				return
			}
		case cstr.ArgIs(opt, "streams") && more > 0:
			streamsAt = i + 1
			if (len(args)-streamsAt)%2 != 0 {
				if group {
					x.W.Error("ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified.")
				} else {
					x.W.Error("ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified.")
				}
				return
			}
		case cstr.ArgIs(opt, "group") && more >= 2:
			if !group {
				x.W.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			r.group, r.consumer = args[i+1], args[i+2]
			i += 2
		case group && cstr.ArgIs(opt, "claim") && more > 0:
			i++
			if !r.parseClaim(x, args[i]) {
				return
			}
		case cstr.ArgIs(opt, "noack"):
			if !group {
				x.W.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			r.noack = true
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	if streamsAt == 0 {
		x.W.Error(command.ErrSyntax)
		return
	}
	if group && r.group == nil {
		x.W.Error("ERR Missing GROUP option for XREADGROUP")
		return
	}
	if r.maxCount > 0 && r.count > r.maxCount {
		x.W.Error("ERR MAXCOUNT must be greater than or equal to COUNT")
		return
	}
	n := (len(args) - streamsAt) / 2
	r.keys = args[streamsAt : streamsAt+n]
	var idsBuf [4]stream.ID // room for a few keys: a read not blocking allocates nothing
	var newOnlyBuf, nowBuf [4]bool
	if n <= len(idsBuf) {
		r.ids, r.newOnly, r.now = idsBuf[:n], newOnlyBuf[:n], nowBuf[:n]
	} else {
		r.ids, r.newOnly, r.now = make([]stream.ID, n), make([]bool, n), make([]bool, n)
	}
	for i, key := range r.keys {
		s, ok := x.ReadStream(key)
		if !ok {
			return
		}
		if group && (s == nil || s.Group(r.group) == nil) {
			x.W.Error(noReadGroup(key, r.group))
			return
		}
		switch idArg := cstr.Bytes(args[streamsAt+n+i]); {
		case string(idArg) == "$":
			if group {
				x.W.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return
			}
			if s != nil {
				r.ids[i] = s.LastID
			}
		case string(idArg) == "+": // Redis 7.4: the last entry
			if group {
				x.W.Error("ERR The + ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The + ID would just return an empty result set.")
				return
			}
			if s != nil {
				if r.ids[i], ok = s.LastID.Prev(); !ok {
					x.W.Error("ERR the stream last element ID is 0-0")
					return
				}
			}
		case string(idArg) == ">":
			if !group {
				x.W.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return
			}
			r.newOnly[i] = true
		default:
			id, ok := streamID(x, args[streamsAt+n+i], 0, true)
			if !ok {
				return
			}
			r.ids[i] = id
		}
	}
	serve := r.now
	served := 0
	for i, key := range r.keys {
		e, found := x.LookupRead(key)
		if !found {
			continue
		}
		s := values.EntryStream(&e)
		if !r.newOnly[i] && group { // a consumer's history: always served
			serve[i] = true
		} else {
			after := r.ids[i]
			if group {
				after = s.Group(r.group).LastID
				r.ids[i] = after
			}
			top, ok := s.Edge(true)
			serve[i] = ok && after.Less(top) || group && r.claimable(s.Group(r.group), x.Now) > 0
		}
		if serve[i] {
			served++
		}
	}
	if served > 0 {
		if r.capped() {
			served = r.plan(x, serve)
		}
		if x.W.Proto < 3 {
			x.W.Array(served)
		} else {
			x.W.Map(served)
		}
		for i, key := range r.keys {
			if serve[i] {
				e, _ := x.DB.Lookup(key, x.Now, false)
				r.serveShare(x, values.EntryStream(&e), i)
			}
		}
		return
	}
	if timeout < 0 {
		x.W.NullArray()
		return
	}
	var deadline time.Time
	if timeout > 0 && timeout < math.MaxInt64/int64(time.Millisecond) { // longer: centuries, no timer
		deadline = time.Now().Add(time.Duration(timeout) * time.Millisecond)
	}
	// The waiter keeps its own copy of the request.
	w := &streamRead{
		group: bytes.Clone(r.group), consumer: bytes.Clone(r.consumer), noack: r.noack,
		count: r.count, keys: command.CloneArgs(r.keys), ids: slices.Clone(r.ids), newOnly: slices.Clone(r.newOnly),
		seen: make([]streamAdds, n), claim: r.claim, maxCount: r.maxCount, maxSize: r.maxSize,
	}
	for i, key := range w.keys {
		if e, found := x.DB.Lookup(key, x.Now, false); found && e.Type() == keyspace.TypeStream {
			w.seen[i] = streamAdds{values.EntryStream(&e), values.EntryStream(&e).Adds()}
		}
	}
	if w.count == 0 {
		w.count = 1000 // blocked without COUNT: a bound, as Redis's
	}
	x.Block(command.BlockRequest{
		Keys: w.keys, Type: keyspace.TypeStream, Deadline: deadline,
		Ready: w.ready,
		Serve: func(x *command.Ctx, key []byte) {
			for i, k := range w.keys {
				if bytes.Equal(k, key) {
					w.serveBlocked(x, i)
					return
				}
			}
		},
		TimedOut: (*resp.Writer).NullArray,
	})
}

// streamAdds is a stream object and its count of additions at some time.
type streamAdds struct {
	s    *stream.Stream
	adds uint64
}

// ready reports whether the key (e) can serve a blocked read: as in Redis,
// once an entry was added, it has entries past the client's ID (XREAD) or
// its group's last ID; an XREADGROUP is also served (with an error) when
// its key or group went.
func (r *streamRead) ready(e *keyspace.Entry, found bool) bool {
	if !found || e.Type() != keyspace.TypeStream {
		return r.group != nil
	}
	s := values.EntryStream(e)
	for i, k := range r.keys {
		if !bytes.Equal(k, e.Key()) {
			continue
		}
		added := r.seen[i] != streamAdds{s, s.Adds()}
		r.seen[i] = streamAdds{s, s.Adds()}
		after := r.ids[i]
		if r.group != nil {
			g := s.Group(r.group)
			if g == nil {
				return true
			}
			after = g.LastID
		}
		return added && after.Less(s.LastID)
	}
	return false
}

// noReadGroup is XREADGROUP's error for a missing key or group.
func noReadGroup(key, group []byte) string {
	return "NOGROUP No such key '" + cstr.String(key) + "' or consumer group '" + cstr.String(group) + "' in XREADGROUP with GROUP option"
}

// serveBlocked replies to a blocked read from key i, which became ready. An
// XREADGROUP whose key or group went gets the errors of the read run anew,
// as Redis 7.2+ replies (7.0 had wake-up texts of its own); ready wakes an
// XREAD only for a stream.
func (r *streamRead) serveBlocked(x *command.Ctx, i int) {
	e, found := x.DB.Lookup(r.keys[i], x.Now, false)
	if found && e.Type() != keyspace.TypeStream {
		x.W.Error(command.ErrWrongType)
		return
	}
	if r.group != nil {
		var g *stream.Group
		if found {
			g = values.EntryStream(&e).Group(r.group)
		}
		if g == nil {
			x.W.Error(noReadGroup(r.keys[i], r.group))
			return
		}
		r.ids[i] = g.LastID
	}
	if r.capped() {
		serve := make([]bool, len(r.keys))
		serve[i] = true
		r.plan(x, serve) // one stream, the first: never left out
	}
	if x.W.Proto < 3 {
		x.W.Array(1)
	} else {
		x.W.Map(1)
	}
	r.serveShare(x, values.EntryStream(&e), i)
}

// positiveOption parses MAXCOUNT's or MAXSIZE's value, replying the error
// and returning 0 unless it is a positive integer.
func positiveOption(x *command.Ctx, arg []byte, name string) int64 {
	v, ok := strnum.ParseInt(arg)
	if !ok || v <= 0 {
		x.W.Error("ERR " + name + " must be a positive integer")
		return 0
	}
	return v
}

// capped reports whether MAXCOUNT or MAXSIZE bound the read.
func (r *streamRead) capped() bool { return r.maxCount > 0 || r.maxSize > 0 }

// plan shares MAXCOUNT and MAXSIZE out among the streams serve marks, in
// the order the keys were given: each takes, within COUNT, what the
// streams before it left, and a stream left nothing is not served. MAXSIZE
// is soft: entries are taken while the bytes taken so far (field names and
// values) are below it, so the first entry always comes. It records each
// stream's share in limits and returns how many streams are served.
func (r *streamRead) plan(x *command.Ctx, serve []bool) int {
	r.limits = make([]int64, len(r.keys))
	var taken, size int64
	served := 0
	for i, key := range r.keys {
		if !serve[i] {
			continue
		}
		if r.maxCount > 0 && taken >= r.maxCount || r.maxSize > 0 && taken > 0 && size >= r.maxSize {
			serve[i] = false
			continue
		}
		e, _ := x.DB.Lookup(key, x.Now, false)
		n := int64(0)
		r.eachReplied(x, values.EntryStream(&e), i, func(bytes int64) bool {
			if r.count > 0 && n == r.count || r.maxCount > 0 && taken+n == r.maxCount ||
				r.maxSize > 0 && taken+n > 0 && size >= r.maxSize {
				return false
			}
			n++
			size += bytes
			return true
		})
		r.limits[i] = n
		taken += n
		served++
	}
	return served
}

// eachReplied calls fn with the size of each entry serve would reply for
// stream i, in order, until fn returns false. An entry XREADGROUP CLAIM
// would claim counts as no bytes: claims are taken longest idle first, an
// order this walk does not follow.
func (r *streamRead) eachReplied(x *command.Ctx, s *stream.Stream, i int, fn func(bytes int64) bool) {
	start, _ := r.ids[i].Next()
	if r.group != nil {
		g := s.Group(r.group)
		if !r.newOnly[i] {
			c := g.Consumer(r.consumer)
			if c == nil {
				return
			}
			pel := g.Pending()
			from, _ := g.FindPending(start)
			for j := from; j < len(pel); j++ {
				if !c.Owns(&pel[j]) {
					continue
				}
				var bytes int64
				s.Range(pel[j].ID, pel[j].ID, false, func(_ stream.ID, fields [][]byte) bool {
					bytes = entryBytes(fields)
					return false
				})
				if !fn(bytes) {
					return
				}
			}
			return
		}
		for range r.claimable(g, x.Now) {
			if !fn(0) {
				return
			}
		}
	}
	s.Range(start, stream.MaxID, false, func(_ stream.ID, fields [][]byte) bool { return fn(entryBytes(fields)) })
}

// entryBytes is what MAXSIZE counts of an entry: its field names and values.
func entryBytes(fields [][]byte) int64 {
	n := 0
	for _, f := range fields {
		n += len(f)
	}
	return int64(n)
}

// serveShare is serve within stream i's share of MAXCOUNT and MAXSIZE when
// the read has them.
func (r *streamRead) serveShare(x *command.Ctx, s *stream.Stream, i int) {
	if !r.capped() {
		r.serve(x, s, i)
		return
	}
	count := r.count
	r.count = r.limits[i] // 0 only when the stream has nothing to give
	r.serve(x, s, i)
	r.count = count
}

// serve replies key i's part of a read: the key and its entries past
// r.ids[i] (for XREADGROUP ">", delivering them to the consumer), or the
// consumer's pending entries from r.ids[i] on (history).
func (r *streamRead) serve(x *command.Ctx, s *stream.Stream, i int) {
	key := r.keys[i]
	if x.W.Proto < 3 {
		x.W.Array(2)
	}
	x.W.Bulk(key)
	start, _ := r.ids[i].Next()
	if r.group == nil {
		limit := r.count
		if limit == 0 {
			limit = -1
		}
		replyRange(x, s, start, stream.MaxID, false, limit)
		return
	}
	g := s.Group(r.group)
	c, created := g.CreateConsumer(r.consumer, x.Now)
	x.PropagateNone()
	if created {
		x.Notify(config.EventStream, "xgroup-createconsumer", key)
		if r.noack && x.Propagating() {
			x.AlsoPropagate(argXGROUP, argCREATECONSUMER, bytes.Clone(key), bytes.Clone(r.group), bytes.Clone(r.consumer))
		}
	}
	c.SeenTime = x.Now
	x.Dirty++
	if !r.newOnly[i] {
		replyHistory(x, s, g, c, start, r.count)
		return
	}
	claimed := r.claimIdle(x, s, g, c, key)
	n := 0
	if r.count == 0 || int64(len(claimed)) < r.count {
		s.Range(start, stream.MaxID, false, func(stream.ID, [][]byte) bool { n++; return int64(n+len(claimed)) != r.count })
	}
	x.W.Array(len(claimed) + n)
	r.writeClaimed(x, s, claimed)
	if n == 0 {
		return
	}
	written, advanced := 0, false
	s.Range(start, stream.MaxID, false, func(id stream.ID, fields [][]byte) bool {
		if g.LastID.Less(id) {
			s.Advance(g, id)
			advanced = true
		}
		writeStreamEntry(x.W, id, fields)
		if !r.noack {
			g.Deliver(id, c, x.Now)
			j, _ := g.FindPending(id)
			propagateClaim(x, key, r.group, g, &g.Pending()[j])
		}
		written++
		return written < n
	})
	if advanced && r.noack {
		propagateGroupID(x, key, r.group, g)
	}
}

// replyHistory replies the consumer's pending entries from start on (at
// most count; 0: all), counting a delivery of each that still exists; a
// deleted one is its ID and a null.
func replyHistory(x *command.Ctx, s *stream.Stream, g *stream.Group, c *stream.Consumer, start stream.ID, count int64) {
	pel := g.Pending()
	from, _ := g.FindPending(start)
	var picked []int
	for j := from; j < len(pel) && (count == 0 || int64(len(picked)) < count); j++ {
		if c.Owns(&pel[j]) {
			picked = append(picked, j)
		}
	}
	x.W.Array(len(picked))
	for _, j := range picked {
		p := &pel[j]
		if !replyEntry(x, s, p.ID) {
			x.W.Array(2)
			writeStreamID(x.W, p.ID)
			x.W.NullArray()
			continue
		}
		p.DeliveryTime = x.Now
		p.DeliveryCount++
	}
}

// replyEntry replies entry id if it exists.
func replyEntry(x *command.Ctx, s *stream.Stream, id stream.ID) bool {
	found := false
	s.Range(id, id, false, func(id stream.ID, fields [][]byte) bool {
		writeStreamEntry(x.W, id, fields)
		found = true
		return false
	})
	return found
}

func xinfoHelp(x *command.Ctx) {
	x.WriteHelp("XINFO", []string{
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.",
	})
}

// xinfoLookup finds XINFO's stream, replying "no such key" when missing.
func xinfoLookup(x *command.Ctx) *stream.Stream {
	s, ok := x.ReadStream(x.Args[2])
	if ok && s == nil {
		x.W.Error(command.ErrNoSuchKey)
	}
	return s
}

func errXinfoSyntax(sub []byte) string {
	return "ERR unknown subcommand or wrong number of arguments for '" + cstr.String(sub) + "'. Try XINFO HELP."
}

func xinfoConsumers(x *command.Ctx) {
	s := xinfoLookup(x)
	if s == nil {
		return
	}
	g := s.Group(x.Args[3])
	if g == nil {
		x.W.Error("NOGROUP No such consumer group '" + cstr.String(x.Args[3]) + "' for key name '" + cstr.String(x.Args[2]) + "'")
		return
	}
	x.W.Array(len(g.Consumers()))
	for _, c := range g.Consumers() {
		x.W.Map(3)
		x.W.BulkString("name")
		x.W.Bulk(c.Name)
		x.W.BulkString("pending")
		x.W.Int(int64(c.PendingCount()))
		x.W.BulkString("idle")
		x.W.Int(max(x.Now-c.SeenTime, 0))
	}
}

// writeGroupCounters writes a group's entries-read and lag (null when
// unknown).
func writeGroupCounters(w *resp.Writer, s *stream.Stream, g *stream.Group) {
	w.BulkString("entries-read")
	if g.EntriesRead != stream.InvalidEntriesRead {
		w.Int(g.EntriesRead)
	} else {
		w.Null()
	}
	w.BulkString("lag")
	if lag, ok := s.Lag(g); ok {
		w.Int(lag)
	} else {
		w.Null()
	}
}

func xinfoGroups(x *command.Ctx) {
	s := xinfoLookup(x)
	if s == nil {
		return
	}
	x.W.Array(len(s.Groups()))
	for _, g := range s.Groups() {
		x.W.Map(6)
		x.W.BulkString("name")
		x.W.Bulk(g.Name)
		x.W.BulkString("consumers")
		x.W.Int(int64(len(g.Consumers())))
		x.W.BulkString("pending")
		x.W.Int(int64(len(g.Pending())))
		x.W.BulkString("last-delivered-id")
		writeStreamID(x.W, g.LastID)
		writeGroupCounters(x.W, s, g)
	}
}

func xinfoStream(x *command.Ctx) {
	args := x.Args
	full, count := false, int64(10)
	if len(args) > 3 {
		if !cstr.ArgIs(args[3], "full") {
			x.W.Error(errXinfoSyntax(args[1]))
			return
		}
		full = true
		if len(args) > 4 {
			if len(args) != 6 || !cstr.ArgIs(args[4], "count") {
				x.W.Error(errXinfoSyntax(args[1]))
				return
			}
			var ok bool
			if count, ok = x.IntArgOrReply(args[5]); !ok {
				return
			}
			if count < 0 {
				count = 10
			}
		}
	}
	s := xinfoLookup(x)
	if s == nil {
		return
	}
	fields := 10
	if s.HasIDMP() {
		fields += 6
	}
	if full {
		fields--
	}
	x.W.Map(fields)
	x.W.BulkString("length")
	x.W.Int(int64(s.Length))
	x.W.BulkString("radix-tree-keys")
	x.W.Int(int64(s.Nodes()))
	x.W.BulkString("radix-tree-nodes")
	x.W.Int(int64(s.RadixTreeNodes()))
	x.W.BulkString("last-generated-id")
	writeStreamID(x.W, s.LastID)
	x.W.BulkString("max-deleted-entry-id")
	writeStreamID(x.W, s.MaxDeletedID)
	x.W.BulkString("entries-added")
	x.W.Int(int64(s.EntriesAdded))
	x.W.BulkString("recorded-first-entry-id")
	writeStreamID(x.W, s.FirstID)
	if s.HasIDMP() {
		writeIDMPInfo(x, s)
	}
	if !full {
		x.W.BulkString("groups")
		x.W.Int(int64(len(s.Groups())))
		for _, last := range []bool{false, true} {
			if last {
				x.W.BulkString("last-entry")
			} else {
				x.W.BulkString("first-entry")
			}
			if id, ok := s.Edge(last); ok {
				replyEntry(x, s, id)
			} else {
				x.W.Null()
			}
		}
		return
	}
	limit := count
	if limit == 0 {
		limit = -1
	}
	x.W.BulkString("entries")
	replyRange(x, s, stream.ID{}, stream.MaxID, false, limit)
	x.W.BulkString("groups")
	x.W.Array(len(s.Groups()))
	for _, g := range s.Groups() {
		x.W.Map(7 + min(g.NackedCount(), 1))
		x.W.BulkString("name")
		x.W.Bulk(g.Name)
		x.W.BulkString("last-delivered-id")
		writeStreamID(x.W, g.LastID)
		writeGroupCounters(x.W, s, g)
		pel := g.Pending()
		x.W.BulkString("pel-count")
		x.W.Int(int64(len(pel)))
		x.W.BulkString("pending")
		n := len(pel)
		if count > 0 {
			n = min(n, int(count))
		}
		x.W.Array(n)
		for _, p := range pel[:n] {
			x.W.Array(4)
			writeStreamID(x.W, p.ID)
			x.W.Bulk(g.OwnerName(&p))
			x.W.Int(p.DeliveryTime)
			x.W.Int(int64(p.DeliveryCount))
		}
		x.W.BulkString("consumers")
		x.W.Array(len(g.Consumers()))
		for _, c := range g.Consumers() {
			x.W.Map(4)
			x.W.BulkString("name")
			x.W.Bulk(c.Name)
			x.W.BulkString("seen-time")
			x.W.Int(c.SeenTime)
			x.W.BulkString("pel-count")
			x.W.Int(int64(c.PendingCount()))
			x.W.BulkString("pending")
			var own []int
			for j := range pel {
				if c.Owns(&pel[j]) && (count == 0 || int64(len(own)) < count) {
					own = append(own, j)
				}
			}
			x.W.Array(len(own))
			for _, j := range own {
				x.W.Array(3)
				writeStreamID(x.W, pel[j].ID)
				x.W.Int(pel[j].DeliveryTime)
				x.W.Int(int64(pel[j].DeliveryCount))
			}
		}
		// Redis 8.8's field, last as the XINFO STREAM page lists it; only
		// when the group has NACKed entries, so a stream that never saw
		// XNACK answers as Redis 7.4 does.
		if g.NackedCount() > 0 {
			x.W.BulkString("nacked-count")
			x.W.Int(int64(g.NackedCount()))
		}
	}
}

// Redis 8.2's XDELEX and XACKDEL: deletions with a policy for the consumer
// groups' references to the entries (their PELs, and for ACKED also the
// entries a group has not been delivered yet).
func registerStreamDeletes(bind binder) {
	bind("xdelex", func(x *command.Ctx) { xdelexCommand(x, false) })
	bind("xackdel", func(x *command.Ctx) { xdelexCommand(x, true) })
}

// refPolicy is the KEEPREF | DELREF | ACKED argument.
type refPolicy int

const (
	keepRef  refPolicy = iota // delete; PEL entries stay (XDEL's way)
	delRef                    // delete and drop every group's PEL entry
	ackedRef                  // delete only what no group still needs
)

// Per-ID replies of XDELEX and XACKDEL.
const (
	delexNoID       = -1 // no such entry (or, for XACKDEL, not pending in the group)
	delexDeleted    = 1
	delexReferenced = 2 // ACKED: kept, a group still needs it
)

// parseRefPolicy reads KEEPREF, DELREF or ACKED (any case).
func parseRefPolicy(arg []byte) refPolicy {
	switch {
	case cstr.ArgIs(arg, "delref"):
		return delRef
	case cstr.ArgIs(arg, "acked"):
		return ackedRef
	}
	return keepRef
}

// parseRefPolicyAndIDs reads [KEEPREF|DELREF|ACKED] IDS numids id... in any
// order, replying Redis's errors.
func parseRefPolicyAndIDs(x *command.Ctx, args [][]byte) (policy refPolicy, ids []stream.ID, ok bool) {
	policySet, idsSet := false, false
	var idArgs [][]byte
	for i := 0; i < len(args); i++ {
		a := args[i]
		isPolicy := cstr.ArgIs(a, "keepref") || cstr.ArgIs(a, "delref") || cstr.ArgIs(a, "acked")
		switch {
		case isPolicy && !policySet:
			policy, policySet = parseRefPolicy(a), true
		case cstr.ArgIs(a, "ids") && !idsSet && i+1 < len(args):
			n, isInt := strnum.ParseInt(args[i+1])
			if !isInt || n < 1 {
				x.W.Error("ERR Number of IDs must be a positive integer")
				return 0, nil, false
			}
			if n > int64(len(args)-i-2) {
				x.W.Error("ERR The `numids` parameter must match the number of arguments")
				return 0, nil, false
			}
			idArgs, idsSet = args[i+2:i+2+int(n)], true
			i += 1 + int(n)
		default:
			x.W.Error(command.ErrSyntax)
			return 0, nil, false
		}
	}
	if !idsSet {
		x.W.Error(command.ErrSyntax)
		return 0, nil, false
	}
	ids, ok = streamIDs(x, idArgs)
	return policy, ids, ok
}

// xdelexCommand is XDELEX, and XACKDEL when ack: each ID is first
// acknowledged in the group, and only one that was pending there goes on
// to be deleted.
func xdelexCommand(x *command.Ctx, ack bool) {
	key := x.Args[1]
	rest := x.Args[2:]
	if ack {
		rest = x.Args[3:]
	}
	policy, ids, ok := parseRefPolicyAndIDs(x, rest)
	if !ok {
		return
	}
	_, s, ok := x.WriteStream(key)
	if !ok {
		return
	}
	var g *stream.Group
	if s != nil && ack {
		g = s.Group(x.Args[2])
	}
	x.W.Array(len(ids))
	if s == nil || ack && g == nil {
		for range ids {
			x.W.Int(delexNoID)
		}
		return
	}
	deleted, changed, first := 0, 0, false
	for _, id := range ids {
		if ack {
			if !g.Ack(id) {
				x.W.Int(delexNoID)
				continue
			}
			changed++
		}
		switch policy {
		case ackedRef:
			if entryReferenced(s, id) {
				x.W.Int(delexReferenced)
				continue
			}
		case delRef:
			for _, other := range s.Groups() {
				if other.Ack(id) && !ack {
					changed++
				}
			}
		}
		if !deleteEntry(s, id, &first) {
			// XACKDEL reports an acknowledged entry that was already gone
			// as deleted, as Redis's own tests have it.
			if ack {
				x.W.Int(delexDeleted)
			} else {
				x.W.Int(delexNoID)
			}
			continue
		}
		deleted++
		x.W.Int(delexDeleted)
	}
	if deleted > 0 {
		entriesDeleted(x, key, s, first)
	}
	x.Dirty += deleted + changed
}

// entryReferenced reports whether a consumer group still needs entry id:
// it has not been delivered to every group yet, or it is pending in one.
func entryReferenced(s *stream.Stream, id stream.ID) bool {
	for _, g := range s.Groups() {
		if g.LastID.Less(id) {
			return true
		}
		if _, pending := g.FindPending(id); pending {
			return true
		}
	}
	return false
}

// trimWithRefs is XADD's and XTRIM's trim under their reference policy
// (https://redis.io/docs/latest/commands/xtrim/): KEEPREF trims as ever;
// DELREF also drops the trimmed entries from every group's PEL; ACKED
// trims only entries no group still needs. Without groups the policy
// changes nothing.
func trimWithRefs(s *stream.Stream, a *trimArgs) int64 {
	if a.refs == keepRef || len(s.Groups()) == 0 || s.Length == 0 {
		return s.Trim(a.trim)
	}
	if a.refs == delRef {
		oldFirst, _ := s.Edge(false)
		oldLast, _ := s.Edge(true)
		removed := s.Trim(a.trim)
		if removed > 0 {
			end := oldLast // emptied: every entry it had went
			if first, ok := s.Edge(false); ok {
				end, _ = first.Prev()
			}
			dropPending(s, oldFirst, end)
		}
		return removed
	}
	// ACKED: trim up to the first entry a group needs, as Redis does with
	// whole nodes (and all an approximate trim does); an exact trim then
	// goes on deleting the entries nobody needs until it reaches its
	// threshold.
	t := a.trim
	bound, bounded := ackedBound(s)
	if !t.ByMinID {
		t.ByMinID, t.MinID = true, stream.MaxID
		skip := int64(s.Length) - t.MaxLen
		if skip <= 0 {
			return 0
		}
		s.Range(stream.ID{}, stream.MaxID, false, func(id stream.ID, _ [][]byte) bool {
			skip--
			if skip == 0 {
				t.MinID, _ = id.Next()
			}
			return skip > 0
		})
	}
	target := t.MinID
	if bounded && bound.Less(t.MinID) {
		t.MinID = bound
	}
	removed := s.Trim(t)
	if a.trim.Approx || !t.MinID.Less(target) {
		return removed
	}
	var unneeded []stream.ID
	s.Range(t.MinID, stream.MaxID, false, func(id stream.ID, _ [][]byte) bool {
		if !id.Less(target) {
			return false
		}
		if !entryReferenced(s, id) {
			unneeded = append(unneeded, id)
		}
		return true
	})
	for _, id := range unneeded {
		if s.Delete(id) {
			removed++
		}
	}
	if len(unneeded) > 0 {
		if s.Length == 0 {
			s.FirstID = stream.ID{}
		} else {
			s.RefreshFirstID()
		}
	}
	return removed
}

// ackedBound is the first ID some group still needs: its first pending
// entry, or the first it has not been delivered.
func ackedBound(s *stream.Stream) (bound stream.ID, ok bool) {
	bound = stream.MaxID
	for _, g := range s.Groups() {
		if pel := g.Pending(); len(pel) > 0 && pel[0].ID.Less(bound) {
			bound = pel[0].ID
		}
		if next, more := g.LastID.Next(); more && next.Less(bound) {
			bound = next
		}
	}
	return bound, bound != stream.MaxID
}

// dropPending removes the entries from start to end from every group's PEL.
func dropPending(s *stream.Stream, start, end stream.ID) {
	for _, g := range s.Groups() {
		var ids []stream.ID
		for _, p := range g.Pending() {
			if end.Less(p.ID) {
				break
			}
			if !p.ID.Less(start) {
				ids = append(ids, p.ID)
			}
		}
		for _, id := range ids {
			g.Ack(id)
		}
	}
}

// writeIDMPInfo writes XINFO STREAM's idempotent-production fields (Redis
// 8.6; https://redis.io/docs/latest/commands/xinfo-stream/), given, as
// the page says, for a stream whose idempotency was used or configured: a
// stream that never saw IDMP answers as Redis 7.4 does.
func writeIDMPInfo(x *command.Ctx, s *stream.Stream) {
	st := s.IDMPInfo(x.Now)
	x.W.BulkString("idmp-duration")
	x.W.Int(st.Duration)
	x.W.BulkString("idmp-maxsize")
	x.W.Int(st.MaxSize)
	x.W.BulkString("pids-tracked")
	x.W.Int(int64(st.Producers))
	x.W.BulkString("iids-tracked")
	x.W.Int(int64(st.Tracked))
	x.W.BulkString("iids-added")
	x.W.Int(int64(st.Added))
	x.W.BulkString("iids-duplicates")
	x.W.Int(int64(st.Duplicates))
}

// xcfgsetCommand is XCFGSET key [IDMP-DURATION s] [IDMP-MAXSIZE n]
// (https://redis.io/docs/latest/commands/xcfgset/): at least one option,
// each in its documented range, on an existing stream; it clears every
// producer's iids.
func xcfgsetCommand(x *command.Ctx) {
	var duration, maxSize int64
	args := x.Args
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			x.W.Error(command.ErrSyntax)
			return
		}
		n, ok := x.IntArgOrReply(args[i+1])
		if !ok {
			return
		}
		switch {
		case cstr.ArgIs(args[i], "idmp-duration"):
			if n < 1 || n > stream.IDMPMaxDuration {
				x.W.Error("ERR IDMP-DURATION must be between 1 and 86400 seconds")
				return
			}
			duration = n
		case cstr.ArgIs(args[i], "idmp-maxsize"):
			if n < 1 || n > stream.IDMPMaxMaxSize {
				x.W.Error("ERR IDMP-MAXSIZE must be between 1 and 10000")
				return
			}
			maxSize = n
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	if duration == 0 && maxSize == 0 {
		x.W.Error("ERR at least one of IDMP-DURATION or IDMP-MAXSIZE must be specified")
		return
	}
	key := args[1]
	_, s, ok := x.WriteStream(key)
	if !ok {
		return
	}
	if s == nil {
		x.W.Error(command.ErrNoSuchKey)
		return
	}
	s.IDMPConfigure(duration, maxSize)
	x.DB.Modified(key)
	x.W.OK()
	x.Dirty++
}

// xidmprecordCommand is XIDMPRECORD key pid iid stream-id
// (https://redis.io/docs/latest/commands/xidmprecord/): what the AOF
// rewrite emits for each tracked iid; it records the pair for an existing
// entry, answering OK also when the pair already maps to that entry.
func xidmprecordCommand(x *command.Ctx) {
	key, pid, iid := x.Args[1], x.Args[2], x.Args[3]
	id, _, valid := stream.ParseID(x.Args[4], 0, true, false)
	if !valid {
		x.W.Error(errInvalidStreamID)
		return
	}
	if len(pid) == 0 || len(iid) == 0 {
		x.W.Error(errIDMPEmpty)
		return
	}
	_, s, ok := x.WriteStream(key)
	if !ok {
		return
	}
	switch {
	case s == nil:
		x.W.Error(command.ErrNoSuchKey)
		return
	case !s.Has(id):
		x.W.Error("ERR the stream ID does not refer to an existing entry")
		return
	}
	if have, found := s.IDMPFind(pid, iid); found {
		if have != id {
			x.W.Error("ERR the producer ID and idempotent ID already map to a different stream ID")
			return
		}
		x.W.OK()
		return
	}
	s.IDMPRecord(pid, iid, id, x.Now, false)
	x.DB.Modified(key)
	x.W.OK()
	x.Dirty++
}
