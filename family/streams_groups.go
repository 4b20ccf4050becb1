package family

import (
	"bytes"
	"math"
	"slices"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/stream"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

// Consumer groups of streams: XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM,
// what XREADGROUP does to a group (CLAIM), and how their changes to a
// group propagate. The stream commands are in streams.go.

func registerStreamGroups(bind binder) {
	bind("xack", xackCommand)
	bind("xpending", xpendingCommand)
	bind("xclaim", xclaimCommand)
	bind("xautoclaim", xautoclaimCommand)
	bind("xgroup|create", xgroupCommand)
	bind("xgroup|setid", xgroupCommand)
	bind("xgroup|destroy", xgroupCommand)
	bind("xgroup|createconsumer", xgroupCommand)
	bind("xgroup|delconsumer", xgroupCommand)
	bind("xgroup|help", xgroupHelp)
	bind("xnack", xnackCommand)
}

// Arguments of the commands stream reads propagate.
var (
	argXCLAIM         = []byte("XCLAIM")
	argXGROUP         = []byte("XGROUP")
	argSETID          = []byte("SETID")
	argENTRIESREAD    = []byte("ENTRIESREAD")
	argCREATECONSUMER = []byte("CREATECONSUMER")
	argTIME           = []byte("TIME")
	argRETRYCOUNT     = []byte("RETRYCOUNT")
	argFORCE          = []byte("FORCE")
	argJUSTID         = []byte("JUSTID")
	argLASTID         = []byte("LASTID")
	argZero           = []byte("0")
)

// propagateClaim propagates p's state as Redis does for every change to a
// pending entry: XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE
// JUSTID LASTID last.
func propagateClaim(x *command.Ctx, key, group []byte, g *stream.Group, p *stream.Pending) {
	if !x.Propagating() {
		return
	}
	// Copies: a stream read's arguments must not leak into x (escape
	// analysis would move a read's ID buffers to the heap).
	x.AlsoPropagate(argXCLAIM, bytes.Clone(key), bytes.Clone(group), bytes.Clone(g.OwnerName(p)), argZero, idArg(p.ID),
		argTIME, command.IntArg(p.DeliveryTime), argRETRYCOUNT, command.IntArg(int64(p.DeliveryCount)),
		argFORCE, argJUSTID, argLASTID, idArg(g.LastID))
}

// propagateGroupID propagates a group's last ID and entries-read as XGROUP
// SETID.
func propagateGroupID(x *command.Ctx, key, group []byte, g *stream.Group) {
	if x.Propagating() {
		x.AlsoPropagate(argXGROUP, argSETID, bytes.Clone(key), bytes.Clone(group), idArg(g.LastID), argENTRIESREAD, command.IntArg(g.EntriesRead))
	}
}

func xgroupHelp(x *command.Ctx) {
	x.WriteHelp("XGROUP", []string{
		"CREATE <key> <groupname> <id|$> [option]",
		"    Create a new consumer group. Options are:",
		"    * MKSTREAM",
		"      Create the empty stream if it does not exist.",
		"    * ENTRIESREAD entries_read",
		"      Set the group's entries_read counter (internal use).",
		"CREATECONSUMER <key> <groupname> <consumer>",
		"    Create a new consumer in the specified group.",
		"DELCONSUMER <key> <groupname> <consumer>",
		"    Remove the specified consumer.",
		"DESTROY <key> <groupname>",
		"    Remove the specified group.",
		"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
		"    Set the current group ID and entries_read counter.",
	})
}

// parseEntriesRead parses ENTRIESREAD's value.
func parseEntriesRead(x *command.Ctx, arg []byte) (int64, bool) {
	n, ok := x.IntArgOrReply(arg)
	if ok && n < 0 && n != stream.InvalidEntriesRead {
		x.W.Error(errEntriesRead)
		return 0, false
	}
	return n, ok
}

// xgroupCommand runs the XGROUP subcommands but HELP, in Redis's order of
// checks: CREATE's options, the key, the group.
func xgroupCommand(x *command.Ctx) {
	args := x.Args
	sub := cstr.String(args[1])
	create := cstr.ArgIs(args[1], "create")
	mkstream, entriesRead := false, int64(stream.InvalidEntriesRead)
	if create {
		for i := 5; i < len(args); {
			switch {
			case cstr.ArgIs(args[i], "mkstream"):
				mkstream = true
				i++
			case cstr.ArgIs(args[i], "entriesread") && i+1 < len(args):
				n, ok := parseEntriesRead(x, args[i+1])
				if !ok {
					return
				}
				entriesRead = n
				i += 2
			default:
				x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + sub + "'. Try XGROUP HELP.")
				return
			}
		}
	}
	key, name := args[2], args[3]
	e, s, ok := x.WriteStream(key)
	if !ok {
		return
	}
	var g *stream.Group
	if !mkstream {
		if s == nil {
			x.W.Error(errNoKeyXgroup)
			return
		}
		g = s.Group(name)
		if g == nil && !create && !cstr.ArgIs(args[1], "destroy") {
			x.W.Error("NOGROUP No such consumer group '" + cstr.String(name) + "' for key name '" + cstr.String(key) + "'")
			return
		}
	}
	switch {
	case create && len(args) <= 8:
		var id stream.ID
		if string(cstr.Bytes(args[4])) == "$" {
			if s != nil {
				id = s.LastID
			}
		} else if id, ok = streamID(x, args[4], 0, true); !ok {
			return
		}
		if s == nil {
			s = values.CreateStream(x.Env(), &e, key)
		}
		if _, ok := s.CreateGroup(name, id, entriesRead); !ok {
			x.W.Error("BUSYGROUP Consumer Group name already exists")
			return
		}
		x.DB.Modified(key)
		x.W.OK()
		x.Dirty++
		x.Notify(config.EventStream, "xgroup-create", key)
	case cstr.ArgIs(args[1], "setid") && (len(args) == 5 || len(args) == 7):
		id := s.LastID
		if string(cstr.Bytes(args[4])) != "$" {
			if id, ok = streamID(x, args[4], 0, false); !ok {
				return
			}
		}
		if len(args) == 7 {
			if !cstr.ArgIs(args[5], "entriesread") {
				x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + sub + "'. Try XGROUP HELP.")
				return
			}
			if entriesRead, ok = parseEntriesRead(x, args[6]); !ok {
				return
			}
		}
		g.LastID, g.EntriesRead = id, entriesRead
		x.DB.Modified(key)
		x.W.OK()
		x.Dirty++
		x.Notify(config.EventStream, "xgroup-setid", key)
	case cstr.ArgIs(args[1], "destroy"):
		if g == nil {
			x.W.Int(0)
			return
		}
		s.DestroyGroup(name)
		x.DB.Modified(key)
		x.W.Int(1)
		x.Dirty++
		x.Notify(config.EventStream, "xgroup-destroy", key)
	case cstr.ArgIs(args[1], "createconsumer"):
		_, created := g.CreateConsumer(args[4], x.Now)
		if created {
			x.Dirty++
			x.Notify(config.EventStream, "xgroup-createconsumer", key)
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
	case cstr.ArgIs(args[1], "delconsumer"):
		pending := g.DeleteConsumer(args[4])
		if pending < 0 {
			x.W.Int(0)
			return
		}
		x.Dirty++
		x.Notify(config.EventStream, "xgroup-delconsumer", key)
		x.W.Int(int64(pending))
	default:
		x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + sub + "'. Try XGROUP HELP.")
	}
}

// lookupGroup finds key's group for XACK, XPENDING and the claims (which
// Redis looks up as reads): nil when the key or group is missing; ok=false
// after WRONGTYPE.
func lookupGroup(x *command.Ctx, key, name []byte) (s *stream.Stream, g *stream.Group, ok bool) {
	s, ok = x.ReadStream(key)
	if s != nil {
		g = s.Group(name)
	}
	return s, g, ok
}

// existingGroup is lookupGroup for a group that must exist: ok=false after
// replying WRONGTYPE or NOGROUP.
func existingGroup(x *command.Ctx, key, name []byte) (*stream.Stream, *stream.Group, bool) {
	s, g, ok := lookupGroup(x, key, name)
	if ok && g == nil {
		x.W.Error(errNoGroup(key, name))
		return nil, nil, false
	}
	return s, g, ok
}

// streamIDs parses entry IDs given in full (XDEL, XACK), replying with the
// error for the first that is not one.
func streamIDs(x *command.Ctx, args [][]byte) ([]stream.ID, bool) {
	return appendStreamIDs(x, make([]stream.ID, 0, len(args)), args)
}

// appendStreamIDs is streamIDs appending to ids (a caller's stack buffer).
func appendStreamIDs(x *command.Ctx, ids []stream.ID, args [][]byte) ([]stream.ID, bool) {
	for _, arg := range args {
		id, ok := streamID(x, arg, 0, true)
		if !ok {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

func errNoGroup(key, group []byte) string {
	return "NOGROUP No such key '" + cstr.String(key) + "' or consumer group '" + cstr.String(group) + "'"
}

// xnackCommand is XNACK key group SILENT|FAIL|FATAL IDS numids id ...
// [RETRYCOUNT count] [FORCE] (Redis 8.8, https://redis.io/docs/latest/commands/xnack/):
// each given entry pending in the group becomes pending for no consumer,
// delivered at time 0 (any claim takes it) and last in the group's NACKed
// zone, its delivery count one less (SILENT), kept (FAIL), LLONG_MAX
// (FATAL) or RETRYCOUNT's; with FORCE an entry of the stream not pending
// is added so. It replies how many it released, an ID given twice counted
// once, and propagates as sent (what it does follows from the data).
func xnackCommand(x *command.Ctx) {
	var fatal, silent bool
	switch a := x.Args[3]; {
	case cstr.ArgIs(a, "silent"):
		silent = true
	case cstr.ArgIs(a, "fail"):
	case cstr.ArgIs(a, "fatal"):
		fatal = true
	default:
		x.W.Error(command.ErrSyntax)
		return
	}
	if !cstr.ArgIs(x.Args[4], "ids") {
		x.W.Error(command.ErrSyntax)
		return
	}
	n, isInt := strnum.ParseInt(x.Args[5])
	if !isInt || n < 1 {
		x.W.Error("ERR Number of IDs must be a positive integer")
		return
	}
	if n > int64(len(x.Args)-6) {
		x.W.Error("ERR The `numids` parameter must match the number of arguments")
		return
	}
	retry, force := int64(-1), false
	for rest, i := x.Args[6+n:], 0; i < len(rest); i++ {
		switch a := rest[i]; {
		case cstr.ArgIs(a, "retrycount") && retry < 0 && i+1 < len(rest):
			i++
			if v, ok := strnum.ParseInt(rest[i]); ok && v >= 0 {
				retry = v
				continue
			}
			x.W.Error("ERR Invalid RETRYCOUNT option argument for XNACK")
			return
		case cstr.ArgIs(a, "force") && !force:
			force = true
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	var local [16]stream.ID // most calls name a few IDs: no allocation
	ids, ok := appendStreamIDs(x, local[:0], x.Args[6:6+n])
	if !ok {
		return
	}
	s, g, ok := existingGroup(x, x.Args[1], x.Args[2])
	if !ok {
		return
	}
	released := 0
	for k, id := range ids {
		if slices.Contains(ids[:k], id) {
			continue
		}
		i, pending := g.FindPending(id)
		var count uint64
		switch {
		case retry >= 0:
			count = uint64(retry)
		case fatal:
			count = math.MaxInt64
		case pending && silent:
			count = g.Pending()[i].DeliveryCount
			count -= min(count, 1)
		case pending:
			count = g.Pending()[i].DeliveryCount
		}
		switch {
		case pending:
			g.Nack(i, count)
		case force && s.Has(id):
			g.AddNacked(id, count)
		default:
			continue
		}
		released++
	}
	x.Dirty += released
	x.W.Int(int64(released))
}

func xackCommand(x *command.Ctx) {
	_, g, ok := lookupGroup(x, x.Args[1], x.Args[2])
	if !ok {
		return
	}
	if g == nil {
		x.W.Int(0)
		return
	}
	ids, ok := streamIDs(x, x.Args[3:])
	if !ok {
		return
	}
	acked := 0
	for _, id := range ids {
		if g.Ack(id) {
			acked++
		}
	}
	x.Dirty += acked
	x.W.Int(int64(acked))
}

func xpendingCommand(x *command.Ctx) {
	args := x.Args
	summary := len(args) == 3
	if !summary && (len(args) < 6 || len(args) > 9) {
		x.W.Error(command.ErrSyntax)
		return
	}
	var start, end stream.ID
	var count, minIdle int64
	var consumer []byte
	if !summary {
		at := 3
		ok := true
		if cstr.ArgIs(args[3], "idle") {
			if minIdle, ok = x.IntArgOrReply(args[4]); !ok {
				return
			}
			if len(args) < 8 {
				x.W.Error(command.ErrSyntax)
				return
			}
			at += 2
		}
		if count, ok = x.IntArgOrReply(args[at+2]); !ok {
			return
		}
		count = max(count, 0)
		if start, ok = intervalStart(x, args[at]); !ok {
			return
		}
		if end, ok = intervalEnd(x, args[at+1]); !ok {
			return
		}
		if at+3 < len(args) {
			consumer = args[at+3]
		}
	}
	_, g, ok := existingGroup(x, args[1], args[2])
	if !ok {
		return
	}
	pel := g.Pending()
	if summary {
		x.W.Array(4)
		x.W.Int(int64(len(pel)))
		if len(pel) == 0 {
			x.W.Null()
			x.W.Null()
			x.W.NullArray()
			return
		}
		writeStreamID(x.W, pel[0].ID)
		writeStreamID(x.W, pel[len(pel)-1].ID)
		n := 0
		for _, c := range g.Consumers() {
			if c.PendingCount() > 0 {
				n++
			}
		}
		x.W.Array(n)
		for _, c := range g.Consumers() {
			if c.PendingCount() > 0 {
				x.W.Array(2)
				x.W.Bulk(c.Name)
				x.W.BulkInt(int64(c.PendingCount()))
			}
		}
		return
	}
	var only *stream.Consumer
	if consumer != nil {
		if only = g.Consumer(consumer); only == nil {
			x.W.Array(0)
			return
		}
	}
	var picked []int
	from, _ := g.FindPending(start)
	for j := from; j < len(pel) && int64(len(picked)) < count && !end.Less(pel[j].ID); j++ {
		p := &pel[j]
		if only != nil && !only.Owns(p) || minIdle != 0 && x.Now-p.DeliveryTime < minIdle {
			continue
		}
		picked = append(picked, j)
	}
	x.W.Array(len(picked))
	for _, j := range picked {
		p := &pel[j]
		x.W.Array(4)
		writeStreamID(x.W, p.ID)
		x.W.Bulk(g.OwnerName(p))
		if p.Nacked() {
			x.W.Int(-1) // delivered at time 0: no idle time, as the XNACK page shows
		} else {
			x.W.Int(max(x.Now-p.DeliveryTime, 0))
		}
		x.W.Int(int64(p.DeliveryCount))
	}
}

// claimer returns the consumer name a claim moves entries to, looked up
// (or created) once and seen now, as XCLAIM and XAUTOCLAIM do.
func claimer(g *stream.Group, c **stream.Consumer, x *command.Ctx, name, key []byte) *stream.Consumer {
	if *c == nil {
		var created bool
		*c, created = g.CreateConsumer(name, x.Now)
		if created {
			x.Notify(config.EventStream, "xgroup-createconsumer", key)
		}
		(*c).SeenTime = x.Now
	}
	return *c
}

func xclaimCommand(x *command.Ctx) {
	args := x.Args
	key, group := args[1], args[2]
	s, g, ok := existingGroup(x, key, group)
	if !ok {
		return
	}
	minIdle, ok := strnum.ParseInt(args[4])
	if !ok {
		x.W.Error("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	j := 5
	for ; j < len(args); j++ {
		if _, _, ok := stream.ParseID(args[j], 0, true, false); !ok {
			break
		}
	}
	ids := args[5:j]
	deliveryTime, retryCount := int64(-1), int64(-1)
	force, justID := false, false
	lastID := stream.ID{}
	for ; j < len(args); j++ {
		more := j+1 < len(args)
		opt := args[j]
		switch {
		case cstr.ArgIs(opt, "force"):
			force = true
		case cstr.ArgIs(opt, "justid"):
			justID = true
		case cstr.ArgIs(opt, "idle") && more:
			j++
			idle, ok := strnum.ParseInt(args[j])
			if !ok {
				x.W.Error("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			deliveryTime = x.Now - idle
		case cstr.ArgIs(opt, "time") && more:
			j++
			if deliveryTime, ok = strnum.ParseInt(args[j]); !ok {
				x.W.Error("ERR Invalid TIME option argument for XCLAIM")
				return
			}
		case cstr.ArgIs(opt, "retrycount") && more:
			j++
			if retryCount, ok = strnum.ParseInt(args[j]); !ok {
				x.W.Error("ERR Invalid RETRYCOUNT option argument for XCLAIM")
				return
			}
		case cstr.ArgIs(opt, "lastid") && more:
			j++
			if lastID, ok = streamID(x, args[j], 0, true); !ok {
				return
			}
		default:
			x.W.Error("ERR Unrecognized XCLAIM option '" + cstr.String(opt) + "'")
			return
		}
	}
	if deliveryTime == -1 || deliveryTime < 0 || deliveryTime > x.Now {
		deliveryTime = x.Now
	}
	propagateLastID := false
	if g.LastID.Less(lastID) {
		g.LastID = lastID
		propagateLastID = true
	}
	x.PropagateNone()
	var c *stream.Consumer
	claimed := 0
	var body resp.Writer
	body.Proto = x.W.Proto
	for _, arg := range ids {
		id, _, _ := stream.ParseID(arg, 0, true, false)
		at, pending := g.FindPending(id)
		if !s.Has(id) {
			if pending {
				propagateClaim(x, key, group, g, &g.Pending()[at])
				propagateLastID = false
				x.Dirty++
				g.RemovePending(at)
			}
			continue
		}
		if force && !pending {
			at = g.AddPending(id, claimer(g, &c, x, args[3], key), x.Now, 1)
			pending = true
		}
		if !pending {
			continue
		}
		p := &g.Pending()[at]
		if minIdle > 0 && x.Now-p.DeliveryTime < minIdle {
			continue
		}
		g.Assign(at, claimer(g, &c, x, args[3], key))
		p.DeliveryTime = deliveryTime
		if retryCount >= 0 {
			p.DeliveryCount = uint64(retryCount)
		} else if !justID {
			p.DeliveryCount++
		}
		if justID {
			writeStreamID(&body, id)
		} else {
			w := x.W
			x.W = &body
			replyEntry(x, s, id)
			x.W = w
		}
		claimed++
		propagateClaim(x, key, group, g, p)
		propagateLastID = false
		x.Dirty++
	}
	if propagateLastID {
		propagateGroupID(x, key, group, g)
		x.Dirty++
	}
	x.W.Array(claimed)
	x.W.B = append(x.W.B, body.B...)
}

func xautoclaimCommand(x *command.Ctx) {
	args := x.Args
	key, group := args[1], args[2]
	minIdle, ok := strnum.ParseInt(args[4])
	if !ok {
		x.W.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ok := intervalStart(x, args[5])
	if !ok {
		return
	}
	count, justID := int64(100), false
	for j := 6; j < len(args); j++ {
		switch {
		case cstr.ArgIs(args[j], "count") && j+1 < len(args):
			j++
			n, ok := strnum.ParseInt(args[j])
			if !ok || n < 1 || n > math.MaxInt64/16 {
				x.W.Error("ERR COUNT must be > 0")
				return
			}
			count = n
		case cstr.ArgIs(args[j], "justid"):
			justID = true
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	s, g, ok := existingGroup(x, key, group)
	if !ok {
		return
	}
	x.PropagateNone()
	var c *stream.Consumer
	var body resp.Writer
	body.Proto = x.W.Proto
	var deleted []stream.ID
	claimed := 0
	attempts := count * 10
	j, _ := g.FindPending(start)
	for ; attempts > 0 && count > 0 && j < len(g.Pending()); attempts-- {
		p := &g.Pending()[j]
		if !s.Has(p.ID) {
			propagateClaim(x, key, group, g, p)
			x.Dirty++
			deleted = append(deleted, p.ID)
			g.RemovePending(j)
			count--
			continue
		}
		if minIdle > 0 && x.Now-p.DeliveryTime < minIdle {
			j++
			continue
		}
		g.Assign(j, claimer(g, &c, x, args[3], key))
		p.DeliveryTime = x.Now
		if !justID {
			p.DeliveryCount++
		}
		if justID {
			writeStreamID(&body, p.ID)
		} else {
			w := x.W
			x.W = &body
			replyEntry(x, s, p.ID)
			x.W = w
		}
		claimed++
		count--
		propagateClaim(x, key, group, g, p)
		x.Dirty++
		j++
	}
	var cursor stream.ID
	if j < len(g.Pending()) {
		cursor = g.Pending()[j].ID
	}
	x.W.Array(3)
	writeStreamID(x.W, cursor)
	x.W.Array(claimed)
	x.W.B = append(x.W.B, body.B...)
	x.W.Array(len(deleted))
	for _, id := range deleted {
		writeStreamID(x.W, id)
	}
}

// XREADGROUP CLAIM min-idle-time (https://redis.io/docs/latest/commands/xreadgroup/):
// with ">", the group's entries pending for at least min-idle-time are
// claimed for the reading consumer first, longest idle first, each
// replied with its idle time and delivery count after its fields; then new
// entries, within COUNT. A blocked read is served when entries arrive (an
// entry becoming idle while it waits does not wake it).

// claimedEntry is an entry claimed by XREADGROUP CLAIM, with what its reply
// tells.
type claimedEntry struct {
	id        stream.ID
	idle      int64
	delivered uint64
}

func (r *streamRead) parseClaim(x *command.Ctx, arg []byte) bool {
	ms, ok := strnum.ParseInt(arg)
	if !ok {
		x.W.Error("ERR Invalid min-idle-time argument for XREADGROUP")
		return false
	}
	r.claim = max(ms, 0) // a negative idle time claims everything, as XCLAIM's
	return true
}

// claimable counts g's entries pending for at least the CLAIM idle time.
func (r *streamRead) claimable(g *stream.Group, now int64) int {
	if r.claim < 0 || g == nil {
		return 0
	}
	n := 0
	for _, p := range g.Pending() {
		if now-p.DeliveryTime >= r.claim {
			n++
		}
	}
	return n
}

// claimIdle claims for c, within COUNT, the entries of g idle for at least
// the CLAIM time: those XNACK released first, in the order it did (Redis
// 8.8), then the longest idle, then by ID. Entries deleted from the
// stream leave the PEL, as XAUTOCLAIM's do. Claims propagate as XCLAIM.
func (r *streamRead) claimIdle(x *command.Ctx, s *stream.Stream, g *stream.Group, c *stream.Consumer, key []byte) []claimedEntry {
	if r.claimable(g, x.Now) == 0 {
		return nil
	}
	var idle []stream.Pending
	for _, p := range g.Pending() {
		if x.Now-p.DeliveryTime >= r.claim {
			idle = append(idle, p)
		}
	}
	slices.SortFunc(idle, func(a, b stream.Pending) int { return stream.ClaimOrder(&a, &b) })
	var claimed []claimedEntry
	for _, p := range idle {
		if r.count > 0 && int64(len(claimed)) >= r.count {
			break
		}
		i, _ := g.FindPending(p.ID)
		if !s.Has(p.ID) {
			g.RemovePending(i)
			x.Dirty++
			continue
		}
		claimed = append(claimed, claimedEntry{id: p.ID, idle: x.Now - p.DeliveryTime, delivered: p.DeliveryCount})
		g.Assign(i, c)
		pe := &g.Pending()[i]
		pe.DeliveryTime, pe.DeliveryCount = x.Now, pe.DeliveryCount+1
		propagateClaim(x, key, r.group, g, pe)
		x.Dirty++
	}
	return claimed
}

// writeClaimed writes the claimed entries: ID, fields, idle ms, deliveries.
func (r *streamRead) writeClaimed(x *command.Ctx, s *stream.Stream, claimed []claimedEntry) {
	for _, e := range claimed {
		x.W.Array(4)
		s.Range(e.id, e.id, false, func(id stream.ID, fields [][]byte) bool {
			writeStreamID(x.W, id)
			x.W.Array(len(fields))
			for _, f := range fields {
				x.W.Bulk(f)
			}
			return false
		})
		x.W.Int(e.idle)
		x.W.Int(int64(e.delivered))
	}
}
