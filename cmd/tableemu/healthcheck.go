package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
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
// takes the server's own flags so that a server moved with --tablePort is
// checked with the same arguments; flags that do not affect the address
// are accepted and ignored.
//
// The image's check runs without the server's flags, so it cannot know
// whether the server was given --cert: it must find an HTTPS server and a
// plain HTTP one alike. It speaks TLS first, because the other order would
// make an HTTPS server log "client sent an HTTP request to an HTTPS server"
// at every probe, every 5 s. When what answers accepts the connection but
// does not complete a TLS handshake, it is not HTTPS, and the probe asks
// again over HTTP. Go's and Node's servers (tableemu among them) answer a
// TLS hello with an HTTP error; others close the connection, answer with
// an error page and no status line (Python's http.server), or wait for
// the end of a request that a TLS hello never sends (hence the handshake's
// share of the time).
// With --cert, only HTTPS counts.
//
// Exit codes are Docker's: 0 healthy, 1 unhealthy (2 is reserved there, so
// bad arguments are 1 too).
func healthcheck(args []string, stdout, stderr io.Writer) int {
	// AZURITE_ACCOUNTS does not change where the server listens; not
	// reading it keeps a probe from failing on an account list typo that
	// the running server has already accepted or refused. TABLEEMU_PROFILE
	// does (cosmos: port 8902, docs/cosmos.md), so it is read: a container
	// run with it is probed where it listens.
	cfg, err := emulator.LoadConfig(args, func(k string) string {
		if k == "TABLEEMU_PROFILE" {
			return os.Getenv(k)
		}
		return ""
	}, nil)
	switch {
	case errors.Is(err, flag.ErrHelp):
		io.WriteString(stdout, healthcheckHelp)
		return 0
	case errors.Is(err, emulator.ErrVersion):
		io.WriteString(stdout, versionText())
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "tableemu healthcheck:", err)
		return 1
	}
	if cfg.Port == 0 {
		fmt.Fprintln(stderr, "tableemu healthcheck: --tablePort 0 picks a free port; give the port the server printed")
		return 1
	}
	// Both probes share healthTimeout; a TLS handshake gets half, so that
	// a plain server that never answers a TLS hello leaves the other half
	// for the HTTP probe.
	ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
	defer cancel()
	hostport := net.JoinHostPort(probeHost(cfg.Host), strconv.Itoa(cfg.Port))
	url := "https://" + hostport + "/"
	status, notTLS, err := probe(ctx, url)
	if cfg.Cert == "" && notTLS {
		url = "http://" + hostport + "/"
		status, _, err = probe(ctx, url)
	}
	if err != nil {
		fmt.Fprintln(stderr, "tableemu healthcheck: down:", downReason(hostport, url, cfg, notTLS, err))
		return 1
	}
	// Any HTTP response means the server is up: GET / is not an operation
	// of the service, so it answers with an error status.
	fmt.Fprintf(stdout, "tableemu healthcheck: up (%s answered %d)\n", url, status)
	return 0
}

const healthcheckHelp = `Usage: tableemu healthcheck [--tableHost H] [--tablePort P] [--cert F --key F] [other server flags]

Exits 0 when a server answers HTTP or HTTPS at the address a server started
with the same flags listens on (default 127.0.0.1:10002; 8902 with --profile
cosmos or TABLEEMU_PROFILE=cosmos), and 1 otherwise, as
Docker's HEALTHCHECK expects. It probes HTTPS first and, when what answers
does not speak TLS, plain HTTP, so the container image's check works whether
or not the server has --cert; with --cert it accepts only HTTPS. The server's
certificate is not verified: the probe sends no credentials. --tableHost
0.0.0.0 or :: is probed on 127.0.0.1. Other server flags are accepted and
ignored, so a server's own command line can be reused. When the server is
down, one line on stderr names the address probed and why.
`

// downReason says why the probe of url (at hostport) failed and, where the
// cause is the usual one, what to do: one line, with the address probed.
// notTLS: the server accepted the connection but did not complete a TLS
// handshake.
func downReason(hostport, url string, cfg emulator.Config, notTLS bool, err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		// Nothing listens there: the server is not running, or it
		// listens elsewhere than these flags say.
		where := "with the --tableHost and --tablePort the server was started with"
		if cfg.Host != probeHost(cfg.Host) {
			where += fmt.Sprintf(" (--tableHost %s is probed on %s)", cfg.Host, probeHost(cfg.Host))
		}
		return fmt.Sprintf("nothing listens on %s (connection refused). Start tableemu, or run tableemu healthcheck %s.", hostport, where)
	case notTLS && cfg.Cert != "": // see healthcheck
		what := "does not speak TLS"
		if errors.Is(err, http.ErrSchemeMismatch) {
			what = "answered in plain HTTP"
		}
		return fmt.Sprintf("the server on %s %s, but --cert says it serves HTTPS; "+
			"give healthcheck the server's own flags (without --cert if the server has none).", hostport, what)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer from %s to GET %s within %v: the server is stuck, "+
			"or what listens there is not tableemu.", hostport, url, healthTimeout)
	}
	return fmt.Sprintf("GET %s: %v", url, err)
}

// probe sends GET url and returns the status of the answer. For an https
// url, notTLS says that the server accepted the connection and then did
// not complete a TLS handshake: whatever it speaks, it is not HTTPS.
func probe(ctx context.Context, url string) (status int, notTLS bool, err error) {
	client := &http.Client{
		Timeout: healthTimeout,
		Transport: &http.Transport{
			// No proxy: HTTP_PROXY in a container's environment must not
			// send a loopback probe elsewhere.
			Proxy:             nil,
			DisableKeepAlives: true,
			// The probe only asks whether the server answers; it sends no
			// credentials, so a self-signed --cert is fine.
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
			TLSHandshakeTimeout: healthTimeout / 2,
		},
	}
	// The transport calls these from its dialing goroutine, which may
	// outlive Do when the deadline ends the request first.
	var connected, handshook atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				connected.Store(true)
			}
		},
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err == nil {
				handshook.Store(true)
			}
		},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, false, err
	}
	req.Header.Set("User-Agent", "tableemu-healthcheck")
	resp, err := client.Do(req)
	if err != nil {
		return 0, req.URL.Scheme == "https" && connected.Load() && !handshook.Load(), err
	}
	resp.Body.Close()
	return resp.StatusCode, false, nil
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
