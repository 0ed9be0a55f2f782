package conformance

import (
	"errors"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// TestCosmosBatchGoSDK: the Go SDK, in its Cosmos mode (startCosmos), reads a $batch answer of tableemu
// --profile cosmos — Cosmos DB for Table's part headers and error parts
// (emulator/batchcosmos.go, docs/cosmos.md) — as it reads Table storage's:
// a change set of every action succeeds; a failed one is a ResponseError
// naming Cosmos DB's code, the failed part carrying its index, none for a
// missing table.
func TestCosmosBatchGoSDK(t *testing.T) {
	tg, stop, err := startCosmos(emulator.Config{InMemory: true, Silent: true})
	must(t, err)
	defer stop()
	c := tg.newTable(t)
	for _, rk := range []string{"merge", "replace", "delete", "existing"} {
		_, err := c.AddEntity(ctx(), entityJSON(t, "p", rk, "Old", "o"), nil)
		must(t, err)
	}
	_, err = c.SubmitTransaction(ctx(), []aztables.TransactionAction{
		action(t, aztables.TransactionTypeAdd, "p", "add", "New", "n"),
		action(t, aztables.TransactionTypeUpdateMerge, "p", "merge", "New", "n"),
		action(t, aztables.TransactionTypeUpdateReplace, "p", "replace", "New", "n"),
		action(t, aztables.TransactionTypeInsertMerge, "p", "upmerge", "New", "n"),
		action(t, aztables.TransactionTypeInsertReplace, "p", "upreplace", "New", "n"),
		action(t, aztables.TransactionTypeDelete, "p", "delete"),
	}, nil)
	must(t, err)
	for rk, want := range map[string]bool{"add": true, "merge": true, "replace": true, "upmerge": true, "upreplace": true, "delete": false} {
		if got := entityExists(t, c, "p", rk); got != want {
			t.Errorf("%s exists: %v, want %v", rk, got, want)
		}
	}

	_, err = c.SubmitTransaction(ctx(), []aztables.TransactionAction{
		action(t, aztables.TransactionTypeAdd, "p", "a1"),
		action(t, aztables.TransactionTypeAdd, "p", "existing"),
	}, nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.ErrorCode != "EntityAlreadyExists" {
		t.Fatalf("a conflict: %v", err)
	}
	wantFailure(t, err, 409, "EntityAlreadyExists", 1)
	if entityExists(t, c, "p", "a1") {
		t.Error("a failed change set wrote its first entity")
	}

	svc := tg.service(t)
	_, err = svc.NewClient("nosuchtable").SubmitTransaction(ctx(), []aztables.TransactionAction{action(t, aztables.TransactionTypeAdd, "p", "x")}, nil)
	if !errors.As(err, &re) || re.ErrorCode != "ResourceNotFound" {
		t.Fatalf("a missing table: %v", err)
	}
	wantFailure(t, err, 404, "ResourceNotFound", -1)
}
