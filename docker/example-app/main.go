// Command example-app is the application container of docker/compose.yaml:
// it connects to tableemu with the connection string in
// AZURE_TABLES_CONNECTION_STRING, writes an entity and reads it back, as an
// application would against Azure or Azurite. docker/test-image.sh runs it
// with the connection string compose.yaml gives it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "example-app:", err)
		os.Exit(1)
	}
}

func run() error {
	cs := os.Getenv("AZURE_TABLES_CONNECTION_STRING")
	if cs == "" {
		return errors.New("set AZURE_TABLES_CONNECTION_STRING")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		return err
	}
	const table = "exampleapp"
	if _, err := svc.CreateTable(ctx, table, nil); err != nil && !isCode(err, "TableAlreadyExists") {
		return fmt.Errorf("create table: %w", err)
	}
	orders := svc.NewClient(table)
	rk := time.Now().UTC().Format("20060102T150405.000000000")
	entity, err := json.Marshal(aztables.EDMEntity{
		Entity:     aztables.Entity{PartitionKey: "customer42", RowKey: rk},
		Properties: map[string]any{"Item": "coffee", "Total": 12.5},
	})
	if err != nil {
		return err
	}
	if _, err := orders.AddEntity(ctx, entity, nil); err != nil {
		return fmt.Errorf("add entity: %w", err)
	}
	got, err := orders.GetEntity(ctx, "customer42", rk, nil)
	if err != nil {
		return fmt.Errorf("get entity: %w", err)
	}
	var e aztables.EDMEntity
	if err := json.Unmarshal(got.Value, &e); err != nil {
		return err
	}
	if e.Properties["Item"] != "coffee" {
		return fmt.Errorf("read back %v", e.Properties)
	}
	fmt.Printf("example-app: wrote and read back %s/%s/%s\n", table, e.PartitionKey, e.RowKey)
	return nil
}

func isCode(err error, code string) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.ErrorCode == code
}
