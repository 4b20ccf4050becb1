// Command keyhive runs a Keyhive server. It takes redis-server's command line:
//
//	keyhive [config-file] [--directive value ...]
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/server"
)

func main() {
	cfg, err := config.FromArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv, err := server.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := srv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "Keyhive %s ready to accept connections on %s\n", server.Version, srv.Addr())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	select {
	case sig := <-signals:
		fmt.Fprintf(os.Stderr, "Received %v, shutting down\n", sig)
		srv.Close()
	case <-srv.Done():
	}
}
