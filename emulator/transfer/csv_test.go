package transfer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

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

// csvEveryType is a table holding every EDM type at its edges, empty strings
// beside absent properties, and strings and keys the CSV must quote.
func csvEveryType(t *testing.T) []*edm.Entity {
	guid, err := edm.NewGuid("C2F3B4A5-0000-4000-8000-00000000ABCD")
	if err != nil {
		t.Fatal(err)
	}
	large := bytes.Repeat([]byte{0, 1, 2, 0xFF, ',', '"', '\n'}, 64*1024/7)
	p := func(name string, v edm.Value) edm.Property { return edm.Property{Name: name, Value: v} }
	ts := edm.TicksFromTime(mustTime(t, "2025-09-22T09:45:35.2743359Z"))
	return []*edm.Entity{
		{PartitionKey: "", RowKey: "", Timestamp: ts, Properties: []edm.Property{p("Empty", edm.NewString(""))}},
		{PartitionKey: "p,1", RowKey: `r"1"`, Timestamp: ts + 1, Properties: []edm.Property{
			p("I32Min", edm.NewInt32(math.MinInt32)), p("I32Max", edm.NewInt32(math.MaxInt32)),
			p("I64Min", edm.NewInt64(math.MinInt64)), p("I64Max", edm.NewInt64(math.MaxInt64)),
			p("NaN", edm.NewDouble(math.NaN())), p("PosInf", edm.NewDouble(math.Inf(1))), p("NegInf", edm.NewDouble(math.Inf(-1))),
			p("NegZero", edm.NewDouble(math.Copysign(0, -1))), p("Whole", edm.NewDouble(5)), p("Tenth", edm.NewDouble(0.1)),
			p("Tiny", edm.NewDouble(5e-324)), p("Huge", edm.NewDouble(1.7976931348623157e308)),
			p("DTMin", edm.NewDateTime(edm.MinDateTime)), p("DTMax", edm.NewDateTime(edm.MaxDateTime)), p("DTTick", edm.NewDateTime(ts+1)),
			p("G", guid), p("BinEmpty", edm.NewBinary([]byte{})), p("BinLarge", edm.NewBinary(large)),
			p("T", edm.NewBoolean(true)), p("F", edm.NewBoolean(false)),
		}},
		{PartitionKey: " lead and trail ", RowKey: "Zoë 😀 ,; |", Timestamp: ts + 2, Properties: []edm.Property{
			p("Empty", edm.NewString("")),
			p("Commas", edm.NewString("a,b,,c")), p("Quotes", edm.NewString(`"quoted" and ""double""`)),
			p("CRLF", edm.NewString("one\r\ntwo")), p("CR", edm.NewString("one\rtwo")), p("LF", edm.NewString("one\ntwo\n")),
			p("Astral", edm.NewString("𝄞 music, 😀 and Zoë")), p("Spaces", edm.NewString("  padded  ")),
			p("Null", edm.NewString("null")), p("Digits", edm.NewString("00123")), p("TypeLike", edm.NewString("Int32")),
			p("Control", edm.NewString("tab\there\x01")),
		}},
		{PartitionKey: "p2", RowKey: "only keys", Timestamp: ts + 3},
	}
}

func TestCSVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := csvEveryType(t)
	sink, err := NewCSVSink(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Properties("devstoreaccount1", []byte("<StorageServiceProperties/>")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"everytype", "empty"} {
		if err := sink.Table(TableInfo{Account: "devstoreaccount1", Name: name, ACL: nil}); err != nil {
			t.Fatal(err)
		}
		if name == "empty" {
			continue
		}
		for _, e := range want {
			if err := sink.Entity(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) != 0 {
		t.Errorf("the sink left %v behind", left)
	}
	b, err := os.ReadFile(filepath.Join(dir, "empty.csv"))
	if err != nil || string(b) != "PartitionKey,RowKey,Timestamp\r\n" {
		t.Errorf("empty.csv = %q, %v; want the header alone", b, err)
	}

	for _, keep := range []bool{false, true} {
		tables, err := readCSV(t, dir, CSVOptions{KeepTimestamp: keep})
		if err != nil {
			t.Fatal(err)
		}
		if len(tables["empty"]) != 0 || len(tables) != 2 {
			t.Fatalf("tables %v, want everytype and an empty table", tables)
		}
		got := tables["everytype"]
		if len(got) != len(want) {
			t.Fatalf("%d entities, want %d", len(got), len(want))
		}
		for i := range want {
			sameEntity(t, got[i].Where, got[i].Entity, want[i])
			if got[i].KeepTimestamp != keep || keep && got[i].Timestamp != want[i].Timestamp {
				t.Errorf("%s: KeepTimestamp %v, Timestamp %d; want %v, %d", got[i].Where, got[i].KeepTimestamp, got[i].Timestamp, keep, want[i].Timestamp)
			}
		}
		// The third entity's record starts on line 4, and its CRLF, CR
		// and two LFs put the fourth on line 9.
		for i, where := range []string{"everytype.csv:2", "everytype.csv:3", "everytype.csv:4", "everytype.csv:9"} {
			if got[i].Where != where {
				t.Errorf("entity %d read at %s, want %s", i, got[i].Where, where)
			}
		}
	}
}

// TestCSVSinkDirectory: a directory holding CSV files is refused without
// overwrite; with it, the old files stay until Close, which replaces them
// and removes the others; an aborted export leaves the directory as it was.
func TestCSVSinkDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"t1.csv", "stale.csv", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := NewCSVSink(dir, false)
	if !errors.Is(err, ErrExportExists) || tableemu.From(err).Code != tableemu.InvalidInput {
		t.Errorf("NewCSVSink on a directory of CSV files: %v, want ErrExportExists", err)
	}
	// files lists the directory, hidden (temporary) files apart.
	files := func(hidden bool) string {
		ents, _ := os.ReadDir(dir)
		var names []string
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") != hidden {
				continue
			}
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			names = append(names, e.Name()+"="+string(b))
		}
		return strings.Join(names, " ")
	}
	before := files(false)
	write := func(s Sink) {
		t.Helper()
		if err := s.Entity(&edm.Entity{}); err == nil {
			t.Error("an entity before any table was accepted")
		}
		s.Table(TableInfo{Name: "t1"})
		s.Entity(&edm.Entity{PartitionKey: "p", RowKey: "r", Properties: []edm.Property{{Name: "N", Value: edm.NewInt64(-1)}}})
		s.Table(TableInfo{Name: "t2"})
		if got := files(false); got != before {
			t.Errorf("the directory changed before Close: %s", got)
		}
	}

	sink, err := NewCSVSink(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	write(sink)
	sink.(Aborter).Abort()
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	if got, tmp := files(false), files(true); got != before || tmp != "" {
		t.Errorf("after an aborted export: %s (and %q), want %s", got, tmp, before)
	}

	sink, _ = NewCSVSink(dir, true)
	write(sink)
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	want := "notes.txt=old t1.csv=PartitionKey,RowKey,Timestamp,N,N@type\r\np,r,,-1,Int64\r\n t2.csv=PartitionKey,RowKey,Timestamp\r\n"
	if got, tmp := files(false), files(true); got != want || tmp != "" {
		t.Errorf("after the export: %q (and %q), want %q", got, tmp, want)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	ticks, err := edm.ParseDateTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return edm.TimeFromTicks(ticks)
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

// csvBytes writes records with the sink's writer.
func csvBytes(records ...[]string) string {
	var b []byte
	for _, r := range records {
		b = appendCSVRecord(b, r, ',')
	}
	return string(b)
}

func FuzzCSVRecord(f *testing.F) {
	f.Add("a", "b,c", "")
	f.Add("\"", "\r\n", "\r")
	f.Add(" x", "\n\n", "\"\"")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		in := []string{a, b, c}
		text := csvBytes(in, in)
		r := &csvReader{r: bufio.NewReader(strings.NewReader(text)), delim: ',', line: 1}
		for i := 0; i < 2; i++ {
			got, _, err := r.read()
			if err != nil || len(got) != 3 || got[0] != a || got[1] != b || got[2] != c {
				t.Fatalf("record %d of %q = %q, %v; want %q", i, text, got, err, in)
			}
		}
	})
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

// benchEntities is n entities of about 1 KiB each: a few typed
// properties and a 900-byte string with commas and a line break.
func benchEntities(n int) func(i int) *edm.Entity {
	text := strings.Repeat("lorem, ipsum\n", 70)[:900]
	e := &edm.Entity{Properties: make([]edm.Property, 5)}
	return func(i int) *edm.Entity {
		e.PartitionKey = "p" + strconv.Itoa(i/1000)
		e.RowKey = "r" + strconv.Itoa(i)
		e.Timestamp = edm.MinDateTime + int64(i)
		e.Properties[0] = edm.Property{Name: "Count", Value: edm.NewInt32(int32(i))}
		e.Properties[1] = edm.Property{Name: "Total", Value: edm.NewInt64(int64(i) << 33)}
		e.Properties[2] = edm.Property{Name: "Price", Value: edm.NewDouble(float64(i) / 7)}
		e.Properties[3] = edm.Property{Name: "Seen", Value: edm.NewDateTime(edm.MinDateTime + int64(i)*1234567)}
		e.Properties[4] = edm.Property{Name: "Text", Value: edm.NewString(text)}
		return e
	}
}

// BenchmarkCSVSink writes b.N entities of about 1 KiB to one table's file.
func BenchmarkCSVSink(b *testing.B) {
	next := benchEntities(b.N)
	dir := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	sink, _ := NewCSVSink(dir, false)
	sink.Table(TableInfo{Name: "bench"})
	for i := 0; i < b.N; i++ {
		if err := sink.Entity(next(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := sink.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCSVSource reads b.N entities of about 1 KiB from one file.
func BenchmarkCSVSource(b *testing.B) {
	next := benchEntities(b.N)
	dir := b.TempDir()
	sink, _ := NewCSVSink(dir, false)
	sink.Table(TableInfo{Name: "bench"})
	for i := 0; i < b.N; i++ {
		sink.Entity(next(i))
	}
	if err := sink.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	src, err := OpenCSV(filepath.Join(dir, "bench.csv"))
	if err != nil {
		b.Fatal(err)
	}
	accts, _ := src.Accounts()
	n := 0
	err = accts[0].Tables[0].Entities(func(e Entity) error { n++; return nil })
	if err != nil || n != b.N {
		b.Fatalf("%d entities, %v", n, err)
	}
}

// TestCSVImportExport runs Storage Explorer's CSV through Import and
// Export on a SQLite store: files written by the sink and by hand go in,
// an export writes them out again the same (byte for byte, when the
// import keeps the Timestamps), and an import that meets a bad record
// names its file and line and leaves nothing of its table.
func TestCSVImportExport(t *testing.T) {
	st := engines[0].open(t)
	tr := newTransfer(st)

	// Two every-type tables (this file's and jsonl_test.go's) in the
	// store's order, written by the sink.
	in := t.TempDir()
	sink, _ := NewCSVSink(in, false)
	total := 0
	for _, tb := range []struct {
		name string
		es   []*edm.Entity
	}{{"everytype", csvEveryType(t)}, {"jsonltypes", everyType(t)}} {
		sort.Slice(tb.es, func(i, j int) bool {
			if c := edm.CompareStrings(tb.es[i].PartitionKey, tb.es[j].PartitionKey); c != 0 {
				return c < 0
			}
			return edm.CompareStrings(tb.es[i].RowKey, tb.es[j].RowKey) < 0
		})
		sink.Table(TableInfo{Name: tb.name})
		for i, e := range tb.es {
			if e.Timestamp == 0 { // kept, so that the export writes it again
				e.Timestamp = edm.MinDateTime + int64(i)
			}
			if err := sink.Entity(e); err != nil {
				t.Fatal(err)
			}
		}
		total += len(tb.es)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	src, err := OpenCSVWith(in, CSVOptions{KeepTimestamp: true})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := tr.Import(ctx, src, Options{Account: "a1"})
	if err != nil || sum != (Summary{Tables: 2, Entities: total}) {
		t.Fatalf("import: %+v %v", sum, err)
	}
	// Storage Explorer's file, written by hand, into another account,
	// Timestamps ignored.
	src, err = OpenCSV("testdata/csv/sample.csv")
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := tr.Import(ctx, src, Options{Account: "a2"}); err != nil || sum != (Summary{Tables: 1, Entities: 4}) {
		t.Fatalf("import of sample.csv: %+v %v", sum, err)
	}

	out := t.TempDir()
	sink, _ = NewCSVSink(out, false)
	if _, err := tr.Export(ctx, sink, Options{Account: "a1"}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"everytype.csv", "jsonltypes.csv"} {
		before, _ := os.ReadFile(filepath.Join(in, f))
		after, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !bytes.Equal(before, after) {
			i := 0
			for i < len(after) && i < len(before) && after[i] == before[i] {
				i++
			}
			from := max(0, i-80)
			t.Errorf("exported %s differs from the imported one at byte %d (%v):\n%q\nwant\n%q", f, i, err,
				after[from:min(len(after), i+80)], before[from:min(len(before), i+80)])
		}
	}

	out2 := t.TempDir()
	sink, _ = NewCSVSink(out2, false)
	if _, err := tr.Export(ctx, sink, Options{Account: "a2"}); err != nil {
		t.Fatal(err)
	}
	sink.Close()
	tables, err := readCSV(t, out2, CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hand, _ := readCSV(t, "testdata/csv/sample.csv", CSVOptions{})
	if got := tables["sample"]; len(got) != 4 {
		t.Fatalf("sample exported again: %v", tables)
	}
	for i, e := range hand["sample"] {
		sameEntity(t, tables["sample"][i].Where, tables["sample"][i].Entity, e.Entity)
		if ts := tables["sample"][i].Timestamp; ts != 0 {
			t.Errorf("%s: Timestamp %d read while not kept", tables["sample"][i].Where, ts)
		}
	}

	// All or nothing: the bad record on line 5 (after a value on two
	// lines) undoes the table, and the error names bad.csv:5; so do the
	// entities the service refuses for their keys or sizes.
	for _, tt := range []struct {
		name, last string
		code       tableemu.Code
	}{
		{"cell", "p,r3,,x,Int32", tableemu.InvalidInput},
		{"key character", "p/1,r3,,1,Int32", tableemu.OutOfRangeInput},
		{"key length", "p," + strings.Repeat("r", 1025) + ",,1,Int32", tableemu.PropertyValueTooLarge},
		{"string length", "p,r3,," + strings.Repeat("x", 32*1024+1) + ",String", tableemu.PropertyValueTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.csv")
			text := "PartitionKey,RowKey,Timestamp,N,N@type\r\np,r1,,1,Int32\r\np,r2,,\"two\r\nlines\",String\r\n" + tt.last + "\r\n"
			os.WriteFile(path, []byte(text), 0o644)
			src, err := OpenCSV(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tr.Import(ctx, src, Options{Account: "a1"})
			wantCSVError(t, err, tt.code, "bad.csv:5:")
			for _, l := range export(t, tr, "a1").lines {
				if strings.HasPrefix(l, "table a1 bad") {
					t.Errorf("after the failed import, account a1 has table bad")
				}
			}
		})
	}
}

// BenchmarkCSVTransfer is BenchmarkTransfer (bench_test.go) with Storage
// Explorer's CSV instead of JSON Lines: export and import of 10,000 and
// 100,000 entities of about 1 KiB on SQLite, with their peak heap.
//
//	go test -run '^$' -bench 'CSVTransfer' -benchtime 1x ./emulator/transfer/
func BenchmarkCSVTransfer(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		tr := newTransfer(benchStore(b))
		if _, err := tr.Import(ctx, &memSource{[]Account{{Tables: []*Table{genTable("bench", n)}}}}, Options{Account: "a1"}); err != nil {
			b.Fatal(err)
		}
		out, dir := b.TempDir(), ""
		b.Run(fmt.Sprintf("export/n=%d", n), func(b *testing.B) {
			for i := range b.N {
				dir = filepath.Join(out, fmt.Sprintf("export%d-%d", n, i))
				measure(b, func() {
					sink, err := NewCSVSink(dir, false)
					if err != nil {
						b.Fatal(err)
					}
					if sum, err := tr.Export(ctx, sink, Options{Account: "a1"}); err != nil || sum.Entities != n {
						b.Fatal(sum, err)
					}
					if err := sink.Close(); err != nil {
						b.Fatal(err)
					}
				})
			}
			if fi, err := os.Stat(filepath.Join(dir, "bench.csv")); err == nil {
				b.ReportMetric(float64(fi.Size())/float64(n), "bytes/entity")
			}
		})
		b.Run(fmt.Sprintf("import/n=%d", n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				target := newTransfer(benchStore(b))
				src, err := OpenCSV(dir)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				measure(b, func() {
					if sum, err := target.Import(ctx, src, Options{Account: "a1"}); err != nil || sum.Entities != n {
						b.Fatal(sum, err)
					}
				})
			}
		})
	}
}
