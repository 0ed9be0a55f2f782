package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/tableemu/tableemu/emulator"
)

// healthTimeout bounds one probe. It is below the image's HEALTHCHECK
// --timeout (3s), so a hung server is reported by this message rather than
// by the container engine killing the probe.
var healthTimeout = 2 * time.Second

// healthcheck implements `tableemu healthcheck [server flags]`: it exits 0
// when a tableemu (or anything speaking HTTP) answers on the address a
// server started with the same flags listens on, and 1 otherwise.
//
// It exists for the container image's HEALTHCHECK: the image is FROM
// scratch, with no shell, curl or wget, so the binary probes itself. It
// takes the server's own flags so that a server moved with --tablePort (or
// serving HTTPS with --cert/--key) is checked with the same arguments; flags
// that do not affect the address are accepted and ignored.
//
// Exit codes are Docker's: 0 healthy, 1 unhealthy (2 is reserved there, so
// bad arguments are 1 too).
func healthcheck(args []string, stdout, stderr io.Writer) int {
	// AZURITE_ACCOUNTS does not change where the server listens; not
	// reading it keeps a probe from failing on an account list typo that
	// the running server has already accepted or refused.
	cfg, err := emulator.LoadConfig(args, func(string) string { return "" }, stderr)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, "usage: tableemu healthcheck [--tableHost H] [--tablePort P] [--cert F --key F] [other server flags, ignored]")
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "tableemu healthcheck:", err)
		return 1
	}
	if cfg.Port == 0 {
		fmt.Fprintln(stderr, "tableemu healthcheck: --tablePort 0 picks a free port; give the port the server printed")
		return 1
	}
	url := cfg.Scheme() + "://" + net.JoinHostPort(probeHost(cfg.Host), strconv.Itoa(cfg.Port)) + "/"
	client := &http.Client{
		Timeout: healthTimeout,
		Transport: &http.Transport{
			// No proxy: HTTP_PROXY in a container's environment must not
			// send a loopback probe elsewhere.
			Proxy:             nil,
			DisableKeepAlives: true,
			// The probe only asks whether the server answers; it sends no
			// credentials, so a self-signed --cert is fine.
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		},
	}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintln(stderr, "tableemu healthcheck:", err)
		return 1
	}
	req.Header.Set("User-Agent", "tableemu-healthcheck")
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "tableemu healthcheck: down:", err)
		return 1
	}
	resp.Body.Close()
	// Any HTTP response means the server is up: GET / is not an operation
	// of the service, so it answers with an error status.
	fmt.Fprintf(stdout, "tableemu healthcheck: up (%s answered %d)\n", url, resp.StatusCode)
	return 0
}

// probeHost is the address to dial for a server listening on host. A
// server on every interface (0.0.0.0, or :: which Go listens on dual-stack)
// is reached on 127.0.0.1, which works even where a container has IPv6
// turned off; "localhost" is dialled as 127.0.0.1 because a scratch image
// has no /etc/hosts of its own.
func probeHost(host string) string {
	if host == "localhost" {
		return "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return "127.0.0.1"
	}
	return host
}
