package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// Loading 100,000 entities of about 1 KiB into a fresh server on a data
// directory (issue 40's figures, docs/benchmarks.md "Data in and out"):
// through the Go SDK in transactions (entity group batches) of 100, as a
// program loading fixtures would, one after another; and by tableemu
// import of the same entities as one JSON Lines file, against the
// running server (import-online: the file is sent as one request) and on
// the data directory with no server (import-offline):
//
//	go test -run '^$' -bench 'Load' -benchtime 1x ./cmd/tableemu/
//
// The server runs in this process (emulator.Server on a loopback port, as
// the binary runs it) and so does the command (transferCmd, what
// `tableemu import` runs), so that the figures are of the work, not of
// starting processes. The entities are those of emulator/transfer's
// BenchmarkTransfer: ten properties of every common type, about 1,000
// bytes as a JSON line.

const loadEntities = 100_000

// loadEntity is entity i as JSON, with the annotations its types need.
func loadEntity(i int) []byte {
	when := time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.0000000Z")
	return fmt.Appendf(nil, `{"PartitionKey":"p%03d","RowKey":"%08d","Name":"customer %d","Email":"customer%d@example.com","Notes":%q,`+
		`"Count":%d,"Total@odata.type":"Edm.Int64","Total":"%d","Price":%s,"When@odata.type":"Edm.DateTime","When":"%s",`+
		`"ID@odata.type":"Edm.Guid","ID":"c9da6455-213d-42c9-9a79-%012x","Active":%t,"Tag":"tag-%d"}`,
		i%100, i, i, i, strings.Repeat("lorem ipsum dolor sit amet ", 26)[:700],
		i, int64(i)*1_000_003, strconv.FormatFloat(float64(i)/7, 'g', -1, 64), when, i, i%2 == 0, i%37)
}

// loadOrder is the entities in the order a batch loader sends them: by
// partition, since a batch holds one partition's entities.
func loadOrder() []int {
	out := make([]int, 0, loadEntities)
	for pk := range 100 {
		for i := pk; i < loadEntities; i += 100 {
			out = append(out, i)
		}
	}
	return out
}

// benchServer serves a fresh data directory on a loopback port until the
// benchmark ends.
func benchServer(b *testing.B) (dir, port, cs string) {
	b.Helper()
	dir = b.TempDir()
	srv, err := emulator.New(emulator.Config{Location: dir, Silent: true})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, 10*time.Second) }()
	b.Cleanup(func() { stop(); <-done; srv.Close() })
	port = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	a := emulator.DefaultAccounts()[0]
	return dir, port, emulator.ConnectionString(a, emulator.Endpoint("http", "127.0.0.1:"+port, a.Name))
}

func BenchmarkLoad(b *testing.B) {
	// The JSON Lines file, in the loader's order too, written once.
	file := filepath.Join(b.TempDir(), "Orders.jsonl")
	var buf bytes.Buffer
	for _, i := range loadOrder() {
		buf.Write(loadEntity(i))
		buf.WriteByte('\n')
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d entities, %.1f MiB as JSON Lines (%d bytes a line)", loadEntities, float64(buf.Len())/(1<<20), buf.Len()/loadEntities)

	b.Run("sdk-batch", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			_, _, cs := benchServer(b)
			svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.StartTimer()
			if _, err := svc.CreateTable(ctx, "Orders", nil); err != nil {
				b.Fatal(err)
			}
			c := svc.NewClient("Orders")
			sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
			sc.Buffer(nil, 1<<20)
			var batch []aztables.TransactionAction
			for sc.Scan() {
				batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: bytes.Clone(sc.Bytes())})
				if len(batch) == 100 {
					if _, err := c.SubmitTransaction(ctx, batch, nil); err != nil {
						b.Fatal(err)
					}
					batch = batch[:0]
				}
			}
			b.StopTimer()
		}
		b.ReportMetric(float64(loadEntities)*float64(b.N)/b.Elapsed().Seconds(), "entities/s")
	})
	for _, online := range []bool{true, false} {
		name := map[bool]string{true: "import-online", false: "import-offline"}[online]
		b.Run(name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				args := []string{"--location", b.TempDir(), file}
				if online {
					_, port, _ := benchServer(b)
					args = []string{"--tablePort", port, file}
				}
				var out, errs bytes.Buffer
				b.StartTimer()
				if code := transferCmd("import", args, &out, &errs, false); code != 0 {
					b.Fatalf("tableemu import %s: exit %d: %s", strings.Join(args, " "), code, errs.String())
				}
				b.StopTimer()
				if !strings.Contains(out.String(), "1 tables, 100000 entities imported") {
					b.Fatalf("tableemu import printed %q", out.String())
				}
			}
			b.ReportMetric(float64(loadEntities)*float64(b.N)/b.Elapsed().Seconds(), "entities/s")
		})
	}
}
