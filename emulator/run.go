package emulator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
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

// HTTPServer returns the http.Server tableemu runs: timeouts bound how
// long a slow or idle client can hold a connection, and MaxHeaderBytes
// refuses oversized headers before they are read whole.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// Serve serves on ln until ctx is cancelled, then shuts down gracefully:
// it stops accepting, lets in-flight requests finish (up to grace), and
// returns. The caller closes the Server (and so the database) afterwards.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	hs := s.HTTPServer()
	if s.cfg.Cert != "" {
		cert, err := tls.LoadX509KeyPair(s.cfg.Cert, s.cfg.Key)
		if err != nil {
			return fmt.Errorf("--cert/--key: %w", err)
		}
		hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
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
