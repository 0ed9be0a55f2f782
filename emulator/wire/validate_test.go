package wire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/odata/edm"
)

func TestValidateKey(t *testing.T) {
	good := []string{"", "a", "a b", "it's", "\"quoted\"", "%", "ä中😀", "\u00a0", "\u00a0\u009f"[:2],
		strings.Repeat("k", MaxKeyLength), strings.Repeat("😀", MaxKeyLength/2), "x\u2028y", "\ufffd"}
	for _, k := range good {
		if err := ValidateKey("RowKey", k); err != nil {
			t.Errorf("ValidateKey(%+q): %v", clip(k), err)
		}
	}
	bad := []string{"a/b", `a\b`, "a#b", "a?b", "\x00", "a\tb", "\n", "\r", "\x1f", "\x7f", "\u0080", "\u0081",
		"\u008d", "\u009f", "ok\u0090", "\xff", "a\xc3"}
	for _, k := range bad {
		err := ValidateKey("PartitionKey", k)
		wantCode(t, fmt.Sprintf("key %+q", k), err, tableemu.OutOfRangeInput)
		if e, ok := err.(*tableemu.Error); ok {
			if want := "The 'PartitionKey' parameter of value '" + k + "' is out of range."; e.Message != want {
				t.Errorf("message %q, want %q", e.Message, want)
			}
		}
	}
	for _, k := range []string{strings.Repeat("k", MaxKeyLength+1), strings.Repeat("😀", MaxKeyLength/2) + "k", strings.Repeat("k", 2048)} {
		wantCode(t, "long key", ValidateKey("RowKey", k), tableemu.PropertyValueTooLarge)
	}
}

func TestValidatePropertyName(t *testing.T) {
	good := []string{"a", "A", "_", "_1", "Name", "name_2", "ꀕ", "Ünïcödé", "日本語", "e\u0301", "a\u200db",
		"Ⅻ", "x٣", "partitionKey", "ETag", "TIMESTAMP", strings.Repeat("n", MaxPropertyNameLength)}
	for _, n := range good {
		if err := ValidatePropertyName(n); err != nil {
			t.Errorf("ValidatePropertyName(%q): %v", clip(n), err)
		}
	}
	bad := []string{"", "123", "1a", "a-b", "a b", "a.b", "a@b", "$x", "x$", "a/b", "😀", "\u0301a", "a\x00",
		"PartitionKey", "RowKey", "Timestamp", "٣x"}
	for _, n := range bad {
		wantCode(t, fmt.Sprintf("name %+q", n), ValidatePropertyName(n), tableemu.PropertyNameInvalid)
	}
	wantCode(t, "256 chars", ValidatePropertyName(strings.Repeat("n", MaxPropertyNameLength+1)), tableemu.PropertyNameTooLong)
	wantCode(t, "128 supplementary letters", ValidatePropertyName(strings.Repeat("\U00010400", 128)), tableemu.PropertyNameTooLong)
}

func entityWith(props ...edm.Property) *edm.Entity {
	return &edm.Entity{PartitionKey: "p", RowKey: "r", Properties: props}
}

func TestValidateEntityLimits(t *testing.T) {
	props := func(n int) []edm.Property {
		ps := make([]edm.Property, n)
		for i := range ps {
			ps[i] = edm.Property{Name: fmt.Sprintf("P%d", i), Value: edm.NewInt32(int32(i))}
		}
		return ps
	}
	if err := ValidateEntity(entityWith(props(MaxUserProperties)...)); err != nil {
		t.Errorf("252 properties: %v", err)
	}
	wantCode(t, "253 properties", ValidateEntity(entityWith(props(MaxUserProperties+1)...)), tableemu.TooManyProperties)

	str := func(s string) *edm.Entity { return entityWith(edm.Property{Name: "S", Value: edm.NewString(s)}) }
	for _, s := range []string{strings.Repeat("a", MaxStringLength), strings.Repeat("😀", MaxStringLength/2),
		strings.Repeat("中", MaxStringLength)} {
		if err := ValidateEntity(str(s)); err != nil {
			t.Errorf("string of %d units: %v", edm.UTF16Len(s), err)
		}
	}
	for _, s := range []string{strings.Repeat("a", MaxStringLength+1), strings.Repeat("😀", MaxStringLength/2) + "a"} {
		wantCode(t, "long string", ValidateEntity(str(s)), tableemu.PropertyValueTooLarge)
	}
	bin := func(n int) *edm.Entity {
		return entityWith(edm.Property{Name: "B", Value: edm.NewBinary(make([]byte, n))})
	}
	if err := ValidateEntity(bin(MaxBinaryLength)); err != nil {
		t.Errorf("64 KiB binary: %v", err)
	}
	wantCode(t, "long binary", ValidateEntity(bin(MaxBinaryLength+1)), tableemu.PropertyValueTooLarge)

	wantCode(t, "bad key", ValidateEntity(&edm.Entity{PartitionKey: "a/b"}), tableemu.OutOfRangeInput)
	wantCode(t, "bad row key", ValidateEntity(&edm.Entity{RowKey: "#"}), tableemu.OutOfRangeInput)
	wantCode(t, "bad name", ValidateEntity(entityWith(edm.Property{Name: "1x", Value: edm.NewInt32(1)})), tableemu.PropertyNameInvalid)
}

// bigEntity has the given EntitySize: 15 maximal strings plus a Binary
// that makes up the rest.
func bigEntity(t *testing.T, size int) *edm.Entity {
	e := &edm.Entity{PartitionKey: "p", RowKey: "r"}
	for i := 0; i < 15; i++ {
		e.Properties = append(e.Properties, edm.Property{Name: fmt.Sprintf("S%02d", i), Value: edm.NewString(strings.Repeat("x", MaxStringLength))})
	}
	e.Properties = append(e.Properties, edm.Property{Name: "Z", Value: edm.NewBinary(nil)})
	rest := size - EntitySize(e)
	if rest < 0 || rest > MaxBinaryLength {
		t.Fatalf("cannot build an entity of %d", size)
	}
	e.Properties[15].Value = edm.NewBinary(make([]byte, rest))
	if got := EntitySize(e); got != size {
		t.Fatalf("EntitySize = %d, want %d", got, size)
	}
	return e
}

// The live probe: 1,048,488 accepted, 1,048,489 rejected (docs/protocol.md 10).
func TestValidateEntitySize(t *testing.T) {
	if err := ValidateEntity(bigEntity(t, 1_048_488)); err != nil {
		t.Errorf("1,048,488: %v", err)
	}
	wantCode(t, "1,048,489", ValidateEntity(bigEntity(t, 1_048_489)), tableemu.EntityTooLarge)
}

func TestEntitySize(t *testing.T) {
	e := &edm.Entity{PartitionKey: "pk", RowKey: "😀", Timestamp: 12345, Properties: []edm.Property{
		{Name: "S", Value: edm.NewString("ab")},                          // 8+2 + 4+4
		{Name: "B", Value: edm.NewBinary([]byte{1})},                     // 8+2 + 4+1
		{Name: "D", Value: dt("2020-01-01T00:00:00Z")},                   // 8+2 + 8
		{Name: "F", Value: edm.NewDouble(1)},                             // 8+2 + 8
		{Name: "L", Value: edm.NewInt64(1)},                              // 8+2 + 8
		{Name: "G", Value: guid("c9da6455-213d-42c9-9a79-3e9149a57833")}, // 8+2 + 16
		{Name: "I", Value: edm.NewInt32(1)},                              // 8+2 + 4
		{Name: "T", Value: edm.NewBoolean(false)},                        // 8+2 + 1
		{Name: "名前", Value: edm.NewInt32(1)},                             // 8+4 + 4
	}}
	want := 4 + 2*(2+2) + 18 + 15 + 18 + 18 + 18 + 26 + 14 + 11 + 16
	if got := EntitySize(e); got != want {
		t.Errorf("EntitySize = %d, want %d", got, want)
	}
}

// TestValidateCosmosEntity: what only Azure Cosmos DB for Table refuses
// (the cosmos profile): empty keys, a RowKey over 255 bytes or a
// PartitionKey over 1024 bytes of UTF-8, the reserved property names as
// the FAQ spells them, etag excepted.
func TestValidateCosmosEntity(t *testing.T) {
	ok := []*edm.Entity{
		entityWith(),
		{PartitionKey: strings.Repeat("p", CosmosMaxPartitionKeyBytes), RowKey: strings.Repeat("r", CosmosMaxRowKeyBytes)},
		entityWith(edm.Property{Name: "Id", Value: edm.NewInt32(1)}, edm.Property{Name: "ETag", Value: edm.NewInt32(1)}),
	}
	for _, e := range ok {
		if err := ValidateCosmosEntity(e); err != nil {
			t.Errorf("%d-byte PartitionKey, %d-byte RowKey, %d properties: %v", len(e.PartitionKey), len(e.RowKey), len(e.Properties), err)
		}
	}
	wantCode(t, "empty PartitionKey", ValidateCosmosEntity(&edm.Entity{RowKey: "r"}), tableemu.PropertiesNeedValue)
	wantCode(t, "empty RowKey", ValidateCosmosEntity(&edm.Entity{PartitionKey: "p"}), tableemu.PropertiesNeedValue)
	wantCode(t, "256-byte RowKey", ValidateCosmosEntity(&edm.Entity{PartitionKey: "p", RowKey: strings.Repeat("é", 128)}), tableemu.PropertyValueTooLarge)
	wantCode(t, "1025-byte PartitionKey", ValidateCosmosEntity(&edm.Entity{PartitionKey: strings.Repeat("p", 1025), RowKey: "r"}), tableemu.PropertyValueTooLarge)
	for _, n := range []string{"ID", "rid", "ResourceId"} {
		wantCode(t, n, ValidateCosmosEntity(entityWith(edm.Property{Name: n, Value: edm.NewInt32(1)})), tableemu.PropertyNameInvalid)
	}
	// etag is no longer refused: Cosmos DB was recorded taking it
	// (CosmosETagProperties).
	if err := ValidateCosmosEntity(entityWith(edm.Property{Name: "etag", Value: edm.NewInt32(1)})); err != nil {
		t.Errorf("etag: %v", err)
	}
}

// TestCosmosETagProperties: of the properties named etag in any case, the
// first stays and the others go (python-cosmos …test_etag_duplicate_field:
// etag and Etag sent, etag alone kept); other names that differ only in
// case all stay (…test_get_entity: Birthday and birthday).
func TestCosmosETagProperties(t *testing.T) {
	names := func(e *edm.Entity) string {
		var n []string
		for _, p := range e.Properties {
			n = append(n, fmt.Sprintf("%s=%d", p.Name, p.Value.N))
		}
		return strings.Join(n, ",")
	}
	for _, tc := range []struct{ in, want string }{
		{"etag,Etag", "etag=0"},
		{"Etag,etag", "Etag=0"},
		{"A,ETag,etag,B,Etag,ETAG", "A=0,ETag=1,B=3"},
		{"Birthday,birthday", "Birthday=0,birthday=1"},
		{"etag", "etag=0"},
		{"Etag", "Etag=0"},
		{"etags,Etag", "etags=0,Etag=1"},
		{"", ""},
	} {
		e := entityWith()
		if tc.in != "" {
			for i, n := range strings.Split(tc.in, ",") {
				e.Properties = append(e.Properties, edm.Property{Name: n, Value: edm.NewInt32(int32(i))})
			}
		}
		CosmosETagProperties(e)
		if got := names(e); got != tc.want {
			t.Errorf("%s: kept %s, want %s", tc.in, got, tc.want)
		}
	}
}
