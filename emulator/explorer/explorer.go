// Package explorer serves the data explorer: a page and its scripts at
// /_tableemu/, embedded in the binary. It is one more client of the Table
// API: the page signs its requests with an account key (Shared Key, computed
// in the browser) or carries a SAS the user pastes, exactly like an SDK, and
// this handler serves nothing but static files — no table, entity or
// account data passes through it, and it answers only GET and HEAD.
//
// The one thing the server tells the page is whether it may open the
// development account by itself: only when the request arrived on a
// loopback connection, under a loopback host name, and the configured
// devstoreaccount1 still has its public key (docs/explorer.md).
package explorer

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/tableemu/tableemu/auth"
)

//go:embed assets
var assets embed.FS

// Prefix is where the explorer is mounted.
const Prefix = "/_tableemu/"

// URL is the explorer's address on a server listening at addr:
// http://127.0.0.1:10002/_tableemu/ (printed at start-up).
func URL(scheme, addr string) string {
	return scheme + "://" + addr + Prefix
}

// CSP allows the page to load only its own scripts, styles and images and
// to talk only to its own origin (the Table API it is served by): no inline
// script or style, no other origin, no framing, no form posts, no plugins.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Options is what the page needs to know about the server.
type Options struct {
	// DevAccount is the development account's name when it is configured
	// with its well-known (public) key, else "".
	DevAccount string
	// Insights reports --insights: the page then shows query shapes and
	// the Insights view.
	Insights bool
}

// Handler serves the explorer's files.
type Handler struct {
	opts  Options
	files map[string]asset // path below Prefix → file
	index *template.Template
}

type asset struct {
	body  []byte
	ctype string
	etag  string
}

// New builds the handler over the embedded files.
func New(o Options) *Handler {
	h := &Handler{opts: o, files: map[string]asset{}}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "assets/")
		ct := mime.TypeByExtension(path.Ext(name))
		switch path.Ext(name) { // not left to the system's MIME table
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		case ".svg":
			ct = "image/svg+xml"
		case ".html":
			ct = "text/html; charset=utf-8"
		}
		sum := sha256.Sum256(b)
		h.files[name] = asset{body: b, ctype: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("explorer: embedded assets: " + err.Error())
	}
	h.index = template.Must(template.New("index").Parse(string(h.files["index.html"].body)))
	delete(h.files, "index.html")
	return h
}

// ServeHTTP answers GET and HEAD for the page and its files.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "The explorer's files are read-only; the data is reached through the Table API.", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	if p == strings.TrimSuffix(Prefix, "/") {
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		return
	}
	name, ok := strings.CutPrefix(p, Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	hd.Set("Cache-Control", "no-cache")
	if name == "" || name == "index.html" {
		h.serveIndex(w, r)
		return
	}
	a, ok := h.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	hd.Set("ETag", a.etag)
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", a.ctype)
	if r.Method == http.MethodHead {
		return
	}
	w.Write(a.body)
}

// page is what index.html is filled with.
type page struct {
	DevAccount string // "" unless the page may open it by itself
	Insights   bool
}

func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	pg := page{Insights: h.opts.Insights}
	if h.opts.DevAccount != "" && auth.Loopback(r) {
		pg.DevAccount = h.opts.DevAccount
	}
	var buf bytes.Buffer
	if err := h.index.Execute(&buf, pg); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method == http.MethodHead {
		return
	}
	w.Write(buf.Bytes())
}
