package transfer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tableemu/tableemu/emulator/transfer/azuritetest"
)

// BenchmarkOpenAzurite reads a database a real Azurite wrote, holding
// 100,000 entities of about 1 KiB in one table (filled through the SDK in
// batches of 100 before the reads): OpenAzurite, then every entity
// decoded. It reports entities a second and the peak of the Go heap while
// reading, which stays far below the file's size because the file is
// streamed (azurite.go).
//
//	go test ./emulator/transfer -run '^$' -bench OpenAzurite -benchtime 3x
//
// 2026-11-29, 2 cores shared with four other builds (load 7 to 11), 24
// GiB: 2.2 s a read of the 139 MiB file (45,000 entities/s), the Go heap
// at most 5.6 MiB. Filling Azurite took about 2 minutes. With
// encoding/json's Decoder walking the documents instead of lokiScanner,
// 8.6 s (11,600 entities/s), on a machine as busy.
func BenchmarkOpenAzurite(b *testing.B) {
	const entities = 100_000
	// The database outlives the reads: b.Run's benchmark runs several
	// times, this function once.
	dir := benchAzuriteDir(b, entities)
	b.Run("read", func(b *testing.B) { benchRead(b, dir, entities) })
}

func benchRead(b *testing.B, dir string, entities int) {
	fi, err := os.Stat(filepath.Join(dir, AzuriteFile))
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // samples the heap while the benchmark reads
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak {
				peak = ms.HeapInuse
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src, err := OpenAzurite(dir)
		if err != nil {
			b.Fatal(err)
		}
		accounts, _ := src.Accounts()
		n := 0
		if err := accounts[0].Tables[0].Entities(func(Entity) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != entities {
			b.Fatalf("%d entities", n)
		}
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(entities*b.N)/b.Elapsed().Seconds(), "entities/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
}

// benchAzuriteDir fills an Azurite with n entities of about 1 KiB.
func benchAzuriteDir(b *testing.B, n int) string {
	dir := b.TempDir()
	a := azuritetest.Start(b, dir, nil)
	svc, err := aztables.NewServiceClientFromConnectionString(a.ConnectionString(), nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, "Bench", nil); err != nil {
		b.Fatal(err)
	}
	c := svc.NewClient("Bench")
	text := strings.Repeat("x", 900)
	for i := 0; i < n; i += 100 {
		var batch []aztables.TransactionAction
		for j := i; j < i+100 && j < n; j++ {
			body := fmt.Sprintf(`{"PartitionKey":"p%04d","RowKey":"r%07d","Text":%q,"Count":"%d","Count@odata.type":"Edm.Int64",`+
				`"Ratio":%d.5,"When":"2024-05-06T07:08:09.1234567Z","When@odata.type":"Edm.DateTime","On":true}`, i/100, j, text, j, j)
			batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: []byte(body)})
		}
		if _, err := c.SubmitTransaction(ctx, batch, nil); err != nil {
			b.Fatal(err)
		}
	}
	a.Stop(b)
	return dir
}
