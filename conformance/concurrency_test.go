package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// Optimistic concurrency under contention (docs/protocol.md 5): 16 clients
// increment one counter, each reading it with its ETag and writing it back
// with If-Match, retrying on 412. No update may be lost: the final value is
// the number of successful updates. The same through $batch, where each
// increment also inserts a log entity in the same changeset, so a batch
// refused for its stale ETag must leave no log entity behind either.

const counterClients = 16

// counterIncrements is the number of successful updates per client: 25,
// 10 under the race detector (16 clients still contend for every one; the
// full count took 155 s there of the race run), 5 with -short.
func counterIncrements() int {
	switch {
	case testing.Short():
		return 5
	case raceEnabled:
		return 10
	}
	return 25
}

func TestConcurrentCounter(t *testing.T) {
	targets := []struct {
		name string
		tg   *target
	}{{"shared", shared}}
	if !shared.external {
		// A file-backed store too: its reads use a separate connection
		// pool from its writer, unlike the in-memory one.
		tg, stop, err := startInProcess(emulator.Config{Location: t.TempDir(), Silent: true})
		must(t, err)
		t.Cleanup(stop)
		targets = append(targets, struct {
			name string
			tg   *target
		}{"file", tg})
	}
	for _, tc := range targets {
		for _, mode := range []string{"replace", "merge", "batch"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) { counterRace(t, tc.tg, mode) })
		}
	}
}

func counterRace(t *testing.T, tg *target, mode string) {
	c := tg.newTable(t)
	_, err := c.AddEntity(ctx(), entityJSON(t, "p", "counter", "Count", 0), nil)
	must(t, err)
	increments := counterIncrements()
	var successes, conflicts atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, counterClients)
	for id := 0; id < counterClients; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < increments; {
				resp, err := c.GetEntity(ctx(), "p", "counter", nil)
				if err != nil {
					errc <- fmt.Errorf("client %d: get: %v", id, err)
					return
				}
				var m struct{ Count int64 }
				if err := json.Unmarshal(resp.Value, &m); err != nil {
					errc <- err
					return
				}
				etag := resp.ETag
				next, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": "counter", "Count": m.Count + 1})
				switch mode {
				case "replace", "merge":
					um := aztables.UpdateModeReplace
					if mode == "merge" {
						um = aztables.UpdateModeMerge
					}
					_, err = c.UpdateEntity(ctx(), next, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: um})
				case "batch":
					log, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("log-%02d-%03d", id, n), "Count": m.Count + 1})
					_, err = c.SubmitTransaction(ctx(), []aztables.TransactionAction{
						{ActionType: aztables.TransactionTypeUpdateMerge, Entity: next, IfMatch: &etag},
						{ActionType: aztables.TransactionTypeAdd, Entity: log},
					}, nil)
				}
				if err == nil {
					successes.Add(1)
					n++
					continue
				}
				if isConflict(err) {
					conflicts.Add(1)
					continue
				}
				errc <- fmt.Errorf("client %d: %s with If-Match: %v", id, mode, err)
				return
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	m, _ := getProps(t, c, "p", "counter")
	want := int64(counterClients * increments)
	if got := int64(m["Count"].(float64)); got != successes.Load() || got != want {
		t.Fatalf("final Count %d, successful updates %d (want %d): an update was lost", got, successes.Load(), want)
	}
	if mode == "batch" {
		// Every committed batch left its log entity, every refused one
		// none, and the log records each value exactly once.
		logs := 0
		seen := map[int64]bool{}
		pager := c.NewListEntitiesPager(nil)
		for pager.More() {
			page, err := pager.NextPage(ctx())
			must(t, err)
			for _, e := range page.Entities {
				var le struct {
					RowKey string
					Count  int64
				}
				must(t, json.Unmarshal(e, &le))
				if !strings.HasPrefix(le.RowKey, "log-") {
					continue
				}
				logs++
				if seen[le.Count] {
					t.Fatalf("two committed batches wrote Count %d", le.Count)
				}
				seen[le.Count] = true
			}
		}
		if int64(logs) != want {
			t.Fatalf("%d log entities for %d committed batches", logs, want)
		}
	}
	t.Logf("%s: %d clients, %d successful updates, %d refused with 412 and retried", mode, counterClients, successes.Load(), conflicts.Load())
}

// isConflict reports a 412 UpdateConditionNotSatisfied, from a single
// request or from inside a failed batch (outer 202, docs/protocol.md 7.4).
func isConflict(err error) bool {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return false
	}
	if re.StatusCode == http.StatusPreconditionFailed {
		return re.ErrorCode == "UpdateConditionNotSatisfied"
	}
	if re.StatusCode != http.StatusAccepted {
		return false
	}
	body, perr := runtime.Payload(re.RawResponse)
	return perr == nil && strings.Contains(string(body), `"code":"UpdateConditionNotSatisfied"`) &&
		strings.Contains(string(body), "412 Precondition Failed")
}
