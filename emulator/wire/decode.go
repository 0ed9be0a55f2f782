package wire

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/odata/edm"
)

// Decoded is an entity read from a request body.
type Decoded struct {
	// Entity holds the keys (when present) and the user properties in the
	// order sent. Timestamp is always zero: a client's Timestamp is ignored
	// (docs/protocol.md 3.10, 4.3).
	Entity edm.Entity
	// HasPartitionKey and HasRowKey report whether the body carried the key
	// as a string. A key sent as null counts as absent.
	HasPartitionKey bool
	HasRowKey       bool
	// TypedKey names the first key the body annotates with an EDM type
	// other than Edm.String ("PartitionKey" or "RowKey"), and KeyType that
	// type; "" when no key is so annotated.
	TypedKey string
	KeyType  edm.Type
	// Timestamp is the text of a Timestamp member sent as a string, which
	// the service ignores and an import that keeps its source's
	// Timestamps reads (emulator/transfer); HasTimestamp says the body
	// had a Timestamp that is not null, a string or not.
	Timestamp    string
	HasTimestamp bool
}

// RequireKeys is the insert rule: both keys must be in the body, else 400
// PropertiesNeedValue (docs/protocol.md 3.10, observed in WIRE-GO
// TestInvalidEntity), and neither may be annotated with a type other than
// Edm.String, else 400 InvalidInput "One of the request inputs is not
// valid." (docs/protocol.md 0.1). Update, merge and the upserts take their
// keys from the URL, accept such annotations and need not call it.
func (d *Decoded) RequireKeys() error {
	if !d.HasPartitionKey || !d.HasRowKey {
		return tableemu.New(tableemu.PropertiesNeedValue)
	}
	if d.TypedKey != "" {
		// Live refuses Edm.DateTime and Edm.Guid keys on insert (Python
		// SDK recording test_encoder_create_entity_complex_keys) and
		// accepts Edm.String ones (its 12.5.1 recordings annotate every
		// key so); other types are read as DateTime and Guid are.
		return tableemu.New(tableemu.InvalidInput).WithHint(
			"Insert Entity takes its keys as strings, and %[1]s is annotated %[2]s. Send %[1]s without the annotation "+
				"(or as Edm.String), or write the entity with an upsert, which accepts it.", d.TypedKey, d.KeyType)
	}
	return nil
}

const (
	typeSuffix  = "@odata.type"
	odataPrefix = "odata."
)

// DecodeEntity reads an entity request body: one flat JSON object whose
// values are strings, numbers, booleans or null (docs/protocol.md 4.2).
//
//   - odata.* keys are ignored; so is Timestamp, whatever its type.
//   - "X@odata.type" may come before or after X and must name a known EDM
//     type; it is ignored when X is absent or null.
//   - A key that appears twice is 400 DuplicatePropertiesSpecified.
//   - PartitionKey and RowKey must be JSON strings; a number or a boolean is
//     400 InvalidInput. An annotation on a key may name any EDM type, and
//     the key stays the string sent: the Python SDK's encoder sends
//     DateTime, Guid and Binary keys that way, and the live service stores
//     them from an update, merge or upsert and reads them back as strings
//     (docs/protocol.md 0.1). A type other than Edm.String is noted in
//     TypedKey, for RequireKeys: an insert refuses it.
//   - null omits the property.
//
// DecodeEntity checks syntax and types only; limits (name rules, sizes,
// counts, key characters) are ValidateEntity's, because merge results are
// validated after merging.
func DecodeEntity(body []byte) (*Decoded, error) {
	return decodeEntity(body, DecodeOptions{})
}

// DecodeEntityShared is DecodeEntity for a body the caller will never
// change again: the result's strings are body's own bytes where they
// need no unescaping (most of them), not copies, so an entity costs no
// allocation per property name and value. Whatever keeps one of those
// strings keeps all of body in memory.
func DecodeEntityShared(body []byte) (*Decoded, error) {
	return decodeEntity(body, DecodeOptions{Shared: true})
}

// DecodeOptions says how DecodeEntityWith reads a body. The zero value is
// DecodeEntity: Azure Table storage's rules.
type DecodeOptions struct {
	// Shared is DecodeEntityShared's promise: the caller never changes
	// body again, so the result may share its bytes.
	Shared bool
	// Cosmos reads typed values as Azure Cosmos DB for Table does (the
	// cosmos profile, docs/cosmos.md): it also accepts the forms storage
	// refuses and Cosmos DB was recorded accepting (typedValue). It also
	// records where PartitionKey and RowKey stand among the properties
	// (Entity.Keys), which Cosmos DB answers them at and storage does
	// not: the .NET SDK sends them after the properties, Go's aztables
	// sorted among them (a map's keys).
	Cosmos bool
}

// DecodeEntityWith is DecodeEntity under options.
func DecodeEntityWith(body []byte, o DecodeOptions) (*Decoded, error) {
	return decodeEntity(body, o)
}

func decodeEntity(body []byte, o DecodeOptions) (*Decoded, error) {
	// The members are needed only here: their slice is reused.
	mp := memberPool.Get().(*[]member)
	defer func() {
		clear((*mp)[:cap(*mp)]) // drop the strings, of a failed scan's members too
		memberPool.Put(mp)
	}()
	members, err := scan((*mp)[:0], body, o.Shared)
	if members != nil && cap(members) <= maxPooledMembers {
		*mp = members[:0]
	}
	if err != nil {
		return nil, err
	}
	if err := checkDuplicates(members); err != nil {
		return nil, err
	}

	// Annotations first: they may follow the value they describe.
	var types map[string]edm.Type
	for i := range members {
		m := &members[i]
		prop, ok := strings.CutSuffix(m.name, typeSuffix)
		if !ok || strings.HasPrefix(m.name, odataPrefix) || prop == "Timestamp" {
			continue
		}
		if m.kind != kString {
			return nil, invalidBodyf("the annotation %s must be a string naming an EDM type such as \"Edm.Int64\", not %s", quote(m.name), m.kind)
		}
		t, ok := edm.ParseType(m.text)
		if !ok {
			return nil, invalidBodyf("the annotation %s names an unknown type %s; the types are Edm.String, Edm.Int32, Edm.Int64, Edm.Double, Edm.Boolean, Edm.DateTime, Edm.Guid and Edm.Binary", quote(m.name), quote(m.text))
		}
		if types == nil {
			types = make(map[string]edm.Type, 4)
		}
		types[prop] = t
	}

	d := &Decoded{}
	d.Entity.Properties = make([]edm.Property, 0, len(members))
	rkFirst := false // RowKey came before PartitionKey (o.Cosmos)
	for i := range members {
		m := &members[i]
		if strings.HasPrefix(m.name, odataPrefix) || isAnnotation(m.name) {
			continue
		}
		t, typed := types[m.name]
		switch m.name {
		case "Timestamp":
			d.HasTimestamp = m.kind != kNull
			if m.kind == kString {
				d.Timestamp = m.text
			}
			continue
		case "PartitionKey", "RowKey":
			if m.kind == kNull {
				continue
			}
			if m.kind != kString {
				return nil, invalidBodyf("%s must be a string, not %s", m.name, m.kind)
			}
			if typed && t != edm.String && d.TypedKey == "" {
				d.TypedKey, d.KeyType = m.name, t
			}
			if m.name == "PartitionKey" {
				d.Entity.PartitionKey, d.HasPartitionKey = m.text, true
				if o.Cosmos {
					d.Entity.Keys.PK = uint16(len(d.Entity.Properties))
				}
			} else {
				d.Entity.RowKey, d.HasRowKey = m.text, true
				if o.Cosmos {
					d.Entity.Keys.RK = uint16(len(d.Entity.Properties))
					rkFirst = !d.HasPartitionKey
				}
			}
			continue
		}
		if m.kind == kNull {
			continue
		}
		var v edm.Value
		var err error
		if typed {
			v, err = typedValue(m, t, o.Cosmos)
		} else {
			v, err = inferredValue(m)
		}
		if err != nil {
			return nil, err
		}
		d.Entity.Properties = append(d.Entity.Properties, edm.Property{Name: m.name, Value: v})
	}
	// A key the body lacks (sent as null, or left to the URL) stands
	// first, where storage puts every key: no recording shows one.
	d.Entity.Keys.RKFirst = rkFirst && d.HasPartitionKey && d.Entity.Keys.PK == d.Entity.Keys.RK
	return d, nil
}

// memberPool holds scan's member slices (*[]member); one that grew past
// maxPooledMembers is left to the collector.
var memberPool = sync.Pool{New: func() any { m := make([]member, 0, 16); return &m }}

const maxPooledMembers = 256

// isAnnotation reports whether a key is an instance annotation rather than
// a property: "X@odata.type", or "X@ns.term" for any namespaced term (OData
// JSON ignores annotations it does not know). A name with '@' but no
// namespaced term stays a property name, which validation then refuses.
func isAnnotation(name string) bool {
	at := strings.LastIndexByte(name, '@')
	return at >= 0 && strings.IndexByte(name[at+1:], '.') > 0
}

// checkDuplicates refuses any key sent twice, annotations included.
func checkDuplicates(members []member) error {
	dup := func(name string) error {
		return tableemu.New(tableemu.DuplicatePropertiesSpecified).WithHint(
			"the key %s appears more than once in the entity.", quote(name))
	}
	if len(members) <= 16 {
		for i := 1; i < len(members); i++ {
			for j := 0; j < i; j++ {
				if members[i].name == members[j].name {
					return dup(members[i].name)
				}
			}
		}
		return nil
	}
	seen := make(map[string]struct{}, len(members))
	for i := range members {
		if _, ok := seen[members[i].name]; ok {
			return dup(members[i].name)
		}
		seen[members[i].name] = struct{}{}
	}
	return nil
}

// inferredValue types an unannotated value (docs/protocol.md 4.2): string →
// String, true/false → Boolean, an integer within Int32 → Int32, any other
// number → Double. An integer outside Int32 becomes a Double, as reported
// for the live service (azure-storage-node #316) and as the live service
// accepted 2^63·1000 from the Python SDK's tests.
func inferredValue(m *member) (edm.Value, error) {
	switch m.kind {
	case kString:
		return edm.NewString(m.text), nil
	case kTrue:
		return edm.NewBoolean(true), nil
	case kFalse:
		return edm.NewBoolean(false), nil
	}
	if m.integer && len(m.text) <= 11 {
		if n, err := strconv.ParseInt(m.text, 10, 32); err == nil {
			return edm.NewInt32(int32(n)), nil
		}
	}
	return numberDouble(m)
}

// numberDouble converts a JSON number to a Double. A finite text that
// overflows float64 is refused (docs/protocol.md 0.1: "13e7705" is 400); one that
// underflows becomes zero, as .NET's parser does.
func numberDouble(m *member) (edm.Value, error) {
	f, err := strconv.ParseFloat(m.text, 64)
	if err != nil || math.IsInf(f, 0) {
		return edm.Value{}, unreadableValuef("the value %s of property %s is outside the range of Edm.Double", clip(m.text), quote(m.name))
	}
	return edm.NewDouble(f), nil
}

// typedValue converts a value under an explicit @odata.type. What is
// accepted is what clients send (docs/protocol.md 4.2, 0.1):
//
//   - Int32: a JSON integer, or a decimal string — the legacy azure-storage
//     Node SDK 2.10.7 sends the caller's string as is with the Edm.Int32
//     annotation (edmhandler.js serializeValue/isTypeRequired), and Python
//     sends "12345" (accepted live, azure-data-tables encoder tests).
//   - Int64: a decimal string (every SDK), or a JSON integer.
//   - Double: a number, or a string holding a number, "NaN", "Infinity" or
//     "-Infinity" — the Node SDK 2.10.7 sends every Double as
//     value.toString() with the annotation.
//   - Boolean: true/false, or the strings "true"/"false" in any case
//     (Python's "False" with Edm.Boolean was accepted live).
//   - DateTime, Guid, Binary: strings.
//   - String: a string; under cosmos, a JSON number too (below).
//
// A value the annotation cannot describe is 400 InvalidInput, "An error
// occurred while processing this request." (docs/protocol.md 4.2, 0.1; the
// live service's answer to an out-of-range Int32 or Int64: unreadableValuef).
//
// Under cosmos (Azure Cosmos DB for Table, docs/cosmos.md) one form more is
// accepted, the only one the Cosmos recordings show that storage refuses:
// a JSON number annotated Edm.String. Cosmos DB took {"text@odata.type":
// "Edm.String","text":42} in an upsert (204) and read "text" back as 42
// with no annotation, a number (python-cosmos test_table_entity_cosmos
// …test_entity_with_edmtypes); storage refused the same body, 400
// InvalidInput (python test_table_entity…test_entity_with_edmtypes). The
// number is therefore typed as an unannotated one is (inferredValue):
// Int32 when it is an integer within Int32, else Double. The other typed
// values of that recording (Edm.Boolean "false", Edm.Int32 "23", Edm.Double
// "0", an Edm.DateTime with no offset, read as UTC) are forms storage
// accepts as well (see above), so both profiles read them alike. Not in the
// evidence, so refused under both profiles as storage refuses them: a
// boolean annotated Edm.String, "1" or "0" for Edm.Boolean, "0x10", 23.0
// or "23.5" for Edm.Int32, a fraction for Edm.Int64, a number for
// Edm.Guid, Edm.Binary or Edm.DateTime.
func typedValue(m *member, t edm.Type, cosmos bool) (edm.Value, error) {
	switch t {
	case edm.String:
		switch {
		case m.kind == kString:
			return edm.NewString(m.text), nil
		case m.kind == kNumber && cosmos:
			return inferredValue(m)
		case m.kind == kNumber:
			return edm.Value{}, outOfType(m, t, "send it as a JSON string, or without the annotation to store a number "+
				"(Azure Cosmos DB for Table, --profile cosmos, stores it as such a number)")
		}
	case edm.Int32:
		if text, ok := integerText(m); ok {
			if n, err := strconv.ParseInt(text, 10, 32); err == nil {
				return edm.NewInt32(int32(n)), nil
			}
			return edm.Value{}, outOfType(m, t, "it is outside the Int32 range -2147483648 to 2147483647")
		}
	case edm.Int64:
		if text, ok := integerText(m); ok {
			if n, err := strconv.ParseInt(text, 10, 64); err == nil {
				return edm.NewInt64(n), nil
			}
			return edm.Value{}, outOfType(m, t, "it is outside the Int64 range")
		}
	case edm.Double:
		switch m.kind {
		case kNumber:
			return numberDouble(m)
		case kString:
			f, err := edm.ParseDouble(m.text)
			if err == nil {
				return edm.NewDouble(f), nil
			}
		}
	case edm.Boolean:
		switch m.kind {
		case kTrue:
			return edm.NewBoolean(true), nil
		case kFalse:
			return edm.NewBoolean(false), nil
		case kString:
			switch {
			case strings.EqualFold(m.text, "true"):
				return edm.NewBoolean(true), nil
			case strings.EqualFold(m.text, "false"):
				return edm.NewBoolean(false), nil
			}
		}
	case edm.DateTime:
		if m.kind == kString {
			ticks, err := edm.ParseDateTime(m.text)
			switch {
			case err == nil:
				return edm.NewDateTime(ticks), nil
			case errors.Is(err, edm.ErrDateTimeRange):
				return edm.Value{}, dateTimeRange(m.name, m.text)
			}
		}
	case edm.Guid:
		if m.kind == kString {
			if g, err := edm.NewGuid(m.text); err == nil {
				return g, nil
			}
		}
	case edm.Binary:
		if m.kind == kString {
			b, err := base64.StdEncoding.DecodeString(m.text)
			if err == nil {
				if b == nil {
					b = []byte{}
				}
				return edm.NewBinary(b), nil
			}
		}
	}
	return edm.Value{}, outOfType(m, t, "")
}

// integerText returns the decimal text of an integer sent as a JSON integer
// or as a string of digits with an optional sign (Azurite's Int32 rule,
// /^[+-]?\d+$/).
func integerText(m *member) (string, bool) {
	switch m.kind {
	case kNumber:
		return m.text, m.integer
	case kString:
		s := m.text
		if s != "" && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		if s == "" {
			return "", false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return "", false
			}
		}
		return m.text, true
	}
	return "", false
}

func outOfType(m *member, t edm.Type, why string) error {
	shown := m.kind.String()
	if m.kind == kString || m.kind == kNumber {
		shown = clip(m.text)
		if m.kind == kString {
			shown = quote(m.text)
		}
	}
	if why == "" {
		return unreadableValuef("the value %s of property %s is not a valid %s", shown, quote(m.name), t.Name())
	}
	return unreadableValuef("the value %s of property %s is not a valid %s: %s", shown, quote(m.name), t.Name(), why)
}

// dateTimeRange is the service's message for a DateTime before 1601 or
// after 9999 (docs/protocol.md 10, observed by CloudStub): the instant printed as
// MM/dd/yyyy HH:mm:ss.
func dateTimeRange(prop, text string) error {
	shown := text
	if t, ok := looseDateTime(text); ok {
		shown = t.Format("01/02/2006 15:04:05")
	}
	return tableemu.Newf(tableemu.OutOfRangeInput, "The '%s' parameter of value '%s' is out of range.", prop, shown)
}

// looseDateTime reads the date-time edm.ParseDateTime refused for its range
// only, without a range limit, to print it in the error message. It expects
// what ParseDateTime accepted syntactically.
func looseDateTime(s string) (time.Time, bool) {
	num := func(i, n int) int {
		if i+n > len(s) {
			return -1
		}
		v, err := strconv.Atoi(s[i : i+n])
		if err != nil {
			return -1
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	if year < 0 || month < 0 || day < 0 {
		return time.Time{}, false
	}
	var hour, minute, sec, offset int
	i := 10
	if len(s) > 10 && (s[10] == 'T' || s[10] == 't') {
		hour, minute = num(11, 2), num(14, 2)
		i = 16
		if len(s) > 16 && s[16] == ':' {
			sec = num(17, 2)
			i = 19
			if len(s) > 19 && s[19] == '.' {
				for i = 20; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
				}
			}
		}
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		oh, om := num(i+1, 2), num(i+4, 2)
		offset = oh*60 + om
		if s[i] == '-' {
			offset = -offset
		}
	}
	if hour < 0 || minute < 0 || sec < 0 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	return t.Add(-time.Duration(offset) * time.Minute), true
}

// quote renders a client-supplied text for a message, cut to a readable
// length.
func quote(s string) string { return strconv.Quote(clip(s)) }

func clip(s string) string {
	const max = 64
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
