package filtercache

import (
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// TestPutRecords: a write to a table the cache knows but does not hold
// records no entity for it (opTouch, no slim form); a write to a cached
// table records only the names of its large values the table's tree does
// not know already, and those it knew, which it puts back should the
// tree be replaced before the write commits. (The engine's
// TestFilterCacheLoadRacesWrites and TestFilterCacheLargeNamesAfterReload
// hold the cache to what follows from both, through SQLite.)
func TestPutRecords(t *testing.T) {
	fc := &Cache{}
	fc.Init(1 << 20)
	commit := func(ops ...Op) { fc.Commit(fc.Begin(ops, false), ops, false, true) }
	long := store.EncodeProps([]edm.Property{{Name: "Doc", Value: edm.NewString(strings.Repeat("D", SlimMax+1))}})

	// Table 1's first write makes it known to the cache as not held.
	commit(fc.Put(1, "p", "a", 1, long))
	if op := fc.Put(1, "p", "b", 2, long); op.kind != opTouch || op.slim != nil {
		t.Errorf("a write to a table the cache does not hold made its slim form (op %d)", op.kind)
	}

	// Doc becomes a known large name of table 2, and stays one after its
	// entity goes.
	commit(Create(2))
	commit(fc.Put(2, "p", "a", 1, long))
	commit(Delete(2, "p", "a"))
	op := fc.Put(2, "p", "b", 2, long)
	if op.kind != opPut || len(op.large) != 0 || !op.known["Doc"] || !op.big {
		t.Errorf("the write recorded large names %q, knowing %v (op %d, big %v)", op.large, op.known, op.kind, op.big)
	}
	// The table's tree is replaced before the write commits: forgotten,
	// then loaded from a snapshot in which no entity has a large Doc.
	// Doc is still a large name once the write is applied.
	fc.Forget(2)
	short := store.EncodeProps([]edm.Property{{Name: "Doc", Value: edm.NewString("d")}})
	fc.Load(2, func(tid int64, l *Loader) error {
		if err := l.Begin(fc.Committed()); err != nil {
			return err
		}
		return l.Add([]byte("p"), []byte("c"), 3, short)
	})
	fc.WaitLoads()
	if tree, _, _ := fc.Lookup(2, fc.Committed()); !tree.Cached() || tree.Large("Doc") {
		t.Fatalf("after the load: cached %v, Doc large %v; want a tree without large Doc", tree.Cached(), tree.Large("Doc"))
	}
	commit(op)
	if tree, _, _ := fc.Lookup(2, fc.Committed()); !tree.Cached() || !tree.Large("Doc") {
		t.Fatalf("after the write: cached %v, Doc large %v; want Doc large", tree.Cached(), tree.Large("Doc"))
	}
	if keys, _ := fc.Keys(2); keys != "p|b;p|c;" {
		t.Fatalf("the tree holds %q", keys)
	}
}
