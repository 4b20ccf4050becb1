package crashtest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/keyhive/keyhive/resp"
)

// client is a minimal RESP2 client: the harness needs to know exactly which
// request's reply arrived before the connection broke, which a pooled,
// retrying client library would hide.
type client struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	buf  []byte
}

// replyError is an error reply (-ERR ...): the command was refused.
type replyError string

func (e replyError) Error() string { return string(e) }

func dial(addr string, timeout time.Duration) (*client, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return &client{conn: c, r: bufio.NewReaderSize(c, 64<<10), w: bufio.NewWriterSize(c, 64<<10)}, nil
}

func (c *client) close() { c.conn.Close() }

// send buffers a command; flush sends what is buffered.
func (c *client) send(args ...string) {
	c.buf = c.buf[:0]
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	c.buf = resp.AppendCommand(c.buf, bs)
	c.w.Write(c.buf)
}

func (c *client) flush() error { return c.w.Flush() }

// do sends one command and reads its reply. A replyError comes back as the
// reply value, not as err, so that err always means the connection failed.
func (c *client) do(args ...string) (any, error) {
	c.send(args...)
	if err := c.flush(); err != nil {
		return nil, err
	}
	return c.read()
}

// pipe sends the commands at once and reads their replies.
func (c *client) pipe(cmds [][]string) ([]any, error) {
	for _, cmd := range cmds {
		c.send(cmd...)
	}
	if err := c.flush(); err != nil {
		return nil, err
	}
	out := make([]any, len(cmds))
	for i := range cmds {
		v, err := c.read()
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// read reads one reply: string (simple or bulk), int64, nil, []any or
// replyError.
func (c *client) read() (any, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("bad reply line %q", line)
	}
	body := string(line[1 : len(line)-2])
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return replyError(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			return nil, err
		}
		return string(b[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, nil
		}
		arr := make([]any, n)
		for i := range arr {
			if arr[i], err = c.read(); err != nil {
				return nil, err
			}
		}
		return arr, nil
	}
	return nil, fmt.Errorf("unknown reply type %q", line[0])
}

// asString, asInt and asArray read a reply of the expected type; anything
// else (an error reply included) is an error.
func asString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case replyError:
		return "", v
	}
	return "", fmt.Errorf("unexpected reply %v", v)
}
