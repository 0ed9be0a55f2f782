package store

import "github.com/tableemu/tableemu/odata/edm"

// Where the keys stand (edm.KeyPlaces). Azure Cosmos DB for Table answers
// PartitionKey and RowKey where the client sent them among the properties
// (docs/cosmos.md, "where PartitionKey and RowKey stand"), so under the
// cosmos profile the stored form keeps their places. It does so inside
// the properties' JSONB object (props.go), as two marker members at the
// keys' places:
//
//	"$p": null   PartitionKey stands here
//	"$r": null   RowKey stands here
//
// and only when the keys are not first (PartitionKey, RowKey, then the
// properties): the usual case, every entity the storage profile writes,
// stores exactly what it stored before, at no cost. A property's key is
// never a marker: it is the name, which never contains '$'
// (wire.ValidatePropertyName), then '$' and a type letter, so it is at
// least three bytes long and its '$' is second to last; a marker is two
// bytes, '$' first.
//
// Every reader of the blob skips the markers: DecodePropsInto and
// DecodeEntityProps (which reads them into edm.KeyPlaces), LookupProp
// (a marker's key is never a property name plus a type suffix), SlimProps
// (a null value is never large), and SQL, whose compiled filters read one
// property with json_extract(props, '$."Name$t"'), a path no marker has.
// SQLite takes the blob as valid JSONB with the markers in
// (props_test.go). The PostgreSQL engine stores the same bytes.
//
// The other choice was a column of its own: a migration of both engines,
// and a wider row for every entity, to carry what clients other than
// Python's produce under the cosmos profile only. A release before this
// one refuses an entity stored with markers as malformed (its
// DecodePropsInto takes no key of fewer than three bytes): a read of it
// is 500 InternalError (its log: stored properties are malformed: key
// "$p"), never a wrong answer; its other entities read as before.

// Marker keys, as stored: a TEXT element of two bytes, then a null.
const (
	markPK = "$p"
	markRK = "$r"
	// markSize is one marker's bytes: key header, key, null.
	markSize = 1 + 2 + 1
)

// appendMark appends the marker of key ("PartitionKey" or "RowKey").
func appendMark(b []byte, key string) []byte {
	m := markPK
	if key == "RowKey" {
		m = markRK
	}
	b = appendElem(b, jbText, m)
	return append(b, jbNull)
}

// appendMarks appends the markers of the keys that stand before property
// i of n (i == n: after the last).
func appendMarks(b []byte, at edm.KeyPlaces, i, n int) []byte {
	first, second := at.At(i, n)
	if first != "" {
		b = appendMark(b, first)
	}
	if second != "" {
		b = appendMark(b, second)
	}
	return b
}

// EntityPropsBound is PropsBound for e's properties and its key markers.
func EntityPropsBound(e *edm.Entity) int {
	n := PropsBound(e.Properties)
	if !e.Keys.KeysFirst() {
		n += 2 * markSize
	}
	return n
}

// EncodeEntityProps is EncodeProps of e's properties with its keys'
// places (markers unless the keys are first).
func EncodeEntityProps(e *edm.Entity) []byte {
	return EncodeEntityPropsInto(make([]byte, 0, EntityPropsBound(e)), e)
}

// EncodeEntityPropsInto is EncodePropsInto for e's properties and its
// keys' places, in memory sized by EntityPropsBound(e).
func EncodeEntityPropsInto(mem []byte, e *edm.Entity) []byte {
	return encodePropsInto(mem, e.Properties, e.Keys)
}

// DecodeEntityProps reads stored properties into e: its Properties
// (reusing their slice from its start) and where its keys stand. With
// alias, as DecodePropsInto.
func DecodeEntityProps(e *edm.Entity, b []byte, alias bool) error {
	var err error
	e.Properties, e.Keys, err = decodeProps(e.Properties[:0], b, alias)
	return err
}

// markAt reads a key that is not a property's: a marker, noted in at with
// n, the count of properties before it; false for anything else. seen
// says which markers came already (PartitionKey's, RowKey's).
func markAt(key string, n int, at *edm.KeyPlaces, seen *[2]bool) bool {
	switch key {
	case markPK:
		at.PK = uint16(n)
		seen[0] = true
		// RowKey first at the same place: it came before.
		at.RKFirst = seen[1] && at.RK == at.PK
	case markRK:
		at.RK = uint16(n)
		seen[1] = true
	default:
		return false
	}
	return true
}
