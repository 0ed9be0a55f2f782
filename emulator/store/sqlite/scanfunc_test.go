package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// pageThrough runs q to its last page and describes every page: the keys
// returned, the continuation, the count examined, and whether the filter
// was decided in Go.
func pageThrough(t *testing.T, s *Store, tb Table, q EntityQuery) []string {
	t.Helper()
	var out []string
	for {
		var page EntityPage
		var p plannedQuery
		err := s.View(context.Background(), func(tx *Tx) error {
			var err error
			if p, err = tx.plan(tb, q); err != nil {
				return err
			}
			page, err = tx.QueryEntities(tb, q)
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", q.Filter, err)
		}
		var keys []string
		for _, e := range page.Entities {
			keys = append(keys, e.PartitionKey+e.RowKey)
		}
		next := "-"
		if page.Next != nil {
			next = page.Next.PK + page.Next.RK
		}
		out = append(out, fmt.Sprintf("%s>%s:%d:%v", strings.Join(keys, ","), next, page.Scanned, p.match != nil))
		if page.Next == nil {
			return out
		}
		q.Start = page.Next
	}
}

// TestMatchCountsRowsInsideBounds: tableemu_match is called for exactly
// the rows inside every bound of the page — filter key bounds, the
// continuation and a SAS range together, more than SQLite can use as one
// index range — so the counts equal those of the SQL-filtered scan; and
// the scan budget cuts pages the same way.
func TestMatchCountsRowsInsideBounds(t *testing.T) {
	s, tb := openNine(t)
	defer func() { scanBudget, matchScans = store.ScanBudget, true }()
	for _, tc := range []struct {
		filter string
		start  *Key
		rng    *KeyRange
		budget int
		want   string
	}{
		{"PartitionKey gt 'p1' and Missing eq 1", &Key{PK: "p3", RK: "a"}, nil, store.ScanBudget, ">-:3:true"},
		{"PartitionKey ge 'p2' and PartitionKey le 'p2' and Missing eq 1", &Key{PK: "p2", RK: "b"}, nil, store.ScanBudget, ">-:2:true"},
		{"PartitionKey ge 'p1' and not (Missing eq 1)", &Key{PK: "p1", RK: "c"}, &KeyRange{From: &Key{PK: "p2", RK: "a"}, To: true, ToPK: "p2", ToRK: "b", HasToRK: true},
			store.ScanBudget, "p2a,p2b>-:2:true"},
		{"RowKey ne 'b' and Missing ne 1", nil, nil, 4, ">p2b:4:true|>p3c:4:true|>-:1:true"},
		{"RowKey ne 'b' or Missing eq 1", nil, nil, 4, "p1a,p1c,p2a>p2b:4:true|p2c,p3a>p3c:4:true|p3c>-:1:true"},
		{"RowKey ne 'b'", nil, nil, 4, "p1a,p1c,p2a>p2b:4:false|p2c,p3a>p3c:4:false|p3c>-:1:false"},
	} {
		f, err := odata.ParseFilter(tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		q := EntityQuery{Filter: f, Top: 1000, Start: tc.start, Range: tc.rng}
		scanBudget = tc.budget
		matchScans = true
		got := strings.Join(pageThrough(t, s, tb, q), "|")
		if got != tc.want {
			t.Errorf("%s: pages %s, want %s", tc.filter, got, tc.want)
		}
		matchScans = false
		sql := strings.ReplaceAll(strings.Join(pageThrough(t, s, tb, q), "|"), ":false", ":true")
		if !strings.Contains(tc.want, ":false") && sql != got {
			t.Errorf("%s: filtered in SQL %s, in Go %s", tc.filter, sql, got)
		}
	}
}

// TestLookupProp reads properties from JSONB that SQLite wrote itself
// (escaped keys and values, TEXTJ) as well as from tableemu's own.
func TestLookupProp(t *testing.T) {
	s := open(t)
	var b []byte
	err := s.View(context.Background(), func(tx *Tx) error {
		return tx.queryRow(`SELECT jsonb('{"N\u0061me$s":"a\nb","Age$i":7,"A$s":"x","Ab$d":1.5}')`).Scan(&b)
	})
	if err != nil {
		t.Fatal(err)
	}
	own := store.EncodeProps([]edm.Property{{Name: "Name", Value: edm.NewString("a\nb")}, {Name: "Age", Value: edm.NewInt32(7)},
		{Name: "A", Value: edm.NewString("x")}, {Name: "Ab", Value: edm.NewDouble(1.5)}})
	for _, props := range [][]byte{b, own} {
		for _, tc := range []struct {
			name string
			want edm.Value
			ok   bool
		}{
			{"Name", edm.NewString("a\nb"), true},
			{"Age", edm.NewInt32(7), true},
			{"A", edm.NewString("x"), true},
			{"Ab", edm.NewDouble(1.5), true},
			{"Na", edm.Value{}, false},
			{"Names", edm.Value{}, false},
			{"age", edm.Value{}, false},
		} {
			v, ok, err := store.LookupProp(props, tc.name)
			if err != nil || ok != tc.ok || ok && !edm.Equal(v, tc.want) {
				t.Errorf("%q: %v %v %v, want %v %v", tc.name, v, ok, err, tc.want, tc.ok)
			}
		}
	}
	for _, bad := range [][]byte{nil, {0x1c}, {0x3c, 0x17, 'A', '$'}, {0x2b, 0x01, 0x01}} {
		if _, _, err := store.LookupProp(bad, "A"); err == nil {
			t.Errorf("% x: no error", bad)
		}
	}
}

// TestMatchMalformedProps: a row whose stored properties cannot be read
// fails the query with an error, as decoding it would, and the connection
// serves the next scan.
func TestMatchMalformedProps(t *testing.T) {
	// The row is written behind the filter cache's back: read SQLite.
	cacheScans = false
	defer func() { cacheScans = true }()
	s, tb := openNine(t)
	err := s.Update(context.Background(), func(tx *Tx) error {
		_, err := tx.exec(`INSERT INTO entities (tid, pk, rk, ts, props) VALUES (?, 'p2', 'bad', 1, x'2c')`, tb.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := odata.ParseFilter("Name eq 'x'")
	for _, want := range []bool{true, false} {
		err = s.View(context.Background(), func(tx *Tx) error {
			start := &Key{PK: "p1", RK: "a"}
			if !want {
				start = &Key{PK: "p3", RK: "a"} // past the bad row
			}
			_, err := tx.QueryEntities(tb, EntityQuery{Filter: f, Top: 10, Start: start})
			return err
		})
		if (err != nil) != want {
			t.Fatalf("from the bad row: %v; want an error: %v", err, want)
		}
	}
}

// TestMatchSlotsFreedOnClose: a connection's slot returns to the free
// list when the connection closes (SQLite calls matchDestroy), so stores
// opened and closed for ever do not run out of slots.
func TestMatchSlotsFreedOnClose(t *testing.T) {
	registered := func() int {
		scanReg.mu.Lock()
		defer scanReg.mu.Unlock()
		return len(scanReg.byDB)
	}
	before := registered()
	s, tb := openNine(t)
	f, _ := odata.ParseFilter("Name eq 'x'")
	err := s.View(context.Background(), func(tx *Tx) error {
		_, err := tx.QueryEntities(tb, EntityQuery{Filter: f, Top: 10})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := registered(); got != before+1 {
		t.Fatalf("%d connections registered after a scan, want %d", got, before+1)
	}
	s.Close()
	if got := registered(); got != before {
		t.Fatalf("%d connections registered after Close, want %d", got, before)
	}
}

// FuzzLookupProp: on any bytes store.LookupProp returns an error or a value,
// never panics; where store.DecodeProps reads the bytes, store.LookupProp finds the
// same value for each property and nothing for other names.
func FuzzLookupProp(f *testing.F) {
	f.Add(store.EncodeProps([]edm.Property{{Name: "A", Value: edm.NewString("x")}, {Name: "Ab", Value: edm.NewInt64(-7)}}), "Ab")
	f.Add(store.EncodeProps([]edm.Property{{Name: "Pad", Value: edm.NewString(strings.Repeat("p", 300))}, {Name: "T", Value: edm.NewBinary([]byte{1, 2})}}), "T")
	f.Add([]byte{0x1c, 0x00}, "A")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		v, ok, err := store.LookupProp(b, name)
		props, derr := store.DecodeProps(b)
		if derr != nil {
			return
		}
		if err != nil {
			t.Fatalf("store.DecodeProps reads %x, store.LookupProp fails: %v", b, err)
		}
		want, wantOK := (&edm.Entity{Properties: props}).Get(name)
		switch name {
		case "PartitionKey", "RowKey", "Timestamp":
			return
		}
		if ok != wantOK || ok && fingerprint(&edm.Entity{Properties: []edm.Property{{Name: name, Value: v}}}) !=
			fingerprint(&edm.Entity{Properties: []edm.Property{{Name: name, Value: want}}}) {
			t.Fatalf("%x %q: store.LookupProp %v %v, store.DecodeProps %v %v", b, name, v, ok, want, wantOK)
		}
	})
}
