package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// TestInsights: with --insights every query says its shape and how many
// entities it examined, and /_tableemu/insights sums up the table.
func TestInsights(t *testing.T) {
	needInProcess(t)
	tg, stop, err := startInProcess(onBackend(t, emulator.Config{InMemory: true, Silent: true, Insights: true}))
	must(t, err)
	defer stop()
	c, name := tg.newNamedTable(t)
	for i := 0; i < 30; i++ {
		_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": fmt.Sprintf("p%d", i%3), "RowKey": fmt.Sprintf("r%02d", i), "LastName": []string{"Jones", "Smith"}[i%2]}), nil)
		must(t, err)
	}
	big := map[string]any{"PartitionKey": "p0", "RowKey": "big"}
	for i := 0; i < 240; i++ { // 240 of 252 properties: near the limit
		big[fmt.Sprintf("P%03d", i)] = i
	}
	_, err = c.AddEntity(ctx(), marshal(t, big), nil)
	must(t, err)

	for _, tc := range []struct {
		filter   string
		shape    string
		scanned  string
		returned string
	}{
		{"PartitionKey eq 'p1' and RowKey eq 'r01'", "point-query", "1", "1"},
		{"PartitionKey eq 'p1' and RowKey ge 'r10' and RowKey lt 'r20'", "range-query", "4", "4"},
		{"PartitionKey eq 'p1' and LastName eq 'Smith'", "partition-scan", "10", "5"},
		{"PartitionKey eq 'p1' and (RowKey eq 'r01' or RowKey eq 'r04')", "partition-scan", "10", "2"},
		{"LastName eq 'Jones'", "table-scan", "31", "15"},
	} {
		r := tg.raw(t, "GET", "/"+name+"()?$filter="+urlQueryEscape(tc.filter), nil, nil)
		// No automatic index here (the table is small): tableemu read
		// what the service would scan.
		got := []string{r.Header.Get("x-tableemu-query-shape"), r.Header.Get("x-tableemu-entities-scanned"),
			r.Header.Get("x-tableemu-entities-returned"), r.Header.Get("x-tableemu-entities-read"), r.Header.Get("x-tableemu-index")}
		if want := []string{tc.shape, tc.scanned, tc.returned, tc.scanned, ""}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: shape, scanned, returned, read, index = %v, want %v", tc.filter, got, want)
		}
	}
	// A batch the service refuses because its keys span partitions.
	_, err = c.SubmitTransaction(ctx(), []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: marshal(t, map[string]any{"PartitionKey": "a", "RowKey": "1"})},
		{ActionType: aztables.TransactionTypeAdd, Entity: marshal(t, map[string]any{"PartitionKey": "b", "RowKey": "1"})},
	}, nil)
	if err == nil {
		t.Fatal("a cross-partition batch succeeded")
	}

	resp, err := http.Get(strings.TrimSuffix(tg.endpoint, "/"+tg.account) + "/_tableemu/insights")
	must(t, err)
	defer resp.Body.Close()
	var report struct {
		Tables []struct {
			Table       string `json:"table"`
			QueryShapes map[string]struct {
				Queries  int `json:"queries"`
				Scanned  int `json:"entitiesScanned"`
				Returned int `json:"entitiesReturned"`
			} `json:"queryShapes"`
			TableScans []struct {
				Filter string `json:"filter"`
			} `json:"tableScans"`
			HottestPartitions []struct {
				PartitionKey string `json:"partitionKey"`
				Writes       int    `json:"writes"`
				Ascending    int    `json:"rowKeysAscending"`
			} `json:"hottestPartitions"`
			NearLimits []struct {
				RowKey string `json:"rowKey"`
				Why    string `json:"why"`
			} `json:"nearLimits"`
			CrossPartitionBatches int `json:"crossPartitionBatches"`
		} `json:"tables"`
	}
	must(t, json.NewDecoder(resp.Body).Decode(&report))
	if len(report.Tables) != 1 || report.Tables[0].Table != name {
		t.Fatalf("insights %+v", report)
	}
	tb := report.Tables[0]
	if tb.QueryShapes["table-scan"].Queries != 1 || tb.QueryShapes["table-scan"].Scanned != 31 || tb.QueryShapes["partition-scan"].Queries != 2 {
		t.Errorf("query shapes %+v", tb.QueryShapes)
	}
	if len(tb.TableScans) != 1 || tb.TableScans[0].Filter != "LastName eq 'Jones'" {
		t.Errorf("table scans %+v", tb.TableScans)
	}
	if len(tb.HottestPartitions) == 0 || tb.HottestPartitions[0].PartitionKey != "p0" || tb.HottestPartitions[0].Writes != 11 {
		t.Errorf("hottest partitions %+v", tb.HottestPartitions)
	}
	if len(tb.NearLimits) != 1 || tb.NearLimits[0].RowKey != "big" || tb.NearLimits[0].Why != "property count" {
		t.Errorf("near limits %+v", tb.NearLimits)
	}
	if tb.CrossPartitionBatches != 1 {
		t.Errorf("cross-partition batches %d", tb.CrossPartitionBatches)
	}
}

// TestFaultsRecoveredByRetries: with every other request failing (500
// OperationTimedOut, 503 ServerBusy or a dropped connection), the aztables
// client's own retry policy completes every operation.
func TestFaultsRecoveredByRetries(t *testing.T) {
	needInProcess(t)
	tg, stop, err := startInProcess(onBackend(t, emulator.Config{InMemory: true, Silent: true, Faults: "every=2,kinds=timeout|busy|drop,ops=InsertEntity|GetEntity|UpdateEntity|QueryEntities"}))
	must(t, err)
	defer stop()
	c, _ := tg.newNamedTable(t)
	cred, err := aztables.NewSharedKeyCredential(tg.account, tg.key)
	must(t, err)
	opts := &aztables.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: 3, RetryDelay: 5 * time.Millisecond, MaxRetryDelay: 20 * time.Millisecond}}}
	name := tableNameOf(t, c)
	rc, err := aztables.NewClientWithSharedKey(tg.endpoint+"/"+name, cred, opts)
	must(t, err)
	for i := 0; i < 20; i++ {
		e := marshal(t, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprint(i), "V": i})
		_, err := rc.AddEntity(ctx(), e, nil)
		if err != nil {
			var re *azcore.ResponseError
			// A retried insert whose first attempt committed would be 409;
			// faults strike before the operation runs, so none does.
			t.Fatalf("insert %d through retries: %v (%v)", i, err, errorsAs(err, &re))
		}
		_, err = rc.GetEntity(ctx(), "p", fmt.Sprint(i), nil)
		must(t, err)
	}
	rows, _ := listAll(t, rc, nil)
	if len(rows) != 20 {
		t.Fatalf("%d entities", len(rows))
	}
	// Without retries the injected failures are visible, with their codes.
	noRetry, err := aztables.NewClientWithSharedKey(tg.endpoint+"/"+name, cred, clientOptions())
	must(t, err)
	failures := 0
	for i := 0; i < 6; i++ {
		_, err := noRetry.GetEntity(ctx(), "p", "1", nil)
		var re *azcore.ResponseError
		if errorsAs(err, &re) {
			if re.ErrorCode != "OperationTimedOut" && re.ErrorCode != "ServerBusy" {
				t.Fatalf("injected failure %d %s", re.StatusCode, re.ErrorCode)
			}
			failures++
		} else if err != nil {
			failures++ // a dropped connection
		}
	}
	if failures != 3 {
		t.Fatalf("%d of 6 requests failed, want 3 (every=2)", failures)
	}
}

// TestThrottle: with --throttle, writing faster than about 2,000 entities
// per second to one partition gets 503 ServerBusy, which the SDKs retry.
func TestThrottle(t *testing.T) {
	needInProcess(t)
	tg, stop, err := startInProcess(onBackend(t, emulator.Config{InMemory: true, Silent: true, Throttle: true}))
	must(t, err)
	defer stop()
	c := tg.newTable(t)
	busy := 0
	written := 0
	start := time.Now()
	for b := 0; b < 60 && busy == 0; b++ { // up to 6,000 entities at once
		var actions []aztables.TransactionAction
		for i := 0; i < 100; i++ {
			actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
				Entity: marshal(t, map[string]any{"PartitionKey": "hot", "RowKey": fmt.Sprintf("%02d-%02d", b, i)})})
		}
		_, err := c.SubmitTransaction(ctx(), actions, nil)
		var re *azcore.ResponseError
		switch {
		case err == nil:
			written += 100
		case errorsAs(err, &re) && re.StatusCode == 503 && re.ErrorCode == "ServerBusy":
			busy++
		default:
			t.Fatal(err)
		}
	}
	// The bucket holds 2,000 and refills at 2,000 a second while the
	// batches run: on a slow machine a few more batches get through, and
	// one that cannot write faster than the refill (the race detector on
	// a loaded machine) never reaches the limit. The rates themselves are
	// tested on a virtual clock (emulator TestThrottleRates).
	allowed := 2000 + int(2000*time.Since(start).Seconds()) + 100
	if busy == 0 && written < allowed {
		t.Skipf("wrote %d entities in %v: too slow to outrun the refill here", written, time.Since(start))
	}
	if busy == 0 || written < 2000 || written > allowed {
		t.Fatalf("wrote %d entities before ServerBusy (busy %d); want 2,000 to %d", written, busy, allowed)
	}
	// Another partition is not throttled.
	_, err = c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "cold", "RowKey": "1"}), nil)
	must(t, err)
}
