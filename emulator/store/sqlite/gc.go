package sqlite

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/tableemu/tableemu/emulator/store/sqlite/filtercache"
)

// Deleting in the background what resets and restores retire.
//
// Deleting a table's entities costs about 4.5 µs per 1 KiB entity here
// (450 ms for 100,000), because SQLite visits every row it deletes. A reset
// or a restore that did it in its transaction would hold the writer, and
// keep the test that asked waiting, for that long. So they retire tables
// instead (0003_snapshots.sql): one UPDATE of the table's row moves it where
// no request reaches it, in the same transaction as the rest of the reset,
// so a reader sees the whole reset or none of it.
//
// A retired table that descends from a snapshot (its base is set) is
// parked: it is kept as it is, so that a later restore of that snapshot
// takes it back and rewrites only what changed in it (snapshot.go), as for
// a table still in place. Only the snapshot the account was last saved
// into or restored from keeps parked tables, and there is at most one
// table, in place or parked, per snapshot table: parked tables hold at
// most one more copy of one snapshot per account. Saving or restoring
// another snapshot, or deleting or replacing this one, makes them garbage.
//
// A retired table without a base is garbage: the collector below deletes
// its rows, a chunk per transaction, each its own Update so that requests
// interleave with it. Deleted and replaced snapshots are collected the
// same way.
//
// All of it is in the database, not in memory: a collector started on the
// file later (after a restart, or kill -9) finds what is left and finishes
// it; and any number of instances sharing one database could run it, each
// step being a transaction.

// gcChunk is how many rows one step deletes: about 5 ms with 1 KiB
// entities, short enough for a request queued behind it.
const gcChunk = 1000

// gcRetry is how long the collector waits after a step failed.
const gcRetry = 10 * time.Second

// retiredAccount is the account of retired tables: no account has an empty name
// (account names are 3 to 24 letters and digits).
const retiredAccount = ""

// collector runs the steps.
type collector struct {
	kick chan struct{} // buffered: a wake-up while a run is on is kept
	stop chan struct{}
	done chan struct{}
}

func (s *Store) startCollector() {
	s.gc = collector{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.gc.wake() // what an earlier run left
	go s.collect()
}

// stopCollector stops the collector after its current step. What remains
// is collected at the next Open.
func (s *Store) stopCollector() {
	if s.gc.stop == nil {
		return // Open failed before starting it
	}
	close(s.gc.stop)
	<-s.gc.done
}

// wake tells the collector there may be garbage.
func (c *collector) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (s *Store) collect() {
	defer close(s.gc.done)
	var retry <-chan time.Time // after a failed step; nil: none
	for {
		select {
		case <-s.gc.stop:
			return
		case <-s.gc.kick:
		case <-retry:
		}
		retry = nil
		for {
			start := time.Now()
			more, err := s.collectStep(context.Background())
			if err != nil {
				if !errors.Is(err, ErrClosed) {
					// A full disk, say: tried again in a while, or at
					// the next wake-up.
					log.Printf("deleting the data of retired tables and snapshots: %v; trying again in %v", err, gcRetry)
					retry = time.After(gcRetry)
				}
				break
			}
			if !more {
				break
			}
			// Leave the writer to requests at least as long as the step
			// held it.
			select {
			case <-s.gc.stop:
				return
			case <-time.After(time.Since(start)):
			}
		}
	}
}

// collectStep deletes one chunk of garbage and reports whether any is left.
func (s *Store) collectStep(ctx context.Context) (more bool, err error) {
	err = s.Update(ctx, func(tx *Tx) error {
		more, err = tx.collectStep()
		return err
	})
	return more, err
}

// CollectGarbage deletes all the garbage now, for tests and benchmarks
// that measure what is left after it.
func (s *Store) CollectGarbage(ctx context.Context) error {
	for {
		more, err := s.collectStep(ctx)
		if err != nil || !more {
			return err
		}
	}
}

func (tx *Tx) collectStep() (more bool, err error) {
	var tid int64
	err = tx.queryRow(`SELECT id FROM tables WHERE account = ? AND base IS NULL LIMIT 1`, retiredAccount).Scan(&tid)
	switch {
	case err == nil:
		for _, t := range []string{"entities", "entity_changes"} {
			if done, err := tx.deleteChunk(t, "tid", tid); err != nil || !done {
				return true, err
			}
		}
		// An automatic index built while the table was being retired
		// (autoindex.go checks, but a build may have begun before).
		if err := tx.dropIndexes(tid); err != nil {
			return true, err
		}
		_, err = tx.exec(`DELETE FROM tables WHERE id = ?`, tid)
		return true, err
	case !errors.Is(err, errNoRows):
		return false, err
	}
	var stid int64
	err = tx.queryRow(`SELECT id FROM snapshot_tables WHERE sid IS NULL LIMIT 1`).Scan(&stid)
	switch {
	case err == nil:
		if done, err := tx.deleteChunk("snapshot_entities", "stid", stid); err != nil || !done {
			return true, err
		}
		if _, err := tx.exec(`DELETE FROM snapshot_acl WHERE stid = ?`, stid); err != nil {
			return true, err
		}
		_, err = tx.exec(`DELETE FROM snapshot_tables WHERE id = ?`, stid)
		return true, err
	case !errors.Is(err, errNoRows):
		return false, err
	}
	return false, nil
}

// deleteChunk deletes up to gcChunk rows of table (keyed col, pk, rk)
// whose col is id; done when it deleted the last of them.
func (tx *Tx) deleteChunk(table, col string, id int64) (done bool, err error) {
	var pk, rk string
	err = tx.queryRow("SELECT pk, rk FROM "+table+" WHERE "+col+" = ? ORDER BY pk, rk LIMIT 1 OFFSET ?", id, gcChunk-1).Scan(&pk, &rk)
	if errors.Is(err, errNoRows) {
		_, err = tx.exec("DELETE FROM "+table+" WHERE "+col+" = ?", id)
		return true, err
	}
	if err != nil {
		return false, err
	}
	_, err = tx.exec("DELETE FROM "+table+" WHERE "+col+" = ? AND (pk, rk) <= (?, ?)", id, pk, rk)
	return false, err
}

// retire moves tables out of reach: their rows stay, under
// retiredAccount, parked if they have a base, otherwise until the
// collector has deleted their entities. A garbage table's automatic
// indexes go now, in this transaction, with the in-memory record of them
// (a parked table keeps its own, for when it is taken back).
func (tx *Tx) retire(tables []liveTable) error {
	for _, t := range tables {
		tx.noteTable(filtercache.Drop(t.id))
		if t.base == 0 {
			if err := tx.dropIndexes(t.id); err != nil {
				return err
			}
			tx.garbage = true
		}
		if _, err := tx.exec(`UPDATE tables SET account = ?, lname = '#' || id WHERE id = ?`, retiredAccount, t.id); err != nil {
			return err
		}
		// Its policies go now (a restore writes them again).
		if _, err := tx.exec(`DELETE FROM table_acl WHERE tid = ?`, t.id); err != nil {
			return err
		}
	}
	if len(tables) > 0 {
		tx.tablesChanged = true
	}
	return nil
}

// ResetAccount returns account to the state of a new one: no tables, no
// entities, no stored access policies, no service properties (so the
// defaults, and no CORS rules). Its snapshots stay. It returns how many
// tables it removed. The caller runs it in an Update, which makes it
// atomic: a reader sees the account as it was before or after, whole.
func (tx *Tx) ResetAccount(account string) (tables int, err error) {
	live, err := tx.accountTables(account)
	if err != nil {
		return 0, err
	}
	if err := tx.retire(live); err != nil {
		return 0, err
	}
	_, err = tx.exec(`DELETE FROM service_properties WHERE account = ?`, account)
	return len(live), err
}

// ResetAll is ResetAccount for every account in the database, whether or
// not it is configured now.
func (tx *Tx) ResetAll() (tables int, err error) {
	live, err := tx.tablesWhere(`account <> ?`, retiredAccount)
	if err != nil {
		return 0, err
	}
	if err := tx.retire(live); err != nil {
		return 0, err
	}
	_, err = tx.exec(`DELETE FROM service_properties`)
	return len(live), err
}
