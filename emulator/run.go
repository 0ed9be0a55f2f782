package emulator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Endpoint is the table endpoint of account on a server listening at addr,
// in path style: http://127.0.0.1:10002/devstoreaccount1.
func Endpoint(scheme, addr, account string) string {
	return scheme + "://" + addr + "/" + account
}

// ConnectionString is what an Azure SDK needs to reach account at
// endpoint (an Endpoint value).
func ConnectionString(a Account, endpoint string) string {
	proto := "http"
	if len(endpoint) > 5 && endpoint[:5] == "https" {
		proto = "https"
	}
	return fmt.Sprintf("DefaultEndpointsProtocol=%s;AccountName=%s;AccountKey=%s;TableEndpoint=%s;",
		proto, a.Name, a.Keys[0], endpoint)
}

// DefaultKeepAlive is how long an idle keep-alive connection stays open
// without --tableKeepAliveTimeout. It is longer than Azurite's 5 s on
// purpose: clients keep idle connections for a minute or more (Go's
// transport 90 s), and a server that closes one first races the client's
// next request on it, which then fails with a reset connection.
const DefaultKeepAlive = 2 * time.Minute

// HTTPServer returns the http.Server tableemu runs: timeouts bound how
// long a slow or idle client can hold a connection, and MaxHeaderBytes
// refuses oversized headers before they are read whole.
func (s *Server) HTTPServer() *http.Server {
	idle := s.cfg.KeepAlive
	switch {
	case idle == 0:
		idle = DefaultKeepAlive
	case idle < 0:
		// NoKeepAliveTimeout. A negative IdleTimeout is net/http's "no
		// idle timeout"; 0 would fall back to ReadTimeout, 2 minutes.
		idle = -1
	}
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       idle, // --tableKeepAliveTimeout
		MaxHeaderBytes:    64 << 10,
	}
}

// loadTLS reads --cert and --key. New calls it first, so that a
// certificate that does not load stops the start before anything is
// created on disk or printed as ready.
func loadTLS(cfg Config) (*tls.Config, error) {
	if cfg.Cert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(cfg.Cert, cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("--cert %s --key %s: cannot use them: %w", cfg.Cert, cfg.Key, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Serve serves on ln until ctx is cancelled, then shuts down gracefully:
// it stops accepting, lets in-flight requests finish (up to grace), and
// returns. The caller closes the Server (and so the database) afterwards.
// With --cert, it serves HTTPS on ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	hs := s.HTTPServer()
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		// Best effort: the note only names this server to a second
		// process started on the same directory (store/sqlite/lock.go).
		s.store.Announce(a.Port)
	}
	if s.tls != nil {
		hs.TLSConfig = s.tls.Clone()
		ln = tls.NewListener(ln, hs.TLSConfig)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// Scheme is "https" when the configuration serves TLS.
func (c Config) Scheme() string {
	if c.Cert != "" {
		return "https"
	}
	return "http"
}

// checkDebugPath refuses a --debug file whose directory does not exist, or
// that is a directory, before New creates the database: a start that fails
// creates nothing. (A file New then cannot open for another reason still
// fails the start, after the database is opened.)
func checkDebugPath(path string) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("--debug %s: directory %s does not exist", path, dir)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("--debug %s: a directory, not a file", path)
	}
	return nil
}
