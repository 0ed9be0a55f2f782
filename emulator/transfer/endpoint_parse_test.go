package transfer

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tableemu/tableemu"
)

// parseFrom reads the connection strings and SAS URLs users copy from the
// portal, Storage Explorer and the emulators.
func TestParseFrom(t *testing.T) {
	tests := []struct {
		name, from string
		want       endpointSpec
	}{
		{"development storage", "UseDevelopmentStorage=true",
			endpointSpec{service: "http://127.0.0.1:10002/devstoreaccount1", account: devAccount, key: devKey}},
		{"development storage, any case, behind a proxy", "usedevelopmentstorage=TRUE;DevelopmentStorageProxyUri=http://devhost",
			endpointSpec{service: "http://devhost:10002/devstoreaccount1", account: devAccount, key: devKey}},
		{"account and key", "AccountName=acct;AccountKey=a2V5",
			endpointSpec{service: "https://acct.table.core.windows.net", account: "acct", key: "a2V5"}},
		{"protocol and suffix", "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.chinacloudapi.cn;",
			endpointSpec{service: "http://acct.table.core.chinacloudapi.cn", account: "acct", key: "a2V5"}},
		{"table endpoint", "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:10002/devstoreaccount1/;",
			endpointSpec{service: "http://127.0.0.1:10002/devstoreaccount1", account: "devstoreaccount1", key: "a2V5"}},
		{"SAS in a connection string", "TableEndpoint=https://acct.table.core.windows.net/;SharedAccessSignature=?sv=2019-02-02&ss=t&srt=sco&sp=rl&sig=abc%3D",
			endpointSpec{service: "https://acct.table.core.windows.net", sas: "sv=2019-02-02&ss=t&srt=sco&sp=rl&sig=abc%3D"}},
		{"account SAS URL", "https://acct.table.core.windows.net/?sv=2019-02-02&ss=t&srt=sco&sp=rl&sig=abc%3D",
			endpointSpec{service: "https://acct.table.core.windows.net", sas: "sv=2019-02-02&ss=t&srt=sco&sp=rl&sig=abc%3D"}},
		{"account SAS URL, path style", "http://127.0.0.1:10002/devstoreaccount1?sv=2019-02-02&ss=t&srt=sco&sp=rl&sig=abc",
			endpointSpec{service: "http://127.0.0.1:10002/devstoreaccount1", sas: "sv=2019-02-02&ss=t&srt=sco&sp=rl&sig=abc"}},
		{"table SAS URL keeps the path's spelling", "https://acct.table.core.windows.net/Orders?sv=2019-02-02&tn=orders&sp=r&sig=abc",
			endpointSpec{service: "https://acct.table.core.windows.net", sas: "sv=2019-02-02&tn=orders&sp=r&sig=abc", table: "Orders"}},
		{"table SAS URL, path style", "http://127.0.0.1:10002/devstoreaccount1/orders?sv=2019-02-02&tn=orders&sp=r&sig=abc",
			endpointSpec{service: "http://127.0.0.1:10002/devstoreaccount1", sas: "sv=2019-02-02&tn=orders&sp=r&sig=abc", table: "orders"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFrom(tt.from)
			if err != nil {
				t.Fatalf("parseFrom(%q): %v", tt.from, err)
			}
			if *got != tt.want {
				t.Errorf("parseFrom(%q) = %+v, want %+v", tt.from, *got, tt.want)
			}
		})
	}
}

// What parseFrom refuses is 400 InvalidInput with a hint, which never
// quotes a key.
func TestParseFromRefuses(t *testing.T) {
	tests := []struct{ name, from, hint string }{
		{"URL without a SAS", "https://acct.table.core.windows.net/", "no SAS"},
		{"table SAS on another table", "https://acct.table.core.windows.net/other?tn=orders&sig=x", "does not end with it"},
		{"neither", "hello", "neither a URL nor a connection string"},
		{"no credential", "AccountName=acct", "neither AccountKey nor SharedAccessSignature"},
		{"key without a name", "AccountKey=c2VjcmV0a2V5c2VjcmV0", "no AccountName"},
		{"bad table endpoint", "AccountName=a;AccountKey=a2V5;TableEndpoint=::", "not a URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFrom(tt.from)
			var te *tableemu.Error
			if !errors.As(err, &te) || te.Code != tableemu.InvalidInput || !te.Hinted() || !strings.Contains(te.Message, tt.hint) {
				t.Fatalf("parseFrom(%q) = %v, want InvalidInput saying %q", tt.from, err, tt.hint)
			}
			if strings.Contains(te.Message, "c2VjcmV0a2V5c2VjcmV0") {
				t.Errorf("the error quotes the key: %v", te)
			}
		})
	}
}

// Every --from that docs/transfer.md shows is one parseFrom reads, of the
// kind its comment says.
func TestDocsFromExamples(t *testing.T) {
	b, err := os.ReadFile("../../docs/transfer.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## From another Table endpoint")
	if start < 0 {
		t.Fatal("docs/transfer.md has no section From another Table endpoint")
	}
	doc = doc[start:]
	if end := strings.Index(doc[3:], "\n## "); end >= 0 {
		doc = doc[:end+3]
	}
	var n int
	for _, line := range strings.Split(doc, "\n") {
		arg, ok := strings.CutPrefix(line, `tableemu import --from "`)
		if !ok {
			continue
		}
		arg, ok = strings.CutSuffix(arg, `"`)
		if !ok {
			t.Errorf("unquoted --from: %s", line)
			continue
		}
		n++
		s, err := parseFrom(arg)
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		if strings.Contains(arg, "tn=") != (s.table != "") || strings.Contains(arg, "sig=") != (s.sas != "") {
			t.Errorf("%s: read as %+v", line, *s)
		}
	}
	if n < 5 {
		t.Errorf("%d --from examples in the section, want the five kinds", n)
	}
}

// timestampOf finds the Timestamp key, not text that looks like it inside
// a value, and reads the forms its fast path leaves to encoding/json.
func TestTimestampOf(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"PartitionKey":"p","RowKey":"r","Timestamp":"2026-11-28T23:00:00.1234567Z","A":1}`, "2026-11-28T23:00:00.1234567Z"},
		{`{"A":"x\"Timestamp\":\"1999-01-01T00:00:00Z","Timestamp":"2026-01-01T00:00:00Z"}`, "2026-01-01T00:00:00Z"},
		{`{"\"Timestamp":"1999-01-01T00:00:00Z","Timestamp":"2026-01-06T00:00:00Z"}`, "2026-01-06T00:00:00Z"},
		{`{"A":"x\\","Timestamp":"2026-01-02T00:00:00Z"}`, "2026-01-02T00:00:00Z"},
		{`{"Timestamp@odata.type":"Edm.DateTime", "Timestamp" : "2026-01-03T00:00:00Z"}`, "2026-01-03T00:00:00Z"},
		{`{"Timestamp":"2026-01-04T00:00:00\u005a"}`, "2026-01-04T00:00:00Z"},
		{`{"timestamp":"2026-01-05T00:00:00Z"}`, ""},
		{`{"PartitionKey":"p","RowKey":"r"}`, ""},
	}
	for _, tt := range tests {
		got, err := timestampOf([]byte(tt.raw))
		if err != nil || got != tt.want {
			t.Errorf("timestampOf(%s) = %q, %v; want %q", tt.raw, got, err, tt.want)
		}
	}
	if _, err := timestampOf([]byte(`{"Timestamp":12}`)); err == nil {
		t.Errorf("a numeric Timestamp was read")
	}
}

// An entity the endpoint sends that tableemu cannot read stops the copy
// with ErrInvalidEntity, naming the endpoint, the table and the entity's
// place, never the SAS.
func TestBadEntity(t *testing.T) {
	spec, err := parseFrom("https://acct.table.core.windows.net/?sv=2019-02-02&ss=t&srt=sco&sp=rl&sig=SECRET")
	if err != nil {
		t.Fatal(err)
	}
	tb := &endpointTable{src: &endpointSource{spec: spec}, name: "orders"}
	err = tb.hand([]byte(`{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Int64","N":"12x"}`), 7, func(Entity) error { return nil })
	var te *tableemu.Error
	if !errors.Is(err, ErrInvalidEntity) || !errors.As(err, &te) || te.Code != tableemu.InvalidInput ||
		!strings.Contains(te.Message, "https://acct.table.core.windows.net: table orders, entity 7") || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("err = %v", err)
	}
	err = tb.hand([]byte(`{"PartitionKey":"p","RowKey":"r","Timestamp":"yesterday"}`), 8, func(Entity) error { return nil })
	if !errors.Is(err, ErrInvalidEntity) || !strings.Contains(err.Error(), "entity 8") {
		t.Errorf("err = %v", err)
	}
}
