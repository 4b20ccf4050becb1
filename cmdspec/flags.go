package cmdspec

// Flags are a command's flags: Redis's, which COMMAND INFO shows, and
// Keyhive's own, which it does not.
type Flags uint64

// Redis's command flags, in the order COMMAND INFO lists them, with the
// meaning Redis gives them.
const (
	FlagWrite           Flags = 1 << iota // may change the data set
	FlagReadonly                          // reads keys and changes none
	FlagDenyOOM                           // refused over maxmemory: it may grow the data set
	FlagAdmin                             // administration; hidden from MONITOR
	FlagPubSub                            // Pub/Sub
	FlagNoScript                          // scripts may not call it
	FlagBlocking                          // may block its client
	FlagLoading                           // allowed while the data set loads
	FlagStale                             // allowed on a replica whose data is stale
	FlagSkipMonitor                       // not fed to MONITOR
	FlagSkipSlowlog                       // not recorded in the slow log
	FlagAsking                            // served on a slot being imported as if ASKING was sent
	FlagFast                              // O(1) or O(log N): the latency monitor's fast-command event
	FlagNoAuth                            // allowed before AUTH
	FlagNoMandatoryKeys                   // may take no keys although it can take some
	FlagNoAsyncLoading                    // refused while a replica loads its data set in the background
	FlagNoMulti                           // refused inside MULTI
	// FlagMovableKeys is derived from the key specs, as Redis does: no
	// spec declares it.
	FlagMovableKeys
	FlagAllowBusy // allowed while a script or function runs too long

	// FlagMayReplicate is Redis's, but COMMAND INFO hides it, as Redis
	// does: the command may propagate although it is not a write
	// (PUBLISH, PFCOUNT's cache, scripts), so read-only scripts refuse it.
	FlagMayReplicate
	// FlagAllKeys: the command works on the whole keyspace or on several
	// databases and takes the exclusive lock.
	FlagAllKeys
	// FlagNoKeyspace: the command takes no lock. The server derives it for
	// commands allowed while a script runs (allow_busy) that name no keys,
	// since a script holds the exclusive lock (SCRIPT KILL, HELLO); BGSAVE
	// and BGREWRITEAOF declare it, as their snapshot takes the exclusive
	// lock itself, for a moment.
	FlagNoKeyspace
	// FlagNotQueued: inside MULTI the command runs at once instead of being
	// queued (EXEC, DISCARD, MULTI, WATCH, QUIT, RESET).
	FlagNotQueued
	// FlagSubscribedOK: a RESP2 client in subscribed mode may run it.
	FlagSubscribedOK
	// FlagDiskErrorDenied: refused, beside the write commands, while the
	// AOF cannot be written (PING, as in Redis).
	FlagDiskErrorDenied
	// FlagSelectsDB: the command switches the client's database (SELECT),
	// so a transaction holding it locks every database.
	FlagSelectsDB
	// FlagChannelPublish: the arguments after the command's name are
	// channels it publishes to, which ACL checks.
	FlagChannelPublish
	// FlagChannelSubscribe: the arguments after the command's name are
	// channels it subscribes to, which ACL checks.
	FlagChannelSubscribe
	// FlagChannelPattern: the arguments after the command's name are
	// channel patterns it subscribes to, which ACL checks.
	FlagChannelPattern
)

// shownFlagNames name the flags COMMAND INFO shows, bit by bit from
// FlagWrite.
var shownFlagNames = []string{
	"write", "readonly", "denyoom", "admin", "pubsub", "noscript", "blocking", "loading", "stale",
	"skip_monitor", "skip_slowlog", "asking", "fast", "no_auth", "no_mandatory_keys",
	"no_async_loading", "no_multi", "movablekeys", "allow_busy",
}

// Names lists the flags COMMAND INFO shows, in its order.
func (f Flags) Names() []string {
	var names []string
	for i, n := range shownFlagNames {
		if f&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return names
}
