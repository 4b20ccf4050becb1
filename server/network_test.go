package server_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/redis/go-redis/v9"
)

// TestIdleTimeout: with timeout 1 an idle client is closed; a subscribed or
// blocked one is not, on both servers.
func TestIdleTimeout(t *testing.T) {
	p := difftest.StartIsolated(t, "--timeout", "1")
	sub := p.NewConn()
	sub.Do("SUBSCRIBE", "news")
	blocked := p.NewConn()
	blocked.Send("BLPOP", "queue", "0")
	idle := p.NewConn()
	idle.Do("PING")
	time.Sleep(2500 * time.Millisecond)
	for _, c := range []*difftest.Client{idle.Redis(), idle.Keyhive()} {
		if err := c.Conn().WaitClosed(); err != nil {
			t.Errorf("%s: idle client: %v", c.Name(), err)
		}
	}
	p.Reconnect() // p itself was idle too
	// Served, the blocked client has been idle for 2.5 s, and Redis's cron
	// closes it if it runs before the reply goes out. A read while blocked
	// counts as interaction on both servers.
	blocked.Send("PING")
	time.Sleep(100 * time.Millisecond)
	p.Do("RPUSH", "queue", "job")
	blocked.Read()
	blocked.Read()
	sub.Do("PING")
}

// tlsFiles writes a CA, a server certificate for 127.0.0.1 and a client
// certificate, each signed by the CA, and returns their paths.
func tlsFiles(t *testing.T) (dir string) {
	dir = t.TempDir()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	caKey := newKey()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "keyhive test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	write("ca.crt", "CERTIFICATE", caDER)
	for i, name := range []string{"server", "client"} {
		key := newKey()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		write(name+".crt", "CERTIFICATE", der)
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		write(name+".key", "EC PRIVATE KEY", kder)
	}
	return dir
}

// TestTLS: a TLS listener next to the plain one; mutual TLS by default
// (tls-auth-clients yes), go-redis and redis-cli --tls as clients.
func TestTLS(t *testing.T) {
	dir := tlsFiles(t)
	f := func(name string) string { return filepath.Join(dir, name) }
	port := freePort(t)
	// A plain port too: port 0 with a TLS port means no plain listener.
	srv := startKeyhive(t, "--port", freePort(t), "--tls-port", port, "--tls-cert-file", f("server.crt"),
		"--tls-key-file", f("server.key"), "--tls-ca-cert-file", f("ca.crt"))
	addr := "127.0.0.1:" + port
	pool := x509.NewCertPool()
	caPEM, _ := os.ReadFile(f("ca.crt"))
	pool.AppendCertsFromPEM(caPEM)
	clientCert, err := tls.LoadX509KeyPair(f("client.crt"), f("client.key"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	rdb := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{clientCert}}})
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "over tls", 0).Err(); err != nil {
		t.Fatal(err)
	}
	plain := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer plain.Close()
	if v, err := plain.Get(ctx, "k").Result(); err != nil || v != "over tls" {
		t.Fatalf("plain GET after a TLS SET: %q %v", v, err)
	}
	// Without a client certificate the handshake fails.
	nocert := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: &tls.Config{RootCAs: pool}, MaxRetries: -1})
	defer nocert.Close()
	if err := nocert.Ping(ctx).Err(); err == nil {
		t.Error("a client without a certificate was accepted under tls-auth-clients yes")
	}
	if _, err := exec.LookPath("redis-cli"); err == nil {
		out, err := exec.Command("redis-cli", "-p", port, "--tls", "--cacert", f("ca.crt"),
			"--cert", f("client.crt"), "--key", f("client.key"), "GET", "k").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "over tls" {
			t.Errorf("redis-cli --tls: %q %v", out, err)
		}
	}
}

// TestTLSOptionalClientsAndProtocols: tls-auth-clients no lets clients in
// without a certificate; tls-protocols bounds the versions.
func TestTLSOptionalClientsAndProtocols(t *testing.T) {
	dir := tlsFiles(t)
	f := func(name string) string { return filepath.Join(dir, name) }
	port := freePort(t)
	startKeyhive(t, "--tls-port", port, "--tls-cert-file", f("server.crt"),
		"--tls-key-file", f("server.key"), "--tls-auth-clients", "no", "--tls-protocols", "TLSv1.3")
	pool := x509.NewCertPool()
	caPEM, _ := os.ReadFile(f("ca.crt"))
	pool.AppendCertsFromPEM(caPEM)
	addr := "127.0.0.1:" + port
	ctx := t.Context()
	rdb := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: &tls.Config{RootCAs: pool}})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	old := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, TLSConfig: &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS12}})
	defer old.Close()
	if err := old.Ping(ctx).Err(); err == nil {
		t.Error("a TLS 1.2 client was accepted under tls-protocols TLSv1.3")
	}
}

// TestConfigSetPort: CONFIG SET port to a port in use fails with Redis's
// error and keeps the old listener; to a free port it moves the listener
// (the old port refuses connections, connected clients stay).
func TestConfigSetPort(t *testing.T) {
	p := difftest.StartIsolated(t)
	sides := []*difftest.Client{p.Redis(), p.Keyhive()}
	var replies [2]difftest.Reply
	for i, c := range sides {
		busy := sides[1-i].Addr() // the other server's port
		_, port, _ := net.SplitHostPort(busy)
		replies[i] = c.Do("CONFIG", "SET", "port", port)
	}
	if string(replies[0].Raw) != string(replies[1].Raw) {
		t.Errorf("CONFIG SET port (in use): redis %q, keyhive %q", replies[0].Raw, replies[1].Raw)
	}
	for _, c := range sides {
		conn, err := difftest.Dial(c.Addr())
		if err != nil {
			t.Fatalf("%s: the old port stopped listening: %v", c.Name(), err)
		}
		if r, err := conn.Do("PING"); err != nil || r.Str != "PONG" {
			t.Errorf("%s: PING on the old port: %v %v", c.Name(), r, err)
		}
		conn.Close()
	}
	p.Do("PING")
	for _, c := range sides {
		port := freePort(t)
		if r := c.Do("CONFIG", "SET", "port", port); r.Str != "OK" {
			t.Fatalf("%s: CONFIG SET port %s: %v", c.Name(), port, r)
		}
		conn, err := difftest.Dial(net.JoinHostPort("127.0.0.1", port))
		if err != nil {
			t.Fatalf("%s: the new port does not listen: %v", c.Name(), err)
		}
		if r, err := conn.Do("CONFIG", "GET", "port"); err != nil || len(r.Elems) != 2 || r.Elems[1].Str != port {
			t.Errorf("%s: CONFIG GET port on the new port: %v %v", c.Name(), r, err)
		}
		conn.Close()
		if conn, err := net.DialTimeout("tcp", c.Addr(), time.Second); err == nil {
			conn.Close()
			t.Errorf("%s: the old port still listens", c.Name())
		}
	}
	p.Do("PING") // connected clients stay
}

// TestProtectedModeLoopback: protected mode lets in every address of the
// loopback network (127.0.0.2 here), as redis-server 7.4 does (7.0 let in
// 127.0.0.1 and ::1 only; Redis 7.4 and 8 take any "127." address).
func TestProtectedModeLoopback(t *testing.T) {
	oracle := difftest.Need74(t)
	for _, srv := range []struct {
		name  string
		start func(...string) (string, func(), error)
	}{
		{"keyhive", difftest.StartKeyhive},
		{"redis 7.4", func(d ...string) (string, func(), error) { return difftest.StartProcess(oracle, d...) }},
	} {
		addr, stop, err := srv.start("--protected-mode", "yes")
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}
		conn, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		conn.Write([]byte("PING\r\n"))
		got, _ := bufio.NewReader(conn).ReadString('\n')
		if got != "+PONG\r\n" {
			t.Errorf("%s: from 127.0.0.2 in protected mode: %q", srv.name, got)
		}
	}
}
