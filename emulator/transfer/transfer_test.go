package transfer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/postgres"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
	"github.com/tableemu/tableemu/emulator/store/sqlite"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// The PostgreSQL engine's tests start a throwaway server on first use
// (pgtest), stopped here.
func TestMain(m *testing.M) { pgtest.Main(m) }

var ctx = context.Background()

// engines are the stores the package's tests run on: a SQLite file and a
// PostgreSQL database (skipped without PostgreSQL: pgtest).
var engines = []struct {
	name string
	open func(t testing.TB) *store.Store
}{
	{"sqlite", func(t testing.TB) *store.Store {
		st, err := sqlite.Open(ctx, sqlite.Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
	{"postgres", func(t testing.TB) *store.Store {
		st, err := postgres.Open(ctx, postgres.Options{URL: pgtest.URL(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
}

// eachEngine runs fn on a new store of each engine.
func eachEngine(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { fn(t, e.open(t)) })
	}
}

// newTransfer is the transfer of st with accounts a1 and a2; service
// properties are kept in the store as the server keeps them (without its
// validation).
func newTransfer(st *store.Store) *Transfer {
	return New(Config{
		Store:      st,
		Accounts:   map[string]*auth.Account{"a1": {Name: "a1"}, "a2": {Name: "a2"}},
		DevAccount: "a1",
		GetProps: func(ctx context.Context, account string) ([]byte, error) {
			var doc string
			err := st.View(ctx, func(tx *store.Tx) error {
				var err error
				doc, _, err = tx.ServiceProperties(account)
				return err
			})
			return []byte(doc), err
		},
		SetProps: func(ctx context.Context, account string, doc []byte) error {
			return st.Update(ctx, func(tx *store.Tx) error { return tx.SetServiceProperties(account, string(doc)) })
		},
	})
}

// memSource is a Source of tables held in memory; each call of Entities
// hands out fresh copies.
type memSource struct{ accounts []Account }

func (s *memSource) Accounts() ([]Account, error) { return s.accounts, nil }
func (s *memSource) Close() error                 { return nil }

func memTable(name string, acl []store.SignedIdentifier, es ...Entity) *Table {
	return &Table{Name: name, ACL: acl, Entities: func(fn func(Entity) error) error {
		for _, e := range es {
			c := *e.Entity
			c.Properties = slices.Clone(e.Properties)
			e.Entity = &c
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}}
}

func ent(where, pk, rk string, props ...edm.Property) Entity {
	return Entity{Entity: &edm.Entity{PartitionKey: pk, RowKey: rk, Properties: props}, Where: where}
}

func prop(name string, v edm.Value) edm.Property { return edm.Property{Name: name, Value: v} }

// memSink records what an export writes, as text: "table NAME [acl]",
// "entity PK RK TIMESTAMP props...".
type memSink struct {
	props []string
	lines []string
}

func (s *memSink) Properties(account string, doc []byte) error {
	s.props = append(s.props, account+": "+string(doc))
	return nil
}

func (s *memSink) Table(t TableInfo) error {
	var ids []string
	for _, si := range t.ACL {
		ids = append(ids, si.ID+"/"+si.Permission)
	}
	s.lines = append(s.lines, fmt.Sprintf("table %s %s %v", t.Account, t.Name, ids))
	return nil
}

func (s *memSink) Entity(e *edm.Entity) error {
	s.lines = append(s.lines, entityLine(e))
	return nil
}

func (s *memSink) Close() error { return nil }

func entityLine(e *edm.Entity) string {
	var b strings.Builder
	fmt.Fprintf(&b, "entity %s %s", e.PartitionKey, e.RowKey)
	for _, p := range e.Properties {
		fmt.Fprintf(&b, " %s=%s:%v", p.Name, p.Value.T, p.Value)
	}
	return b.String()
}

// export runs an export of account into a memSink.
func export(t *testing.T, tr *Transfer, account string, tables ...string) *memSink {
	t.Helper()
	var sink memSink
	if _, err := tr.Export(ctx, &sink, Options{Account: account, Tables: tables}); err != nil {
		t.Fatal(err)
	}
	return &sink
}

// wantCode fails t unless err is sentinel carrying the service's code and
// every one of parts in its message.
func wantCode(t *testing.T, err, sentinel error, code tableemu.Code, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("%v: not %v", err, sentinel)
	}
	if got := tableemu.From(err).Code; got != code {
		t.Errorf("%v: code %s, want %s", err, got, code)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%v: does not say %q", err, p)
		}
	}
}

func TestImportModes(t *testing.T) {
	eachEngine(t, func(t *testing.T, st *store.Store) {
		tr := newTransfer(st)
		acl := []store.SignedIdentifier{{ID: "read", Permission: "r", Expiry: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}}
		first := &memSource{[]Account{{Tables: []*Table{
			memTable("orders", acl,
				ent("o:1", "p", "1", prop("N", edm.NewInt32(1))),
				ent("o:2", "p", "2", prop("N", edm.NewInt32(2)))),
			{Name: "empty"}, // no Entities: none
		}}}}
		sum, err := tr.Import(ctx, first, Options{Account: "a1"})
		if err != nil || sum != (Summary{Tables: 2, Entities: 2}) {
			t.Fatalf("import: %+v %v", sum, err)
		}
		want := []string{"table a1 empty []", "table a1 orders [read/r]", "entity p 1 N=Edm.Int32:1", "entity p 2 N=Edm.Int32:2"}
		if got := export(t, tr, "a1").lines; !slices.Equal(got, want) {
			t.Errorf("after import:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}

		second := &memSource{[]Account{{Tables: []*Table{
			memTable("ORDERS", nil,
				ent("o2:1", "p", "2", prop("M", edm.NewString("two"))),
				ent("o2:2", "p", "3", prop("M", edm.NewString("three")))),
		}}}}
		// fail: nothing of the source is written, whichever table.
		_, err = tr.Import(ctx, second, Options{Account: "a1"})
		wantCode(t, err, ErrTableExists, tableemu.TableAlreadyExists, "orders", "replace", "merge")

		// merge: the table's other entities and its policies stay.
		if _, err := tr.Import(ctx, second, Options{Account: "a1", Mode: ModeMerge}); err != nil {
			t.Fatal(err)
		}
		want = []string{"table a1 orders [read/r]", "entity p 1 N=Edm.Int32:1", "entity p 2 M=Edm.String:'two'", "entity p 3 M=Edm.String:'three'"}
		if got := export(t, tr, "a1", "Orders").lines; !slices.Equal(got, want) {
			t.Errorf("after merge:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}

		// replace: the source's table alone, in its case, without the
		// old policies.
		if _, err := tr.Import(ctx, second, Options{Account: "a1", Mode: ModeReplace, Tables: []string{"orders"}}); err != nil {
			t.Fatal(err)
		}
		want = []string{"table a1 ORDERS []", "entity p 2 M=Edm.String:'two'", "entity p 3 M=Edm.String:'three'"}
		if got := export(t, tr, "a1", "orders").lines; !slices.Equal(got, want) {
			t.Errorf("after replace:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestImportAllOrNothing: an entity the service would refuse undoes its
// table, and the error names its place, the reason and the service's
// code; the tables before it stay.
func TestImportAllOrNothing(t *testing.T) {
	eachEngine(t, func(t *testing.T, st *store.Store) {
		tr := newTransfer(st)
		var es []Entity
		for i := 1; i <= 5; i++ {
			es = append(es, ent(fmt.Sprintf("orders.jsonl:%d", i), "p", fmt.Sprint(i), prop("S", edm.NewString("x"))))
		}
		es[2].Properties[0].Value = edm.NewString(strings.Repeat("x", 40000))
		// Enough entities before it that PostgreSQL has sent some.
		var many []Entity
		for i := range 2500 {
			many = append(many, ent(fmt.Sprintf("big.jsonl:%d", i+1), "p", fmt.Sprintf("%05d", i)))
		}
		many = append(many, ent("big.jsonl:2501", "p/q", "r"))
		src := &memSource{[]Account{{Tables: []*Table{memTable("good", nil, es[:2]...), memTable("orders", nil, es...), memTable("zbig", nil, many...)}}}}
		_, err := tr.Import(ctx, src, Options{Account: "a1"})
		wantCode(t, err, ErrInvalidEntity, tableemu.PropertyValueTooLarge, "orders.jsonl:3", "32768", "orders")
		if got := export(t, tr, "a1").lines; len(got) != 3 || got[0] != "table a1 good []" {
			t.Errorf("after the failed import: %q, want table good alone", got)
		}
		_, err = tr.Import(ctx, src, Options{Account: "a1", Tables: []string{"zbig"}})
		wantCode(t, err, ErrInvalidEntity, tableemu.OutOfRangeInput, "big.jsonl:2501", "zbig")
		if got := export(t, tr, "a1").lines; len(got) != 3 {
			t.Errorf("after the failed import: %q, want table good alone", got)
		}
	})
}

func TestImportDuplicateKeys(t *testing.T) {
	for _, mode := range []Mode{ModeFail, ModeReplace, ModeMerge} {
		t.Run(string(mode), func(t *testing.T) {
			st := engines[0].open(t)
			tr := newTransfer(st)
			src := &memSource{[]Account{{Tables: []*Table{memTable("dups", nil,
				ent("d.jsonl:1", "p", "a"), ent("d.jsonl:2", "p", "b"), ent("d.jsonl:3", "p", "c"), ent("d.jsonl:4", "p", "b"))}}}}
			_, err := tr.Import(ctx, src, Options{Account: "a1", Mode: mode})
			wantCode(t, err, ErrDuplicateKey, tableemu.InvalidDuplicateRow, "d.jsonl:2", "d.jsonl:4", `"b"`)
			if got := export(t, tr, "a1").lines; len(got) != 0 {
				t.Errorf("after the failed import: %q", got)
			}
		})
	}
}

// TestImportDuplicateExact: two keys whose hashes meet are not
// duplicates; the import starts again keeping the keys themselves.
func TestImportDuplicateExact(t *testing.T) {
	st := engines[0].open(t)
	tr := newTransfer(st)
	src := memTable("tee", nil, ent("1", "p", "a"), ent("2", "p", "b"))
	dup := &suspectDuplicate{pk: "p", rk: "b", index: 1, where: "2", table: "tee"}
	if err := findDuplicate(src, dup); err != nil {
		t.Fatalf("a key seen once: %v", err)
	}
	s := newKeySet(true)
	if s.add("p", "a") || s.add("p\x00a", "") || !s.add("p", "a") {
		t.Error("exact key set")
	}
	if _, err := tr.Import(ctx, &memSource{[]Account{{Tables: []*Table{src}}}}, Options{Account: "a1"}); err != nil {
		t.Fatal(err)
	}
}

func TestImportRefusals(t *testing.T) {
	st := engines[0].open(t)
	tr := newTransfer(st)
	one := func(tb *Table) *memSource { return &memSource{[]Account{{Tables: []*Table{tb}}}} }
	_, err := tr.Import(ctx, one(memTable("ok", nil)), Options{Account: "nobody"})
	wantCode(t, err, ErrUnknownAccount, tableemu.ResourceNotFound, "nobody")
	_, err = tr.Import(ctx, one(memTable("1bad", nil)), Options{Account: "a1"})
	wantCode(t, err, ErrInvalidTable, tableemu.InvalidResourceName, "1bad")
	_, err = tr.Import(ctx, one(memTable("tables", nil)), Options{Account: "a1"})
	wantCode(t, err, ErrInvalidTable, tableemu.InvalidInput)
	six := make([]store.SignedIdentifier, 6)
	for i := range six {
		six[i].ID = fmt.Sprint(i)
	}
	_, err = tr.Import(ctx, one(memTable("acl", six)), Options{Account: "a1"})
	wantCode(t, err, ErrInvalidTable, tableemu.InvalidXmlDocument, "acl", "6 signed identifiers")
	_, err = tr.Import(ctx, one(memTable("acl", []store.SignedIdentifier{{ID: "x", Permission: "rw"}})), Options{Account: "a1"})
	wantCode(t, err, ErrInvalidTable, tableemu.InvalidXmlDocument, `"rw"`)
	_, err = tr.Import(ctx, one(memTable("acl", []store.SignedIdentifier{{ID: strings.Repeat("i", 65)}})), Options{Account: "a1"})
	wantCode(t, err, ErrInvalidTable, tableemu.InvalidXmlDocument, "64")
	_, err = tr.Import(ctx, one(memTable("ok", nil)), Options{Account: "a1", Mode: "upsert"})
	wantCode(t, err, ErrInvalidOptions, tableemu.InvalidInput, "upsert")
	_, err = tr.Import(ctx, one(memTable("ok", nil)), Options{Account: "a1", Tables: []string{"other"}})
	wantCode(t, err, ErrTableNotFound, tableemu.TableNotFound, "other", "ok")
	_, err = tr.Import(ctx, &memSource{[]Account{{Tables: []*Table{memTable("Same", nil), memTable("sAME", nil)}}}}, Options{Account: "a1"})
	wantCode(t, err, ErrInvalidTable, tableemu.TableAlreadyExists, "Same", "sAME")
	_, err = tr.Export(ctx, &memSink{}, Options{Account: "a1", Tables: []string{"nope"}})
	wantCode(t, err, ErrTableNotFound, tableemu.TableNotFound, "nope")
	_, err = tr.Export(ctx, &memSink{}, Options{Account: "a3"})
	wantCode(t, err, ErrUnknownAccount, tableemu.ResourceNotFound, "a3")
	zero := ent("z.jsonl:1", "p", "r")
	zero.KeepTimestamp = true
	_, err = tr.Import(ctx, one(memTable("zero", nil, zero)), Options{Account: "a1"})
	wantCode(t, err, ErrInvalidEntity, tableemu.InvalidInput, "z.jsonl:1", "Timestamp")
	if got := export(t, tr, "a1").lines; len(got) != 0 {
		t.Errorf("refused imports wrote %q", got)
	}
	// No account named: the development account.
	if _, err := tr.Import(ctx, one(memTable("dev", nil, ent("d", "p", "r"))), Options{}); err != nil {
		t.Fatal(err)
	}
	if got := export(t, tr, "").lines; !slices.Equal(got, []string{"table a1 dev []", "entity p r"}) {
		t.Errorf("import and export without an account: %q", got)
	}
}

// TestImportTimestamps: a source's Timestamp is kept when it says so,
// and a later write of the entity is stamped later still; otherwise the
// store stamps the entity.
func TestImportTimestamps(t *testing.T) {
	eachEngine(t, func(t *testing.T, st *store.Store) {
		tr := newTransfer(st)
		kept := ent("k", "p", "kept")
		kept.Timestamp, kept.KeepTimestamp = edm.TicksFromTime(time.Date(2001, 2, 3, 4, 5, 6, 700, time.UTC)), true
		stamped := ent("s", "p", "stamped")
		stamped.Timestamp = 12345 // not kept
		before := edm.TicksFromTime(time.Now())
		src := &memSource{[]Account{{Tables: []*Table{memTable("stamps", nil, kept, stamped)}}}}
		for _, mode := range []Mode{ModeFail, ModeMerge, ModeReplace} {
			if _, err := tr.Import(ctx, src, Options{Account: "a2", Mode: mode}); err != nil {
				t.Fatal(err)
			}
			err := st.View(ctx, func(tx *store.Tx) error {
				tb, err := tx.GetTable("a2", "stamps")
				if err != nil {
					return err
				}
				k, err := tx.GetEntity(tb, "p", "kept")
				if err != nil {
					return err
				}
				s, err := tx.GetEntity(tb, "p", "stamped")
				if err != nil {
					return err
				}
				if k.Timestamp != kept.Timestamp {
					t.Errorf("%s: kept Timestamp %d, want %d", mode, k.Timestamp, kept.Timestamp)
				}
				if s.Timestamp < before {
					t.Errorf("%s: stamped Timestamp %d before the import (%d)", mode, s.Timestamp, before)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestProgress: a report every 5,000 entities and one at the end.
func TestProgress(t *testing.T) {
	st := engines[0].open(t)
	tr := newTransfer(st)
	var es []Entity
	for i := range 12000 {
		es = append(es, ent(fmt.Sprint(i), "p", fmt.Sprintf("%05d", i)))
	}
	var got []string
	o := Options{Account: "a1", Progress: func(p Progress) {
		got = append(got, fmt.Sprintf("%s/%s %d %v", p.Account, p.Table, p.Entities, p.Done))
	}}
	if _, err := tr.Import(ctx, &memSource{[]Account{{Tables: []*Table{memTable("big", nil, es...)}}}}, o); err != nil {
		t.Fatal(err)
	}
	want := []string{"a1/big 5000 false", "a1/big 10000 false", "a1/big 12000 true"}
	if !slices.Equal(got, want) {
		t.Errorf("import progress %q, want %q", got, want)
	}
	got = nil
	if _, err := tr.Export(ctx, &memSink{}, o); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("export progress %q, want %q", got, want)
	}
}

// TestServiceProperties: an account's properties are exported first and
// imported after its tables.
func TestServiceProperties(t *testing.T) {
	st := engines[0].open(t)
	tr := newTransfer(st)
	doc := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors/></StorageServiceProperties>`
	src := &memSource{[]Account{{Name: "a2", Properties: []byte(doc), Tables: []*Table{memTable("tab1", nil)}}}}
	if _, err := tr.Import(ctx, src, Options{Account: "a1"}); err != nil {
		t.Fatal(err)
	}
	sink := export(t, tr, "a2")
	if !slices.Equal(sink.props, []string{"a2: " + doc}) || !slices.Equal(sink.lines, []string{"table a2 tab1 []"}) {
		t.Errorf("exported %q %q", sink.props, sink.lines)
	}
}

func odataFilter(s string) (odata.Expr, error) { return odata.ParseFilter(s) }
