package wire

import (
	"math"
	"strings"
	"testing"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/odata/edm"
)

var cosmosDecode = DecodeOptions{Cosmos: true}

// TestDecodeCosmosRecordedBody decodes the upsert-merge body Cosmos DB for
// Table accepted (204) and storage refused (400 InvalidInput): python-cosmos
// and python test_table_entity…test_entity_with_edmtypes, the Guid aside.
// Under cosmos each value is what Cosmos DB read back in the Get that
// followed: false, 42 (a number, no annotation: an Int32), 23, "64" as
// Edm.Int64, "test" as Edm.Binary, 0.0, 2008-07-10T00:00:00Z and the Guid.
func TestDecodeCosmosRecordedBody(t *testing.T) {
	in := `{"PartitionKey": "pke4e42e7f", "RowKey": "rke4e42e7f", "bool@odata.type": "Edm.Boolean", "bool": "false", ` +
		`"text@odata.type": "Edm.String", "text": 42, "number@odata.type": "Edm.Int32", "number": "23", ` +
		`"bigNumber@odata.type": "Edm.Int64", "bigNumber": "64", "bytes@odata.type": "Edm.Binary", "bytes": "test", ` +
		`"amount@odata.type": "Edm.Double", "amount": "0", "since@odata.type": "Edm.DateTime", "since": "2008-07-10T00:00:00", ` +
		`"guid@odata.type": "Edm.Guid", "guid": "3bd67b28-2155-4caf-b492-207172d4f183"}`
	_, err := DecodeEntity([]byte(in))
	wantCode(t, "storage", err, tableemu.InvalidInput)
	// The service's sentence first, then what to do.
	if e := tableemu.From(err); !strings.HasPrefix(e.Message, "An error occurred while processing this request."+tableemu.HintPrefix) ||
		!strings.Contains(e.Message, `"text" is not a valid Edm.String: send it as a JSON string`) {
		t.Errorf("storage: %q", e.Message)
	}

	for _, shared := range []bool{false, true} {
		d, err := DecodeEntityWith([]byte(in), DecodeOptions{Cosmos: true, Shared: shared})
		if err != nil {
			t.Fatalf("cosmos (shared %v): %v", shared, err)
		}
		want := edm.Entity{PartitionKey: "pke4e42e7f", RowKey: "rke4e42e7f", Properties: []edm.Property{
			{Name: "bool", Value: edm.NewBoolean(false)},
			{Name: "text", Value: edm.NewInt32(42)},
			{Name: "number", Value: edm.NewInt32(23)},
			{Name: "bigNumber", Value: edm.NewInt64(64)},
			{Name: "bytes", Value: edm.NewBinary([]byte{0xb5, 0xeb, 0x2d})}, // base64 "test"
			{Name: "amount", Value: edm.NewDouble(0)},
			{Name: "since", Value: dt("2008-07-10T00:00:00.0000000Z")},
			{Name: "guid", Value: guid("3bd67b28-2155-4caf-b492-207172d4f183")},
		}}
		if err := sameEntity(&d.Entity, &want); err != nil {
			t.Errorf("cosmos (shared %v): %v", shared, err)
		}
	}
}

// TestDecodeCosmosTypedValues: each typed form, under storage and under
// cosmos (typedValue's comment says which the evidence shows). A nil
// value is a 400 InvalidInput.
func TestDecodeCosmosTypedValues(t *testing.T) {
	tests := []struct {
		name            string
		props           string
		storage, cosmos *edm.Value
	}{
		// Forms of the recording storage accepts too: alike under both.
		{"Boolean \"false\"", `"X@odata.type":"Edm.Boolean","X":"false"`, ptr(edm.NewBoolean(false)), ptr(edm.NewBoolean(false))},
		{"Boolean \"true\"", `"X@odata.type":"Edm.Boolean","X":"true"`, ptr(edm.NewBoolean(true)), ptr(edm.NewBoolean(true))},
		{"Int32 \"23\"", `"X@odata.type":"Edm.Int32","X":"23"`, ptr(edm.NewInt32(23)), ptr(edm.NewInt32(23))},
		{"Double \"0\"", `"X@odata.type":"Edm.Double","X":"0"`, ptr(edm.NewDouble(0)), ptr(edm.NewDouble(0))},
		{"DateTime without offset", `"X@odata.type":"Edm.DateTime","X":"2008-07-10T00:00:00"`,
			ptr(dt("2008-07-10T00:00:00Z")), ptr(dt("2008-07-10T00:00:00Z"))},
		{"Int64 \"64\"", `"X@odata.type":"Edm.Int64","X":"64"`, ptr(edm.NewInt64(64)), ptr(edm.NewInt64(64))},

		// A number annotated Edm.String: Cosmos DB's form alone, typed as
		// an unannotated number.
		{"String 42", `"X@odata.type":"Edm.String","X":42`, nil, ptr(edm.NewInt32(42))},
		{"String 42, annotation after", `"X":42,"X@odata.type":"Edm.String"`, nil, ptr(edm.NewInt32(42))},
		{"String -7", `"X@odata.type":"Edm.String","X":-7`, nil, ptr(edm.NewInt32(-7))},
		{"String 4.5", `"X@odata.type":"Edm.String","X":4.5`, nil, ptr(edm.NewDouble(4.5))},
		{"String 3000000000", `"X@odata.type":"Edm.String","X":3000000000`, nil, ptr(edm.NewDouble(3e9))},
		{"String -0.0", `"X@odata.type":"Edm.String","X":-0.0`, nil, ptr(edm.NewDouble(math.Copysign(0, -1)))},
		{"String 1e400", `"X@odata.type":"Edm.String","X":1e400`, nil, nil},
		{"String \"42\"", `"X@odata.type":"Edm.String","X":"42"`, ptr(edm.NewString("42")), ptr(edm.NewString("42"))},

		// An unannotated integer outside Int64: a Double in storage, refused
		// by Cosmos DB (python-cosmos …test_encoder_create_entity_atypical_values
		// entry 3); within Int64, or with a fraction or exponent, alike.
		{"bare 2^63·1000", `"X":9223372036854775808000`, ptr(edm.NewDouble(9223372036854775808000)), nil},
		{"bare -2^63-1", `"X":-9223372036854775809`, ptr(edm.NewDouble(-9223372036854775809)), nil},
		{"String 2^63·1000", `"X@odata.type":"Edm.String","X":9223372036854775808000`, nil, nil},
		{"bare 2^63-1", `"X":9223372036854775807`, ptr(edm.NewDouble(9223372036854775807)), ptr(edm.NewDouble(9223372036854775807))},
		{"bare -2^63", `"X":-9223372036854775808`, ptr(edm.NewDouble(-9223372036854775808)), ptr(edm.NewDouble(-9223372036854775808))},
		{"bare 9.2e21", `"X":9.2e21`, ptr(edm.NewDouble(9.2e21)), ptr(edm.NewDouble(9.2e21))},
		{"bare 9223372036854775808000.0", `"X":9223372036854775808000.0`, ptr(edm.NewDouble(9223372036854775808000)), ptr(edm.NewDouble(9223372036854775808000))},

		// Not in the evidence: refused under both.
		{"String true", `"X@odata.type":"Edm.String","X":true`, nil, nil},
		{"String false", `"X@odata.type":"Edm.String","X":false`, nil, nil},
		{"Boolean \"1\"", `"X@odata.type":"Edm.Boolean","X":"1"`, nil, nil},
		{"Boolean \"0\"", `"X@odata.type":"Edm.Boolean","X":"0"`, nil, nil},
		{"Boolean 1", `"X@odata.type":"Edm.Boolean","X":1`, nil, nil},
		{"Int32 \"0x10\"", `"X@odata.type":"Edm.Int32","X":"0x10"`, nil, nil},
		{"Int32 23.0", `"X@odata.type":"Edm.Int32","X":23.0`, nil, nil},
		{"Int32 \"23.5\"", `"X@odata.type":"Edm.Int32","X":"23.5"`, nil, nil},
		{"Int32 true", `"X@odata.type":"Edm.Int32","X":true`, nil, nil},
		{"Int64 1.5", `"X@odata.type":"Edm.Int64","X":1.5`, nil, nil},
		{"Double true", `"X@odata.type":"Edm.Double","X":true`, nil, nil},
		{"Guid 42", `"X@odata.type":"Edm.Guid","X":42`, nil, nil},
		{"Binary 42", `"X@odata.type":"Edm.Binary","X":42`, nil, nil},
		{"DateTime 42", `"X@odata.type":"Edm.DateTime","X":42`, nil, nil},
	}
	for _, tt := range tests {
		for _, p := range []struct {
			name string
			o    DecodeOptions
			want *edm.Value
		}{{"storage", DecodeOptions{}, tt.storage}, {"cosmos", cosmosDecode, tt.cosmos}} {
			what := p.name + ": " + tt.name
			d, err := DecodeEntityWith([]byte(body(tt.props)), p.o)
			if p.want == nil {
				wantCode(t, what, err, tableemu.InvalidInput)
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", what, err)
				continue
			}
			if len(d.Entity.Properties) != 1 || !sameValue(d.Entity.Properties[0].Value, *p.want) {
				t.Errorf("%s: %#v, want %#v", what, d.Entity.Properties, *p.want)
			}
		}
	}
}

// TestDecodeCosmosKeys: the keys stay strings under cosmos; a number
// annotated Edm.String is no key (Cosmos DB refused RowKey 1234, 400
// InvalidInput: python-cosmos test_encoder_create_entity_complex_keys).
func TestDecodeCosmosKeys(t *testing.T) {
	for _, in := range []string{
		`{"PartitionKey":"p","RowKey@odata.type":"Edm.String","RowKey":1234}`,
		`{"PartitionKey@odata.type":"Edm.String","PartitionKey":1,"RowKey":"r"}`,
	} {
		_, err := DecodeEntityWith([]byte(in), cosmosDecode)
		wantCode(t, in, err, tableemu.InvalidInput)
	}
}

func ptr(v edm.Value) *edm.Value { return &v }
