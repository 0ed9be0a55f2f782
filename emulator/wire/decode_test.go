package wire

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/odata/edm"
)

func dt(s string) edm.Value {
	t, err := edm.ParseDateTime(s)
	if err != nil {
		panic(err)
	}
	return edm.NewDateTime(t)
}

func guid(s string) edm.Value {
	v, err := edm.NewGuid(s)
	if err != nil {
		panic(err)
	}
	return v
}

func sameValue(a, b edm.Value) bool {
	if a.T != b.T {
		return false
	}
	if a.T == edm.Double {
		return math.Float64bits(a.F) == math.Float64bits(b.F) || math.IsNaN(a.F) && math.IsNaN(b.F)
	}
	return edm.Equal(a, b)
}

// body wraps properties in an entity with keys.
func body(props string) string {
	if props == "" {
		return `{"PartitionKey":"p","RowKey":"r"}`
	}
	return `{"PartitionKey":"p","RowKey":"r",` + props + `}`
}

func TestDecodeTypes(t *testing.T) {
	tests := []struct {
		name  string
		props string
		want  edm.Value
	}{
		// Untyped inference (docs/protocol.md 4.2).
		{"string", `"X":"hello"`, edm.NewString("hello")},
		{"empty string", `"X":""`, edm.NewString("")},
		{"true", `"X":true`, edm.NewBoolean(true)},
		{"false", `"X":false`, edm.NewBoolean(false)},
		{"int32", `"X":42`, edm.NewInt32(42)},
		{"int32 min", `"X":-2147483648`, edm.NewInt32(math.MinInt32)},
		{"int32 max", `"X":2147483647`, edm.NewInt32(math.MaxInt32)},
		{"negative zero integer", `"X":-0`, edm.NewInt32(0)},
		{"above int32 is double", `"X":2147483648`, edm.NewDouble(2147483648)},
		{"below int32 is double", `"X":-2147483649`, edm.NewDouble(-2147483649)},
		{"2^63·1000 is double", `"X":9223372036854775808000`, edm.NewDouble(9223372036854775808000)},
		{"fraction", `"X":200.23`, edm.NewDouble(200.23)},
		{"integral fraction", `"X":5.0`, edm.NewDouble(5)},
		{"negative zero double", `"X":-0.0`, edm.NewDouble(math.Copysign(0, -1))},
		{"exponent", `"X":1e3`, edm.NewDouble(1000)},
		{"exponent sign", `"X":1E-2`, edm.NewDouble(0.01)},
		{"double max", `"X":1.797693134862315e308`, edm.NewDouble(1.797693134862315e308)},
		{"underflow is zero", `"X":1e-400`, edm.NewDouble(0)},
		{"datetime text stays string", `"X":"2020-01-01T00:00:00Z"`, edm.NewString("2020-01-01T00:00:00Z")},

		// Annotated, before or after the value.
		{"Edm.String", `"X@odata.type":"Edm.String","X":"s"`, edm.NewString("s")},
		{"Edm.Int32 number", `"X":7,"X@odata.type":"Edm.Int32"`, edm.NewInt32(7)},
		{"Edm.Int32 string", `"X@odata.type":"Edm.Int32","X":"12345"`, edm.NewInt32(12345)},
		{"Edm.Int32 signed string", `"X@odata.type":"Edm.Int32","X":"-2147483648"`, edm.NewInt32(math.MinInt32)},
		{"Edm.Int32 plus string", `"X@odata.type":"Edm.Int32","X":"+5"`, edm.NewInt32(5)},
		{"Edm.Int64 string", `"X":"255","X@odata.type":"Edm.Int64"`, edm.NewInt64(255)},
		{"Edm.Int64 min", `"X@odata.type":"Edm.Int64","X":"-9223372036854775808"`, edm.NewInt64(math.MinInt64)},
		{"Edm.Int64 max", `"X@odata.type":"Edm.Int64","X":"9223372036854775807"`, edm.NewInt64(math.MaxInt64)},
		{"Edm.Int64 number", `"X@odata.type":"Edm.Int64","X":9007199254740993`, edm.NewInt64(9007199254740993)},
		{"Edm.Double number", `"X@odata.type":"Edm.Double","X":3.14`, edm.NewDouble(3.14)},
		{"Edm.Double integer", `"X@odata.type":"Edm.Double","X":42`, edm.NewDouble(42)},
		{"Edm.Double string", `"X@odata.type":"Edm.Double","X":"0.25"`, edm.NewDouble(0.25)},
		{"Edm.Double string integer", `"X@odata.type":"Edm.Double","X":"42"`, edm.NewDouble(42)},
		{"Edm.Double node toString", `"X@odata.type":"Edm.Double","X":"1e+21"`, edm.NewDouble(1e21)},
		{"Edm.Double NaN", `"X@odata.type":"Edm.Double","X":"NaN"`, edm.NewDouble(math.NaN())},
		{"Edm.Double Infinity", `"X@odata.type":"Edm.Double","X":"Infinity"`, edm.NewDouble(math.Inf(1))},
		{"Edm.Double -Infinity", `"X@odata.type":"Edm.Double","X":"-Infinity"`, edm.NewDouble(math.Inf(-1))},
		{"Edm.Boolean", `"X@odata.type":"Edm.Boolean","X":true`, edm.NewBoolean(true)},
		{"Edm.Boolean string", `"X@odata.type":"Edm.Boolean","X":"False"`, edm.NewBoolean(false)},
		{"Edm.Boolean TRUE", `"X@odata.type":"Edm.Boolean","X":"TRUE"`, edm.NewBoolean(true)},
		{"Edm.DateTime", `"X@odata.type":"Edm.DateTime","X":"2021-09-08T18:58:49.7704959Z"`, dt("2021-09-08T18:58:49.7704959Z")},
		{"Edm.DateTime node ISO", `"X@odata.type":"Edm.DateTime","X":"2020-01-01T00:00:00.000Z"`, dt("2020-01-01T00:00:00Z")},
		{"Edm.DateTime Go SDK", `"X@odata.type":"Edm.DateTime","X":"2020-01-01T00:00:00.1234567Z"`, dt("2020-01-01T00:00:00.1234567Z")},
		{"Edm.DateTime min", `"X@odata.type":"Edm.DateTime","X":"1601-01-01T00:00:00Z"`, edm.NewDateTime(edm.MinDateTime)},
		{"Edm.DateTime max", `"X@odata.type":"Edm.DateTime","X":"9999-12-31T23:59:59.9999999Z"`, edm.NewDateTime(edm.MaxDateTime)},
		{"Edm.DateTime offset", `"X@odata.type":"Edm.DateTime","X":"2020-01-01T02:00:00+02:00"`, dt("2020-01-01T00:00:00Z")},
		{"Edm.Guid", `"X@odata.type":"Edm.Guid","X":"c9da6455-213d-42c9-9a79-3e9149a57833"`, guid("c9da6455-213d-42c9-9a79-3e9149a57833")},
		{"Edm.Guid upper", `"X@odata.type":"Edm.Guid","X":"C9DA6455-213D-42C9-9A79-3E9149A57833"`, guid("c9da6455-213d-42c9-9a79-3e9149a57833")},
		{"Edm.Binary", `"X@odata.type":"Edm.Binary","X":"QmluYXJ5VHlwZVByb3BlcnR5"`, edm.NewBinary([]byte("BinaryTypeProperty"))},
		{"Edm.Binary empty", `"X@odata.type":"Edm.Binary","X":""`, edm.NewBinary([]byte{})},

		// Strings and escapes.
		{"escapes", `"X":"\"\\\/\b\f\n\r\t"`, edm.NewString("\"\\/\b\f\n\r\t")},
		{"unicode escape", `"X":"\u00e9\u4E2D\u0000"`, edm.NewString("é中\x00")},
		{"surrogate pair escape", `"X":"\uD83D\uDE00"`, edm.NewString("\U0001F600")},
		{"raw supplementary", `"X":"😀ꀕ"`, edm.NewString("😀ꀕ")},
		{"escape then raw", `"X":"a\tb😀c"`, edm.NewString("a\tb😀c")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := DecodeEntity([]byte(body(tt.props)))
			if err != nil {
				t.Fatalf("DecodeEntity: %v", err)
			}
			if len(d.Entity.Properties) != 1 {
				t.Fatalf("properties = %+v, want one", d.Entity.Properties)
			}
			p := d.Entity.Properties[0]
			if p.Name != "X" || !sameValue(p.Value, tt.want) {
				t.Errorf("got %s = %#v, want %#v", p.Name, p.Value, tt.want)
			}
			if !d.HasPartitionKey || !d.HasRowKey || d.Entity.PartitionKey != "p" || d.Entity.RowKey != "r" {
				t.Errorf("keys = %+v", d)
			}
		})
	}
}

func TestDecodeEntityShape(t *testing.T) {
	in := "\ufeff" + ` { "odata.etag" : "W/\"x\"", "odata.type":"a.t", "odata.metadata":"m", "odata.id":"i",
		"odata.editLink":"e", "B@odata.type":"Edm.Int64", "A":1, "PartitionKey@odata.type":"Edm.String",
		"PartitionKey":"pk", "Timestamp":"0001-01-01T00:00:00Z", "Timestamp@odata.type":"Edm.Boolean",
		"N":null, "N@odata.type":"Edm.Int32", "Gone@odata.type":"Edm.Guid", "RowKey":"", "B":"5",
		"Z@ms.custom":"ignored", "C":"c" } ` + "\n"
	d, err := DecodeEntity([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []edm.Property{{Name: "A", Value: edm.NewInt32(1)}, {Name: "B", Value: edm.NewInt64(5)}, {Name: "C", Value: edm.NewString("c")}}
	if len(d.Entity.Properties) != len(want) {
		t.Fatalf("properties = %+v, want %+v", d.Entity.Properties, want)
	}
	for i := range want {
		if got := d.Entity.Properties[i]; got.Name != want[i].Name || !sameValue(got.Value, want[i].Value) {
			t.Errorf("property %d = %+v, want %+v", i, got, want[i])
		}
	}
	if !d.HasPartitionKey || !d.HasRowKey || d.Entity.PartitionKey != "pk" || d.Entity.RowKey != "" {
		t.Errorf("keys: %+v", d)
	}
	if d.Entity.Timestamp != 0 {
		t.Errorf("Timestamp taken from the body: %d", d.Entity.Timestamp)
	}
	if err := d.RequireKeys(); err != nil {
		t.Errorf("RequireKeys: %v", err)
	}
}

func TestDecodeKeysAbsent(t *testing.T) {
	for _, in := range []string{`{}`, `{"RowKey":"r"}`, `{"PartitionKey":"p"}`, `{"PartitionKey":null,"RowKey":"r"}`} {
		d, err := DecodeEntity([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		wantCode(t, in, d.RequireKeys(), tableemu.PropertiesNeedValue)
	}
}

func wantCode(t *testing.T, what string, err error, code tableemu.Code) {
	t.Helper()
	var e *tableemu.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: error %v, want %s", what, err, code)
		return
	}
	if e.Code != code || e.Status != 400 {
		t.Errorf("%s: %s (%d) %q, want %s", what, e.Code, e.Status, e.Message, code)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		code tableemu.Code
		msg  string // a fragment of the message
	}{
		{"empty body", ``, tableemu.InvalidInput, "empty"},
		{"whitespace body", " \n", tableemu.InvalidInput, "empty"},
		{"array body", `[{"PartitionKey":"p"}]`, tableemu.InvalidInput, "array"},
		{"string body", `"x"`, tableemu.InvalidInput, "expected '{'"},
		{"unterminated object", `{"PartitionKey":"p"`, tableemu.InvalidInput, "end of body"},
		{"missing colon", `{"a" 1}`, tableemu.InvalidInput, "expected ':'"},
		{"missing comma", `{"a":1 "b":2}`, tableemu.InvalidInput, "expected ',' or '}'"},
		{"trailing comma", `{"a":1,}`, tableemu.InvalidInput, "property name"},
		{"unquoted name", `{a:1}`, tableemu.InvalidInput, "property name"},
		{"single quotes", `{'a':1}`, tableemu.InvalidInput, "property name"},
		{"trailing garbage", `{"a":1}x`, tableemu.InvalidInput, "after the end"},
		{"two objects", `{"a":1}{"b":2}`, tableemu.InvalidInput, "after the end"},
		{"nested object", `{"a":{"b":1}}`, tableemu.InvalidInput, "object value"},
		{"nested array", `{"a":[1]}`, tableemu.InvalidInput, "array value"},
		{"bad literal", `{"a":tru}`, tableemu.InvalidInput, "expected true"},
		{"NaN literal", `{"a":NaN}`, tableemu.InvalidInput, "expected a value"},
		{"leading plus", `{"a":+1}`, tableemu.InvalidInput, "expected a value"},
		{"leading zero", `{"a":01}`, tableemu.InvalidInput, "expected ',' or '}'"},
		{"bare dot", `{"a":1.}`, tableemu.InvalidInput, "after '.'"},
		{"bare exponent", `{"a":1e}`, tableemu.InvalidInput, "exponent"},
		{"minus alone", `{"a":-}`, tableemu.InvalidInput, "expected a digit"},
		{"raw control char", "{\"a\":\"x\ty\"}", tableemu.InvalidInput, "control character"},
		{"bad escape", `{"a":"\x"}`, tableemu.InvalidInput, "invalid escape"},
		{"short unicode escape", `{"a":"\u12"}`, tableemu.InvalidInput, "four hexadecimal"},
		{"lone high surrogate", `{"a":"\uD800"}`, tableemu.InvalidInput, "surrogate"},
		{"high then non-low", `{"a":"\uD800\u0041"}`, tableemu.InvalidInput, "surrogate"},
		{"lone low surrogate", `{"a":"\uDC00"}`, tableemu.InvalidInput, "surrogate"},
		{"invalid UTF-8", "{\"a\":\"\xff\"}", tableemu.InvalidInput, "UTF-8"},
		{"invalid UTF-8 after escape", "{\"a\":\"\\n\xc3\"}", tableemu.InvalidInput, "UTF-8"},
		{"invalid UTF-8 in name", "{\"\xe2\x82\":1}", tableemu.InvalidInput, "UTF-8"},
		{"unterminated string", `{"a":"abc`, tableemu.InvalidInput, "ends inside"},

		{"duplicate property", `{"a":1,"a":2}`, tableemu.DuplicatePropertiesSpecified, `"a"`},
		{"duplicate with null", `{"a":null,"a":2}`, tableemu.DuplicatePropertiesSpecified, ""},
		{"duplicate key", `{"PartitionKey":"p","PartitionKey":"q"}`, tableemu.DuplicatePropertiesSpecified, ""},
		{"duplicate annotation", `{"a@odata.type":"Edm.Int32","a@odata.type":"Edm.Int32","a":1}`, tableemu.DuplicatePropertiesSpecified, ""},

		{"unknown type", body(`"X@odata.type":"Edm.Decimal","X":"1"`), tableemu.InvalidInput, "unknown type"},
		{"lowercase type", body(`"X@odata.type":"edm.int32","X":1`), tableemu.InvalidInput, "unknown type"},
		{"annotation not a string", body(`"X@odata.type":5,"X":1`), tableemu.InvalidInput, "must be a string"},
		{"unknown type on absent property", body(`"X@odata.type":"Edm.Nope"`), tableemu.InvalidInput, "unknown type"},

		{"numeric PartitionKey", `{"PartitionKey":1,"RowKey":"r"}`, tableemu.InvalidInput, "PartitionKey must be a string"},
		{"boolean RowKey", `{"PartitionKey":"p","RowKey":true}`, tableemu.InvalidInput, "RowKey must be a string"},
		{"Double RowKey", `{"PartitionKey":"p","RowKey":3.14,"RowKey@odata.type":"Edm.Double"}`, tableemu.InvalidInput, "RowKey"},

		{"Edm.String number", body(`"X@odata.type":"Edm.String","X":1`), tableemu.InvalidInput, "Edm.String"},
		{"Edm.Int32 fraction", body(`"X@odata.type":"Edm.Int32","X":1.5`), tableemu.InvalidInput, "Edm.Int32"},
		{"Edm.Int32 overflow", body(`"X@odata.type":"Edm.Int32","X":2147483648`), tableemu.InvalidInput, "Int32 range"},
		{"Edm.Int32 string overflow", body(`"X@odata.type":"Edm.Int32","X":"-2147483649"`), tableemu.InvalidInput, "Int32 range"},
		{"Edm.Int32 text", body(`"X@odata.type":"Edm.Int32","X":"12a"`), tableemu.InvalidInput, "Edm.Int32"},
		{"Edm.Int32 Infinity", body(`"X@odata.type":"Edm.Int32","X":"Infinity"`), tableemu.InvalidInput, "Edm.Int32"},
		{"Edm.Int32 bool", body(`"X@odata.type":"Edm.Int32","X":true`), tableemu.InvalidInput, "a boolean"},
		{"Edm.Int64 abc", body(`"X@odata.type":"Edm.Int64","X":"abc"`), tableemu.InvalidInput, "Edm.Int64"},
		{"Edm.Int64 2^63", body(`"X@odata.type":"Edm.Int64","X":"9223372036854775808"`), tableemu.InvalidInput, "Int64 range"},
		{"Edm.Int64 empty", body(`"X@odata.type":"Edm.Int64","X":""`), tableemu.InvalidInput, "Edm.Int64"},
		{"Edm.Int64 sign only", body(`"X@odata.type":"Edm.Int64","X":"-"`), tableemu.InvalidInput, "Edm.Int64"},
		{"Edm.Int64 exponent number", body(`"X@odata.type":"Edm.Int64","X":1e3`), tableemu.InvalidInput, "Edm.Int64"},
		{"Edm.Double overflow string", body(`"X@odata.type":"Edm.Double","X":"13e7705"`), tableemu.InvalidInput, "Edm.Double"},
		{"Edm.Double overflow number", body(`"X@odata.type":"Edm.Double","X":13e7705`), tableemu.InvalidInput, "range of Edm.Double"},
		{"untyped overflow", body(`"X":1.797693134862316e308`), tableemu.InvalidInput, "range of Edm.Double"},
		{"untyped huge integer", body(`"X":1` + strings.Repeat("0", 400)), tableemu.InvalidInput, "range of Edm.Double"},
		{"Edm.Double text", body(`"X@odata.type":"Edm.Double","X":"abc"`), tableemu.InvalidInput, "Edm.Double"},
		{"Edm.Double hex", body(`"X@odata.type":"Edm.Double","X":"0x10"`), tableemu.InvalidInput, "Edm.Double"},
		{"Edm.Double bool", body(`"X@odata.type":"Edm.Double","X":false`), tableemu.InvalidInput, "Edm.Double"},
		{"Edm.Boolean number", body(`"X@odata.type":"Edm.Boolean","X":1`), tableemu.InvalidInput, "Edm.Boolean"},
		{"Edm.Boolean yes", body(`"X@odata.type":"Edm.Boolean","X":"yes"`), tableemu.InvalidInput, "Edm.Boolean"},
		{"Edm.DateTime syntax", body(`"X@odata.type":"Edm.DateTime","X":"yesterday"`), tableemu.InvalidInput, "Edm.DateTime"},
		{"Edm.DateTime number", body(`"X@odata.type":"Edm.DateTime","X":0`), tableemu.InvalidInput, "Edm.DateTime"},
		{"Edm.DateTime Feb 30", body(`"X@odata.type":"Edm.DateTime","X":"2021-02-30T00:00:00Z"`), tableemu.InvalidInput, "Edm.DateTime"},
		{"Edm.DateTime 1600", body(`"D@odata.type":"Edm.DateTime","D":"1600-12-31T23:59:59.9999999Z"`), tableemu.OutOfRangeInput,
			"The 'D' parameter of value '12/31/1600 23:59:59' is out of range."},
		{"Edm.DateTime Go zero time", body(`"When@odata.type":"Edm.DateTime","When":"0001-01-01T00:00:00Z"`), tableemu.OutOfRangeInput,
			"The 'When' parameter of value '01/01/0001 00:00:00' is out of range."},
		{"Edm.DateTime offset below", body(`"D@odata.type":"Edm.DateTime","D":"1601-01-01T00:30:00+01:00"`), tableemu.OutOfRangeInput,
			"The 'D' parameter of value '12/31/1600 23:30:00' is out of range."},
		{"Edm.DateTime offset above", body(`"D@odata.type":"Edm.DateTime","D":"9999-12-31T23:59:59-01:00"`), tableemu.OutOfRangeInput,
			"The 'D' parameter of value '01/01/10000 00:59:59' is out of range."},
		{"Edm.Guid short", body(`"X@odata.type":"Edm.Guid","X":"c9da6455"`), tableemu.InvalidInput, "Edm.Guid"},
		{"Edm.Guid braces", body(`"X@odata.type":"Edm.Guid","X":"{c9da6455-213d-42c9-9a79-3e9149a57833}"`), tableemu.InvalidInput, "Edm.Guid"},
		{"Edm.Binary bad base64", body(`"X@odata.type":"Edm.Binary","X":"!!!"`), tableemu.InvalidInput, "Edm.Binary"},
		{"Edm.Binary unpadded", body(`"X@odata.type":"Edm.Binary","X":"QQ"`), tableemu.InvalidInput, "Edm.Binary"},
		{"Edm.Binary url alphabet", body(`"X@odata.type":"Edm.Binary","X":"-_8="`), tableemu.InvalidInput, "Edm.Binary"},
		{"Edm.Binary number", body(`"X@odata.type":"Edm.Binary","X":12`), tableemu.InvalidInput, "Edm.Binary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := DecodeEntity([]byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeEntity(%q) = %+v, want %s", tt.in, d, tt.code)
			}
			wantCode(t, tt.name, err, tt.code)
			var e *tableemu.Error
			if errors.As(err, &e) && !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message %q does not contain %q", e.Message, tt.msg)
			}
			// The service's sentence alone on the first line, tableemu's
			// explanation on the next (docs/protocol.md 8.1): the OData
			// reader's generic one for a value its type cannot hold (live:
			// Int32 and Int64 out of range), InvalidInput's own for the
			// rest (live: a key that is not a string).
			want := map[tableemu.Code]string{
				tableemu.InvalidInput:                 "One of the request inputs is not valid.",
				tableemu.DuplicatePropertiesSpecified: "A property is specified more than one time.",
			}[tt.code]
			if tt.code == tableemu.InvalidInput && (strings.HasPrefix(tt.name, "Edm.") || strings.HasPrefix(tt.name, "untyped")) {
				want = "An error occurred while processing this request."
			}
			if first, _, hinted := strings.Cut(e.Message, "\ntableemu: "); want != "" && (!hinted || first != want) {
				t.Errorf("message %q: want the first line %q, then tableemu's hint", e.Message, want)
			}
		})
	}
}

// TestDecodeTypedKeys: keys annotated with an EDM type, as the Python SDK's
// encoder sends DateTime, Guid and Binary keys, decode to the strings sent
// and add no property (docs/protocol.md 0.1). A type other than Edm.String
// is noted, and the insert rule (RequireKeys) refuses it with 400
// InvalidInput and the service's sentence first, as live does (Python SDK
// recording test_encoder_create_entity_complex_keys); Edm.String passes.
func TestDecodeTypedKeys(t *testing.T) {
	for _, tc := range []struct{ body, pk, rk, typedKey string }{
		{`{"PartitionKey":"2020-01-01T00:00:00Z","PartitionKey@odata.type":"Edm.DateTime","RowKey":"r"}`, "2020-01-01T00:00:00Z", "r", "PartitionKey"},
		{`{"PartitionKey":"p","RowKey@odata.type":"Edm.Guid","RowKey":"c9da6455-213d-42c9-9a79-3e9149a57833"}`, "p", "c9da6455-213d-42c9-9a79-3e9149a57833", "RowKey"},
		{`{"PartitionKey":"AQID","PartitionKey@odata.type":"Edm.Binary","RowKey":"AQID","RowKey@odata.type":"Edm.Binary"}`, "AQID", "AQID", "PartitionKey"},
		{`{"PartitionKey":"5","PartitionKey@odata.type":"Edm.Int64","RowKey":"r"}`, "5", "r", "PartitionKey"},
		{`{"PartitionKey":"p","PartitionKey@odata.type":"Edm.String","RowKey":"r","RowKey@odata.type":"Edm.String"}`, "p", "r", ""},
	} {
		d, err := DecodeEntity([]byte(tc.body))
		if err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		if d.Entity.PartitionKey != tc.pk || d.Entity.RowKey != tc.rk || !d.HasPartitionKey || !d.HasRowKey || len(d.Entity.Properties) != 0 || d.TypedKey != tc.typedKey {
			t.Errorf("%s: %+v", tc.body, d)
		}
		err = d.RequireKeys()
		if tc.typedKey == "" {
			if err != nil {
				t.Errorf("%s: insert refused: %v", tc.body, err)
			}
			continue
		}
		wantCode(t, tc.body, err, tableemu.InvalidInput)
		if e := tableemu.From(err); !strings.HasPrefix(e.Message, "One of the request inputs is not valid.") {
			t.Errorf("%s: message %q does not start with the service's sentence", tc.body, e.Message)
		}
	}
}

// Deeply nested input fails at its first nested byte, without recursion
// and in time linear in nothing but the prefix.
func TestDecodeDeepNesting(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("[", 1<<20),
		`{"a":` + strings.Repeat("[", 1<<20),
		`{"a":` + strings.Repeat(`{"a":`, 1<<18),
	} {
		start := time.Now()
		_, err := DecodeEntity([]byte(in))
		wantCode(t, "nesting", err, tableemu.InvalidInput)
		// Loosely: it takes well under a millisecond, a decoder that
		// recursed or backtracked would take seconds or overflow its
		// stack, and 50 ms was too little on a busy 2-CPU machine
		// (83 ms in CI).
		if d := time.Since(start); d > time.Second {
			t.Errorf("nested input took %v", d)
		}
	}
}

func TestDecodeManyPropertiesDuplicate(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"PartitionKey":"p","RowKey":"r"`)
	for i := 0; i < 40; i++ {
		b.WriteString(`,"P` + string(rune('A'+i%26)) + string(rune('a'+i/26)) + `":1`)
	}
	b.WriteString(`,"PBa":2}`)
	_, err := DecodeEntity([]byte(b.String()))
	wantCode(t, "many", err, tableemu.DuplicatePropertiesSpecified)
}

// The aztables Go SDK's quirks (docs/protocol.md 13): an embedded Entity always
// sends Timestamp "0001-01-01T00:00:00Z", which must be ignored — it would
// be out of range as a DateTime.
func TestDecodeGoSDKTimestamp(t *testing.T) {
	d, err := DecodeEntity([]byte(`{"PartitionKey":"p","RowKey":"r","Timestamp":"0001-01-01T00:00:00Z","Value":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Entity.Properties) != 1 || d.Entity.Properties[0].Name != "Value" {
		t.Errorf("properties = %+v", d.Entity.Properties)
	}
}

// TestDecodeEntitySharedAliases: DecodeEntityShared's strings without
// escapes are the body's bytes (no copy), those with escapes are copies,
// and DecodeEntity copies every one.
func TestDecodeEntitySharedAliases(t *testing.T) {
	src := `{"PartitionKey":"pk","RowKey":"rk","S":"plain","E":"a\nb","N":12}`
	shared := []byte(src)
	d, err := DecodeEntityShared(shared)
	if err != nil {
		t.Fatal(err)
	}
	copied := []byte(src)
	dc, err := DecodeEntity(copied)
	if err != nil {
		t.Fatal(err)
	}
	for i := range shared {
		if shared[i] == 'p' || shared[i] == 'a' {
			shared[i], copied[i] = 'X', 'X'
		}
	}
	if d.Entity.PartitionKey != "Xk" || d.Entity.Properties[0].Value.S != "XlXin" {
		t.Errorf("shared strings are not the body's bytes: %q %q", d.Entity.PartitionKey, d.Entity.Properties[0].Value.S)
	}
	if d.Entity.Properties[1].Value.S != "a\nb" {
		t.Errorf("an escaped string changed with the body: %q", d.Entity.Properties[1].Value.S)
	}
	if dc.Entity.PartitionKey != "pk" || dc.Entity.Properties[0].Value.S != "plain" {
		t.Errorf("DecodeEntity's strings changed with the body: %q %q", dc.Entity.PartitionKey, dc.Entity.Properties[0].Value.S)
	}
}
