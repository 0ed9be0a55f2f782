package emulator_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// Example starts tableemu inside a Go program or test, as docs/go.md's
// "Embed it in Go tests" does: an in-memory server on a loopback port, and
// an aztables client connected to it through the connection string the
// SDKs understand. (conformance/godocs/embedding_test.go checks that the
// doc's emulator calls are the ones made here.)
func Example() {
	// InMemory: nothing touches the disk. Silent: no access log on stdout.
	srv, err := emulator.New(emulator.Config{InMemory: true, Silent: true})
	if err != nil {
		panic(err)
	}
	defer srv.Close()             // runs last: close the database after the server stops
	hs := httptest.NewServer(srv) // listens on a free port of 127.0.0.1
	defer hs.Close()

	account := emulator.DefaultAccounts()[0] // devstoreaccount1 and its well-known key
	cs := emulator.ConnectionString(account, emulator.Endpoint("http", hs.Listener.Addr().String(), account.Name))
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, "orders", nil); err != nil {
		panic(err)
	}
	orders := svc.NewClient("orders")
	entity := []byte(`{"PartitionKey":"customer42","RowKey":"order-0001","Total":12.5}`)
	if _, err := orders.AddEntity(ctx, entity, nil); err != nil {
		panic(err)
	}
	got, err := orders.GetEntity(ctx, "customer42", "order-0001", nil)
	if err != nil {
		panic(err)
	}
	var e aztables.EDMEntity
	if err := e.UnmarshalJSON(got.Value); err != nil {
		panic(err)
	}
	fmt.Println(e.RowKey, e.Properties["Total"])
	// Output: order-0001 12.5
}
