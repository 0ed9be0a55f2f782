package store

import "github.com/tableemu/tableemu/odata/edm"

// LazyEntity is a scanned row for a filter: its stored properties are
// decoded only when the filter asks for one other than the keys and the
// Timestamp. Engines fill E's keys and Timestamp and Props, the row's
// EncodeProps bytes (valid only while the row is current), then pass Get
// to odata.Eval and call Decode before handing E on.
type LazyEntity struct {
	E     *edm.Entity
	Props []byte
	Alias bool // decoded strings may point into Props
	// decoded says Decode ran; err is its result.
	decoded bool
	err     error
}

// Decode decodes the properties into E once.
func (l *LazyEntity) Decode() error {
	if !l.decoded {
		l.decoded = true
		l.err = DecodeEntityProps(l.E, l.Props, l.Alias)
	}
	return l.err
}

// Get is the property getter odata.Eval reads the filter with.
func (l *LazyEntity) Get(name string) (edm.Value, bool) {
	switch name {
	case "PartitionKey", "RowKey", "Timestamp":
	default:
		if l.Decode() != nil {
			return edm.Value{}, false
		}
	}
	return l.E.Get(name)
}

// Err is the error of a decode Get attempted (a filter that read a
// damaged row), nil if none.
func (l *LazyEntity) Err() error { return l.err }
