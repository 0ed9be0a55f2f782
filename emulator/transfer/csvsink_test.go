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
			for range b.N {
				d, err := os.MkdirTemp(out, "export") // a new one each run, -count's too
				if err != nil {
					b.Fatal(err)
				}
				dir = d
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
