package server_test

import (
	"net"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestMigrateRefused: MIGRATE to a port nobody listens on fails as Redis
// fails it, at the write (its connect only waits for the socket to turn
// writable, which a refused connection does): "IOERR error or timeout
// writing to target instance" (issue 40). The key stays.
func TestMigrateRefused(t *testing.T) {
	p := difftest.Start74(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // refused from now on
	p.Do("SET", "k", "v")
	p.Do("MIGRATE", "127.0.0.1", port, "k", 0, 1000)
	p.Do("MIGRATE", "127.0.0.1", port, "", 0, 1000, "KEYS", "k")
	p.Do("GET", "k")
}
