package transfer

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestScanLoki: the outline scanner finds each collection's data array
// wherever strings, escapes and nesting could mislead it, and refuses
// what is not a LokiJS database.
func TestScanLoki(t *testing.T) {
	long := strings.Repeat(`\\`, 200_000) + `\"` // past the reader's buffer, backslashes across its edge
	doc := `{"filename":"x\"data\":[","collections":[` +
		`{"name":"a$T","objType":{"data":[9]},"data":[{"s":"]}\\","n":-1.5e3,"t":true,"z":null,"o":{"data":[]}},{"x":"` + long + `"}],"maxId":2},` +
		` { "data" : [ ] , "name" : "b\u0024T" } ,` +
		`{"name":"nodata","idIndex":[1,2]}` +
		`],"databaseVersion":1.5,"options":{"serializationMethod":"normal"}}`
	colls, err := scanLoki(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(colls) != 2 {
		t.Fatalf("collections %v", colls)
	}
	for name, n := range map[string]int{"a$T": 2, "b$T": 0} {
		at, ok := colls[name]
		if !ok {
			t.Errorf("no %q in %v", name, colls)
			continue
		}
		dec := json.NewDecoder(strings.NewReader(doc[at:]))
		var docs []json.RawMessage
		if err := dec.Decode(&docs); err != nil || len(docs) != n {
			t.Errorf("%s at %d: %d documents, %v (%.30q)", name, at, len(docs), err, doc[at:])
		}
	}
	for _, bad := range []string{
		``, `[]`, `{"collections":[{"name":"a","data":[1,2`, `{"collections":{}}`, `{"collections":[1]}`,
		`{"collections":[{"name":"a" "data":[]}]}`, `{"a":1,,"b":2}`, `{"a":"unterminated`,
	} {
		if _, err := scanLoki(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
