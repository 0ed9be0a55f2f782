package faults

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time { return f.t }

func isBusy(err error) bool {
	var e *tableemu.Error
	return errors.As(err, &e) && e.Code == tableemu.ServerBusy
}

// TestThrottleRates offers each bucket one and a half times its target
// for ten (virtual) seconds: what it admits per second, once the initial
// burst is spent (two seconds), is the target within 2%.
func TestThrottleRates(t *testing.T) {
	for _, tc := range []struct {
		name       string
		target     int
		partitions int
	}{
		{"partition", PartitionTarget, 1},
		{"account", AccountTarget, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
			th := NewThrottle(clk.now, nil)
			offered := tc.target * 3 / 2
			step := time.Second / time.Duration(offered)
			admitted := 0
			for i := 0; i < offered*10; i++ {
				clk.t = clk.t.Add(step)
				err := th.Admit("acct", "t", fmt.Sprint(i%tc.partitions), true, 1)
				switch {
				case err == nil:
					if i >= 2*offered { // once the first seconds have drained the burst
						admitted++
					}
				case !isBusy(err):
					t.Fatal(err)
				}
			}
			rate := float64(admitted) / 8
			if rate < float64(tc.target)*0.98 || rate > float64(tc.target)*1.02 {
				t.Fatalf("admitted %.0f/s, want about %d/s", rate, tc.target)
			}
		})
	}
}

// TestThrottleChargesScans: a query is admitted with its bucket out of
// debt and billed for what it examined; the debt refuses what follows
// until the bucket refills.
func TestThrottleChargesScans(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	th := NewThrottle(clk.now, nil)
	if err := th.Admit("acct", "t", "", false, 0); err != nil {
		t.Fatal(err)
	}
	th.Charge("acct", "t", "", false, 50_000) // a 50,000-entity table scan
	if err := th.Admit("acct", "t", "p", true, 1); !isBusy(err) {
		t.Fatalf("after a large scan: %v, want ServerBusy", err)
	}
	clk.t = clk.t.Add(2 * time.Second) // 20,000 + 40,000 > 50,000
	if err := th.Admit("acct", "t", "p", true, 1); err != nil {
		t.Fatalf("after the debt is paid: %v", err)
	}
}

func TestParseFaults(t *testing.T) {
	for _, ok := range []string{"rate=0.5", "every=3,kinds=drop", "rate=1,ops=InsertEntity|GetEntity,kinds=timeout|busy,seed=7"} {
		if _, err := Parse(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "rate=0", "rate=2", "every=0", "rate=0.1,every=2", "ops=Nope,rate=1", "kinds=boom,rate=1", "rate", "color=red"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	f, _ := Parse("every=3,kinds=busy")
	var hits []int
	for i := 1; i <= 9; i++ {
		if f.pick(1) != "" {
			hits = append(hits, i)
		}
	}
	if fmt.Sprint(hits) != "[3 6 9]" {
		t.Fatalf("every=3 hit %v", hits)
	}
}

// TestInjectAnswers: each kind is the service's error code, or the
// server's signal to close the connection; Preflight never fails, and ops=
// limits the operations that do.
func TestInjectAnswers(t *testing.T) {
	for kind, want := range map[string]tableemu.Code{"timeout": tableemu.OperationTimedOut, "busy": tableemu.ServerBusy} {
		f, err := Parse("rate=1,kinds=" + kind)
		if err != nil {
			t.Fatal(err)
		}
		var e *tableemu.Error
		if err := f.Inject(auth.GetEntity); !errors.As(err, &e) || e.Code != want {
			t.Errorf("kinds=%s: %v, want %s", kind, err, want)
		}
		if err := f.Inject(auth.Preflight); err != nil {
			t.Errorf("kinds=%s: Preflight failed: %v", kind, err)
		}
	}
	f, _ := Parse("rate=1,kinds=drop,ops=InsertEntity")
	if err := f.Inject(auth.InsertEntity); err != http.ErrAbortHandler {
		t.Errorf("kinds=drop: %v, want http.ErrAbortHandler", err)
	}
	if err := f.Inject(auth.GetEntity); err != nil {
		t.Errorf("ops=InsertEntity: GetEntity failed: %v", err)
	}
}

// TestThrottleCosmos: under the cosmos profile a refusal is Cosmos DB's
// 429 TooManyRequests, a *Refusal whose wait is the time until the bucket
// could pay: a partition bucket 500 entities short refills at 2,000 a
// second, so 250 ms (docs/cosmos.md).
func TestThrottleCosmos(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	th := NewThrottle(clk.now, nil)
	th.Cosmos = true
	if err := th.Admit("acct", "t", "hot", true, PartitionTarget); err != nil {
		t.Fatal(err)
	}
	th.Charge("acct", "t", "hot", true, 499) // 499 in debt: a write of 1 is 500 short
	err := th.Admit("acct", "t", "hot", true, 1)
	var r *Refusal
	var e *tableemu.Error
	if !errors.As(err, &r) || !errors.As(err, &e) || e.Code != tableemu.TooManyRequests || e.Status != 429 {
		t.Fatalf("Admit: %v, want a *Refusal with 429 TooManyRequests", err)
	}
	if r.RetryAfter != 250*time.Millisecond || r.RetryAfterMS() != 250 {
		t.Fatalf("RetryAfter %v (%d ms), want 250ms", r.RetryAfter, r.RetryAfterMS())
	}
	th.Cosmos = false
	if err := th.Admit("acct", "t", "hot", true, 1); !isBusy(err) || errors.As(err, &r) {
		t.Fatalf("storage: %v, want 503 ServerBusy", err)
	}
}

// TestThrottleTableNameCase: a partition's bucket is its table's in any
// case under storage, where the names are one table, and its exact
// name's under the cosmos profile, where they are two (docs/cosmos.md,
// "table names").
func TestThrottleTableNameCase(t *testing.T) {
	for _, cosmos := range []bool{false, true} {
		clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
		th := NewThrottle(clk.now, nil)
		th.Cosmos = cosmos
		th.Charge("acct", "Orders", "hot", true, 10_000) // deep in debt
		err := th.Admit("acct", "orders", "hot", true, 1)
		if cosmos && err != nil {
			t.Errorf("cosmos: orders refused for Orders' debt: %v", err)
		}
		if !cosmos && !isBusy(err) {
			t.Errorf("storage: orders admitted past Orders' debt: %v", err)
		}
	}
}
