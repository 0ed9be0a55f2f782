package storetest

// Resets, snapshots and restores whose deadline passes part-way: each is
// one transaction, so one cut short by its deadline leaves the account as
// it was, or — when the deadline met the commit on its way to an external
// database, whose answer is then lost — as the operation left it; never
// in between (store.Store.Update; docs/isolation.md).

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// lapse is a context whose deadline passes at the n-th time the store
// looks at it (Err or Done): a deadline that falls at each point of an
// operation in turn, as the clock cannot be made to.
type lapse struct {
	left atomic.Int64
	done chan struct{}
	once sync.Once
}

func newLapse(n int) *lapse {
	l := &lapse{done: make(chan struct{})}
	l.left.Store(int64(n))
	return l
}

func (l *lapse) look() {
	if l.left.Add(-1) < 0 {
		l.once.Do(func() { close(l.done) })
	}
}

func (l *lapse) Deadline() (time.Time, bool) { return time.Time{}, false }
func (l *lapse) Value(any) any               { return nil }
func (l *lapse) Done() <-chan struct{}       { l.look(); return l.done }

func (l *lapse) Err() error {
	l.look()
	select {
	case <-l.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// isolationSetup gives account tables, entities, an access policy,
// service properties and two snapshots — "old" of a first state,
// "fixtures" of a second — and then changes the tables again.
func isolationSetup(t *testing.T, s *store.Store, account string) {
	createTable(t, s, account, "t1")
	insert(t, s, account, "t1", entity("p", "1"), entity("p", "2", prop("N", edm.NewInt32(2))))
	update(t, s, func(tx *store.Tx) error { _, _, err := tx.SaveSnapshot(account, "old"); return err })
	insert(t, s, account, "t1", entity("p", "3"), entity("p", "4"))
	createTable(t, s, account, "t2")
	insert(t, s, account, "t2", entity("q", "1"))
	update(t, s, func(tx *store.Tx) error {
		if err := tx.SetTableACL(table(t, tx, account, "t1"), []store.SignedIdentifier{{ID: "pol", Permission: "r"}}); err != nil {
			return err
		}
		return tx.SetServiceProperties(account, "<doc/>")
	})
	update(t, s, func(tx *store.Tx) error { _, _, err := tx.SaveSnapshot(account, "fixtures"); return err })
	update(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, account, "t1")
		if err := tx.DeleteEntity(tb, "p", "1"); err != nil {
			return err
		}
		return tx.PutEntity(tb, entity("p", "2", prop("N", edm.NewInt32(9))), 0)
	})
	createTable(t, s, account, "t3")
	insert(t, s, account, "t3", entity("r", "1"))
}

// fingerprint is what account holds, in words that do not name it:
// tables with their entities (keys and properties) and policies, service
// properties, snapshots with their counts.
func fingerprint(t *testing.T, s *store.Store, account string) string {
	t.Helper()
	var b strings.Builder
	view(t, s, func(tx *store.Tx) error {
		page, err := tx.QueryTables(account, store.TableQuery{Top: 1000})
		if err != nil {
			return err
		}
		for _, tb := range page.Tables {
			fmt.Fprintf(&b, "table %s:", tb.Name)
			es, err := tx.QueryEntities(tb, store.EntityQuery{Top: 1000})
			if err != nil {
				return err
			}
			for _, e := range es.Entities {
				fmt.Fprintf(&b, " %s/%s", e.PartitionKey, e.RowKey)
				for _, p := range e.Properties {
					fmt.Fprintf(&b, " %s=%v", p.Name, p.Value)
				}
			}
			acl, err := tx.TableACL(tb)
			if err != nil {
				return err
			}
			for _, id := range acl {
				fmt.Fprintf(&b, " policy %s %s", id.ID, id.Permission)
			}
			b.WriteString("\n")
		}
		doc, ok, err := tx.ServiceProperties(account)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "properties %v %s\n", ok, doc)
		sns, err := tx.Snapshots(account)
		if err != nil {
			return err
		}
		sort.Slice(sns, func(i, j int) bool { return sns[i].Name < sns[j].Name })
		for _, sn := range sns {
			fmt.Fprintf(&b, "snapshot %s: %d tables, %d entities\n", sn.Name, sn.Tables, sn.Entities)
		}
		return nil
	})
	return b.String()
}

func testIsolationInterrupted(t *testing.T, s *store.Store) {
	for i, op := range []struct {
		name string
		fn   func(tx *store.Tx, account string) error
	}{
		{"reset", func(tx *store.Tx, a string) error { _, err := tx.ResetAccount(a); return err }},
		{"save replacing a snapshot", func(tx *store.Tx, a string) error { _, _, err := tx.SaveSnapshot(a, "old"); return err }},
		{"restore of the snapshot last saved", func(tx *store.Tx, a string) error { _, err := tx.RestoreSnapshot(a, "fixtures"); return err }},
		{"restore of another snapshot", func(tx *store.Tx, a string) error { _, err := tx.RestoreSnapshot(a, "old"); return err }},
		{"snapshot delete", func(tx *store.Tx, a string) error { return tx.DeleteSnapshot(a, "fixtures") }},
	} {
		// What the operation makes of the account, on a twin of it.
		twin, account := fmt.Sprintf("twin%d", i), fmt.Sprintf("acct%d", i)
		isolationSetup(t, s, twin)
		update(t, s, func(tx *store.Tx) error { return op.fn(tx, twin) })
		want := fingerprint(t, s, twin)

		isolationSetup(t, s, account)
		before := fingerprint(t, s, account)
		if before == want {
			t.Fatalf("%s: changes nothing to test", op.name)
		}
		cut := 0
		for n := 0; ; n++ {
			if n == 1000 {
				t.Fatalf("%s: still cut short after its deadline passed at the store's 1000th look", op.name)
			}
			err := s.Update(newLapse(n), func(tx *store.Tx) error { return op.fn(tx, account) })
			got := fingerprint(t, s, account)
			if err == nil {
				if got != want {
					t.Errorf("%s: done, the account is\n%s\nwant\n%s", op.name, got, want)
				}
				break
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s, deadline at the store's look %d: %v, want context.DeadlineExceeded", op.name, n, err)
			}
			if got == want {
				break // the commit went through, its answer lost: allowed
			}
			if got != before {
				t.Fatalf("%s, deadline at the store's look %d: the account is\n%s\nneither as it was\n%s\nnor as the %s leaves it\n%s",
					op.name, n, got, before, op.name, want)
			}
			cut++
		}
		if cut == 0 {
			t.Errorf("%s: never cut short", op.name)
		}
		t.Logf("%s: cut short at %d points, the account untouched each time", op.name, cut)
	}
}
