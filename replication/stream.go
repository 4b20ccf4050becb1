package replication

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/keyhive/keyhive/resp"
)

// The replica's side of what a master sends after PSYNC: the answer line,
// the RDB transfer on a full resynchronization, then the stream of
// commands. Each reader returns an error for input that breaks the
// protocol, never panics.

// maxLine bounds a line of the handshake (the answer to PSYNC, an RDB's
// bulk header): longer is not a master speaking the protocol.
const maxLine = 4096

// SyncReply is a master's answer to PSYNC.
type SyncReply struct {
	// Full: +FULLRESYNC, an RDB follows; else +CONTINUE.
	Full bool
	// ID is the master's replication ID: +FULLRESYNC's, or the one
	// +CONTINUE names when it changed (empty: the same).
	ID string
	// Offset is +FULLRESYNC's: the stream continues from it after the RDB.
	Offset int64
}

// ErrNotSupported is a master's -ERR to PSYNC: it speaks only SYNC.
var ErrNotSupported = errors.New("master does not support PSYNC")

// ReadLine reads one line of the handshake without its CRLF, skipping the
// empty lines a master sends to keep the link alive while it prepares an
// RDB.
func ReadLine(r *bufio.Reader) (string, error) {
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) || len(line) > maxLine {
			return "", errors.New("line from master too long")
		}
		if err != nil {
			return "", err
		}
		text := strings.TrimRight(string(line), "\r\n")
		if text != "" {
			return text, nil
		}
	}
}

// ParseSyncReply parses the answer to PSYNC: +FULLRESYNC <id> <offset> or
// +CONTINUE [<id>]. An error reply is returned as an error with its text.
func ParseSyncReply(line string) (SyncReply, error) {
	switch {
	case strings.HasPrefix(line, "+FULLRESYNC"):
		f := strings.Fields(line)
		if len(f) != 3 || len(f[1]) != IDLen {
			return SyncReply{}, fmt.Errorf("bad FULLRESYNC reply %q", line)
		}
		off, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || off < 0 {
			return SyncReply{}, fmt.Errorf("bad FULLRESYNC offset %q", line)
		}
		return SyncReply{Full: true, ID: f[1], Offset: off}, nil
	case strings.HasPrefix(line, "+CONTINUE"):
		f := strings.Fields(line)
		switch {
		case len(f) == 1:
			return SyncReply{}, nil
		case len(f) == 2 && len(f[1]) == IDLen:
			return SyncReply{ID: f[1]}, nil
		}
		return SyncReply{}, fmt.Errorf("bad CONTINUE reply %q", line)
	case strings.HasPrefix(line, "-NOMASTERLINK"), strings.HasPrefix(line, "-LOADING"):
		return SyncReply{}, fmt.Errorf("master not ready: %s", line[1:])
	case strings.HasPrefix(line, "-ERR"):
		return SyncReply{}, ErrNotSupported
	}
	return SyncReply{}, fmt.Errorf("unexpected reply to PSYNC: %q", line)
}

// EOFMarkLen is the length of the marker around a diskless transfer.
const EOFMarkLen = 40

// ReadRDB copies the RDB file a master sends after +FULLRESYNC to w: a bulk
// of known length ($<len>) or, diskless, the bytes up to the marker
// announced by $EOF:<marker>. It returns the file's length.
func ReadRDB(r *bufio.Reader, w io.Writer) (int64, error) {
	line, err := ReadLine(r)
	if err != nil {
		return 0, err
	}
	if line[0] == '-' {
		return 0, fmt.Errorf("master aborted the transfer: %s", line[1:])
	}
	if line[0] != '$' {
		return 0, fmt.Errorf("bad RDB transfer header %q", line)
	}
	if mark, ok := strings.CutPrefix(line, "$EOF:"); ok {
		if len(mark) != EOFMarkLen {
			return 0, fmt.Errorf("bad RDB transfer marker %q", line)
		}
		return copyToMark(r, w, []byte(mark))
	}
	size, err := strconv.ParseInt(line[1:], 10, 64)
	if err != nil || size < 0 {
		return 0, fmt.Errorf("bad RDB transfer length %q", line)
	}
	n, err := io.CopyN(w, r, size)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// copyToMark copies r to w until the bytes read end with mark, which is not
// copied. The master sends nothing after the marker until the replica
// acknowledges, so the marker ends what was read.
func copyToMark(r io.Reader, w io.Writer, mark []byte) (int64, error) {
	buf := make([]byte, EOFMarkLen+64<<10)
	held, total := 0, int64(0) // buf[:held] is read but not copied: it may be the marker's start
	for {
		n, err := r.Read(buf[held:])
		held += n
		if held >= EOFMarkLen && bytes.Equal(buf[held-EOFMarkLen:held], mark) {
			k, werr := w.Write(buf[:held-EOFMarkLen])
			return total + int64(k), werr
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return total, err
		}
		if keep := EOFMarkLen - 1; held > keep {
			k, werr := w.Write(buf[:held-keep])
			total += int64(k)
			if werr != nil {
				return total, werr
			}
			held = copy(buf, buf[held-keep:held])
		}
	}
}

// CommandReader reads the commands of the stream that follows.
type CommandReader struct {
	r      io.Reader
	buf    []byte
	start  int // the next command's first byte in buf
	filled int
	parser resp.Parser
}

// NewCommandReader reads commands from r, none of whose arguments may be
// longer than maxBulk (proto-max-bulk-len).
func NewCommandReader(r io.Reader, maxBulk int64) *CommandReader {
	cr := &CommandReader{r: r, buf: make([]byte, 64<<10)}
	cr.parser.MaxBulk = maxBulk
	return cr
}

// Next returns the next command and its bytes in the stream (a replica's
// offset advances by them, and it forwards them to its own replicas). Both
// are valid until the next call. An empty command (a bare newline) has no
// arguments.
func (cr *CommandReader) Next() (args [][]byte, raw []byte, err error) {
	for {
		n, err := cr.parser.Parse(cr.buf[cr.start:cr.filled])
		if err != nil {
			return nil, nil, err
		}
		if n > 0 {
			raw = cr.buf[cr.start : cr.start+n]
			cr.start += n
			return cr.parser.Args, raw, nil
		}
		if err := cr.fill(); err != nil {
			return nil, nil, err
		}
	}
}

// fill reads more, first making room: what was returned is dropped, and
// the buffer grows to what the command in progress needs.
func (cr *CommandReader) fill() error {
	if cr.start > 0 {
		cr.filled = copy(cr.buf, cr.buf[cr.start:cr.filled])
		cr.start = 0
	}
	need := max(cr.parser.Need(), cr.filled+1)
	if need > len(cr.buf) {
		grown := make([]byte, max(need, 2*len(cr.buf)))
		copy(grown, cr.buf[:cr.filled])
		cr.buf = grown
	}
	n, err := cr.r.Read(cr.buf[cr.filled:])
	cr.filled += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}
