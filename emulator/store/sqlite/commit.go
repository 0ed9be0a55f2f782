package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tableemu/tableemu/emulator/store/sqlite/filtercache"
)

// Group commit. Every commit has a fixed cost: SQLite appends the pages it
// changed to the WAL (one write per commit, and the pages several writes
// share are written once) and updates the WAL index; with Options.Fsync
// it also waits for an fsync, which on this machine takes longer than the
// work of a single-entity write. Concurrent single writes would pay it
// one by one. So Update hands its closure to one writer goroutine, which
// runs every closure that is waiting at that moment inside one SQLite
// transaction — each in its own SAVEPOINT, so that one closure's failure
// undoes only its own changes — and commits once. Each Update returns
// only after that commit, so a write is acknowledged only once it is as
// durable as the mode promises; the closures run one after another, so
// each is isolated from the others exactly as separate transactions would
// be.

// maxGroup bounds a group, so that one commit never waits on an unbounded
// queue.
const maxGroup = 64

// savepoints are the statements of each closure's savepoint in a group,
// made once rather than three strings per write.
var savepoints = func() (sp [maxGroup]struct{ begin, release, rollback string }) {
	for i := range sp {
		name := fmt.Sprintf("g%d", i)
		sp[i].begin, sp[i].release, sp[i].rollback = "SAVEPOINT "+name, "RELEASE "+name, "ROLLBACK TO "+name
	}
	return sp
}()

type writeReq struct {
	ctx context.Context
	fn  func(*Tx) error
	err error
	pan any // a panic in fn, re-raised in the caller's goroutine
	// state says whether fn may still be dropped: the caller whose
	// context ends while fn waits (reqQueued) takes it back
	// (reqAbandoned) and returns at once; the writer claims it
	// (reqRunning) before it touches anything but state and done, and
	// from then on the caller waits for the group's outcome.
	state atomic.Int32
	// done receives one value once the closure's group committed or
	// failed. It is buffered and the request reused (writeReqs): a new
	// request and channel were two allocations of every write.
	done chan struct{}
	// expiry wakes the caller at its context's deadline. Reused with
	// the request: waiting on ctx.Done instead would make a request's
	// context build its timer and channel (emulator/deadline.go), ten
	// allocations of every write.
	expiry *time.Timer
}

var writeReqs = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &writeReq{done: make(chan struct{}, 1), expiry: t}
}}

// Write states (writeReq.state).
const (
	reqQueued int32 = iota
	reqRunning
	reqAbandoned
)

// Update runs fn in a write transaction: if fn returns nil its changes
// commit before Update returns (see Options.Fsync for how durably),
// otherwise nothing it did stays.
// fn runs on the writer goroutine; it must not call Update or View.
//
// If ctx ends while fn is still waiting — for the writer, busy with other
// groups, or for its group to begin, as when another connection holds the
// database's write lock — Update returns ctx's error and fn never runs:
// the write was not applied. Once fn has started, Update waits for the
// group's commit, whatever ctx does (ctx's end fails fn's next statement
// instead), so that its answer says whether the write committed. A
// group's work after fn started is bounded: the writer holds the write
// lock from BEGIN IMMEDIATE on, so COMMIT waits for no one.
func (s *Store) Update(ctx context.Context, fn func(*Tx) error) error {
	req := writeReqs.Get().(*writeReq)
	req.ctx, req.fn = ctx, fn
	req.state.Store(reqQueued)
	// The wait ends at ctx's deadline, or when a ctx without one is
	// cancelled.
	var expired <-chan time.Time
	var cancelled <-chan struct{}
	if dl, ok := ctx.Deadline(); ok {
		req.expiry.Reset(time.Until(dl))
		expired = req.expiry.C
	} else {
		cancelled = ctx.Done()
	}
	select {
	case s.writes <- req:
	case <-s.quit:
		req.expiry.Stop()
		req.ctx, req.fn = nil, nil
		writeReqs.Put(req)
		return ErrClosed
	case <-expired:
		req.ctx, req.fn = nil, nil
		writeReqs.Put(req) // never handed over
		return deadlineErr(ctx)
	case <-cancelled:
		req.ctx, req.fn = nil, nil
		writeReqs.Put(req)
		return ctx.Err()
	}
	var waitErr error
	select {
	case <-req.done:
	case <-expired:
		waitErr = deadlineErr(ctx)
	case <-cancelled:
		waitErr = ctx.Err()
	}
	req.expiry.Stop()
	if waitErr != nil {
		if req.state.CompareAndSwap(reqQueued, reqAbandoned) {
			// The writer skips it and still signals done: the
			// request is left to it, not reused.
			return waitErr
		}
		<-req.done // running: its group decides
	}
	err, pan := req.err, req.pan
	*req = writeReq{done: req.done, expiry: req.expiry} // the writer is done with it
	writeReqs.Put(req)
	if pan != nil {
		panic(pan)
	}
	return err
}

// deadlineErr is ctx's error once its deadline has passed.
func deadlineErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.DeadlineExceeded // the timer ran a moment ahead of ctx's
}

// writer runs groups of Update closures until Close.
func (s *Store) writer() {
	defer s.writerDone.Done()
	group := make([]*writeReq, 0, maxGroup)
	for {
		var first *writeReq
		select {
		case first = <-s.writes:
		case <-s.quit:
			return
		}
		group = append(group[:0], first)
	gather:
		for len(group) < maxGroup {
			select {
			case r := <-s.writes:
				group = append(group, r)
			default:
				break gather
			}
		}
		if n := int64(len(group)); n > s.largestGroup.Load() {
			s.largestGroup.Store(n)
		}
		s.commitGroup(group)
		for i, r := range group {
			group[i] = nil
			r.done <- struct{}{} // its last use of r: see Update
		}
	}
}

func (s *Store) commitGroup(group []*writeReq) {
	err := s.withWriter(func(c *conn) error {
		s.runGroup(c, group)
		return nil
	})
	if err != nil {
		for _, r := range group {
			r.err = err
		}
	}
}

// runGroup runs the group's closures in one transaction on c and commits.
func (s *Store) runGroup(c *conn, group []*writeReq) {
	bg := context.Background()
	defer func() { c.tx = Tx{} }() // drop the last closure's context
	// What the last group encoded is dead: it committed (or not) and the
	// filter cache copied what it keeps (fc.Commit).
	c.propMem = c.propMem[:0]
	fail := func(err error) {
		for _, r := range group {
			if r.err == nil && r.pan == nil {
				r.err = err
			}
		}
	}
	if _, err := c.exec(bg, "BEGIN IMMEDIATE"); err != nil {
		fail(err)
		return
	}
	single := len(group) == 1
	ok := 0
	tablesChanged, garbage := false, false
	var cacheOps []filtercache.Op
	cacheAll := false
	for i, r := range group {
		if !r.state.CompareAndSwap(reqQueued, reqRunning) {
			continue // abandoned: its caller has returned (Update)
		}
		if err := r.ctx.Err(); err != nil {
			r.err = err
			continue
		}
		sp := &savepoints[i]
		if !single {
			if _, err := c.exec(bg, sp.begin); err != nil {
				r.err = err
				continue
			}
		}
		// The connection's Tx, not a new one: see conn.tx.
		c.tx = Tx{s: s, c: c, ctx: r.ctx, committedTables: !tablesChanged, tablesGen: s.tables.gen.Load()}
		tx := &c.tx
		r.err, r.pan = runClosure(tx, r.fn)
		switch {
		case r.err == nil && r.pan == nil:
			ok++
			tablesChanged = tablesChanged || tx.tablesChanged
			garbage = garbage || tx.garbage
			cacheOps = append(cacheOps, tx.cacheOps...)
			cacheAll = cacheAll || tx.cacheAll
			if !single {
				if _, err := c.exec(bg, sp.release); err != nil {
					r.err = err
					ok--
					// Whether its changes stay is unknown: the
					// filter cache starts again.
					cacheAll = true
				}
			}
		case single:
		default:
			// Undo this closure alone; the savepoint must still be
			// released to leave the transaction's nesting as it was.
			_, err1 := c.exec(bg, sp.rollback)
			_, err2 := c.exec(bg, sp.release)
			if err := errors.Join(err1, err2); err != nil {
				// The transaction is in an unknown state: give up on
				// the whole group.
				c.exec(bg, "ROLLBACK")
				fail(err)
				return
			}
		}
	}
	if ok == 0 {
		c.exec(bg, "ROLLBACK")
		return
	}
	n := s.fc.Begin(cacheOps, cacheAll)
	if tablesChanged {
		// Odd while COMMIT runs: see tableCache.
		s.tables.gen.Add(1)
	}
	_, err := c.exec(bg, "COMMIT")
	s.fc.Commit(n, cacheOps, cacheAll, err == nil)
	if tablesChanged {
		// Even again before any writer is answered (even when COMMIT
		// failed: retiring too often is harmless).
		s.tables.gen.Add(1)
	}
	if err != nil {
		// A failed COMMIT (an I/O error) may leave the transaction open;
		// end it so the next group starts clean.
		c.exec(bg, "ROLLBACK")
		fail(err)
		return
	}
	if garbage {
		s.gc.wake()
	}
}

// runClosure runs fn, turning a panic into a value for the caller.
func runClosure(tx *Tx, fn func(*Tx) error) (err error, pan any) {
	defer func() {
		if p := recover(); p != nil {
			pan = p
		}
	}()
	return fn(tx), nil
}
