package emulator_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// Example starts tableemu inside a Go test: an in-memory server on a
// loopback port, and an aztables client connected to it through the
// connection string the SDKs understand.
func Example() {
	srv, err := emulator.New(emulator.Config{InMemory: true, Silent: true})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv) // listens on 127.0.0.1
	defer hs.Close()

	account := emulator.DefaultAccounts()[0]
	cs := emulator.ConnectionString(account, hs.URL+"/"+account.Name)
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
