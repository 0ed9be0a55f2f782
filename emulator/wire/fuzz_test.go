package wire

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/tableemu/tableemu"
)

// FuzzDecodeEntity: DecodeEntity never panics and fails only with a 400
// *tableemu.Error; whatever it decodes re-encodes (minimal and full
// metadata, in storage's form and Cosmos DB's) to valid JSON that decodes
// to the same entity; ValidateEntity never panics on it either. Under the
// cosmos option the decoder accepts more, never less, and decodes what
// storage accepts the same.
func FuzzDecodeEntity(f *testing.F) {
	seeds := []string{
		``, `{}`, `[]`, `{"PartitionKey":"p","RowKey":"r"}`,
		body(`"S":"s","I":1,"B":true,"N":null,"D":1.5,"E":-0.0,"X":1e400`),
		body(`"L@odata.type":"Edm.Int64","L":"9223372036854775807"`),
		body(`"I@odata.type":"Edm.Int32","I":"-12"`),
		body(`"D@odata.type":"Edm.Double","D":"NaN","E":"-Infinity","E@odata.type":"Edm.Double"`),
		body(`"T@odata.type":"Edm.DateTime","T":"9999-12-31T23:59:59.9999999Z"`),
		body(`"T@odata.type":"Edm.DateTime","T":"1600-01-01T00:00:00+01:00"`),
		body(`"G@odata.type":"Edm.Guid","G":"C9DA6455-213D-42C9-9A79-3E9149A57833"`),
		body(`"B@odata.type":"Edm.Binary","B":"AAEC/w=="`),
		body(`"Bo@odata.type":"Edm.Boolean","Bo":"False"`),
		body(`"S@odata.type":"Edm.String","S":42,"T":-1.5e3,"T@odata.type":"Edm.String"`),
		body(`"S":"\u00e9\uD83D\uDE00\n\"\\","ꀕ":"x","a@b":1,"z@ns.t":2,"odata.etag":"e"`),
		`{"PartitionKey":"a'b\"c","RowKey":"😀","Timestamp":"0001-01-01T00:00:00Z"}`,
		`{"a":1,"a":2}`, `{"a":[1]}`, `{"a":{"b":1}}`, `{"a":"\uD800"}`, "{\"a\":\"\xff\"}",
		"\ufeff{\"PartitionKey\":\"p\"}", `{"PartitionKey":1}`, `{"a":01}`, `{"a":1}x`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := DecodeEntity(in)
		// DecodeEntityShared decodes the same, whether it fails or not.
		ds, errShared := DecodeEntityShared(append([]byte(nil), in...))
		if (err == nil) != (errShared == nil) || err != nil && err.Error() != errShared.Error() {
			t.Fatalf("DecodeEntity: %v; DecodeEntityShared: %v", err, errShared)
		}
		if err == nil {
			if e := sameEntity(&d.Entity, &ds.Entity); e != nil || d.HasPartitionKey != ds.HasPartitionKey || d.HasRowKey != ds.HasRowKey ||
				d.Entity.PartitionKey != ds.Entity.PartitionKey || d.Entity.RowKey != ds.Entity.RowKey {
				t.Fatalf("DecodeEntityShared of %q differs: %v", in, e)
			}
		}
		dc, errCosmos := DecodeEntityWith(in, DecodeOptions{Cosmos: true})
		switch {
		case err == nil && errCosmos != nil:
			t.Fatalf("cosmos refuses what storage accepts: %v", errCosmos)
		case err == nil:
			if e := sameEntity(&d.Entity, &dc.Entity); e != nil {
				t.Fatalf("cosmos decodes %q otherwise: %v", in, e)
			}
		case errCosmos != nil:
			var e *tableemu.Error
			if !errors.As(errCosmos, &e) || e.Status != 400 {
				t.Fatalf("cosmos error %v is not a 400 *tableemu.Error", errCosmos)
			}
		}
		if err != nil {
			var e *tableemu.Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("error %v is not a 400 *tableemu.Error", err)
			}
			return
		}
		_ = ValidateEntity(&d.Entity)
		_ = EntitySize(&d.Entity)
		for _, o := range []*Options{
			{Level: MinimalMetadata},
			{Level: FullMetadata, BaseURL: "http://127.0.0.1:10002/devstoreaccount1", Account: "devstoreaccount1", Table: "t"},
			{Level: MinimalMetadata, Cosmos: true},
			{Level: FullMetadata, BaseURL: "http://127.0.0.1:8902/devstoreaccount1", Account: "devstoreaccount1", Table: "t", Cosmos: true},
		} {
			out := AppendEntityDocument(nil, &d.Entity, o)
			if !json.Valid(out) {
				t.Fatalf("invalid JSON output for %q: %s", in, out)
			}
			d2, err := DecodeEntity(out)
			if err != nil {
				t.Fatalf("our output %s does not decode: %v", out, err)
			}
			if err := sameEntity(&d.Entity, &d2.Entity); err != nil {
				t.Fatalf("round trip of %q through %s: %v", in, out, err)
			}
		}
		if out := AppendEntity(nil, &d.Entity, &Options{Level: NoMetadata}); !json.Valid(out) {
			t.Fatalf("invalid no-metadata JSON: %s", out)
		}
		// Where the keys stand: storage never records it; under cosmos
		// the answer puts them where the body had them, so that reading
		// it back gives the same places.
		if !d.Entity.Keys.KeysFirst() {
			t.Fatalf("storage recorded keys at %+v", d.Entity.Keys)
		}
		out := AppendEntity(nil, &dc.Entity, &Options{Level: MinimalMetadata, Cosmos: true})
		d3, err := DecodeEntityWith(out, DecodeOptions{Cosmos: true})
		if err != nil {
			t.Fatalf("our cosmos output %s does not decode: %v", out, err)
		}
		if d3.Entity.Keys != dc.Entity.Keys {
			t.Fatalf("keys at %+v in %q come back from %s at %+v", dc.Entity.Keys, in, out, d3.Entity.Keys)
		}
	})
}
