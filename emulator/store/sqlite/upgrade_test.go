package sqlite

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// Upgrades keep data: a database written by a released tableemu must open,
// whole, in every later one.
//
// testdata/schema0002.sqlite was written by tableemu at schema 2
// (migrations 0001 and 0002) through the store's own methods, with a fixed
// clock: the content below, which covers every EDM type and its edge
// values, keys that need the sort form (keys.go), a table name in mixed
// case, a second account, an automatic index, two stored access policies
// and a service properties document as the emulator writes it.
// TestFixtureReadsBack opens a copy with the current code, which migrates
// it, and reads every entity, policy and document back exactly.
//
// NEVER regenerate a fixture once it is committed: it stands for the files
// users have on disk. When a migration changes the schema, add a test of
// that migration from the previous schema (as TestMigration0002 does) and,
// if the new schema stores data differently, a new fixture beside this one
// (schema000N.sqlite, written with TABLEEMU_WRITE_FIXTURE=N by
// TestWriteFixture); keep every older one and its test.
//
// testdata/schema0003.sqlite (migration 0003, snapshots) holds the same
// content, then what only schema 3 stores (writeSnapshotFixture): a
// snapshot "fixture" of devstoreaccount1; a table "Scratch" made after it
// and retired by a restore, left for the collector; and an entity
// types/after inserted after that restore, recorded as a change of the
// FixtureTypes table, which is based on the snapshot.
// TestFixtureReadsBack opens it too: the collector finishes the retired
// table, a restore takes types/after away, and the rest reads back as in
// the schema 2 fixture.
//
// testdata/schema0004.sqlite (migration 0004, the creation sequence) holds
// the content of the schema 3 fixture written by a store opened with
// CreationOrder (the cosmos profile's), so that its entities have their
// creation sequences: checkCreationOrder reads them back in the order
// written. The older fixtures, opened with CreationOrder, answer in key
// order (their entities have sequence 0).
var fixtureFiles = []string{"testdata/schema0002.sqlite", "testdata/schema0003.sqlite", "testdata/schema0004.sqlite"}

// fixtureEpoch is the clock while the fixture was written. Every table
// creation and insert took the next tick from it (nextTimestamp), in the
// order of fixtureTables: FixtureTypes was created at +0, its entities
// +1 to +7, "empty" +8, acct2's table +9, its entity +10.
var fixtureEpoch = time.Date(2025, 6, 1, 12, 0, 0, 123456700, time.UTC)

type fixtureTable struct {
	account, name string
	entities      []edm.Entity // Timestamp: ticks after fixtureEpoch
	acl           []SignedIdentifier
	index         string // a property with an automatic index (Eq on a String literal)
}

func guid(s string) edm.Value {
	v, err := edm.NewGuid(s)
	if err != nil {
		panic(err)
	}
	return v
}

func dt(s string) edm.Value {
	ticks, err := edm.ParseDateTime(s)
	if err != nil {
		panic(err)
	}
	return edm.NewDateTime(ticks)
}

func fixtureTables() []fixtureTable {
	p := func(name string, v edm.Value) edm.Property { return edm.Property{Name: name, Value: v} }
	return []fixtureTable{
		{account: "devstoreaccount1", name: "FixtureTypes", index: "Kind", entities: []edm.Entity{
			{PartitionKey: "types", RowKey: "max", Timestamp: 1, Properties: []edm.Property{
				p("Kind", edm.NewString("max")),
				p("Int32", edm.NewInt32(math.MaxInt32)),
				p("Int64", edm.NewInt64(math.MaxInt64)),
				p("Double", edm.NewDouble(math.MaxFloat64)),
				p("Bool", edm.NewBoolean(true)),
				p("DateTime", dt("9999-12-31T23:59:59.9999999Z")),
				p("Guid", guid("ffffffff-ffff-ffff-ffff-ffffffffffff")),
				p("Binary", edm.NewBinary([]byte{0xff, 0x00, 0x80, 0x7f})),
				p("String", edm.NewString("ascii")),
			}},
			{PartitionKey: "types", RowKey: "min", Timestamp: 2, Properties: []edm.Property{
				p("Kind", edm.NewString("min")),
				p("Int32", edm.NewInt32(math.MinInt32)),
				p("Int64", edm.NewInt64(math.MinInt64)),
				p("Double", edm.NewDouble(-math.MaxFloat64)),
				p("Bool", edm.NewBoolean(false)),
				p("DateTime", dt("1601-01-01T00:00:00Z")),
				p("Guid", guid("00000000-0000-0000-0000-000000000000")),
				p("Binary", edm.NewBinary([]byte{})),
				p("String", edm.NewString("")),
			}},
			{PartitionKey: "types", RowKey: "special", Timestamp: 3, Properties: []edm.Property{
				p("Kind", edm.NewString("special")),
				p("NaN", edm.NewDouble(math.NaN())),
				p("Inf", edm.NewDouble(math.Inf(1))),
				p("NegInf", edm.NewDouble(math.Inf(-1))),
				p("NegZero", edm.NewDouble(math.Copysign(0, -1))),
				p("Tiny", edm.NewDouble(math.SmallestNonzeroFloat64)),
				p("Tenth", edm.NewDouble(0.1)),
				p("Escapes", edm.NewString("quote \" backslash \\ newline \n tab \t nul \x00 ctrl \x1f del \x7f")),
				p("Unicode", edm.NewString("é ß 中文 😀 \uFFFF \U0010FFFF")),
				p("DateTimeTicks", dt("2025-06-01T12:00:00.1234567Z")),
				p("Guid", guid("a1b2c3d4-e5f6-4789-9abc-def012345678")),
				p("Int64Small", edm.NewInt64(-1)),
				p("Int32Zero", edm.NewInt32(0)),
				p("Binary", edm.NewBinary([]byte("binary \x00 bytes"))),
			}},
			// No user properties at all.
			{PartitionKey: "types", RowKey: "none", Timestamp: 4},
			// Keys that sort by UTF-16 code unit, not by code point.
			{PartitionKey: "😀", RowKey: "\uFFFF", Timestamp: 5, Properties: []edm.Property{p("Kind", edm.NewString("astral"))}},
			{PartitionKey: "", RowKey: "", Timestamp: 6, Properties: []edm.Property{p("Kind", edm.NewString("empty keys"))}},
			{PartitionKey: "a'b", RowKey: "c/d?e#f%g", Timestamp: 7, Properties: []edm.Property{p("Kind", edm.NewString("punctuation"))}},
		}, acl: []SignedIdentifier{
			{ID: "full", Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Expiry: time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC), Permission: "raud"},
			{ID: "id-only"},
		}},
		{account: "devstoreaccount1", name: "empty"},
		{account: "acct2", name: "FixtureTypes", entities: []edm.Entity{
			{PartitionKey: "p", RowKey: "r", Timestamp: 10, Properties: []edm.Property{p("Other", edm.NewString("second account"))}},
		}},
	}
}

// fixtureProperties is the service properties document of devstoreaccount1
// in the fixture, as the emulator marshals it (emulator/service.go).
const fixtureProperties = `<StorageServiceProperties><Logging><Version>1.0</Version><Read>false</Read><Write>true</Write><Delete>true</Delete><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging><HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics><MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics><Cors><CorsRule><AllowedMethods>GET,PUT</AllowedMethods><AllowedOrigins>http://app.example</AllowedOrigins><AllowedHeaders>x-ms-meta-*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>30</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`

// TestWriteFixture writes testdata/schema000N.sqlite when
// TABLEEMU_WRITE_FIXTURE=N names the current schema version. It is how
// the fixture was made; it refuses to overwrite one (see above).
func TestWriteFixture(t *testing.T) {
	want := os.Getenv("TABLEEMU_WRITE_FIXTURE")
	if want == "" {
		t.Skip("set TABLEEMU_WRITE_FIXTURE=<schema version> to write a new fixture")
	}
	ctx := context.Background()
	dir := t.TempDir()
	// From schema 4 on, the entities carry their creation sequence.
	var n int
	fmt.Sscan(want, &n)
	s, err := openStore(ctx, Options{Dir: dir, CreationOrder: n >= 4})
	if err != nil {
		t.Fatal(err)
	}
	version := schemaVersion(t, s)
	if want != fmt.Sprint(version) {
		t.Fatalf("TABLEEMU_WRITE_FIXTURE=%s, but the schema is version %d", want, version)
	}
	out := fmt.Sprintf("testdata/schema%04d.sqlite", version)
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("%s exists: a committed fixture is never rewritten", out)
	}
	s.now = func() time.Time { return fixtureEpoch }
	base := edm.TicksFromTime(fixtureEpoch)
	for _, ft := range fixtureTables() {
		err := s.Update(ctx, func(tx *Tx) error {
			tb, err := tx.CreateTable(ft.account, ft.name)
			if err != nil {
				return err
			}
			for _, e := range ft.entities {
				want := e.Timestamp
				e.Properties = slices.Clone(e.Properties)
				if err := tx.InsertEntity(tb, &e); err != nil {
					return err
				}
				if e.Timestamp != base+want {
					return fmt.Errorf("%s/%s: Timestamp %d ticks after the epoch, the fixture says %d", e.PartitionKey, e.RowKey, e.Timestamp-base, want)
				}
			}
			return tx.SetTableACL(tb, ft.acl)
		})
		if err != nil {
			t.Fatal(err)
		}
		if ft.index != "" {
			tb := fixtureTable0(t, s, ft)
			if err := s.IndexNow(ctx, tb, &odata.Compare{Op: odata.Eq, Prop: ft.index, Lit: edm.NewString("x")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Update(ctx, func(tx *Tx) error { return tx.SetServiceProperties("devstoreaccount1", fixtureProperties) }); err != nil {
		t.Fatal(err)
	}
	if version >= 3 {
		writeSnapshotFixture(t, s)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	copyFile(t, out, filepath.Join(dir, FileName))
	t.Logf("wrote %s", out)
}

func fixtureTable0(t *testing.T, s *Store, ft fixtureTable) Table {
	t.Helper()
	var tb Table
	err := s.View(context.Background(), func(tx *Tx) error {
		var err error
		tb, err = tx.GetTable(ft.account, ft.name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func schemaVersion(t *testing.T, s *Store) int {
	t.Helper()
	var v int
	err := s.withWriter(func(c *conn) error { return c.queryRow(context.Background(), "PRAGMA user_version", nil, &v) })
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func copyFile(t *testing.T, dst, src string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeSnapshotFixture adds what schema 3 stores to the fixture being
// written (see fixtureFiles). The collector is stopped first, so that the
// retired table stays in the file.
func writeSnapshotFixture(t *testing.T, s *Store) {
	s.stopCollector()
	s.gc = collector{}
	update(t, s, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("devstoreaccount1", "fixture"); return err })
	update(t, s, func(tx *Tx) error {
		tb, err := tx.CreateTable("devstoreaccount1", "Scratch")
		if err != nil {
			return err
		}
		return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "r"})
	})
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("devstoreaccount1", "fixture"); return err })
	update(t, s, func(tx *Tx) error {
		tb, err := tx.GetTable("devstoreaccount1", "FixtureTypes")
		if err != nil {
			return err
		}
		return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "types", RowKey: "after"})
	})
}

// openFixture opens a copy of a fixture with the current code, as the
// cosmos profile opens it when creationOrder is set.
func openFixture(t *testing.T, file string, creationOrder bool) *Store {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, filepath.Join(dir, FileName), file)
	s, err := openStore(context.Background(), Options{Dir: dir, CreationOrder: creationOrder})
	if err != nil {
		t.Fatalf("the current code cannot open the fixture %s: %v", file, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sameValue compares exactly: the same type and the same bits (so NaN
// equals NaN and -0 differs from 0).
func sameValue(a, b edm.Value) bool {
	if a.T != b.T {
		return false
	}
	switch a.T {
	case edm.Double:
		return math.Float64bits(a.F) == math.Float64bits(b.F)
	case edm.Binary:
		return string(a.B) == string(b.B)
	case edm.String, edm.Guid:
		return a.S == b.S
	}
	return a.N == b.N
}

// TestFixtureReadsBack: every table, entity (keys, Timestamp, each
// property's name, type and value, in order), stored access policy, service
// properties document and automatic index of the fixture is read back
// exactly, and the upgraded database takes writes.
func TestFixtureReadsBack(t *testing.T) {
	for _, file := range fixtureFiles {
		for _, creationOrder := range []bool{false, true} {
			name := filepath.Base(file)
			if creationOrder {
				name += "/CreationOrder"
			}
			t.Run(name, func(t *testing.T) {
				s := openFixture(t, file, creationOrder)
				if !strings.HasSuffix(file, "schema0002.sqlite") {
					checkSnapshotFixture(t, s)
				}
				if creationOrder {
					checkCreationOrder(t, s, strings.HasSuffix(file, "schema0004.sqlite"))
				}
				checkFixture(t, s)
			})
		}
	}
}

// checkCreationOrder reads FixtureTypes in creation order: the order the
// fixture inserted its entities when they have sequences (withSeq: the
// schema 4 fixture), else key order; partitions in key order either way.
func checkCreationOrder(t *testing.T, s *Store, withSeq bool) {
	t.Helper()
	want := "/ a'b/c/d?e#f%g types/max types/min types/none types/special 😀/\uffff"
	if withSeq {
		want = "/ a'b/c/d?e#f%g types/max types/min types/special types/none 😀/\uffff"
	}
	var got []string
	err := s.View(context.Background(), func(tx *Tx) error {
		tb, err := tx.GetTable("devstoreaccount1", "FixtureTypes")
		if err != nil {
			return err
		}
		// Pages of two: the continuation carries the sequence.
		q := EntityQuery{Top: 2, Order: store.OrderCreation}
		for {
			page, err := tx.QueryEntities(tb, q)
			if err != nil {
				return err
			}
			for _, e := range page.Entities {
				got = append(got, e.PartitionKey+"/"+e.RowKey)
			}
			if page.Next == nil {
				return nil
			}
			q.Start = page.Next
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got, " "); g != want {
		t.Errorf("FixtureTypes in creation order: %q, want %q", g, want)
	}
}

// checkSnapshotFixture checks what schema 3 adds (writeSnapshotFixture)
// and restores the snapshot, which leaves the content of the schema 2
// fixture.
func checkSnapshotFixture(t *testing.T, s *Store) {
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for rowCount(t, s, "tables") != 3 {
		if time.Now().After(deadline) {
			t.Fatal("the retired table Scratch was not collected after Open")
		}
		time.Sleep(10 * time.Millisecond)
	}
	err := s.Update(ctx, func(tx *Tx) error {
		list, err := tx.Snapshots("devstoreaccount1")
		if err != nil {
			return err
		}
		want := []Snapshot{{Name: "fixture", Created: edm.TicksFromTime(fixtureEpoch), Tables: 2, Entities: 7}}
		if !slices.Equal(list, want) {
			return fmt.Errorf("snapshots %+v, want %+v", list, want)
		}
		tb, err := tx.GetTable("devstoreaccount1", "fixturetypes")
		if err != nil {
			return err
		}
		if _, err := tx.GetEntity(tb, "types", "after"); err != nil {
			return fmt.Errorf("the entity written after the restore: %w", err)
		}
		if _, err := tx.RestoreSnapshot("devstoreaccount1", "fixture"); err != nil {
			return err
		}
		if after, _ := tx.GetTable("devstoreaccount1", "fixturetypes"); after.ID != tb.ID {
			return fmt.Errorf("the restore copied FixtureTypes whole instead of undoing the one recorded change")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func checkFixture(t *testing.T, s *Store) {
	ctx := context.Background()
	if v, latest := schemaVersion(t, s), latestMigration(t); v != latest {
		t.Fatalf("after Open the fixture is at schema %d, want %d", v, latest)
	}
	base := edm.TicksFromTime(fixtureEpoch)
	byAccount := map[string][]string{}
	for _, ft := range fixtureTables() {
		byAccount[ft.account] = append(byAccount[ft.account], ft.name)
		tb := fixtureTable0(t, s, ft)
		if tb.Name != ft.name {
			t.Errorf("table %q read back as %q", ft.name, tb.Name)
		}
		var got []*edm.Entity
		err := s.View(ctx, func(tx *Tx) error {
			_, err := tx.ScanEntities(tb, EntityQuery{Top: 1000}, func(e *edm.Entity) error {
				// The entity may alias the row's memory: copy it all.
				c := &edm.Entity{PartitionKey: strings.Clone(e.PartitionKey), RowKey: strings.Clone(e.RowKey), Timestamp: e.Timestamp}
				for _, p := range e.Properties {
					v := p.Value
					v.S, v.B = strings.Clone(v.S), slices.Clone(v.B)
					c.Properties = append(c.Properties, edm.Property{Name: strings.Clone(p.Name), Value: v})
				}
				got = append(got, c)
				return nil
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(ft.entities)
		slices.SortFunc(want, func(a, b edm.Entity) int {
			if c := edm.CompareStrings(a.PartitionKey, b.PartitionKey); c != 0 {
				return c
			}
			return edm.CompareStrings(a.RowKey, b.RowKey)
		})
		if len(got) != len(want) {
			t.Fatalf("%s/%s: %d entities, want %d", ft.account, ft.name, len(got), len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.PartitionKey != w.PartitionKey || g.RowKey != w.RowKey || g.Timestamp != base+w.Timestamp {
				t.Errorf("%s entity %d: keys %q/%q Timestamp +%d, want %q/%q +%d", ft.name, i, g.PartitionKey, g.RowKey, g.Timestamp-base, w.PartitionKey, w.RowKey, w.Timestamp)
				continue
			}
			if len(g.Properties) != len(w.Properties) {
				t.Errorf("%s %q/%q: %d properties, want %d", ft.name, w.PartitionKey, w.RowKey, len(g.Properties), len(w.Properties))
				continue
			}
			for j, wp := range w.Properties {
				if gp := g.Properties[j]; gp.Name != wp.Name || !sameValue(gp.Value, wp.Value) {
					t.Errorf("%s %q/%q property %d: %s %v, want %s %v", ft.name, w.PartitionKey, w.RowKey, j, gp.Name, gp.Value, wp.Name, wp.Value)
				}
			}
		}
		err = s.View(ctx, func(tx *Tx) error {
			acl, err := tx.TableACL(tb)
			if err != nil {
				return err
			}
			if len(acl) != len(ft.acl) {
				return fmt.Errorf("%s: %d policies, want %d", ft.name, len(acl), len(ft.acl))
			}
			for i := range acl {
				g, w := acl[i], ft.acl[i]
				if g.ID != w.ID || !g.Start.Equal(w.Start) || !g.Expiry.Equal(w.Expiry) || g.Permission != w.Permission {
					return fmt.Errorf("%s policy %d: %+v, want %+v", ft.name, i, g, w)
				}
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		if ft.index != "" {
			k := indexKey{tid: tb.ID, class: store.TypeLetters[edm.String], prop: ft.index}
			if !s.autoIdx.has(k) {
				t.Errorf("the automatic index on %s.%s was not found at start", ft.name, ft.index)
			}
		}
	}
	err := s.View(ctx, func(tx *Tx) error {
		for account, names := range byAccount {
			page, err := tx.QueryTables(account, TableQuery{Top: 1000})
			if err != nil {
				return err
			}
			var got []string
			for _, tb := range page.Tables {
				got = append(got, tb.Name)
			}
			slices.Sort(got)
			slices.Sort(names)
			if !slices.Equal(got, names) {
				return fmt.Errorf("account %s: tables %q, want %q", account, got, names)
			}
		}
		doc, ok, err := tx.ServiceProperties("devstoreaccount1")
		if err != nil || !ok || doc != fixtureProperties {
			return fmt.Errorf("service properties: %v %v %q", ok, err, doc)
		}
		if _, ok, _ := tx.ServiceProperties("acct2"); ok {
			return fmt.Errorf("acct2 has service properties; the fixture set none")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// The upgraded database takes writes, after the fixture's Timestamps.
	err = s.Update(ctx, func(tx *Tx) error {
		tb, err := tx.GetTable("devstoreaccount1", "fixturetypes")
		if err != nil {
			return err
		}
		e := &edm.Entity{PartitionKey: "types", RowKey: "new", Properties: []edm.Property{{Name: "Kind", Value: edm.NewString("new")}}}
		if err := tx.InsertEntity(tb, e); err != nil {
			return err
		}
		return tx.DeleteTable("devstoreaccount1", "empty")
	})
	if err != nil {
		t.Fatal(err)
	}
}
