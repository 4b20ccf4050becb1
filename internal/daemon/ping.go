package daemon

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"time"
)

// Ping sends PING to the server at addr (host:port, or a unix socket path
// when it holds a '/') and returns nil when the server answers PONG, or
// NOAUTH: a server that requires a password is up too.
func Ping(addr string, timeout time.Duration) error {
	network := "tcp"
	if strings.Contains(addr, "/") {
		network = "unix"
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "+PONG" || strings.HasPrefix(line, "-NOAUTH ") {
		return nil
	}
	return fmt.Errorf("%s answered %q", addr, line)
}
