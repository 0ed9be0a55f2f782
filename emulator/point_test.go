package emulator

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
)

// twiceEngine runs every ViewPoint closure twice, as PostgreSQL's does when
// its speculative first statement read something that changed.
type twiceEngine struct{ store.Engine }

func (e twiceEngine) ViewPoint(ctx context.Context, fn func(store.EngineTx) error) error {
	if err := e.Engine.ViewPoint(ctx, fn); err != nil {
		return err
	}
	return e.Engine.ViewPoint(ctx, fn)
}

// TestPointReadRunTwice: a point read encodes its entity inside the store's
// closure (ReadEntity); when the engine runs the closure again, the answer
// is still the one entity, not two documents one after the other.
func TestPointReadRunTwice(t *testing.T) {
	s, hs := newTestServer(t)
	if r := send(t, signed(t, "POST", hs.URL, "/devstoreaccount1/Tables", `{"TableName":"twice"}`)); r.StatusCode != 201 {
		t.Fatalf("create table: %d %s", r.StatusCode, r.body)
	}
	if r := send(t, signed(t, "POST", hs.URL, "/devstoreaccount1/twice", `{"PartitionKey":"p","RowKey":"r","N":"v"}`)); r.StatusCode != 201 {
		t.Fatalf("insert: %d %s", r.StatusCode, r.body)
	}
	s.store = store.New(twiceEngine{s.store.Engine()})
	r := send(t, signed(t, "GET", hs.URL, "/devstoreaccount1/twice(PartitionKey='p',RowKey='r')", ""))
	var doc map[string]any
	if r.StatusCode != 200 || json.Unmarshal([]byte(r.body), &doc) != nil || doc["N"] != "v" {
		t.Fatalf("point read: %d %s", r.StatusCode, r.body)
	}
}
