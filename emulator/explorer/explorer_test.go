package explorer

import (
	"context"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, mod func(*http.Request)) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	if mod != nil {
		mod(r)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

// TestCSPEverywhere: every answer, the page, its files, a miss and a
// refused method, carries the policy, and the policy allows only the
// page's own origin, with no inline script or style.
func TestCSPEverywhere(t *testing.T) {
	h := New(Options{})
	for _, p := range []string{"/_tableemu/", "/_tableemu/index.html", "/_tableemu/style.css", "/_tableemu/js/main.js", "/_tableemu/icon.svg", "/_tableemu/nope.js", "/_tableemu"} {
		for _, m := range []string{"GET", "POST"} {
			res := get(t, h, m, p, nil)
			if got := res.Header.Get("Content-Security-Policy"); got != CSP {
				t.Errorf("%s %s: Content-Security-Policy %q, want %q", m, p, got, CSP)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s %s: no X-Content-Type-Options: nosniff", m, p)
			}
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*", "http:", "https:", "data:"} {
		if strings.Contains(CSP, bad) {
			t.Errorf("the policy allows %s", bad)
		}
	}
	for _, need := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(CSP, need) {
			t.Errorf("the policy lacks %s", need)
		}
	}
}

// TestAssetsServed: every embedded file is served with its type and
// bytes, and revalidates by ETag.
func TestAssetsServed(t *testing.T) {
	h := New(Options{})
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
	n := 0
	fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() || strings.HasSuffix(p, ".html") {
			return nil
		}
		n++
		want, _ := assets.ReadFile(p)
		url := Prefix + strings.TrimPrefix(p, "assets/")
		res := get(t, h, "GET", url, nil)
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || string(body) != string(want) {
			t.Errorf("GET %s: %d, %d bytes; want 200 and the embedded %d bytes", url, res.StatusCode, len(body), len(want))
		}
		for ext, ct := range types {
			if strings.HasSuffix(p, ext) && res.Header.Get("Content-Type") != ct {
				t.Errorf("GET %s: Content-Type %q, want %q", url, res.Header.Get("Content-Type"), ct)
			}
		}
		etag := res.Header.Get("ETag")
		if res := get(t, h, "GET", url, func(r *http.Request) { r.Header.Set("If-None-Match", etag) }); etag == "" || res.StatusCode != 304 {
			t.Errorf("GET %s with If-None-Match %q: %d, want 304", url, etag, res.StatusCode)
		}
		return nil
	})
	if n < 10 {
		t.Errorf("%d files served; the explorer has more", n)
	}
	res := get(t, h, "GET", "/_tableemu/", nil)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(string(body), `<script type="module" src="js/main.js">`) {
		t.Errorf("GET /_tableemu/: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if res := get(t, h, "GET", "/_tableemu", nil); res.StatusCode != 301 || res.Header.Get("Location") != "/_tableemu/" {
		t.Errorf("GET /_tableemu: %d to %q, want a redirect to /_tableemu/", res.StatusCode, res.Header.Get("Location"))
	}
	for _, p := range []string{"/_tableemu/../go.mod", "/_tableemu/assets/index.html", "/_tableemu/js/", "/_tableemu/devstoreaccount1/Tables", "/other"} {
		if res := get(t, h, "GET", p, nil); res.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", p, res.StatusCode)
		}
	}
}

// TestReadOnly: the handler is files only; every other method is 405.
func TestReadOnly(t *testing.T) {
	h := New(Options{DevAccount: "devstoreaccount1"})
	for _, m := range []string{"POST", "PUT", "DELETE", "MERGE", "PATCH", "OPTIONS"} {
		res := get(t, h, m, "/_tableemu/", nil)
		if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d Allow %q, want 405 Allow: GET, HEAD", m, res.StatusCode, res.Header.Get("Allow"))
		}
	}
}

// TestNoInlineCode: the page and scripts hold nothing the policy would
// refuse or that reaches another origin: no inline script or style, no
// style attributes, no absolute URLs.
func TestNoInlineCode(t *testing.T) {
	inline := regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]|<style|\sstyle=|\son[a-z]+=|javascript:`)
	absolute := regexp.MustCompile(`(?i)\b(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() {
			return nil
		}
		b, _ := assets.ReadFile(p)
		if strings.HasSuffix(p, ".html") {
			if m := inline.Find(b); m != nil {
				t.Errorf("%s: inline code %q", p, m)
			}
		}
		// The SVG namespace is a name, not a request.
		b = []byte(strings.ReplaceAll(string(b), "http://www.w3.org/2000/svg", ""))
		if m := absolute.Find(b); m != nil {
			t.Errorf("%s: absolute URL %q", p, m)
		}
		if strings.HasSuffix(p, ".js") && regexp.MustCompile(`\beval\(|new Function\(|innerHTML|setAttribute\('style'`).Match(b) {
			t.Errorf("%s: eval, innerHTML or a style attribute", p)
		}
		return nil
	})
}

func devAccountOf(t *testing.T, h http.Handler, host, local, remote string) string {
	t.Helper()
	res := get(t, h, "GET", "/_tableemu/", func(r *http.Request) {
		r.Host = host
		r.RemoteAddr = remote
		if local != "" {
			addr, _ := net.ResolveTCPAddr("tcp", local)
			*r = *r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
		}
	})
	b, _ := io.ReadAll(res.Body)
	m := regexp.MustCompile(`<meta name="tableemu-dev-account" content="([^"]*)">`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no tableemu-dev-account meta")
	}
	return string(m[1])
}

// TestDevAccountOnlyOnLoopback: the page is told to open the development
// account by itself only on a loopback connection under a loopback name,
// and only when the account keeps its public key.
func TestDevAccountOnlyOnLoopback(t *testing.T) {
	h := New(Options{DevAccount: "devstoreaccount1"})
	for _, tc := range []struct {
		host, local, remote string
		want                string
	}{
		{"127.0.0.1:10002", "127.0.0.1:10002", "127.0.0.1:50000", "devstoreaccount1"},
		{"localhost:10002", "127.0.0.1:10002", "127.0.0.1:50000", "devstoreaccount1"},
		{"[::1]:10002", "[::1]:10002", "[::1]:50000", "devstoreaccount1"},
		{"devstoreaccount1.table.localhost:10002", "127.0.0.1:10002", "127.0.0.1:50000", "devstoreaccount1"},
		{"192.0.2.2:10002", "192.0.2.2:10002", "192.0.2.9:50000", ""},    // another machine
		{"192.0.2.2:10002", "192.0.2.2:10002", "127.0.0.1:50000", ""},    // a non-loopback listener
		{"evil.example:10002", "127.0.0.1:10002", "127.0.0.1:50000", ""}, // DNS rebinding
		{"127.0.0.1:10002", "", "127.0.0.1:50000", ""},                   // no listener address: unknown
	} {
		if got := devAccountOf(t, h, tc.host, tc.local, tc.remote); got != tc.want {
			t.Errorf("Host %s, local %s, remote %s: dev account %q, want %q", tc.host, tc.local, tc.remote, got, tc.want)
		}
	}
	if got := devAccountOf(t, New(Options{}), "127.0.0.1:10002", "127.0.0.1:10002", "127.0.0.1:5"); got != "" {
		t.Errorf("no development account configured: the page was told %q", got)
	}
}

func TestURL(t *testing.T) {
	if u := URL("https", "127.0.0.1:10002"); u != "https://127.0.0.1:10002/_tableemu/" {
		t.Errorf("URL: %s", u)
	}
}
