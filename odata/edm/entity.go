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
