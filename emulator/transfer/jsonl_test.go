package transfer

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// everyType is a table's worth of entities holding every EDM type at the
// edges of its range, and keys in every script, astral ones included.
func everyType(t testing.TB) []*edm.Entity {
	g, err := edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833")
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 64<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	escapes := "\"\\/\b\f\n\r\t\x00\x01\x1f\x7f\u0080\u2028\u2029\ufeff <>&'"
	return []*edm.Entity{
		{PartitionKey: "", RowKey: "", Properties: []edm.Property{prop("Empty", edm.NewString(""))}},
		{PartitionKey: "ints", RowKey: "bounds", Properties: []edm.Property{
			prop("I32min", edm.NewInt32(math.MinInt32)), prop("I32max", edm.NewInt32(math.MaxInt32)), prop("I32zero", edm.NewInt32(0)),
			prop("I64min", edm.NewInt64(math.MinInt64)), prop("I64max", edm.NewInt64(math.MaxInt64)), prop("I64small", edm.NewInt64(1)),
		}},
		{PartitionKey: "doubles", RowKey: "special", Properties: []edm.Property{
			prop("NaN", edm.NewDouble(math.NaN())), prop("PosInf", edm.NewDouble(math.Inf(1))), prop("NegInf", edm.NewDouble(math.Inf(-1))),
			prop("NegZero", edm.NewDouble(math.Copysign(0, -1))), prop("Zero", edm.NewDouble(0)), prop("Whole", edm.NewDouble(2)),
			prop("NegWhole", edm.NewDouble(-3)), prop("Int32ish", edm.NewDouble(2147483647)), prop("Huge", edm.NewDouble(1e308)),
			prop("MaxFloat", edm.NewDouble(math.MaxFloat64)), prop("Tiny", edm.NewDouble(5e-324)), prop("Tenth", edm.NewDouble(0.1)),
			prop("Third", edm.NewDouble(1.0/3)),
		}},
		{PartitionKey: "dates", RowKey: "range", Properties: []edm.Property{
			prop("Min", edm.NewDateTime(edm.MinDateTime)), prop("Max", edm.NewDateTime(edm.MaxDateTime)),
			prop("Ticks", edm.NewDateTime(edm.TicksFromTime(time.Date(2024, 2, 29, 12, 34, 56, 123456700, time.UTC)))),
		}},
		{PartitionKey: "misc", RowKey: "bin", Properties: []edm.Property{
			prop("BinEmpty", edm.NewBinary([]byte{})), prop("Bin64K", edm.NewBinary(big)), prop("Guid", g),
			prop("True", edm.NewBoolean(true)), prop("False", edm.NewBoolean(false)),
		}},
		{PartitionKey: "strings", RowKey: "escapes", Properties: []edm.Property{
			prop("Escapes", edm.NewString(escapes)), prop("Unicode", edm.NewString("naïve 日本 😀 \U0010FFFF")),
			prop("Numeric", edm.NewString("42")), prop("Bool", edm.NewString("true")), prop("Nullish", edm.NewString("null")),
			prop("Spaces", edm.NewString("  lead and trail  ")),
		}},
		{PartitionKey: "ключ", RowKey: "日本語", Properties: []edm.Property{prop("Ünïcödé_Name", edm.NewString("x"))}},
		{PartitionKey: "😀", RowKey: "\U0001F680\U0010FFFF", Properties: []edm.Property{prop("N", edm.NewInt32(1))}},
		{PartitionKey: "quote'", RowKey: "a b\"c", Properties: nil},
	}
}

// fill creates table name in account with es and acl, each entity
// inserted as a client would.
func fill(t testing.TB, st *store.Store, account, name string, acl []store.SignedIdentifier, es []*edm.Entity) {
	t.Helper()
	err := st.Update(ctx, func(tx *store.Tx) error {
		tb, err := tx.CreateTable(account, name)
		if err != nil {
			return err
		}
		if err := tx.SetTableACL(tb, acl); err != nil {
			return err
		}
		for _, e := range es {
			c := *e
			if err := tx.InsertEntity(tb, &c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// exportDir exports account into a new directory and returns it.
func exportDir(t testing.TB, tr *Transfer, account string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "export")
	sink, err := NewDirSink(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Export(ctx, sink, Options{Account: account}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func importDir(t testing.TB, tr *Transfer, path string, o Options) Summary {
	t.Helper()
	src, err := OpenDir(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sum, err := tr.Import(ctx, src, o)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// files reads every file of dir.
func files(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestRoundTrip: a table of every EDM type, exported to files, imported
// into another account and exported again, gives the same bytes: the
// entities, their Timestamps, the policies and the service properties
// exactly; and the entities read back from the store equal the ones
// written, bit for bit.
func TestRoundTrip(t *testing.T) {
	eachEngine(t, func(t *testing.T, st *store.Store) {
		tr := newTransfer(st)
		es := everyType(t)
		acl := []store.SignedIdentifier{
			{ID: "read", Permission: "r", Start: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), Expiry: time.Date(2030, 1, 1, 0, 0, 0, 123456789, time.UTC)},
			{ID: "empty"},
			{ID: "ünïcode-id", Permission: "raud"},
		}
		fill(t, st, "a1", "everyType", acl, es)
		fill(t, st, "a1", "Second", nil, es[:2])
		fill(t, st, "a1", "emptyTable", nil, nil)
		props := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins></CorsRule></Cors></StorageServiceProperties>`
		if err := tr.cfg.SetProps(ctx, "a1", []byte(props)); err != nil {
			t.Fatal(err)
		}

		first := exportDir(t, tr, "a1")
		if sum := importDir(t, tr, first, Options{Account: "a2"}); sum != (Summary{Tables: 3, Entities: len(es) + 2}) {
			t.Errorf("import summary %+v", sum)
		}
		second := exportDir(t, tr, "a2")
		a, b := files(t, first), files(t, second)
		if len(a) != 4 {
			t.Errorf("export holds %d files, want 3 tables and the manifest", len(a))
		}
		for name, want := range a {
			got := b[name]
			if name == ManifestName {
				got = bytes.Replace(got, []byte(`"account": "a2"`), []byte(`"account": "a1"`), 1)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs after the round trip:\n%s\nthen\n%s", name, want, got)
			}
		}
		if !bytes.Contains(a[ManifestName], []byte("AllowedOrigins")) || !bytes.Contains(a[ManifestName], []byte(`"ünïcode-id"`)) {
			t.Errorf("manifest:\n%s", a[ManifestName])
		}
		lines := strings.Split(string(a["everyType.jsonl"]), "\n")
		if len(lines) != len(es)+1 || lines[len(es)] != "" {
			t.Fatalf("everyType.jsonl has %d lines:\n%s", len(lines), a["everyType.jsonl"])
		}
		for _, want := range []string{`"Whole@odata.type":"Edm.Double","Whole":2.0`, `"NegZero@odata.type":"Edm.Double","NegZero":-0.0`,
			`"I64min@odata.type":"Edm.Int64","I64min":"-9223372036854775808"`, `"NaN@odata.type":"Edm.Double","NaN":"NaN"`,
			`"Max@odata.type":"Edm.DateTime","Max":"9999-12-31T23:59:59.9999999Z"`, `"Min@odata.type":"Edm.DateTime","Min":"1601-01-01T00:00:00`,
			`"BinEmpty@odata.type":"Edm.Binary","BinEmpty":""`, `"Tenth":0.1`, `"Timestamp":"`} {
			if !bytes.Contains(a["everyType.jsonl"], []byte(want)) {
				t.Errorf("everyType.jsonl lacks %s", want)
			}
		}
		if bytes.Contains(a["everyType.jsonl"], []byte("odata.etag")) {
			t.Error("the export carries odata.etag")
		}

		// Read back from the store: the same values, bit for bit, and
		// the same Timestamps.
		err := st.View(ctx, func(tx *store.Tx) error {
			t1, err := tx.GetTable("a1", "everyType")
			if err != nil {
				return err
			}
			t2, err := tx.GetTable("a2", "everyType")
			if err != nil {
				return err
			}
			for _, e := range es {
				x, err := tx.GetEntity(t1, e.PartitionKey, e.RowKey)
				if err != nil {
					return err
				}
				y, err := tx.GetEntity(t2, e.PartitionKey, e.RowKey)
				if err != nil {
					return err
				}
				if x.Timestamp != y.Timestamp {
					t.Errorf("(%s, %s): Timestamp %d, imported %d", e.PartitionKey, e.RowKey, x.Timestamp, y.Timestamp)
				}
				if !sameProps(e.Properties, y.Properties) {
					t.Errorf("(%s, %s): imported %+v, want %+v", e.PartitionKey, e.RowKey, y.Properties, e.Properties)
				}
			}
			got, err := tx.TableACL(t2)
			if err != nil || !slices.EqualFunc(got, acl, func(a, b store.SignedIdentifier) bool {
				return a.ID == b.ID && a.Permission == b.Permission && a.Start.Equal(b.Start) && a.Expiry.Equal(b.Expiry)
			}) {
				t.Errorf("imported policies %+v %v, want %+v", got, err, acl)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if doc, _ := tr.cfg.GetProps(ctx, "a2"); string(doc) != props {
			t.Errorf("imported service properties %q", doc)
		}
	})
}

// sameProps compares properties exactly: types, names, order, and
// Doubles by their bits (NaN, -0).
func sameProps(a, b []edm.Property) bool {
	return slices.EqualFunc(a, b, func(x, y edm.Property) bool {
		v, w := x.Value, y.Value
		return x.Name == y.Name && v.T == w.T && v.N == w.N && v.S == w.S && bytes.Equal(v.B, w.B) &&
			math.Float64bits(v.F) == math.Float64bits(w.F)
	})
}

// TestHandWritten: a directory of .jsonl files written by hand, without a
// manifest or Timestamps, with blank lines, a byte order mark and CRLF
// line ends, imports; the store stamps the entities.
func TestHandWritten(t *testing.T) {
	st := engines[0].open(t)
	tr := newTransfer(st)
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("orders.jsonl", "\uFEFF{\"PartitionKey\":\"p\",\"RowKey\":\"1\",\"Price\":9.5,\"Qty\":3,\"Big\":\"12\",\"Big@odata.type\":\"Edm.Int64\"}\r\n\r\n"+
		"  \n{\"PartitionKey\":\"p\",\"RowKey\":\"2\",\"When\":\"2024-01-02T03:04:05Z\",\"When@odata.type\":\"Edm.DateTime\",\"Ok\":true}")
	write("Customers.jsonl", `{"RowKey":"c1","PartitionKey":"eu","Name":"Zoë"}`+"\n")
	write("notes.txt", "not a table")
	before := edm.TicksFromTime(time.Now())
	if sum := importDir(t, tr, dir, Options{Account: "a1"}); sum != (Summary{Tables: 2, Entities: 3}) {
		t.Errorf("summary %+v", sum)
	}
	got := export(t, tr, "a1").lines
	want := []string{"table a1 Customers []", "entity eu c1 Name=Edm.String:'Zoë'", "table a1 orders []",
		"entity p 1 Price=Edm.Double:9.5 Qty=Edm.Int32:3 Big=Edm.Int64:12L",
		"entity p 2 When=Edm.DateTime:datetime'2024-01-02T03:04:05Z' Ok=Edm.Boolean:true"}
	if !slices.Equal(got, want) {
		t.Errorf("imported\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	st.View(ctx, func(tx *store.Tx) error {
		tb, _ := tx.GetTable("a1", "orders")
		e, err := tx.GetEntity(tb, "p", "1")
		if err != nil || e.Timestamp < before {
			t.Errorf("stamped %+v %v, before %d", e, err, before)
		}
		return nil
	})

	// One file alone: a table named after it.
	one := filepath.Join(t.TempDir(), "Single.jsonl")
	if err := os.WriteFile(one, []byte(`{"PartitionKey":"a","RowKey":"b","Timestamp":"2001-02-03T04:05:06.7000000Z"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	importDir(t, tr, one, Options{Account: "a2"})
	st.View(ctx, func(tx *store.Tx) error {
		tb, err := tx.GetTable("a2", "Single")
		if err != nil {
			t.Fatal(err)
		}
		e, err := tx.GetEntity(tb, "a", "b")
		if want := edm.TicksFromTime(time.Date(2001, 2, 3, 4, 5, 6, 700_000_000, time.UTC)); err != nil || e.Timestamp != want {
			t.Errorf("Single (a, b): %+v %v, want the file's Timestamp %d", e, err, want)
		}
		return nil
	})
}

// TestBadLines: a bad line undoes its table and the error names the file,
// the line, the reason and the service's code.
func TestBadLines(t *testing.T) {
	eachEngine(t, func(t *testing.T, st *store.Store) {
		tr := newTransfer(st)
		good := `{"PartitionKey":"p","RowKey":"%d"}`
		for _, tc := range []struct {
			name, line string
			code       tableemu.Code
			says       string
		}{
			{"syntax", `{"PartitionKey":"p","RowKey":"3"`, tableemu.InvalidInput, ""},
			{"comment", `// a comment`, tableemu.InvalidInput, "comment"},
			{"nokey", `{"PartitionKey":"p"}`, tableemu.PropertiesNeedValue, "RowKey"},
			{"badtype", `{"PartitionKey":"p","RowKey":"3","N":"x","N@odata.type":"Edm.Int64"}`, tableemu.InvalidInput, "N"},
			{"toolarge", `{"PartitionKey":"p","RowKey":"3","S":"` + strings.Repeat("é", 33000) + `"}`, tableemu.PropertyValueTooLarge, "S"},
			{"badkey", `{"PartitionKey":"p","RowKey":"a/b"}`, tableemu.OutOfRangeInput, "RowKey"},
			{"timestamp", `{"PartitionKey":"p","RowKey":"3","Timestamp":5}`, tableemu.InvalidInput, "Timestamp"},
			{"timestamp2", `{"PartitionKey":"p","RowKey":"3","Timestamp":"yesterday"}`, tableemu.InvalidInput, "yesterday"},
			{"duplicate", `{"PartitionKey":"p","RowKey":"1"}`, tableemu.InvalidDuplicateRow, "bad.jsonl:1"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				dir := t.TempDir()
				lines := []string{fmt.Sprintf(good, 1), fmt.Sprintf(good, 2), tc.line, fmt.Sprintf(good, 4), fmt.Sprintf(good, 5)}
				if err := os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
					t.Fatal(err)
				}
				src, err := OpenDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				_, err = tr.Import(ctx, src, Options{Account: "a1"})
				wantCode(t, err, nil, tc.code, "bad.jsonl:3", tc.says, "bad")
				if got := export(t, tr, "a1").lines; len(got) != 0 {
					t.Errorf("a failed import left %q", got)
				}
			})
		}
	})
	// A line longer than any entity.
	st := engines[0].open(t)
	tr := newTransfer(st)
	dir := t.TempDir()
	long := `{"PartitionKey":"p","RowKey":"2","S":"` + strings.Repeat("x", maxLine) + `"}`
	if err := os.WriteFile(filepath.Join(dir, "long.jsonl"), []byte(`{"PartitionKey":"p","RowKey":"1"}`+"\n"+long), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.Import(ctx, src, Options{Account: "a1"})
	wantCode(t, err, ErrInvalidEntity, tableemu.EntityTooLarge, "long.jsonl:2")
}

// TestDirSink: an export refuses a directory holding one unless told to
// overwrite, then leaves only the new one; a failed export leaves the
// directory as it was.
func TestDirSink(t *testing.T) {
	st := engines[0].open(t)
	tr := newTransfer(st)
	fill(t, st, "a1", "keep", nil, everyType(t)[:2])
	fill(t, st, "a1", "gone", nil, nil)
	dir := exportDir(t, tr, "a1")
	if _, err := NewDirSink(dir, false); err == nil {
		t.Fatal("a second export into the same directory")
	} else {
		wantCode(t, err, ErrExportExists, tableemu.InvalidInput, "overwrite")
	}
	before := files(t, dir)

	// A failed export (a table it is told to export is not there)
	// changes nothing.
	if err := st.Update(ctx, func(tx *store.Tx) error { return tx.DeleteTable("a1", "gone") }); err != nil {
		t.Fatal(err)
	}
	sink, err := NewDirSink(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.Export(ctx, sink, Options{Account: "a1", Tables: []string{"keep", "gone"}})
	if err == nil {
		t.Fatal("export of a missing table")
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	if after := files(t, dir); len(after) != len(before) {
		t.Errorf("a failed export changed the directory: %d files, then %d", len(before), len(after))
	}

	sink, err = NewDirSink(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Export(ctx, sink, Options{Account: "a1"}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	after := files(t, dir)
	if _, ok := after["gone.jsonl"]; ok || len(after) != 2 || !bytes.Equal(after["keep.jsonl"], before["keep.jsonl"]) {
		t.Errorf("after overwriting: %d files, gone.jsonl %v", len(after), ok)
	}
}

// TestImportedKeysKept: the store may keep an entity's key strings after
// a write (the SQLite engine's filter cache does, until its commit and in
// its tree); a source reuses its line buffer for the next line. A filter
// served from the cache after an import must still read every key as it
// was.
func TestImportedKeysKept(t *testing.T) {
	st := engines[0].open(t)
	tr := newTransfer(st)
	dir := t.TempDir()
	var b strings.Builder
	for i := range 300 {
		// Lines of 1 KiB: the file is larger than the reader's buffer,
		// which it refills.
		fmt.Fprintf(&b, `{"PartitionKey":"pk%03d","RowKey":"rk%03d","N":%d,"S":"%s"}`+"\n", i, i, i, strings.Repeat("s", 1000))
	}
	if err := os.WriteFile(filepath.Join(dir, "keys.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	importDir(t, tr, dir, Options{Account: "a1"})
	f, err := odataFilter("N ge 0")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = st.View(ctx, func(tx *store.Tx) error {
		tb, err := tx.GetTable("a1", "keys")
		if err != nil {
			return err
		}
		page, err := tx.QueryEntities(tb, store.EntityQuery{Top: 1000, Filter: f})
		for _, e := range page.Entities {
			got = append(got, e.PartitionKey+"/"+e.RowKey)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 300 {
		t.Fatalf("%d entities", len(got))
	}
	for i, k := range got {
		if want := fmt.Sprintf("pk%03d/rk%03d", i, i); k != want {
			t.Fatalf("entity %d read as %s, want %s", i, k, want)
		}
	}
}
