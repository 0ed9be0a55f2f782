package transfer

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/odata/edm"
)

// readCSV opens path and reads every table's entities, copied.
func readCSV(t *testing.T, path string, o CSVOptions) (map[string][]Entity, error) {
	t.Helper()
	src, err := OpenCSVWith(path, o)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	accts, err := src.Accounts()
	if err != nil {
		return nil, err
	}
	if len(accts) != 1 || accts[0].Name != "" || accts[0].Properties != nil {
		t.Fatalf("Accounts = %+v, want one account with no name and no properties", accts)
	}
	out := map[string][]Entity{}
	for _, tb := range accts[0].Tables {
		if tb.ACL != nil {
			t.Errorf("table %s: ACL %v, want none", tb.Name, tb.ACL)
		}
		var got []Entity
		err := tb.Entities(func(e Entity) error {
			c := *e.Entity
			c.Properties = append([]edm.Property(nil), c.Properties...)
			e.Entity = &c
			got = append(got, e)
			return nil
		})
		if err != nil {
			return out, err
		}
		out[tb.Name] = got
	}
	return out, nil
}

// sameEntity compares keys and properties by name, and Doubles by sign
// too (edm.Equal holds -0 equal to 0).
func sameEntity(t *testing.T, where string, got, want *edm.Entity) {
	t.Helper()
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey {
		t.Errorf("%s: keys (%q, %q), want (%q, %q)", where, got.PartitionKey, got.RowKey, want.PartitionKey, want.RowKey)
		return
	}
	sorted := func(ps []edm.Property) []edm.Property {
		c := append([]edm.Property(nil), ps...)
		sort.Slice(c, func(i, j int) bool { return c[i].Name < c[j].Name })
		return c
	}
	g, w := sorted(got.Properties), sorted(want.Properties)
	if len(g) != len(w) {
		t.Errorf("%s: %d properties %v, want %d %v", where, len(g), g, len(w), w)
		return
	}
	for i := range g {
		same := g[i].Name == w[i].Name && edm.Equal(g[i].Value, w[i].Value)
		if same && g[i].Value.T == edm.Double {
			same = math.Signbit(g[i].Value.F) == math.Signbit(w[i].Value.F)
		}
		if !same {
			t.Errorf("%s: property %s = %v (%s), want %s = %v (%s)", where, g[i].Name, g[i].Value, g[i].Value.T, w[i].Name, w[i].Value, w[i].Value.T)
		}
	}
}

// The files under testdata/csv are written by hand following Storage
// Explorer's rules (docs/transfer.md): sample.csv as Storage Explorer 1.40
// exports (comma, CRLF, bare type names, a Timestamp column without a type
// column, an empty string typed String beside absent properties, quoted
// commas, quotes and line breaks); legacy.typed.csv as versions before
// 1.22 named their typed exports (Edm.-prefixed types), with a UTF-8 byte
// order mark, ';' (the delimiter of a locale whose list separator it is)
// and LF line ends; tabs.csv in the shape microsoft/AzureStorageExplorer#8772
// shows, tab-separated with types in the first record only.
func TestCSVHandWritten(t *testing.T) {
	tables, err := readCSV(t, "testdata/csv", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	guid, _ := edm.NewGuid("c2f3b4a5-0000-4000-8000-00000000abcd")
	ticks := func(s string) int64 {
		v, err := edm.ParseDateTime(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	p := func(name string, v edm.Value) edm.Property { return edm.Property{Name: name, Value: v} }
	want := map[string][]edm.Entity{
		"sample": {
			{PartitionKey: "orders", RowKey: "1", Properties: []edm.Property{
				p("Active", edm.NewBoolean(true)), p("Count", edm.NewInt32(12)), p("Data", edm.NewBinary([]byte{1, 2, 3})),
				p("Id", guid), p("Name", edm.NewString("Smith, Jane")), p("Price", edm.NewDouble(19.99)),
				p("Seen", edm.NewDateTime(ticks("2025-09-22T09:45:35.2743359Z"))), p("Total", edm.NewInt64(math.MaxInt64)),
			}},
			{PartitionKey: "orders", RowKey: "2", Properties: []edm.Property{p("Name", edm.NewString(""))}},
			{PartitionKey: "orders", RowKey: "3", Properties: []edm.Property{
				p("Active", edm.NewBoolean(false)), p("Count", edm.NewInt32(math.MinInt32)), p("Data", edm.NewBinary([]byte{})),
				p("Name", edm.NewString("She said \"hi\"\r\nand left")), p("Price", edm.NewDouble(math.NaN())),
			}},
			{PartitionKey: "orders, west", RowKey: "4", Properties: []edm.Property{
				p("Name", edm.NewString("Zoë 😀")), p("Price", edm.NewDouble(math.Inf(-1))),
				p("Seen", edm.NewDateTime(edm.MinDateTime)), p("Total", edm.NewInt64(math.MinInt64)),
			}},
		},
		"legacy": {
			{PartitionKey: "a", RowKey: "1", Properties: []edm.Property{p("Amount", edm.NewInt64(42)), p("Note", edm.NewString("x"))}},
			{PartitionKey: "a", RowKey: "2", Properties: []edm.Property{p("Note", edm.NewString("")), p("Ratio", edm.NewDouble(math.Copysign(0, -1)))}},
		},
		"tabs": {
			{PartitionKey: "1979671", RowKey: "1000", Properties: []edm.Property{
				p("aggType", edm.NewInt32(2)), p("alarmStatus", edm.NewString("")), p("date", edm.NewString("2025-09-22T09:45:35.2743359Z")),
			}},
			{PartitionKey: "1979671", RowKey: "11", Properties: []edm.Property{p("aggType", edm.NewInt32(4))}},
			{PartitionKey: "1979671", RowKey: "155", Properties: []edm.Property{p("aggType", edm.NewInt32(2)), p("alarmStatus", edm.NewString("ACK"))}},
		},
	}
	wheres := map[string][]string{
		"sample": {"sample.csv:2", "sample.csv:3", "sample.csv:4", "sample.csv:6"},
		"legacy": {"legacy.typed.csv:2", "legacy.typed.csv:3"},
		"tabs":   {"tabs.csv:2", "tabs.csv:3", "tabs.csv:4"},
	}
	if len(tables) != len(want) {
		t.Errorf("tables %v, want %d", tables, len(want))
	}
	for name, w := range want {
		got := tables[name]
		if len(got) != len(w) {
			t.Errorf("%s: %d entities, want %d", name, len(got), len(w))
			continue
		}
		for i := range w {
			sameEntity(t, got[i].Where, got[i].Entity, &w[i])
			if got[i].Where != wheres[name][i] || got[i].KeepTimestamp {
				t.Errorf("%s entity %d: Where %s, KeepTimestamp %v; want %s, false", name, i, got[i].Where, got[i].KeepTimestamp, wheres[name][i])
			}
		}
	}

	// One file, named by the caller; the Timestamps kept.
	one, err := readCSV(t, "testdata/csv/sample.csv", CSVOptions{Table: "Orders2025", KeepTimestamp: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := one["Orders2025"]; len(got) != 4 || got[1].Timestamp != ticks("2025-09-22T09:45:36.1Z") || !got[1].KeepTimestamp {
		t.Errorf("sample.csv as Orders2025 = %+v", one)
	}
}

func TestCSVTableNames(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const header = "PartitionKey,RowKey\r\n"
	for name, want := range map[string]string{"Orders.csv": "Orders", "orders2.typed.csv": "orders2", "X1y.CSV": "X1y"} {
		tables, err := readCSV(t, write(name, header), CSVOptions{})
		if _, ok := tables[want]; err != nil || !ok || len(tables) != 1 {
			t.Errorf("%s: tables %v, %v; want %s", name, tables, err, want)
		}
	}
	for name, code := range map[string]tableemu.Code{"my-export (1).csv": tableemu.InvalidResourceName, "ab.csv": tableemu.OutOfRangeInput,
		"1abc.csv": tableemu.InvalidResourceName, "Tables.csv": tableemu.InvalidInput} {
		_, err := readCSV(t, write(name, header), CSVOptions{})
		wantCSVError(t, err, code, name)
		if !errors.Is(err, ErrInvalidTable) {
			t.Errorf("%s: %v is not ErrInvalidTable", name, err)
		}
	}
	if _, err := OpenCSVWith(dir, CSVOptions{Table: "x"}); err == nil {
		t.Error("a table name was accepted for a directory")
	}
	dup := t.TempDir()
	os.WriteFile(filepath.Join(dup, "abc.csv"), []byte(header), 0o644)
	os.WriteFile(filepath.Join(dup, "ABC.typed.csv"), []byte(header), 0o644)
	_, err := readCSV(t, dup, CSVOptions{})
	wantCSVError(t, err, tableemu.InvalidInput, "ABC.typed.csv and abc.csv")
}

// wantCSVError checks err is the service's code with a hint naming where.
func wantCSVError(t *testing.T, err error, code tableemu.Code, where string) {
	t.Helper()
	var e *tableemu.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: error %v, want %s", where, err, code)
		return
	}
	if e.Code != code || !strings.Contains(e.Message, tableemu.HintPrefix) || !strings.Contains(e.Message, where) {
		t.Errorf("error %s %q, want %s with a hint naming %s", e.Code, e.Message, code, where)
	}
}

func TestCSVErrors(t *testing.T) {
	const head = "PartitionKey,RowKey,Timestamp,N,N@type\r\n"
	tests := []struct {
		name, text string
		code       tableemu.Code
		line       int
	}{
		{"Int32 not a number", head + "p,r,,abc,Int32\r\n", tableemu.InvalidInput, 2},
		{"Int32 null", head + "p,r1,,1,Int32\r\np,r2,,null,Int32\r\n", tableemu.InvalidInput, 3},
		{"Int32 overflow", head + "p,r,,2147483648,Int32\r\n", tableemu.InvalidInput, 2},
		{"Int64 overflow", head + "p,r,,9223372036854775808,Int64\r\n", tableemu.InvalidInput, 2},
		{"Int32 empty", head + "p,r,,,Int32\r\n", tableemu.InvalidInput, 2},
		{"Double", head + "p,r,,1.5.2,Double\r\n", tableemu.InvalidInput, 2},
		{"Double overflow", head + "p,r,,1e400,Double\r\n", tableemu.InvalidInput, 2},
		{"Boolean", head + "p,r,,yes,Boolean\r\n", tableemu.InvalidInput, 2},
		{"Guid", head + "p,r,,not-a-guid,Guid\r\n", tableemu.InvalidInput, 2},
		{"Binary", head + "p,r,,***,Binary\r\n", tableemu.InvalidInput, 2},
		{"DateTime", head + "p,r,,yesterday,DateTime\r\n", tableemu.InvalidInput, 2},
		{"DateTime range", head + "p,r,,1600-12-31T00:00:00Z,DateTime\r\n", tableemu.OutOfRangeInput, 2},
		{"unknown type", head + "p,r,,1,Decimal\r\n", tableemu.InvalidInput, 2},
		{"geography", head + "p,r,,0xE6,Edm.GeographyPoint\r\n", tableemu.InvalidInput, 2},
		{"first type applies", head + "p,r1,,1,Int32\r\np,r2,,x,\r\n", tableemu.InvalidInput, 3},
		{"short record", head + "p,r,,1\r\n", tableemu.InvalidInput, 2},
		{"long record", head + "p,r,,1,Int32,\r\n", tableemu.InvalidInput, 2},
		{"unclosed quote", head + "p,r,,\"1,Int32\r\n", tableemu.InvalidInput, 2},
		{"after closing quote", head + "p,r,,\"1\"x,Int32\r\n", tableemu.InvalidInput, 2},
		{"line after multi-line value", head + "p,r1,,\"a\nb\nc\",String\r\np,r2,,x,Int32\r\n", tableemu.InvalidInput, 5},
		{"not UTF-8", head + "p,r,,caf\xe9,String\r\n", tableemu.InvalidInput, 2},
		{"UTF-16", "\xff\xfeP\x00", tableemu.InvalidInput, 1},
		{"empty file", "", tableemu.InvalidInput, 1},
		{"typed key", "PartitionKey,PartitionKey@type,RowKey\r\np,String,r1\r\n1,Int32,r2\r\n", tableemu.InvalidInput, 3},
		{"Timestamp kept", head + "p,r,soon,,\r\n", tableemu.InvalidInput, 2},
		{"unclosed quote, long", head + "p,r,,\"" + strings.Repeat("x\n", 4<<20) + "\r\n", tableemu.EntityTooLarge, 2},
		{"no line break, long", head + "p,r,," + strings.Repeat("x", 9<<20), tableemu.EntityTooLarge, 2},
		{"no RowKey", "PartitionKey,N\r\np,1\r\n", tableemu.PropertiesNeedValue, 1},
		{"duplicate column", "PartitionKey,RowKey,N,N\r\n", tableemu.DuplicatePropertiesSpecified, 1},
		{"type column alone", "PartitionKey,RowKey,M@type\r\n", tableemu.InvalidInput, 1},
		{"property name", "PartitionKey,RowKey,odata.etag\r\n", tableemu.PropertyNameInvalid, 1},
		{"property name digit", "PartitionKey,RowKey,1st\r\n", tableemu.PropertyNameInvalid, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.csv")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readCSV(t, path, CSVOptions{KeepTimestamp: true})
			wantCSVError(t, err, tt.code, "bad.csv:"+strconv.Itoa(tt.line)+":")
			if !errors.Is(err, ErrInvalidEntity) || !strings.Contains(err.Error(), "Nothing of table bad was imported") {
				t.Errorf("%v: not ErrInvalidEntity, or does not say the table is not imported", err)
			}
		})
	}
}

// TestCSVDocSample reads the sample docs/transfer.md shows.
func TestCSVDocSample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/transfer.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```csv\n")
	sample, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/transfer.md has no ```csv block")
	}
	path := filepath.Join(t.TempDir(), "orders.csv")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	tables, err := readCSV(t, path, CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := tables["orders"]
	if len(got) != 3 {
		t.Fatalf("%d entities, want 3", len(got))
	}
	seen, _ := edm.ParseDateTime("2025-09-22T09:45:35.2743359Z")
	p := func(name string, v edm.Value) edm.Property { return edm.Property{Name: name, Value: v} }
	want := []edm.Entity{
		{PartitionKey: "orders", RowKey: "1", Properties: []edm.Property{p("Count", edm.NewInt32(12)), p("Name", edm.NewString("Smith, Jane")), p("Seen", edm.NewDateTime(seen))}},
		{PartitionKey: "orders", RowKey: "2", Properties: []edm.Property{p("Name", edm.NewString(""))}},
		{PartitionKey: "orders", RowKey: "3", Properties: []edm.Property{p("Count", edm.NewInt32(-7)), p("Name", edm.NewString("two\nlines"))}},
	}
	for i := range want {
		sameEntity(t, got[i].Where, got[i].Entity, &want[i])
	}

	// The refusal shown: order 2's Count made "null", imported.
	sec := docSection(t, "Storage Explorer's CSV")
	refusal := strings.TrimSpace(docBlock(t, sec, "text"))
	bad := strings.Replace(sample, "orders,2,2025-09-22T09:45:36.0000000Z,,,", "orders,2,2025-09-22T09:45:36.0000000Z,null,Int32,", 1)
	if bad == sample {
		t.Fatal("the documented sample's second record changed: update this test")
	}
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := newTransfer(engines[0].open(t))
	_, err = tr.Import(ctx, mustOpenCSV(t, path), Options{Account: "a1"})
	e := tableemu.From(err)
	if got := string(e.Code) + ": " + strings.Replace(e.Message, tableemu.HintPrefix, " tableemu: ", 1); got != refusal {
		t.Errorf("the documented refusal is\n%s\nan import's\n%s", refusal, got)
	}
}

func mustOpenCSV(t *testing.T, path string) Source {
	t.Helper()
	src, err := OpenCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// FuzzCSVSource reads any bytes as a CSV file: no panic, and every error
// is the service's, naming the file.
func FuzzCSVSource(f *testing.F) {
	for _, name := range []string{"sample.csv", "legacy.typed.csv", "tabs.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata/csv", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("PartitionKey,RowKey,N,N@type\r\np,\"r\"\"\",1,Int32\r\n,,,\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb := &csvTable{where: "f.csv", table: "f"}
		r, h, err := tb.header(bytes.NewReader(data))
		for err == nil {
			var line int
			if line, err = r.next(); err != nil && err != io.EOF {
				err = tb.at(err, line) // as entities does
			} else if err == nil {
				var e Entity
				if e, err = (&csvDecoder{t: tb, h: h, first: make([]string, len(h.props))}).entity(r, line); err == nil && e.Entity == nil {
					t.Fatal("no entity and no error")
				}
			}
		}
		if err != io.EOF && (tableemu.From(err).Code == tableemu.InternalError || !strings.Contains(err.Error(), "f.csv:")) {
			t.Fatalf("%q: %v", data, err)
		}
	})
}
