package sqlite

import (
	"context"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
)

// engine is a Store as the contract's store.Engine. The Store's own
// methods take closures of *Tx, which this engine's tests use directly.
type engine struct{ s *Store }

var _ store.EngineTx = (*Tx)(nil)

func (e engine) View(ctx context.Context, fn func(store.EngineTx) error) error {
	return e.s.View(ctx, func(tx *Tx) error { return fn(tx) })
}

func (e engine) ViewPoint(ctx context.Context, fn func(store.EngineTx) error) error {
	return e.s.ViewPoint(ctx, func(tx *Tx) error { return fn(tx) })
}

func (e engine) Update(ctx context.Context, fn func(store.EngineTx) error) error {
	return e.s.Update(ctx, func(tx *Tx) error { return fn(tx) })
}

func (e engine) Close() error { return e.s.Close() }

func (e engine) Describe() store.Location {
	return store.Location{Engine: "sqlite", Where: e.s.Path()}
}

func (e engine) Announce(port int) error { return e.s.Announce(port) }

func (e engine) CollectGarbage(ctx context.Context) error { return e.s.CollectGarbage(ctx) }

// IndexNow is Store.IndexNow for a *store.Store opened here (tests and
// benchmarks of the emulator).
func IndexNow(ctx context.Context, st *store.Store, t store.Table, filter odata.Expr) error {
	e, ok := st.Engine().(engine)
	if !ok {
		return nil
	}
	return e.s.IndexNow(ctx, t, filter)
}
