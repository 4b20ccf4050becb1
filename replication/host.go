package replication

import (
	"io"
	"log"
	"net"
	"sync"

	"github.com/keyhive/keyhive/changes"
	"github.com/keyhive/keyhive/config"
)

// Options are what a Manager is built from: the server's settings and the
// parts of it replication shares (the change stream, the AOF, the lock a
// snapshot's instant takes).
type Options struct {
	Config *config.Config
	Log    *log.Logger
	// Changes is the change stream the feed subscribes to while a backlog
	// exists.
	Changes *changes.Stream
	// AOF is the durability side: a replica's ACK says what it fsynced
	// (FACK), and a full resynchronization rewrites it.
	AOF AOF
	// Instant is held while a replica applies a command of its master's
	// and forwards its bytes; a background snapshot takes it at its
	// instant, so it never falls between the two.
	Instant *sync.Mutex
	// Done is closed when the server closes: transfers and links end.
	Done <-chan struct{}
	// Goroutines counts the link's goroutine: the server waits for it.
	Goroutines *sync.WaitGroup
}

// Host is what replication needs of the server it runs in.
type Host interface {
	// Snapshot writes the data set as an RDB file to w (a replica's full
	// resynchronization). atStart runs at the snapshot's instant and
	// returns the AUX fields naming the history; stop aborts it.
	Snapshot(w io.Writer, atStart func() []string, stop <-chan struct{}) error
	// LoadSnapshot replaces the data set (keys and functions) with the
	// RDB file at path, a master's, under the exclusive lock; aux receives
	// its AUX fields.
	LoadSnapshot(path string, aux func(name, value []byte)) error
	// MasterClient makes the client a replica runs its master's stream
	// as, starting in database db, on conn. From then on expiry is a
	// replica's that spares what that client touches.
	MasterClient(conn net.Conn, db int) MasterClient
	// SetReplica makes the server a replica's (on: expiry spares what the
	// master's stream touches, blocked clients are released with an
	// error) or a master's.
	SetReplica(on bool)
	// PauseWrites pauses the writers until untilMs (FAILOVER), or ends
	// the pause when untilMs is 0.
	PauseWrites(untilMs int64)
	// ListenPort is the client port a replica announces to its master.
	ListenPort() int
	// Acknowledged is told that a replica acknowledged more of the
	// stream: WAIT's and WAITAOF's clients may be served.
	Acknowledged()
}

// MasterClient is the client a replica applies its master's stream as.
type MasterClient interface {
	// Apply runs one command through the server's dispatch, as the
	// master's, and reports whether a transaction is open after it (its
	// bytes are forwarded at its EXEC).
	Apply(args [][]byte) (inMulti bool)
	// DB is the database its next command runs in.
	DB() int
	// Close removes it, once the link drops; expiry stays a replica's
	// while the server is one.
	Close()
}

// AOF is what replication asks of the append-only file.
type AOF interface {
	On() bool
	// Write writes what was fed so far (and fsyncs under appendfsync
	// always).
	Write() error
	// Fed and Synced are the lengths of the changes fed and on disk.
	Fed() int64
	Synced() int64
	// BGRewrite starts a rewrite: after a full resynchronization the file
	// holds the old data set.
	BGRewrite() bool
}

// Conn is a replica's connection, as a master serves it after SYNC or
// PSYNC.
type Conn interface {
	// Write writes to the socket.
	Write(p []byte) (int, error)
	// Sent counts n bytes in the client's output statistics.
	Sent(n int)
	// Close ends the connection; ReadCommands returns.
	Close()
	// RemoteAddr is the connection's ip:port.
	RemoteAddr() string
	// ID is the client's ID.
	ID() uint64
	// ReadCommands runs what the replica sends (REPLCONF ACK) through
	// the server's dispatch, replying nothing, until the connection ends.
	ReadCommands()
}
