package sqlite

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"sync"
	"testing"
	"time"

	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAutomaticIndexLogLine: the line logged when an automatic index is
// built names the table (account/name), not its internal number, and
// carries no prefix or time of its own: the standard logger's output, set
// by cmd/tableemu to emulator.Log, gives it the format of every other line.
func TestAutomaticIndexLogLine(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 20,000 entities")
	}
	var out lockedLog
	prevOut, prevFlags := log.Writer(), log.Flags()
	log.SetOutput(&out)
	log.SetFlags(0)
	defer func() { log.SetOutput(prevOut); log.SetFlags(prevFlags) }()

	s := open(t)
	ctx := context.Background()
	var tb Table
	err := s.Update(ctx, func(tx *Tx) error {
		var err error
		if tb, err = tx.CreateTable("devstoreaccount1", "Orders"); err != nil {
			return err
		}
		for i := 0; i < autoIndexMinRows; i++ {
			e := &edm.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%06d", i),
				Properties: []edm.Property{{Name: "Status", Value: edm.NewString(fmt.Sprint(i % 100))}}}
			if err := tx.InsertEntity(tb, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := odata.ParseFilter("Status eq 'x'")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < autoIndexScans; i++ {
		err := s.View(ctx, func(tx *Tx) error {
			_, err := tx.QueryEntities(tb, EntityQuery{Filter: f, Top: 1000})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := `indexed property "Status" of table devstoreaccount1/Orders: repeated filters on it now read only matching entities` + "\n"
	deadline := time.Now().Add(20 * time.Second)
	for out.String() == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := out.String(); got != want {
		t.Fatalf("logged %q, want %q", got, want)
	}
}
