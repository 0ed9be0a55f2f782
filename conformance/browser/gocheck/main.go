// Command gocheck is the browser tests' second client: it reads and writes
// through the official Go SDK (aztables), so what the explorer wrote is
// checked by an SDK that did not write it, and traffic the Insights view
// draws is real SDK traffic. The connection string is $TABLEEMU_CS.
//
//	gocheck get TABLE PK RK        print the entity's properties with the Go types the SDK decoded
//	gocheck dump TABLE             print every entity's JSON without Timestamp and ETag, sorted
//	gocheck seed TABLE N PARTS     insert N entities over PARTS partitions, in batches
//	gocheck touch TABLE PK RK      merge a property, so that ETags held elsewhere go stale
//	gocheck load TABLE PK N W      write N entities to one partition from W workers (batches of 100)
//	gocheck sas TABLE              print a read-only service SAS URL for the table (http allowed)
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func main() {
	if len(os.Args) < 3 {
		fail(errors.New("usage: gocheck get|dump|seed|touch|load TABLE ..."))
	}
	cs := os.Getenv("TABLEEMU_CS")
	if cs == "" {
		fail(errors.New("TABLEEMU_CS is not set"))
	}
	opts := &aztables.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: 2, RetryDelay: 50 * time.Millisecond}}}
	svc, err := aztables.NewServiceClientFromConnectionString(cs, opts)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	cmd, table, args := os.Args[1], os.Args[2], os.Args[3:]
	c := svc.NewClient(table)
	switch cmd {
	case "get":
		need(args, 2)
		r, err := c.GetEntity(ctx, args[0], args[1], nil)
		if err != nil {
			fail(err)
		}
		var e aztables.EDMEntity
		if err := json.Unmarshal(r.Value, &e); err != nil {
			fail(err)
		}
		out := map[string]any{}
		for name, v := range e.Properties {
			out[name] = map[string]any{"type": fmt.Sprintf("%T", v), "value": show(v)}
		}
		print(out)
	case "dump":
		lines := []string{}
		pager := c.NewListEntitiesPager(nil)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				fail(err)
			}
			for _, raw := range page.Entities {
				var m map[string]json.RawMessage
				if err := json.Unmarshal(raw, &m); err != nil {
					fail(err)
				}
				delete(m, "Timestamp")
				delete(m, "Timestamp@odata.type")
				delete(m, "odata.etag")
				b, _ := json.Marshal(m) // keys sorted; raw values verbatim
				lines = append(lines, string(b))
			}
		}
		sort.Strings(lines)
		print(lines)
	case "seed":
		need(args, 2)
		n, parts := atoi(args[0]), atoi(args[1])
		if _, err := c.CreateTable(ctx, nil); err != nil && !isCode(err, aztables.TableAlreadyExists) {
			fail(err)
		}
		byPK := map[string][]aztables.TransactionAction{}
		for i := 0; i < n; i++ {
			pk := fmt.Sprintf("p%02d", i%parts)
			e := aztables.EDMEntity{
				Entity: aztables.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("r%05d", i)},
				Properties: map[string]any{
					"Name":  fmt.Sprintf("item %d", i),
					"Count": int32(i),
					"Price": float64(i) + 0.5,
					"Big":   aztables.EDMInt64(int64(i) * 1_000_000_007),
					"When":  aztables.EDMDateTime(time.Date(2024, 1, 1, 0, 0, i%60, 0, time.UTC)),
					"Flag":  i%2 == 0,
				},
			}
			if i%7 == 0 {
				e.Properties["Note"] = "every seventh"
			}
			b, _ := json.Marshal(e)
			byPK[pk] = append(byPK[pk], aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: b})
		}
		for _, acts := range byPK {
			for i := 0; i < len(acts); i += 100 {
				if _, err := c.SubmitTransaction(ctx, acts[i:min(i+100, len(acts))], nil); err != nil {
					fail(err)
				}
			}
		}
		print(map[string]int{"inserted": n})
	case "touch":
		need(args, 2)
		e := map[string]any{"PartitionKey": args[0], "RowKey": args[1], "TouchedBy": "gocheck"}
		b, _ := json.Marshal(e)
		if _, err := c.UpdateEntity(ctx, b, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
			fail(err)
		}
		print(map[string]bool{"touched": true})
	case "load":
		need(args, 3)
		pk, n, workers := args[0], atoi(args[1]), atoi(args[2])
		if _, err := c.CreateTable(ctx, nil); err != nil && !isCode(err, aztables.TableAlreadyExists) {
			fail(err)
		}
		var next, written, busy atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					from := next.Add(100) - 100
					if from >= int64(n) {
						return
					}
					var acts []aztables.TransactionAction
					for i := from; i < min(from+100, int64(n)); i++ {
						b, _ := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": fmt.Sprintf("%08d", i), "N": i})
						acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: b})
					}
					if _, err := c.SubmitTransaction(ctx, acts, nil); err != nil {
						busy.Add(1) // ServerBusy after the SDK's retries, under --throttle
						continue
					}
					written.Add(int64(len(acts)))
				}
			}()
		}
		wg.Wait()
		print(map[string]any{"written": written.Load(), "failedBatches": busy.Load(), "seconds": time.Since(start).Seconds()})
	case "sas":
		kv := map[string]string{}
		for _, part := range strings.Split(cs, ";") {
			if k, v, ok := strings.Cut(part, "="); ok {
				kv[k] = v
			}
		}
		cred, err := aztables.NewSharedKeyCredential(kv["AccountName"], kv["AccountKey"])
		if err != nil {
			fail(err)
		}
		q, err := aztables.SASSignatureValues{
			Protocol:    aztables.SASProtocolHTTPSandHTTP,
			ExpiryTime:  time.Now().UTC().Add(time.Hour),
			Permissions: aztables.SASPermissions{Read: true}.String(),
			TableName:   table,
		}.Sign(cred)
		if err != nil {
			fail(err)
		}
		print(map[string]string{"url": strings.TrimSuffix(kv["TableEndpoint"], "/") + "/" + table + "?" + q})
	default:
		fail(fmt.Errorf("unknown command %q", cmd))
	}
}

// show renders a decoded value so that JSON keeps it exact.
func show(v any) any {
	switch x := v.(type) {
	case aztables.EDMInt64:
		return strconv.FormatInt(int64(x), 10)
	case aztables.EDMBinary:
		return base64.StdEncoding.EncodeToString(x)
	case aztables.EDMDateTime:
		return time.Time(x).UTC().Format(time.RFC3339Nano)
	case aztables.EDMGUID:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return v
}

func isCode(err error, code aztables.TableErrorCode) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.ErrorCode == string(code)
}

func need(args []string, n int) {
	if len(args) < n {
		fail(fmt.Errorf("want %d arguments after the table", n))
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fail(err)
	}
	return n
}

func print(v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Println(string(b))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gocheck:", err)
	os.Exit(1)
}
