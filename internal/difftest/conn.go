package difftest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// DefaultTimeout bounds every read and write, so a server that never replies
// fails the test instead of hanging it.
const DefaultTimeout = 5 * time.Second

// Conn is a raw RESP client connection with no testing.TB attached: every
// method returns an error. Most tests use Pair or Client instead.
type Conn struct {
	nc net.Conn
	br *bufio.Reader
	// Timeout bounds each read and write; zero means DefaultTimeout.
	Timeout time.Duration
}

// Dial connects to a RESP server at addr ("host:port").
func Dial(addr string) (*Conn, error) { return DialTimeout(addr, DefaultTimeout) }

// DialTimeout is Dial with d bounding the connect and each read and write.
func DialTimeout(addr string, d time.Duration) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return nil, err
	}
	c := newConn(nc)
	c.Timeout = d
	return c, nil
}

func newConn(nc net.Conn) *Conn {
	return &Conn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}
}

func (c *Conn) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// NetConn returns the underlying connection, e.g. to close only its write side.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Send writes one command as a RESP multibulk without reading the reply.
func (c *Conn) Send(args ...any) error {
	b, err := appendCommand(nil, args)
	if err != nil {
		return err
	}
	return c.SendRaw(b)
}

// SendRaw writes data verbatim: inline commands, pipelines, partial commands.
func (c *Conn) SendRaw(data []byte) error {
	if err := c.nc.SetWriteDeadline(time.Now().Add(c.timeout())); err != nil {
		return err
	}
	_, err := c.nc.Write(data)
	return err
}

// Read reads exactly one complete reply. See ReadReply for the error contract.
func (c *Conn) Read() (Reply, error) {
	if err := c.nc.SetReadDeadline(time.Now().Add(c.timeout())); err != nil {
		return Reply{}, err
	}
	return ReadReply(c.br)
}

// Do sends one command and reads its reply.
func (c *Conn) Do(args ...any) (Reply, error) {
	if err := c.Send(args...); err != nil {
		return Reply{}, err
	}
	return c.Read()
}

// Idle returns nil if nothing arrives within d, so tests can check that a
// blocked command or a subscriber really has received nothing yet.
func (c *Conn) Idle(d time.Duration) error {
	if c.br.Buffered() > 0 {
		b, _ := c.br.Peek(c.br.Buffered())
		return fmt.Errorf("unexpected data %q", b)
	}
	if err := c.nc.SetReadDeadline(time.Now().Add(d)); err != nil {
		return err
	}
	_, err := c.br.Peek(1)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil
	case err != nil:
		return fmt.Errorf("connection failed while waiting: %w", err)
	}
	b, _ := c.br.Peek(c.br.Buffered())
	return fmt.Errorf("unexpected data %q", b)
}

// WaitClosed returns nil if the server closes the connection (EOF or reset)
// within the timeout without sending anything more.
func (c *Conn) WaitClosed() error {
	if err := c.nc.SetReadDeadline(time.Now().Add(c.timeout())); err != nil {
		return err
	}
	_, err := c.br.Peek(1)
	switch {
	case isClosed(err):
		return nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("connection still open after %v", c.timeout())
	case err != nil:
		return err
	}
	b, _ := c.br.Peek(c.br.Buffered())
	return fmt.Errorf("expected the connection to close, got data %q", b)
}

// isClosed reports whether err means the peer closed the connection.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Inline opens a connection to addr, sends command as an inline command
// (quoting as redis-cli's input), reads one reply and closes: for tests of a
// server process that need one answer.
func Inline(addr, command string) (Reply, error) {
	c, err := Dial(addr)
	if err != nil {
		return Reply{}, err
	}
	defer c.Close()
	if err := c.SendRaw([]byte(command + "\r\n")); err != nil {
		return Reply{}, err
	}
	return c.Read()
}

// InlineLine is Inline's reply's first line, without its CRLF ("" when the
// server closed the connection first, as SHUTDOWN does).
func InlineLine(addr, command string) string {
	r, _ := Inline(addr, command)
	line, _, _ := strings.Cut(string(r.Raw), "\r\n")
	return line
}
