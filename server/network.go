package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/keyhive/keyhive/config"
)

// Network policy: protected mode, idle-client timeouts and the TLS listener's
// settings, as Redis applies them.

const errProtectedMode = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Set up an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"

// refusedByProtectedMode reports whether protected mode turns conn away: the
// default user has no password and the client is not on the loopback
// interface (a unix socket or an in-process connection is local).
func (s *Server) refusedByProtectedMode(conn net.Conn) bool {
	if !s.cfg.ProtectedMode() || !s.acl.Default().Perms().NoPass() {
		return false
	}
	a, ok := conn.RemoteAddr().(*net.TCPAddr)
	return ok && !a.IP.IsLoopback()
}

// closeIdleClients closes the clients idle for more than timeout seconds, as
// Redis's client cron does: not those subscribed or blocked, which wait for
// the server by design.
func (s *Server) closeIdleClients(nowMs int64) {
	timeout := int64(s.cfg.Timeout())
	if timeout == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		switch {
		case c.ps.nsub.Load()+c.ps.npsub.Load()+c.ps.nssub.Load() > 0:
		case c.waiting.Load() != nil, c.paused.Load():
		case nowMs-c.lastSeen.Load() > timeout*1000:
			c.disconnect() // its goroutine's read fails and it cleans up
		}
	}
}

// watchPort makes CONFIG SET port move the plain TCP listeners: the new
// port is opened first, so a port in use fails the CONFIG SET with Redis's
// error and the old listeners go on; then the old ones close (connected
// clients stay). Port 0 leaves no plain TCP listener, as in Redis.
func (s *Server) watchPort() {
	s.cfg.OnApply("port", func() error {
		var ls []net.Listener
		if port := s.cfg.Port(); port != 0 {
			var err error
			if ls, err = s.openTCP(port); err != nil {
				s.log.Printf("Failed to listen on port %d: %v", port, err)
				return errors.New("Unable to listen on this port. Check server logs.")
			}
		}
		s.mu.Lock()
		old := s.plainTCP
		s.plainTCP = ls
		s.listeners = slices.DeleteFunc(s.listeners, func(l net.Listener) bool { return slices.Contains(old, l) })
		s.mu.Unlock()
		for _, l := range old {
			l.Close()
		}
		for _, l := range ls {
			s.serve(l)
		}
		return nil
	})
}

// tlsConfig builds the TLS listener's settings from the tls-* directives:
// the server certificate, client certificates checked against the CA
// certificates (tls-auth-clients), the protocol versions and the TLS 1.2
// cipher suites. Go always offers all three TLS 1.3 suites, so
// tls-ciphersuites is checked but cannot narrow them.
func tlsConfig(cfg *config.Config) (*tls.Config, error) {
	if cfg.TLSCertFile() == "" || cfg.TLSKeyFile() == "" {
		return nil, errors.New("tls-port needs tls-cert-file and tls-key-file")
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile(), cfg.TLSKeyFile())
	if err != nil {
		return nil, fmt.Errorf("failed to load certificate %s or private key %s: %w", cfg.TLSCertFile(), cfg.TLSKeyFile(), err)
	}
	tc := &tls.Config{
		Certificates:           []tls.Certificate{cert},
		SessionTicketsDisabled: !cfg.TLSSessionCaching(),
	}
	switch cfg.TLSAuthClients() {
	case "yes":
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		tc.ClientAuth = tls.VerifyClientCertIfGiven
	}
	if tc.ClientAuth != tls.NoClientCert {
		if tc.ClientCAs, err = caPool(cfg.TLSCACertFile(), cfg.TLSCACertDir()); err != nil {
			return nil, err
		}
	}
	if tc.MinVersion, tc.MaxVersion, err = tlsVersions(cfg.TLSProtocols()); err != nil {
		return nil, err
	}
	if tc.CipherSuites, err = tlsCiphers(cfg.TLSCiphers()); err != nil {
		return nil, err
	}
	for _, name := range strings.Split(cfg.TLSCiphersuites(), ":") {
		switch name {
		case "", "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256":
		default:
			return nil, fmt.Errorf("failed to configure tls-ciphersuites: unknown TLS 1.3 suite %q", name)
		}
	}
	return tc, nil
}

// caPool loads the CA certificates that client certificates must chain to.
func caPool(file, dir string) (*x509.CertPool, error) {
	if file == "" && dir == "" {
		return nil, errors.New("either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-auth-clients is enabled")
	}
	pool := x509.NewCertPool()
	var files []string
	if file != "" {
		files = append(files, file)
	}
	if dir != "" {
		matches, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil {
			return nil, err
		}
		files = append(files, matches...)
	}
	for _, f := range files {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("failed to load CA certificates: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) && f == file {
			return nil, fmt.Errorf("failed to load CA certificates: no certificate in %s", f)
		}
	}
	return pool, nil
}

// tlsVersions parses tls-protocols ("TLSv1.2 TLSv1.3", Redis's default when
// empty) into the lowest and highest version allowed.
func tlsVersions(protocols string) (lo, hi uint16, err error) {
	if strings.TrimSpace(protocols) == "" {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	for _, p := range strings.Fields(protocols) {
		var v uint16
		switch strings.ToLower(p) {
		case "tlsv1":
			v = tls.VersionTLS10
		case "tlsv1.1":
			v = tls.VersionTLS11
		case "tlsv1.2":
			v = tls.VersionTLS12
		case "tlsv1.3":
			v = tls.VersionTLS13
		default:
			return 0, 0, fmt.Errorf("invalid tls-protocols value %q", p)
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return lo, hi, nil
}

// tlsCiphers parses tls-ciphers, a colon-separated list of OpenSSL names of
// TLS 1.2 suites (nil: Go's defaults).
func tlsCiphers(list string) ([]uint16, error) {
	if list == "" {
		return nil, nil
	}
	var ids []uint16
	for _, name := range strings.Split(list, ":") {
		id, ok := opensslSuites[name]
		if !ok {
			return nil, fmt.Errorf("failed to configure tls-ciphers: unsupported cipher %q (name TLS 1.2 suites by their OpenSSL names)", name)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// opensslSuites maps OpenSSL's names of the TLS 1.2 suites Go implements.
var opensslSuites = map[string]uint16{
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-RSA-AES128-GCM-SHA256":   tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-RSA-AES256-GCM-SHA384":   tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-RSA-CHACHA20-POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-ECDSA-AES128-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	"ECDHE-RSA-AES128-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	"ECDHE-ECDSA-AES256-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-AES256-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
	"AES128-GCM-SHA256":             tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
	"AES256-GCM-SHA384":             tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
	"AES128-SHA":                    tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	"AES256-SHA":                    tls.TLS_RSA_WITH_AES_256_CBC_SHA,
}
