package store

import "strings"

// Table names and their keys. Table storage's names are unique without
// regard to case (docs/protocol.md 1.4); Cosmos DB for Table's are
// case-sensitive ("Table names in Azure Table storage aren't
// case-sensitive, but they are in Azure Cosmos DB for Table",
// learn.microsoft.com/azure/cosmos-db/table/faq; docs/cosmos.md, "table
// names"). Both engines keep a table's key, unique per account, in
// tables.lname: the lower-cased name, under either profile, for a name
// without a capital letter; under an engine's ExactTableNames option (the
// cosmos profile) a name with one is keyed by its lower-cased name, '!'
// and the name itself, so that "Orders" and "orders" are two keys. '!'
// is in no valid name and sorts before every letter and digit: Query
// Tables, which pages by key, still lists in storage's order, without
// regard to case, a name's case variants after it by exact name.
//
// A table a store without the option created under a name with a capital
// letter is keyed by its lower-cased name; with the option a lookup by
// its exact name still finds it (lname IN (lower, key) AND name = exact).

// TableKeySep separates the lower-cased name from the exact one in the key
// of a name with a capital letter under ExactTableNames.
const TableKeySep = "!"

// TableKey is the key of a table named name: its lower-cased name, or
// under exact (ExactTableNames) for a name with a capital letter the
// lower-cased name, TableKeySep and the name.
func TableKey(name string, exact bool) string {
	lower := strings.ToLower(name)
	if !exact || lower == name {
		return lower
	}
	return lower + TableKeySep + name
}

// TableKeyRange is the range [lo, hi) of the keys of every table whose
// name equals name without regard to case, under ExactTableNames: the
// lower-cased name and its case variants (TableKey).
func TableKeyRange(name string) (lo, hi string) {
	lower := strings.ToLower(name)
	return lower, lower + `"` // '"' follows TableKeySep
}
