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
		for rest, more := h, true; more; {
			var item string
			item, rest, more = strings.Cut(rest, ",")
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

// equalFoldAny reports whether strings.ToLower(s) is one of names, which
// are lower-case ASCII without a 'k', without allocating as ToLower does
// for a capital letter. Only ASCII letters fold: ToLower turns no other
// character into one of the names' (its one such mapping, the Kelvin sign
// to 'k', meets no 'k'), where strings.EqualFold would also match 'ſ'
// with 's'.
func equalFoldAny(s string, names ...string) bool {
	for _, n := range names {
		if len(s) == len(n) && asciiLowerIs(s, n) {
			return true
		}
	}
	return false
}

func asciiLowerIs(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

const (
	mediaOther mediaKind = iota
	mediaJSON
	mediaAtom
)

// mediaLevel classifies one media range such as
// "application/json; odata=fullmetadata" (spaces, case and parameter order
// vary between clients).
func mediaLevel(item string) (wire.Level, mediaKind) {
	typ, params, more := strings.Cut(item, ";")
	switch typ = strings.TrimSpace(typ); {
	case equalFoldAny(typ, "application/json", "json", "*/*", "application/*"):
	case equalFoldAny(typ, "application/atom+xml", "application/xml", "text/xml", "atom", "xml"):
		return 0, mediaAtom
	default:
		return 0, mediaOther
	}
	lvl := wire.MinimalMetadata
	for more {
		var p string
		p, params, more = strings.Cut(params, ";")
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "odata") {
			switch v = strings.TrimSpace(v); {
			case equalFoldAny(v, "nometadata"):
				lvl = wire.NoMetadata
			case equalFoldAny(v, "fullmetadata"):
				lvl = wire.FullMetadata
			case equalFoldAny(v, "minimalmetadata"):
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
	if c.s.cosmos {
		// Cosmos DB for Table: its own Content-Type, and neither
		// Cache-Control nor X-Content-Type-Options (docs/cosmos.md).
		h["Content-Type"] = cosmosContentTypeHeader(c.level)
	} else {
		h["Content-Type"] = contentTypeHeader(c.level)
		if !c.uncached {
			h["Cache-Control"] = noCacheHeader
		}
		h["X-Content-Type-Options"] = nosniffHeader
	}
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
	if c.s.cosmos {
		// Cosmos DB for Table names a Content-Type on a 204 too, and
		// sends neither Cache-Control nor X-Content-Type-Options
		// (docs/cosmos.md).
		h["Content-Type"] = plainJSONHeader
	} else {
		h["Cache-Control"] = noCacheHeader
		h["X-Content-Type-Options"] = nosniffHeader
	}
	if status != http.StatusNoContent || c.r.ProtoMajor >= 2 {
		// net/http's HTTP/1 server removes Content-Length from a 204
		// itself (suppressedHeaders; RFC 9110 8.6), so there it is not
		// set and the header map of a 204 stays one entry smaller (see
		// ServeHTTP). Its HTTP/2 server sends it: it stays, as before.
		h["Content-Length"] = zeroLengthHeader
	}
	c.w.WriteHeader(status)
}

// contentTypeHeader is the Content-Type header value of a JSON response
// at level l, shared.
func contentTypeHeader(l wire.Level) []string {
	switch l {
	case wire.NoMetadata:
		return noMetadataHeader
	case wire.FullMetadata:
		return fullMetadataHeader
	}
	return minimalMetadataHeader
}

// cosmosContentTypeHeader is contentTypeHeader under the cosmos profile:
// Cosmos DB for Table names the level with a space after the semicolon,
// and no streaming or charset parameter (every JSON answer recorded from
// it: conformance/testdata/recordings/python-cosmos, net-cosmos).
func cosmosContentTypeHeader(l wire.Level) []string {
	switch l {
	case wire.NoMetadata:
		return cosmosNoMetadataHeader
	case wire.FullMetadata:
		return cosmosFullMetadataHeader
	}
	return cosmosMinimalMetadataHeader
}

// Constant header values, shared: net/http only reads them.
var (
	cosmosNoMetadataHeader      = []string{"application/json; odata=nometadata"}
	cosmosMinimalMetadataHeader = []string{"application/json; odata=minimalmetadata"}
	cosmosFullMetadataHeader    = []string{"application/json; odata=fullmetadata"}
	noMetadataHeader            = []string{wire.NoMetadata.ContentType()}
	minimalMetadataHeader       = []string{wire.MinimalMetadata.ContentType()}
	fullMetadataHeader          = []string{wire.FullMetadata.ContentType()}
	noCacheHeader               = []string{"no-cache"}
	nosniffHeader               = []string{"nosniff"}
	zeroLengthHeader            = []string{"0"}

	returnNoContentHeader = []string{"return-no-content"}
	returnContentHeader   = []string{"return-content"}
)

// prefer reads the Prefer header: "return-content", "return-no-content" or
// "" (absent or anything else, which the service ignores).
func prefer(h http.Header) string {
	for _, v := range h["Prefer"] {
		for rest, more := v, true; more; {
			var item string
			item, rest, more = strings.Cut(rest, ",")
			switch item = strings.TrimSpace(item); {
			case equalFoldAny(item, "return-no-content"):
				return "return-no-content"
			case equalFoldAny(item, "return-content"):
				return "return-content"
			}
		}
	}
	return ""
}

// preferenceApplied is the Preference-Applied header value for pref,
// shared.
func preferenceApplied(pref string) []string {
	if pref == "return-no-content" {
		return returnNoContentHeader
	}
	return returnContentHeader
}
