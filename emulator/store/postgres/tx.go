package postgres

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tableemu/tableemu/emulator/store"
)

// Transactions, and why they give the service's guarantees across any
// number of tableemu processes sharing the database.
//
// Update runs its closure in a REPEATABLE READ transaction: snapshot
// isolation, where PostgreSQL lets the first of two concurrent transactions
// that write the same row commit and fails the other with SQLSTATE 40001
// (first updater wins), and an insert whose key a concurrent transaction
// took fails on the primary key or, with ON CONFLICT, with 40001 too.
// Snapshot isolation's one anomaly is write skew: two transactions that
// each read a row the other writes, and write different rows. The Table
// service's writes cannot produce it, because every entity write reads only
// the entity it writes (its ETag or its absence):
//
//   - single-entity strong consistency: a write commits before the response,
//     and every later transaction, on any process, starts from a snapshot
//     that includes it;
//   - conditional updates (If-Match) never lose an update: the handler reads
//     the entity, compares its ETag (the Timestamp) and writes that same
//     row in one closure, so of two processes updating the same version one
//     commits and the other fails with 40001; its closure runs again, reads
//     the winner's version, and answers 412 (or, unconditional, writes
//     after it);
//   - an entity group transaction ($batch) is one closure, so it commits
//     whole or not at all, and no reader sees part of it (every reader
//     works on one snapshot).
//
// The rows an entity write reads but does not write are its table's (that
// it exists). A Delete Table, reset or restore that commits while a write
// to one of the tables it removes is in flight can let that write commit
// into a table id that no longer exists: as if the write came just before
// the delete, and unobservable, since table ids are never reused (Open
// sweeps such rows away).
//
// SERIALIZABLE would also rule out write skew, but PostgreSQL's
// implementation tracks reads by index page, so writers of neighbouring
// keys (different partitions of one table) abort each other over and over
// under load: measured here, eight writers on eight partitions had
// requests fail after 20 retries. Snapshot isolation aborts only for a
// real conflict on the same row. (CockroachDB runs REPEATABLE READ as
// SERIALIZABLE unless told otherwise, with exact key tracking: correct too.)
//
// Update retries a closure that failed with serialization_failure (40001)
// or deadlock_detected (40P01), after a short random backoff, up to
// maxTries times; the contract (store.Store.Update) lets an engine run the
// closure again. View runs in REPEATABLE READ READ ONLY: one snapshot for
// the whole closure, which in PostgreSQL never fails for serialization (and
// is not retried once it has read rows: its closure may have written part
// of a response; pending.go says when it runs again before that).
const maxTries = 20

// connRetries is how many times a transaction whose connection failed
// before anything was sent, or before COMMIT, is started again on another
// connection: after the server restarts, the pool's idle connections are
// dead, and the first use of each finds out.
const connRetries = 3

func (e *engine) Update(ctx context.Context, fn func(store.EngineTx) error) error {
	conn, redo, eager := 0, 0, false
	for try := 1; ; try++ {
		retry, err := e.run(ctx, beginUpdate, true, eager, false, fn)
		switch {
		case err == nil:
			return nil
		case (retry == retryStale || retry == retryEager) && redo < maxRedo && ctx.Err() == nil:
			// At once: nothing conflicted. Not once the deadline has
			// passed: the failure may be the deadline's own (the server
			// cancelling the batch that held COMMIT, 57014) after the
			// COMMIT took effect, and a second run would answer for
			// the state the first left ("snapshot not found" for the
			// snapshot it had just deleted: storetest's Interrupted,
			// once in many runs under the race detector).
			redo++
			eager = eager || retry == retryEager
			try--
			continue
		case retry == retrySerial && try < maxTries:
		case (retry == retryConn || retry == retryBegin) && conn < connRetries:
			conn++
		default:
			return wrap(err)
		}
		if err := sleep(ctx, backoff(try)); err != nil {
			return err
		}
	}
}

func (e *engine) View(ctx context.Context, fn func(store.EngineTx) error) error {
	return e.view(ctx, beginView, false, fn)
}

// ViewPoint is View, with its first statement sent on its own, outside a
// transaction, as it is most often the only one (a point read from a
// cached table: pending.go, speculated).
func (e *engine) ViewPoint(ctx context.Context, fn func(store.EngineTx) error) error {
	return e.view(ctx, beginView, true, fn)
}

func (e *engine) view(ctx context.Context, begin string, point bool, fn func(store.EngineTx) error) error {
	for conn, redo := 0, 0; ; conn++ {
		retry, err := e.run(ctx, begin, false, false, point, fn)
		if err == nil {
			return nil
		}
		if retry == retryStale && redo < maxRedo {
			// The closure was given nothing but the table, or one row
			// it reads again (pending.go).
			redo++
			conn--
			continue
		}
		// Only a failure before anything was read is retried: fn may
		// have handed rows on.
		if retry != retryBegin || conn == connRetries {
			return wrap(err)
		}
	}
}

type retryKind int

const (
	noRetry     retryKind = iota
	retrySerial           // a serialization failure or deadlock
	retryConn             // the connection failed before COMMIT was sent
	retryBegin            // the connection failed at BEGIN
	retryStale            // a cached table was gone (pending.go)
	retryEager            // a deferred write failed (pending.go)
)

// run runs fn in one transaction and says whether a failure may be retried.
func (e *engine) run(ctx context.Context, begin string, write, eager, point bool, fn func(store.EngineTx) error) (retryKind, error) {
	if e.closed.Load() {
		return noRetry, store.ErrClosed
	}
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		if ctx.Err() == nil && faultOf(err) == store.FaultUnavailable {
			e.connLost()
			return retryBegin, err
		}
		if e.closed.Load() {
			return noRetry, store.ErrClosed
		}
		return noRetry, err
	}
	// Released last: a connection left inside a transaction (its ROLLBACK
	// failed) is closed by the pool rather than reused; one pgx closed
	// leaves the pool at once (release, dial.go).
	defer release(conn)
	tx := &Tx{e: e, conn: conn, ctx: ctx, begin: begin, eager: eager, point: point}
	committed := false
	defer func() {
		switch {
		case committed || !tx.begun || conn.Conn().IsClosed():
		case ctx.Err() != nil:
			// The request's time is up (its deadline, or the client
			// left): no waiting on a server that may not answer.
			// Closing the connection ends the transaction too.
			conn.Conn().Close(ctx)
		default:
			// Not ctx: a failed closure must still end its
			// transaction.
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			conn.Exec(rctx, "ROLLBACK")
			cancel()
		}
	}()
	err = fn(tx)
	if err != nil && !tx.stale && !tx.redo && tx.serial == nil && tx.lost == nil {
		// The closure failed owing statements (pending.go): a deferred
		// write might have failed before, a cached table might be gone.
		if len(tx.pending) > 0 {
			return retryEager, err
		}
		if tx.check != nil {
			tx.flush()
		}
	}
	switch {
	case tx.stale:
		return retryStale, err
	case tx.redo:
		return retryEager, err
	}
	if err == nil {
		committed = true
		if err = tx.commit(); err == nil {
			return noRetry, nil
		}
		if ctx.Err() != nil {
			// The deadline cut the commit short: its outcome is
			// awaited a moment (settle, dial.go).
			tx.settle()
		}
		switch {
		case tx.stale:
			return retryStale, err
		case tx.redo:
			return retryEager, err
		case tx.lost != nil && tx.lostAtBegin && ctx.Err() == nil && beforeBegin(tx.lost):
			// The transaction's only batch met a dead connection
			// before BEGIN completed: nothing after it ran.
			e.connLost()
			return retryBegin, err
		}
		if faultOf(err) == store.FaultUnavailable {
			e.connLost()
		}
		// A failed COMMIT may have committed (the connection broke after
		// sending it): only a serialization failure, reported by the
		// server (or met earlier by a statement whose error fn ignored,
		// which aborted the transaction), is known to have changed
		// nothing.
		if write && (isSerialization(err) || tx.serial != nil) {
			return retrySerial, err
		}
		return noRetry, err
	}
	if tx.lost != nil || faultOf(err) == store.FaultUnavailable {
		e.connLost()
	}
	switch {
	case tx.lost != nil && tx.lostAtBegin && ctx.Err() == nil:
		// The first statement, sent with BEGIN, found the connection
		// dead: nothing was read or written.
		return retryBegin, err
	case !write:
	case tx.serial != nil || isSerialization(err):
		// A statement met a conflict; the closure may have turned it into
		// another error (or the transaction is aborted and later
		// statements failed): the whole closure runs again.
		return retrySerial, err
	case tx.lost != nil && ctx.Err() == nil:
		return retryConn, err
	}
	return noRetry, err
}

// connLost closes the pool's connections once one was found dead: when
// the server restarted or the network failed, the idle ones are dead too,
// and each would otherwise fail a request of its own before the pool
// noticed. Connections in use are closed when they are returned.
func (e *engine) connLost() {
	if !e.closed.Load() {
		e.pool.Reset()
	}
}

// backoff is the wait before try+1: random, growing, at most ~50 ms, so
// that contenders spread out.
func backoff(try int) time.Duration {
	ceiling := time.Millisecond << min(try, 6)
	return time.Duration(rand.Int64N(int64(ceiling))) + 100*time.Microsecond
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// The statements that begin each kind of transaction, with the isolation
// level named rather than left to the server's default.
const (
	beginUpdate = "BEGIN ISOLATION LEVEL REPEATABLE READ READ WRITE"
	beginView   = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
)

// Tx is one transaction, valid only inside its closure. BEGIN is not sent
// on its own: it goes in one batch (one round trip) with the closure's
// first statement, which saves a round trip of the three or four of a
// point read or a single insert. A closure that runs no statement sends
// nothing.
type Tx struct {
	e    *engine
	conn *pgxpool.Conn
	ctx  context.Context
	// share: the entities written take one Timestamp, shared, once the
	// first has it (ShareTimestamp).
	share  bool
	shared int64
	begin  string
	begun  bool
	// serial is a serialization failure a statement met, lost a
	// connection failure (lostAtBegin: at the first statement): Update
	// retries the closure whatever it returns.
	serial, lost error
	lostAtBegin  bool
	// check is a table GetTable took from the cache, pending writes
	// deferred, eager says to defer nothing; stale and redo say the
	// closure must run again: a cached table was gone, a deferred write
	// failed (pending.go).
	check       *store.Table
	pending     []pendingWrite
	eager       bool
	stale, redo bool
	implicit    bool
	// point: a ViewPoint, whose first statement may go alone (spec).
	point bool
	spec  *speculated
	// scan's reused buffers.
	args []any
}

var _ store.EngineTx = (*Tx)(nil)

// errAborted is a COMMIT the server turned into a ROLLBACK: a statement
// failed earlier and the closure went on.
var errAborted = errors.New("postgres: the transaction was aborted by an earlier error")

// commit sends COMMIT, with what the transaction still owes (pending.go)
// in the same batch.
func (tx *Tx) commit() error {
	if !tx.owes() {
		tag, err := tx.conn.Exec(tx.ctx, "COMMIT")
		if err == nil && tag.String() == "ROLLBACK" {
			err = errAborted
		}
		return err
	}
	if !tx.begun && tx.check == nil && len(tx.pending) == 0 {
		return nil // nothing sent, or one statement alone (spec)
	}
	if !tx.begun {
		// Nothing was read: the check and the writes are the whole
		// transaction, sent without BEGIN and COMMIT as one implicit
		// transaction (pending.go).
		tx.implicit = true
		return tx.flush()
	}
	br, err := tx.send("COMMIT", nil)
	if err == nil {
		var tag pgconn.CommandTag
		tag, err = br.Exec()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err == nil && tag.String() == "ROLLBACK" {
			err = errAborted
		}
	}
	if err != nil && tx.conn.Conn().PgConn().TxStatus() != 'I' {
		// The batch failed before its COMMIT ran.
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		tx.conn.Exec(rctx, "ROLLBACK")
		cancel()
	}
	return err
}

// note records what a failed statement means for the transaction and
// returns the error classified (wrap).
func (tx *Tx) note(err error) error {
	if err == nil {
		return nil
	}
	if isSerialization(err) {
		tx.serial = err
	} else if faultOf(err) == store.FaultUnavailable {
		tx.lost = err
		tx.lostAtBegin = !tx.begun && tx.spec == nil
	}
	return wrap(err)
}

func (tx *Tx) exec(sql string, args ...any) (int64, error) {
	var tag pgconn.CommandTag
	var err error
	if !tx.owes() {
		tag, err = tx.conn.Exec(tx.ctx, sql, args...)
	} else {
		var br pgx.BatchResults
		if br, err = tx.send(sql, args); err != nil {
			return 0, err
		}
		tag, err = br.Exec()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return 0, tx.note(err)
	}
	return tag.RowsAffected(), nil
}

// queryRow runs a query for one row; pgx.ErrNoRows if there is none.
func (tx *Tx) queryRow(sql string, args []any, dest ...any) error {
	var err error
	if tx.point && !tx.begun && tx.spec == nil && tx.check == nil && len(tx.pending) == 0 {
		err = tx.speculate(sql, args, dest)
	} else if !tx.owes() {
		err = tx.conn.QueryRow(tx.ctx, sql, args...).Scan(dest...)
	} else {
		var br pgx.BatchResults
		if br, err = tx.send(sql, args); err != nil {
			return err
		}
		err = br.QueryRow().Scan(dest...)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return pgx.ErrNoRows
	}
	return tx.note(err)
}

func (tx *Tx) query(sql string, args ...any) (pgx.Rows, error) {
	if !tx.owes() {
		rows, err := tx.conn.Query(tx.ctx, sql, args...)
		if err != nil {
			return nil, tx.note(err)
		}
		return rows, nil
	}
	br, err := tx.send(sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, tx.note(err)
	}
	return &batchRows{Rows: rows, br: br}, nil
}

// batchRows are the rows of a statement sent with BEGIN: closing them
// closes the batch.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error
}

func (r *batchRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	r.err = r.br.Close()
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// Error is a failed PostgreSQL call that is a storage fault (store.Fault):
// the server is unreachable, restarting, full. Other errors are returned as
// pgx gives them.
type Error struct {
	Err   error
	Fault store.Fault
}

func (e *Error) Error() string           { return "postgres: " + e.Err.Error() }
func (e *Error) Unwrap() error           { return e.Err }
func (e *Error) StoreFault() store.Fault { return e.Fault }

// wrap classifies err (faultOf); errors that are no fault come back as
// they are.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	if f := faultOf(err); f != store.NoFault {
		return &Error{Err: err, Fault: f}
	}
	return err
}

// faultOf classifies by SQLSTATE and by the kind of network error, never by
// message text.
func faultOf(err error) store.Fault {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case len(pe.Code) == 5 && pe.Code[:2] == "08": // connection_exception
			return store.FaultUnavailable
		}
		switch pe.Code {
		case "57P01", // admin_shutdown: the server is stopping
			"57P02", // crash_shutdown
			"57P03", // cannot_connect_now: starting up or in recovery
			"53300", // too_many_connections
			"25006": // read_only_sql_transaction: a standby, mid-failover
			return store.FaultUnavailable
		case "53100": // disk_full
			return store.FaultFull
		case "53200": // out_of_memory
			return store.FaultUnavailable
		case "58030": // io_error
			return store.FaultIO
		case "XX001", "XX002": // data_corrupted, index_corrupted
			return store.FaultCorrupt
		case "40001", "40P01":
			// Still conflicting after maxTries: contention, which may clear.
			return store.FaultBusy
		}
		return store.NoFault
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The request's own context ended, unless the pool gave up
		// dialling (a ConnectError below).
		var ce *pgconn.ConnectError
		if !errors.As(err, &ce) {
			return store.NoFault
		}
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		pgconn.SafeToRetry(err): // never sent: the connection was closed
		return store.FaultUnavailable
	}
	return store.NoFault
}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func isSerialization(err error) bool {
	s := sqlState(err)
	// 23505, a unique violation, is a conflict too: every insert that can
	// meet an existing key on purpose says ON CONFLICT, so one that fails
	// raced a concurrent transaction's insert of the same key (two Set
	// Table ACLs, a restore and a Create Table of one name), which
	// snapshot isolation reports this way; run again, the closure sees it.
	return s == "40001" || s == "40P01" || s == "23505"
}

// beforeBegin says whether a failure met at BEGIN's result shows that the
// server ran nothing after BEGIN: the server said so (it answers in order,
// and a terminated session's last word is its error), or nothing was sent.
func beforeBegin(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) || pgconn.SafeToRetry(err)
}
