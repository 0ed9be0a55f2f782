package edm

// Property is one user property of an entity.
type Property struct {
	Name  string
	Value Value
	// Plain, when set, says Value is a String or Guid whose text needs no
	// JSON escaping (JSONPlain), so a writer may copy it as it is. A
	// reader that knows it sets it; false means unknown.
	Plain bool
}

// Entity is a stored entity: its keys, the server-set Timestamp (in ticks;
// the ETag is derived from it) and its user properties in the order the
// client sent them. PartitionKey, RowKey and Timestamp never appear in
// Properties.
type Entity struct {
	PartitionKey string
	RowKey       string
	Timestamp    int64
	Properties   []Property
	// Keys is where PartitionKey and RowKey stood among the properties in
	// the body that wrote the entity, kept for the profile that answers
	// them there (Azure Cosmos DB for Table); zero, both keys first, is
	// the usual case and all the storage profile ever records.
	Keys KeyPlaces
}

// KeyPlaces says where an entity's keys stand among its properties: PK
// and RK count the properties before PartitionKey and before RowKey, and
// RKFirst, meaningful only when the counts are equal, puts RowKey before
// PartitionKey. The zero value is PartitionKey, RowKey, then every
// property. A count past the last property means after it.
type KeyPlaces struct {
	PK, RK  uint16
	RKFirst bool
}

// KeysFirst reports whether k is the usual place of the keys: first,
// PartitionKey then RowKey.
func (k KeyPlaces) KeysFirst() bool { return k == KeyPlaces{} }

// At returns which keys stand right before the property at index i of n
// properties (i == n: after the last one), in their order: "PartitionKey",
// "RowKey", both, or none (first and second empty).
func (k KeyPlaces) At(i, n int) (first, second string) {
	pk, rk := min(int(k.PK), n) == i, min(int(k.RK), n) == i
	switch {
	case pk && rk && k.RKFirst:
		return "RowKey", "PartitionKey"
	case pk && rk:
		return "PartitionKey", "RowKey"
	case pk:
		return "PartitionKey", ""
	case rk:
		return "RowKey", ""
	}
	return "", ""
}

// Get returns the named property's value. The system properties are found
// too, so filters and $select can treat all properties alike.
func (e *Entity) Get(name string) (Value, bool) {
	switch name {
	case "PartitionKey":
		return NewString(e.PartitionKey), true
	case "RowKey":
		return NewString(e.RowKey), true
	case "Timestamp":
		return NewDateTime(e.Timestamp), true
	}
	for i := range e.Properties {
		if e.Properties[i].Name == name {
			return e.Properties[i].Value, true
		}
	}
	return Value{}, false
}
