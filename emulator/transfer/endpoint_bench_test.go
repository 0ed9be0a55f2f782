package transfer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store/sqlite"
	"github.com/tableemu/tableemu/emulator/transfer"
	"github.com/tableemu/tableemu/odata/edm"
)

// BenchmarkEndpointRead reads a table of 20,000 entities of about 1 KiB
// from a tableemu on loopback through OpenEndpoint: pages, spool and
// decoding, as an import reads them (the first read), and again from the
// spool (the re-read of a retried transaction), and the whole copy into
// a SQLite store.
//
//	go test ./emulator/transfer -run '^$' -bench BenchmarkEndpointRead -benchtime 3x -benchmem
func BenchmarkEndpointRead(b *testing.B) {
	const n = 20_000
	cs, _ := startTableemu(b, "")
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, "bench", nil); err != nil {
		b.Fatal(err)
	}
	c := svc.NewClient("bench")
	pad := strings.Repeat("x", 800)
	for i := 0; i < n; i += 100 {
		var actions []aztables.TransactionAction
		for j := i; j < i+100; j++ {
			e := &edm.Entity{PartitionKey: fmt.Sprintf("p%03d", j/100), RowKey: fmt.Sprintf("r%06d", j), Properties: []edm.Property{
				{Name: "Pad", Value: edm.NewString(pad)},
				{Name: "N", Value: edm.NewInt64(int64(j) << 33)},
				{Name: "D", Value: edm.NewDouble(float64(j))},
				{Name: "At", Value: edm.NewDateTime(edm.TicksFromTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) + int64(j)*10_000_001)},
				{Name: "Id", Value: mustGuid(fmt.Sprintf("%08x-0000-4000-8000-%012x", j, j))},
			}}
			actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: entityJSON(e)})
		}
		if _, err := c.SubmitTransaction(ctx, actions, nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, again := range []bool{false, true} {
		name := "first"
		if again {
			name = "spooled"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				src, err := transfer.OpenEndpoint(ctx, cs, transfer.EndpointOptions{TempDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				accounts, err := src.Accounts()
				if err != nil {
					b.Fatal(err)
				}
				tab := accounts[0].Tables[0]
				read := func() {
					got := 0
					if err := tab.Entities(func(transfer.Entity) error { got++; return nil }); err != nil {
						b.Fatal(err)
					}
					if got != n {
						b.Fatalf("%d entities, want %d", got, n)
					}
				}
				if again {
					read()
				}
				b.StartTimer()
				read()
				b.StopTimer()
				src.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entities/s")
		})
	}
	// The whole copy: read from the endpoint and imported into a new
	// SQLite store, as `tableemu import --from` does.
	b.Run("import", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			dir := b.TempDir()
			b.StartTimer()
			src, err := transfer.OpenEndpoint(ctx, cs, transfer.EndpointOptions{TempDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			st, err := sqlite.Open(ctx, sqlite.Options{Dir: dir})
			if err != nil {
				b.Fatal(err)
			}
			tr := transfer.New(transfer.Config{Store: st, Accounts: map[string]*auth.Account{devAccount: {Name: devAccount}}, DevAccount: devAccount})
			sum, err := tr.Import(ctx, src, transfer.Options{})
			if err != nil || sum.Entities != n {
				b.Fatalf("Import: %+v, %v", sum, err)
			}
			src.Close()
			st.Close()
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entities/s")
	})
}
