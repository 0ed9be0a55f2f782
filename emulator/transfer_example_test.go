package emulator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tableemu/tableemu/emulator"
	"github.com/tableemu/tableemu/emulator/transfer"
)

// ExampleServer_Import loads fixtures from a directory of JSON Lines files
// (docs/transfer.md) into a server a Go test embeds, before any client
// connects; `tableemu import DIR` does the same from the command line.
func ExampleServer_Import() {
	srv, err := emulator.New(emulator.Config{InMemory: true, Silent: true})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	dir, err := os.MkdirTemp("", "fixtures")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	fixture := `{"PartitionKey":"eu","RowKey":"0001","Name":"Zoë","Total@odata.type":"Edm.Int64","Total":"9007199254740993"}` + "\n" +
		`{"PartitionKey":"eu","RowKey":"0002","Name":"Ada"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "customers.jsonl"), []byte(fixture), 0o644); err != nil {
		panic(err)
	}

	src, err := transfer.OpenDir(dir) // every <table>.jsonl is a table
	if err != nil {
		panic(err)
	}
	defer src.Close()
	sum, err := srv.Import(context.Background(), src, transfer.Options{Account: emulator.DevAccount})
	if err != nil {
		panic(err) // a bad line is named: "customers.jsonl:2: …"
	}
	fmt.Printf("%d tables, %d entities\n", sum.Tables, sum.Entities)
	// Output: 1 tables, 2 entities
}
