package server

import (
	"errors"
	"strconv"
	"strings"

	"github.com/keyhive/keyhive/cluster"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
)

// The cluster commands: CLUSTER's subcommands, ASKING, READONLY and
// READWRITE. Each refuses when the server is no cluster node.

func init() {
	bind("asking", askingCommand)
	bind("readonly", readonlyCommand)
	bind("readwrite", readwriteCommand)
	for name, run := range map[string]func(x *Ctx, node *cluster.State){
		"addslots": addslotsCommand, "addslotsrange": addslotsrangeCommand,
		"bumpepoch": bumpepochCommand, "count-failure-reports": countFailureReportsCommand,
		"countkeysinslot": countkeysinslotCommand, "delslots": addslotsCommand,
		"delslotsrange": addslotsrangeCommand, "failover": clusterFailoverCommand, "flushslots": flushslotsCommand,
		"forget": forgetCommand, "getkeysinslot": getkeysinslotCommand,
		"help": clusterHelp, "info": clusterInfoCommand, "keyslot": keyslotCommand,
		"links": linksCommand, "meet": meetCommand, "myid": myidCommand,
		"myshardid": myshardidCommand, "nodes": nodesCommand, "replicas": replicasCommand,
		"replicate": replicateCommand, "reset": clusterResetCommand, "slaves": replicasCommand,
		"saveconfig": saveconfigCommand, "set-config-epoch": setConfigEpochCommand,
		"setslot": setslotCommand, "shards": shardsCommand, "slots": slotsCommand,
		"slot-stats": slotStatsCommand,
	} {
		bindSub("cluster", name, clusterOnly(run))
	}
}

// clusterOnly runs a CLUSTER subcommand on a cluster node; elsewhere it is
// refused.
func clusterOnly(run func(x *Ctx, node *cluster.State)) func(x *Ctx) {
	return func(x *Ctx) {
		if x.s.cluster == nil {
			x.W.Error(errClusterDisable)
			return
		}
		run(x, x.s.cluster)
	}
}

// replyClusterError writes a node's refusal with Redis's "ERR " prefix.
func replyClusterError(x *Ctx, err error) {
	if err == nil {
		x.W.OK()
		return
	}
	var ce cluster.Error
	if errors.As(err, &ce) {
		x.W.Error("ERR " + string(ce))
		return
	}
	x.W.Error("ERR " + err.Error())
}

func askingCommand(x *Ctx) {
	if x.s.cluster == nil {
		x.W.Error(errClusterDisable)
		return
	}
	x.c.clusterConn.asking = true
	x.W.OK()
}

func readonlyCommand(x *Ctx) {
	if x.s.cluster == nil {
		x.W.Error(errClusterDisable)
		return
	}
	x.c.clusterConn.readonly = true
	x.W.OK()
}

func readwriteCommand(x *Ctx) {
	if x.s.cluster == nil {
		x.W.Error(errClusterDisable)
		return
	}
	x.c.clusterConn.readonly = false
	x.W.OK()
}

func clusterHelp(x *Ctx, _ *cluster.State) {
	writeHelp(x, "CLUSTER", []string{
		"ADDSLOTS <slot> [<slot> ...]", "    Assign slots to this node.",
		"ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]", "    Assign ranges of slots to this node.",
		"BUMPEPOCH", "    Take a new config epoch unless this node's is already the highest.",
		"COUNT-FAILURE-REPORTS <node-id>", "    Count the live reports that a node is failing.",
		"COUNTKEYSINSLOT <slot>", "    Count the keys of a slot.",
		"DELSLOTS <slot> [<slot> ...]", "    Unassign slots.",
		"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]", "    Unassign ranges of slots.",
		"FAILOVER [FORCE|TAKEOVER]", "    Promote this replica: with its master's agreement, without it (FORCE), or without an election (TAKEOVER).",
		"FLUSHSLOTS", "    Unassign every slot of this node.",
		"FORGET <node-id>", "    Remove a node from this node's table for a minute.",
		"GETKEYSINSLOT <slot> <count>", "    List up to <count> keys of a slot.",
		"INFO", "    The cluster's state from this node's view.",
		"KEYSLOT <key>", "    The slot of a key.",
		"LINKS", "    This node's cluster bus links.",
		"MEET <ip> <port> [<bus-port>]", "    Join the cluster of the node at this address.",
		"MYID", "    This node's name.",
		"MYSHARDID", "    This node's shard id.",
		"NODES", "    Every known node, in nodes.conf's format.",
		"REPLICAS <node-id>", "    The replicas of a master, in CLUSTER NODES's format.",
		"REPLICATE <node-id>", "    Become a replica of a master.",
		"RESET [HARD|SOFT]", "    Forget the other nodes and the slots; HARD also takes a new name.",
		"SAVECONFIG", "    Write the cluster config file now.",
		"SET-CONFIG-EPOCH <epoch>", "    Set a fresh node's config epoch.",
		"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)", "    Change a slot's state for a resharding.",
		"SHARDS", "    Each shard's slot ranges and nodes.",
		"SLAVES <node-id>", "    The replicas of a master (an alias of REPLICAS).",
		"SLOT-STATS (SLOTSRANGE <start slot> <end slot>|ORDERBY <metric> [LIMIT <limit>] [ASC|DESC])", "    Usage statistics of this shard's slots: a range, or sorted by a metric.",
		"SLOTS", "    Slot ranges and the nodes serving them.",
	})
}

// errClusterSyntax is Redis's reply to a CLUSTER subcommand with the wrong
// number of arguments where its arity allows them.
func errClusterSyntax(sub []byte) string {
	return "ERR unknown subcommand or wrong number of arguments for '" + cstr.String(sub) + "'. Try CLUSTER HELP."
}

// slotArg parses a slot number, replying Redis's error when it is none.
func slotArg(x *Ctx, arg []byte) (int, bool) {
	v, ok := strnum.ParseInt(arg)
	if !ok || v < 0 || v >= keyspace.SlotCount {
		x.W.Error("ERR Invalid or out of range slot")
		return 0, false
	}
	return int(v), true
}

func addslotsCommand(x *Ctx, node *cluster.State) {
	var ranges [][2]int
	for _, a := range x.Args[2:] {
		slot, ok := slotArg(x, a)
		if !ok {
			return
		}
		ranges = append(ranges, [2]int{slot, slot})
	}
	replyClusterError(x, node.AddSlots(ranges, x.cmd.Name == "cluster|delslots"))
}

func addslotsrangeCommand(x *Ctx, node *cluster.State) {
	if len(x.Args)%2 == 1 {
		x.W.Error(errArity(x.cmd.Name))
		return
	}
	var ranges [][2]int
	for i := 2; i < len(x.Args); i += 2 {
		start, ok := slotArg(x, x.Args[i])
		if !ok {
			return
		}
		end, ok := slotArg(x, x.Args[i+1])
		if !ok {
			return
		}
		if start > end {
			x.W.Error("ERR start slot number " + strconv.Itoa(start) + " is greater than end slot number " + strconv.Itoa(end))
			return
		}
		ranges = append(ranges, [2]int{start, end})
	}
	replyClusterError(x, node.AddSlots(ranges, x.cmd.Name == "cluster|delslotsrange"))
}

func bumpepochCommand(x *Ctx, node *cluster.State) {
	bumped, epoch := node.BumpEpoch()
	word := "STILL"
	if bumped {
		word = "BUMPED"
	}
	x.W.Simple(word + " " + strconv.FormatUint(epoch, 10))
}

func countFailureReportsCommand(x *Ctx, node *cluster.State) {
	n, err := node.CountFailureReports(string(x.Args[2]))
	if err != nil {
		replyClusterError(x, err)
		return
	}
	x.W.Int(int64(n))
}

func countkeysinslotCommand(x *Ctx, _ *cluster.State) {
	slot, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	if slot < 0 || slot >= keyspace.SlotCount {
		x.W.Error("ERR Invalid slot")
		return
	}
	x.W.Int(int64(x.s.ks.DB(0).CountInSlot(int(slot))))
}

func getkeysinslotCommand(x *Ctx, _ *cluster.State) {
	slot, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	limit, ok := strnum.ParseInt(x.Args[3])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	if slot < 0 || slot >= keyspace.SlotCount || limit < 0 {
		x.W.Error("ERR Invalid slot or number of keys")
		return
	}
	db := x.s.ks.DB(0)
	var keys [][]byte
	db.KeysInSlot(int(slot), int(min(limit, int64(db.Len()))), func(k []byte) { keys = append(keys, append([]byte(nil), k...)) })
	x.W.Array(len(keys))
	for _, k := range keys {
		x.W.Bulk(k)
	}
}

func flushslotsCommand(x *Ctx, node *cluster.State) {
	if x.s.ks.DB(0).Len() != 0 {
		x.W.Error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.")
		return
	}
	node.FlushSlots()
	x.W.OK()
}

func forgetCommand(x *Ctx, node *cluster.State) {
	replyClusterError(x, node.Forget(string(x.Args[2])))
}

func clusterInfoCommand(x *Ctx, node *cluster.State) { x.W.Verbatim("txt", node.Info()) }

func keyslotCommand(x *Ctx, _ *cluster.State) { x.W.Int(int64(keyspace.Slot(x.Args[2]))) }

func linksCommand(x *Ctx, node *cluster.State) {
	links := node.Links()
	x.W.Array(len(links))
	for _, l := range links {
		x.W.Map(6)
		x.W.BulkString("direction")
		x.W.BulkString(l.Direction)
		x.W.BulkString("node")
		x.W.BulkString(l.Node)
		x.W.BulkString("create-time")
		x.W.Int(l.CreateTime)
		x.W.BulkString("events")
		x.W.BulkString(l.Events)
		x.W.BulkString("send-buffer-allocated")
		x.W.Int(l.SendBufferAllocated)
		x.W.BulkString("send-buffer-used")
		x.W.Int(l.SendBufferUsed)
	}
}

func meetCommand(x *Ctx, node *cluster.State) {
	if len(x.Args) > 5 {
		x.W.Error(errClusterSyntax(x.Args[1]))
		return
	}
	port, ok := strnum.ParseInt(x.Args[3])
	if !ok {
		x.W.Error("ERR Invalid TCP base port specified: " + string(x.Args[3]))
		return
	}
	cport := port + 10000
	if len(x.Args) == 5 {
		if cport, ok = strnum.ParseInt(x.Args[4]); !ok {
			x.W.Error("ERR Invalid TCP bus port specified: " + string(x.Args[4]))
			return
		}
	}
	if err := node.Meet(string(x.Args[2]), int(port), int(cport)); err != nil {
		x.W.Error("ERR Invalid node address specified: " + string(x.Args[2]) + ":" + string(x.Args[3]))
		return
	}
	x.W.OK()
}

func myidCommand(x *Ctx, node *cluster.State) { x.W.BulkString(node.MyName()) }

func myshardidCommand(x *Ctx, node *cluster.State) { x.W.BulkString(node.MyShardID()) }

func nodesCommand(x *Ctx, node *cluster.State) { x.W.Verbatim("txt", node.Nodes()) }

func clusterResetCommand(x *Ctx, node *cluster.State) {
	hard := false
	if len(x.Args) > 3 {
		x.W.Error(errClusterSyntax(x.Args[1]))
		return
	}
	if len(x.Args) == 3 {
		switch {
		case cstr.ArgIs(x.Args[2], "hard"):
			hard = true
		case cstr.ArgIs(x.Args[2], "soft"):
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	wasReplica, err := node.Reset(hard, x.s.ks.DB(0).Len() != 0)
	if err != nil {
		replyClusterError(x, err)
		return
	}
	if wasReplica {
		// A replica's data is its old master's: it starts empty, as Redis.
		for i := range x.s.ks.Len() {
			x.s.ks.DB(i).Flush()
		}
	}
	x.W.OK()
}

func saveconfigCommand(x *Ctx, node *cluster.State) {
	if err := node.SaveConfig(); err != nil {
		x.W.Error("ERR error saving the cluster node config: " + err.Error())
		return
	}
	x.W.OK()
}

func setConfigEpochCommand(x *Ctx, node *cluster.State) {
	epoch, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	replyClusterError(x, node.SetConfigEpoch(epoch))
}

func setslotCommand(x *Ctx, node *cluster.State) {
	slot, ok := slotArg(x, x.Args[2])
	if !ok {
		return
	}
	action := strings.ToLower(string(x.Args[3]))
	var target string
	switch {
	case (action == "migrating" || action == "importing" || action == "node") && len(x.Args) == 5:
		target = string(x.Args[4])
	case action == "stable" && len(x.Args) == 4:
	default:
		x.W.Error("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
		return
	}
	held := 0
	if action == "node" {
		held = x.s.ks.DB(0).CountInSlot(slot)
	}
	replyClusterError(x, node.SetSlot(slot, action, target, held))
}

func shardsCommand(x *Ctx, node *cluster.State) {
	shards := node.Shards(true)
	x.W.Array(len(shards))
	for _, sh := range shards {
		x.W.Map(2)
		x.W.BulkString("slots")
		x.W.Array(2 * len(sh.Ranges))
		for _, r := range sh.Ranges {
			x.W.Int(int64(r[0]))
			x.W.Int(int64(r[1]))
		}
		x.W.BulkString("nodes")
		x.W.Array(len(sh.Nodes))
		for _, n := range sh.Nodes {
			fields := 7
			if n.Hostname != "" {
				fields++
			}
			x.W.Map(fields)
			x.W.BulkString("id")
			x.W.BulkString(n.Name)
			x.W.BulkString("port")
			x.W.Int(int64(n.Port))
			x.W.BulkString("ip")
			x.W.BulkString(n.IP)
			x.W.BulkString("endpoint")
			x.W.BulkString(n.IP)
			if n.Hostname != "" {
				x.W.BulkString("hostname")
				x.W.BulkString(n.Hostname)
			}
			x.W.BulkString("role")
			health := "online"
			if n.Failed {
				health = "fail"
			}
			if n.Master {
				x.W.BulkString("master")
			} else {
				x.W.BulkString("replica")
			}
			x.W.BulkString("replication-offset")
			x.W.Int(n.Offset)
			x.W.BulkString("health")
			x.W.BulkString(health)
		}
	}
}

// slotsCommand is CLUSTER SLOTS: each run of slots one master serves, in
// slot order, with the master and its replicas.
func slotsCommand(x *Ctx, node *cluster.State) {
	type entry struct {
		start, end int
		sh         *cluster.Shard
	}
	var entries []entry
	shards := node.Shards(false)
	for i := range shards {
		for _, r := range shards[i].Ranges {
			entries = append(entries, entry{r[0], r[1], &shards[i]})
		}
	}
	for i := 1; i < len(entries); i++ {
		for j := i; j > 0 && entries[j].start < entries[j-1].start; j-- {
			entries[j], entries[j-1] = entries[j-1], entries[j]
		}
	}
	x.W.Array(len(entries))
	for _, e := range entries {
		var nodes []cluster.ShardNode
		for _, n := range e.sh.Nodes {
			if n.Master || !n.Failed {
				nodes = append(nodes, n)
			}
		}
		x.W.Array(2 + len(nodes))
		x.W.Int(int64(e.start))
		x.W.Int(int64(e.end))
		for _, n := range nodes {
			x.W.Array(4)
			x.W.BulkString(n.IP)
			x.W.Int(int64(n.Port))
			x.W.BulkString(n.Name)
			if n.Hostname != "" {
				x.W.Map(1)
				x.W.BulkString("hostname")
				x.W.BulkString(n.Hostname)
			} else {
				x.W.Map(0)
			}
		}
	}
}

func replicateCommand(x *Ctx, node *cluster.State) {
	replyClusterError(x, node.Replicate(string(x.Args[2]), x.s.ks.DB(0).Len() != 0))
}

func replicasCommand(x *Ctx, node *cluster.State) {
	lines, err := node.Replicas(string(x.Args[2]))
	if err != nil {
		replyClusterError(x, err)
		return
	}
	x.W.Array(len(lines))
	for _, l := range lines {
		x.W.BulkString(l)
	}
}

func clusterFailoverCommand(x *Ctx, node *cluster.State) {
	mode := ""
	switch {
	case len(x.Args) > 3:
		x.W.Error(errSyntax)
		return
	case len(x.Args) == 3 && cstr.ArgIs(x.Args[2], "force"):
		mode = "force"
	case len(x.Args) == 3 && cstr.ArgIs(x.Args[2], "takeover"):
		mode = "takeover"
	case len(x.Args) == 3:
		x.W.Error(errSyntax)
		return
	}
	replyClusterError(x, node.Failover(mode))
}
