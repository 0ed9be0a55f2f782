package wire

import (
	"encoding/base64"
	"math"
	"strconv"

	"github.com/tableemu/tableemu/odata/edm"
)

// Level is an OData JSON metadata level (docs/protocol.md 4.1).
type Level int

// MinimalMetadata is the zero Level on purpose: it is what a JSON request
// without an Accept preference gets (docs/protocol.md 0.1), so a zero Options
// encodes correctly.
const (
	MinimalMetadata Level = iota
	NoMetadata
	FullMetadata
)

func (l Level) String() string {
	switch l {
	case NoMetadata:
		return "nometadata"
	case FullMetadata:
		return "fullmetadata"
	}
	return "minimalmetadata"
}

// ContentType is the response Content-Type for the level, written without
// spaces as the service sends it (docs/protocol.md 2.2).
func (l Level) ContentType() string {
	switch l {
	case NoMetadata:
		return "application/json;odata=nometadata;streaming=true;charset=utf-8"
	case FullMetadata:
		return "application/json;odata=fullmetadata;streaming=true;charset=utf-8"
	}
	return "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
}

// Options says how to encode entities.
type Options struct {
	Level Level
	// BaseURL is the service root, e.g.
	// "http://127.0.0.1:10002/devstoreaccount1", without a trailing slash.
	BaseURL string
	// Account and Table make odata.type "<account>.<table>" (full metadata).
	Account string
	Table   string
	// Select lists the properties of a $select projection; nil (or an
	// empty list, or one holding "*") means all properties.
	Select []string
	// SelectEcho, when set, is what odata.metadata shows after "&$select="
	// for a projection, in place of the names joined with commas: the
	// service echoes the $select it was sent, escaped again
	// (docs/protocol.md 3.9).
	SelectEcho string
	// Lines asks for the form of a JSON Lines export (docs/transfer.md):
	// minimal metadata's annotations without odata.etag (a file holds
	// data, not versions), and Edm.Double annotated on a Double with a
	// whole value too, which JSON tools are free to write back as an
	// integer (2.0 as 2) that a reader would take for an Int32.
	Lines bool
	// Cosmos asks for the form Azure Cosmos DB for Table answers in
	// (tableemu --profile cosmos, docs/cosmos.md), as its recordings show
	// it: Timestamp last, after the properties; PartitionKey and
	// RowKey where the entity's Keys put them; in full metadata the
	// annotations in the order odata.type, odata.id, odata.editLink,
	// odata.metadata (of a single entity), odata.etag; a single entity's
	// odata.metadata
	// "<base>/<table>/$metadata#<table>/@Element", without $select; and
	// every DateTime with seven fractional digits.
	Cosmos bool
}

var defaultOptions Options

// AppendEntity appends one entity as it appears inside a query response's
// "value" array (docs/protocol.md 3.8, 4.1): the odata annotations of the level
// (full: odata.type, odata.id, odata.etag, odata.editLink; minimal:
// odata.etag; none: nothing), then PartitionKey, RowKey and Timestamp, then
// the user properties, each "X@odata.type" right before X. Options.Cosmos
// changes the order (see there).
func AppendEntity(b []byte, e *edm.Entity, o *Options) []byte {
	b = append(b, '{')
	return appendBody(b, e, opts(o), false, false)
}

// AppendEntityDocument appends a single-entity response (Get Entity, the
// Insert echo): like AppendEntity, led by odata.metadata
// "<base>/$metadata#<table>/@Element", plus "&$select=a,b" when projecting
// (docs/protocol.md 3.9). No metadata level has no odata.metadata.
// Options.Cosmos changes its form and place (see there).
func AppendEntityDocument(b []byte, e *edm.Entity, o *Options) []byte {
	o = opts(o)
	b = append(b, '{')
	switch {
	case o.Level == NoMetadata:
		return appendBody(b, e, o, false, false)
	case o.Cosmos && o.Level == FullMetadata:
		// Cosmos DB for Table writes odata.metadata after
		// odata.editLink (test_get_entity_full_metadata,
		// test_insert_entity_with_full_metadata, python-cosmos):
		// appendBody places it.
		return appendBody(b, e, o, false, true)
	}
	b = append(b, `"odata.metadata":`...)
	b = appendMetadataURL(b, o)
	return appendBody(b, e, o, true, false)
}

// appendMetadataURL appends a single entity's odata.metadata value, quoted.
func appendMetadataURL(b []byte, o *Options) []byte {
	b = append(b, '"')
	b = edm.AppendJSONStringBody(b, o.BaseURL)
	if o.Cosmos {
		// Cosmos DB for Table names the table in the path as well, and
		// shows no $select, even for a projection (every entity answer
		// recorded from it, e.g. test_get_entity, test_get_entity_with_select
		// in python-cosmos; docs/cosmos.md).
		b = append(b, '/')
		b = edm.AppendJSONStringBody(b, o.Table)
		b = append(b, "/$metadata#"...)
		b = edm.AppendJSONStringBody(b, o.Table)
		return append(b, `/@Element"`...)
	}
	b = append(b, "/$metadata#"...)
	b = edm.AppendJSONStringBody(b, o.Table)
	b = append(b, "/@Element"...)
	if sel := selection(o.Select); sel != nil {
		b = append(b, "&$select="...)
		if o.SelectEcho != "" {
			b = edm.AppendJSONStringBody(b, o.SelectEcho)
		} else {
			for i, name := range sel {
				if i > 0 {
					b = append(b, ',')
				}
				b = edm.AppendJSONStringBody(b, name)
			}
		}
	}
	return append(b, '"')
}

func opts(o *Options) *Options {
	if o == nil {
		return &defaultOptions
	}
	return o
}

// selection returns the projection list, or nil for "all properties".
func selection(sel []string) []string {
	if len(sel) == 0 {
		return nil
	}
	for _, s := range sel {
		if s == "*" {
			return nil
		}
	}
	return sel
}

// appendBody writes the members after '{' (and after odata.metadata when
// more is set) and the closing brace; meta asks it to write odata.metadata
// itself, where Cosmos DB for Table places it in full metadata.
func appendBody(b []byte, e *edm.Entity, o *Options, more, meta bool) []byte {
	w := objWriter{b: b, more: more, cosmos: o.Cosmos}
	// The Timestamp is formatted once: it appears twice, as itself and in
	// the ETag.
	var tsBuf [32]byte
	ts := edm.AppendTimestamp(tsBuf[:0], e.Timestamp)
	switch o.Level {
	case FullMetadata:
		w.key("odata.type")
		w.b = append(w.b, '"')
		w.b = edm.AppendJSONStringBody(w.b, o.Account)
		w.b = append(w.b, '.')
		w.b = edm.AppendJSONStringBody(w.b, o.Table)
		w.b = append(w.b, '"')
		w.key("odata.id")
		w.b = append(w.b, '"')
		w.b = edm.AppendJSONStringBody(w.b, o.BaseURL)
		w.b = append(w.b, '/')
		w.b = edm.AppendJSONStringBody(w.b, EntityPath(o.Table, e.PartitionKey, e.RowKey))
		w.b = append(w.b, '"')
		if o.Cosmos {
			// odata.editLink before odata.etag, odata.metadata between
			// them (Options.Cosmos).
			w.key("odata.editLink")
			w.b = edm.AppendJSONString(w.b, EntityPath(o.Table, e.PartitionKey, e.RowKey))
			if meta {
				w.key("odata.metadata")
				w.b = appendMetadataURL(w.b, o)
			}
			w.key("odata.etag")
			w.b = appendETagJSON(w.b, ts)
			break
		}
		w.key("odata.etag")
		w.b = appendETagJSON(w.b, ts)
		w.key("odata.editLink")
		w.b = edm.AppendJSONString(w.b, EntityPath(o.Table, e.PartitionKey, e.RowKey))
	case MinimalMetadata:
		if !o.Lines {
			w.key("odata.etag")
			w.b = appendETagJSON(w.b, ts)
		}
	}

	sel := selection(o.Select)
	if sel == nil {
		// Cosmos DB for Table answers the keys where the client sent
		// them among the properties (the .NET SDK: after them; net-cosmos
		// TableQueryableExecuteQueryGeneric and the other
		// TableClientQueryableLiveTests; docs/cosmos.md), which the
		// entity keeps (edm.Entity.Keys); storage answers them first.
		placed := o.Cosmos && !e.Keys.KeysFirst()
		if !placed {
			w.system(e, ts, o.Level, "PartitionKey")
			w.system(e, ts, o.Level, "RowKey")
		}
		if !o.Cosmos {
			w.system(e, ts, o.Level, "Timestamp")
		}
		n := len(e.Properties)
		for i := range e.Properties {
			if placed {
				w.keysAt(e, ts, o.Level, i, n)
			}
			if o.Lines && e.Properties[i].Value.T == edm.Double && !edm.IsSpecialDouble(e.Properties[i].Value.F) &&
				e.Properties[i].Value.F == math.Trunc(e.Properties[i].Value.F) {
				w.annotationKey(e.Properties[i].Name)
				w.b = append(w.b, `"Edm.Double"`...)
			}
			w.property(e.Properties[i].Name, e.Properties[i].Value, e.Properties[i].Plain, o.Level)
		}
		if placed {
			w.keysAt(e, ts, o.Level, n, n)
		}
		if o.Cosmos {
			// Cosmos DB for Table writes Timestamp last, in every
			// entity it answers with (docs/cosmos.md).
			w.system(e, ts, o.Level, "Timestamp")
		}
		w.b = append(w.b, '}')
		return w.b
	}

	// A projection returns only the listed properties — the system ones
	// only when listed, still first and in their usual order — and null
	// for a listed property the entity lacks (docs/protocol.md 6.4).
	// Under Options.Cosmos a listed Timestamp comes last, as in a whole
	// entity: the recordings project no Timestamp (test_get_entity_with_select
	// lists age and ratio), and a Cosmos DB entity has it nowhere else.
	for _, name := range [...]string{"PartitionKey", "RowKey", "Timestamp"} {
		if contains(sel, name) && (name != "Timestamp" || !o.Cosmos) {
			w.system(e, ts, o.Level, name)
		}
	}
	for i, name := range sel {
		switch name {
		case "PartitionKey", "RowKey", "Timestamp":
			continue
		}
		if contains(sel[:i], name) {
			continue // listed twice
		}
		if v, ok := lookup(e, name); ok {
			w.property(name, v, false, o.Level)
		} else {
			w.key(name)
			w.b = append(w.b, "null"...)
		}
	}
	if o.Cosmos && contains(sel, "Timestamp") {
		w.system(e, ts, o.Level, "Timestamp")
	}
	w.b = append(w.b, '}')
	return w.b
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func lookup(e *edm.Entity, name string) (edm.Value, bool) {
	for i := range e.Properties {
		if e.Properties[i].Name == name {
			return e.Properties[i].Value, true
		}
	}
	return edm.Value{}, false
}

// objWriter writes object members, placing the commas.
type objWriter struct {
	b    []byte
	more bool
	// cosmos: Options.Cosmos, which writes every DateTime with seven
	// fractional digits.
	cosmos bool
}

func (w *objWriter) key(name string) { w.keySuffixed(name, "") }

// annotationKey writes the key "<name>@odata.type".
func (w *objWriter) annotationKey(name string) { w.keySuffixed(name, typeSuffix) }

// keySuffixed writes the key name+suffix; suffix needs no escaping.
func (w *objWriter) keySuffixed(name, suffix string) {
	if w.more {
		w.b = append(w.b, ',')
	}
	w.more = true
	w.b = append(w.b, '"')
	w.b = appendName(w.b, name)
	w.b = append(w.b, suffix...)
	w.b = append(w.b, '"', ':')
}

// appendName appends a member name JSON-escaped. Names are short and
// almost always plain ASCII (property names are identifiers), which a
// byte loop confirms faster than the general escaper gets started.
func appendName(b []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return edm.AppendJSONStringBody(b, name)
		}
	}
	return append(b, name...)
}

// system writes PartitionKey, RowKey or Timestamp. Keys are never
// annotated; Timestamp is, in full metadata only, and always has seven
// fractional digits (docs/protocol.md 4.3).
func (w *objWriter) system(e *edm.Entity, ts []byte, l Level, name string) {
	switch name {
	case "PartitionKey":
		w.key(name)
		w.b = edm.AppendJSONString(w.b, e.PartitionKey)
	case "RowKey":
		w.key(name)
		w.b = edm.AppendJSONString(w.b, e.RowKey)
	case "Timestamp":
		if l == FullMetadata {
			w.key("Timestamp@odata.type")
			w.b = append(w.b, `"Edm.DateTime"`...)
		}
		w.key(name)
		w.b = append(w.b, '"')
		w.b = append(w.b, ts...)
		w.b = append(w.b, '"')
	}
}

// keysAt writes the keys that stand before property i of n (i == n:
// after the last), as e.Keys places them.
func (w *objWriter) keysAt(e *edm.Entity, ts []byte, l Level, i, n int) {
	first, second := e.Keys.At(i, n)
	if first != "" {
		w.system(e, ts, l, first)
	}
	if second != "" {
		w.system(e, ts, l, second)
	}
}

// property writes one user property. Int64, DateTime, Guid and Binary are
// annotated in minimal and full metadata, Double only for NaN and ±Inf
// (which travel as strings). Int32, String, Boolean and finite Doubles are
// never annotated: JSON carries their type, and the Go SDK turns any such
// annotation into a nil value (docs/protocol.md 4.2, 13).
func (w *objWriter) property(name string, v edm.Value, plain bool, l Level) {
	annotate := func(t edm.Type) {
		if l != NoMetadata {
			w.annotationKey(name)
			w.b = append(w.b, '"')
			w.b = append(w.b, t.Name()...)
			w.b = append(w.b, '"')
		}
	}
	switch v.T {
	case edm.String:
		w.key(name)
		w.b = appendString(w.b, v.S, plain)
	case edm.Int32:
		w.key(name)
		w.b = strconv.AppendInt(w.b, v.N, 10)
	case edm.Boolean:
		w.key(name)
		w.b = strconv.AppendBool(w.b, v.Bool())
	case edm.Double:
		if edm.IsSpecialDouble(v.F) {
			annotate(edm.Double)
			w.key(name)
			w.b = append(w.b, '"')
			w.b = edm.AppendDouble(w.b, v.F)
			w.b = append(w.b, '"')
			return
		}
		w.key(name)
		w.b = edm.AppendDouble(w.b, v.F)
	case edm.Int64:
		annotate(edm.Int64)
		w.key(name)
		w.b = append(w.b, '"')
		w.b = strconv.AppendInt(w.b, v.N, 10)
		w.b = append(w.b, '"')
	case edm.DateTime:
		annotate(edm.DateTime)
		w.key(name)
		w.b = append(w.b, '"')
		if w.cosmos {
			// Cosmos DB for Table writes all seven digits of every
			// DateTime, as storage does only for Timestamp
			// (1973-10-04T00:00:00.0000000Z: test_get_entity and every
			// other python-cosmos recording of a DateTime).
			w.b = edm.AppendTimestamp(w.b, v.N)
		} else {
			w.b = edm.AppendDateTime(w.b, v.N)
		}
		w.b = append(w.b, '"')
	case edm.Guid:
		annotate(edm.Guid)
		w.key(name)
		w.b = appendString(w.b, v.S, plain)
	case edm.Binary:
		annotate(edm.Binary)
		w.key(name)
		w.b = append(w.b, '"')
		w.b = base64.StdEncoding.AppendEncode(w.b, v.B)
		w.b = append(w.b, '"')
	default:
		w.key(name)
		w.b = append(w.b, "null"...)
	}
}

// appendString appends s as a JSON string, copying it when the reader said
// it needs no escaping (edm.Property.Plain).
func appendString(b []byte, s string, plain bool) []byte {
	if !plain {
		return edm.AppendJSONString(b, s)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
