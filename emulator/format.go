package emulator

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/wire"
)

// negotiate picks the JSON metadata level of a response (docs/protocol.md 2.1,
// 0.1). $format wins over Accept: the Go SDK always sends Accept minimal and
// puts the caller's choice in $format. No Accept, */* and bare
// application/json mean minimal metadata; a request that accepts only Atom
// (or XML) gets 415 AtomFormatNotSupported, as from the service.
// q is r's query, parsed.
func negotiate(r *http.Request, q url.Values) (wire.Level, *tableemu.Error) {
	if f := q.Get("$format"); f != "" {
		if lvl, kind := mediaLevel(f); kind == mediaJSON {
			return lvl, nil
		} else if kind == mediaAtom {
			return wire.MinimalMetadata, tableemu.New(tableemu.AtomFormatNotSupported)
		}
		return wire.MinimalMetadata, tableemu.New(tableemu.InvalidQueryParameterValue).
			WithDetail("$format %q is not a JSON media type", f)
	}
	accept := r.Header["Accept"]
	if len(accept) == 0 {
		return wire.MinimalMetadata, nil
	}
	sawAtom := false
	for _, h := range accept {
		for _, item := range strings.Split(h, ",") {
			if strings.TrimSpace(item) == "" {
				continue
			}
			lvl, kind := mediaLevel(item)
			switch kind {
			case mediaJSON:
				return lvl, nil
			case mediaAtom:
				sawAtom = true
			}
		}
	}
	if sawAtom {
		return wire.MinimalMetadata, tableemu.New(tableemu.AtomFormatNotSupported)
	}
	return wire.MinimalMetadata, nil
}

type mediaKind int

const (
	mediaOther mediaKind = iota
	mediaJSON
	mediaAtom
)

// mediaLevel classifies one media range such as
// "application/json; odata=fullmetadata" (spaces, case and parameter order
// vary between clients).
func mediaLevel(item string) (wire.Level, mediaKind) {
	parts := strings.Split(item, ";")
	typ := strings.ToLower(strings.TrimSpace(parts[0]))
	switch typ {
	case "application/json", "json", "*/*", "application/*":
	case "application/atom+xml", "application/xml", "text/xml", "atom", "xml":
		return 0, mediaAtom
	default:
		return 0, mediaOther
	}
	lvl := wire.MinimalMetadata
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "odata") {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "nometadata":
				lvl = wire.NoMetadata
			case "fullmetadata":
				lvl = wire.FullMetadata
			case "minimalmetadata":
				lvl = wire.MinimalMetadata
			default:
				return 0, mediaOther
			}
		}
	}
	return lvl, mediaJSON
}

// writeJSON sends a JSON (OData) response body.
func (c *call) writeJSON(status int, body []byte) {
	h := c.w.Header() // canonical names straight in the map: see ServeHTTP
	h["Content-Type"] = []string{c.level.ContentType()}
	if !c.uncached {
		h["Cache-Control"] = noCacheHeader
	}
	h["X-Content-Type-Options"] = nosniffHeader
	// net/http sends Content-Length itself for a body it holds whole when
	// the handler returns (shorter than its 2048-byte buffer); a longer
	// one would be chunked, and an answer to HEAD has none to measure: those
	// get it here. Either way the client learns the length, and the map
	// stays small (ServeHTTP).
	if len(body) >= 2048 || c.r.Method == http.MethodHead {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	c.w.WriteHeader(status)
	if c.r.Method != http.MethodHead {
		c.w.Write(body)
	}
}

// writeNoContent sends a response without a body (204, or 202 for the
// service-properties PUT).
func (c *call) writeNoContent(status int) {
	h := c.w.Header()
	h["Cache-Control"] = noCacheHeader
	h["X-Content-Type-Options"] = nosniffHeader
	h["Content-Length"] = zeroLengthHeader
	c.w.WriteHeader(status)
}

// Constant header values, shared: net/http only reads them.
var (
	noCacheHeader    = []string{"no-cache"}
	nosniffHeader    = []string{"nosniff"}
	zeroLengthHeader = []string{"0"}
)

// prefer reads the Prefer header: "return-content", "return-no-content" or
// "" (absent or anything else, which the service ignores).
func prefer(h http.Header) string {
	for _, v := range h.Values("Prefer") {
		for _, item := range strings.Split(v, ",") {
			switch strings.ToLower(strings.TrimSpace(item)) {
			case "return-no-content":
				return "return-no-content"
			case "return-content":
				return "return-content"
			}
		}
	}
	return ""
}
