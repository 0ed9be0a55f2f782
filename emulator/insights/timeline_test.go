package insights

import (
	"fmt"
	"testing"
	"time"

	"github.com/tableemu/tableemu/odata/edm"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time { return f.t }

// TestTimeline: writes land in their partition's second, partitions past
// the per-second bound are summed as others, refusals of --throttle are
// counted, and seconds older than the window drop out. (That the server
// hands --throttle's refusals to Throttled is TestThrottledOnTimeline in
// package emulator.)
func TestTimeline(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	in := New(Config{Now: clk.now, PartitionTarget: 2000})
	write := func(pk string, n int) {
		es := make([]*edm.Entity, n)
		for i := range es {
			es[i] = &edm.Entity{PartitionKey: pk, RowKey: fmt.Sprint(i)}
		}
		in.Writes("acct", "Orders", es)
	}
	write("hot", 3)
	clk.t = clk.t.Add(time.Second)
	write("hot", 5)
	write("cold", 1)
	for i := 0; i < timelinePartitions+4; i++ {
		write(fmt.Sprintf("spread%03d", i), 1)
	}
	in.Throttled("acct", "orders", "hot", true) // a request refused

	r := in.timeline.report(clk.now().Unix(), "acct", 2000)
	if len(r.Tables) != 1 || r.Tables[0].Table != "Orders" || r.PartitionTarget != 2000 {
		t.Fatalf("report %+v", r)
	}
	tt := r.Tables[0]
	hot := tt.Partitions[0]
	last := timelineSeconds - 1
	if hot.PartitionKey != "hot" || hot.PerSecond[last-1] != 3 || hot.PerSecond[last] != 5 || hot.Peak != 5 {
		t.Errorf("hot: %s %v … peak %d, want 3 then 5", hot.PartitionKey, hot.PerSecond[last-1:], hot.Peak)
	}
	if len(tt.Partitions) != timelineShown {
		t.Errorf("%d partitions reported, want the %d hottest", len(tt.Partitions), timelineShown)
	}
	// hot, cold and 254 spread partitions fit in the second; 6 do not.
	if tt.Other == nil || tt.Other[last] != 6 {
		t.Errorf("other partitions: %v, want 6 in the last second", tt.Other[last-1:])
	}
	if tt.Total != 1 || tt.Throttled[last] != 1 || len(tt.Recent) != 1 || tt.Recent[0].PartitionKey != "hot" {
		t.Errorf("throttled: total %d, last second %d, recent %+v; want one refusal of hot", tt.Total, tt.Throttled[last], tt.Recent)
	}

	if r := in.timeline.report(clk.now().Unix(), "other", 2000); len(r.Tables) != 0 {
		t.Errorf("another account's report: %+v, want no tables", r.Tables)
	}

	clk.t = clk.t.Add(timelineSeconds * time.Second)
	r = in.timeline.report(clk.now().Unix(), "acct", 2000)
	if len(r.Tables[0].Partitions) != 0 || r.Tables[0].Throttled[last] != 0 {
		t.Errorf("after the window: %+v, want no series", r.Tables[0].Partitions)
	}
}

// TestTimelineTableNameCase: under storage "Orders" and "orders" are one
// table on the timeline; with ExactTableNames (the cosmos profile,
// docs/cosmos.md, "table names") two.
func TestTimelineTableNameCase(t *testing.T) {
	for _, exact := range []bool{false, true} {
		clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
		in := New(Config{Now: clk.now, PartitionTarget: 2000, ExactTableNames: exact})
		for _, tbl := range []string{"Orders", "orders"} {
			in.Writes("acct", tbl, []*edm.Entity{{PartitionKey: "p", RowKey: "r"}})
		}
		r := in.timeline.report(clk.now().Unix(), "acct", 2000)
		if want := map[bool]int{false: 1, true: 2}[exact]; len(r.Tables) != want {
			t.Errorf("ExactTableNames %v: %d tables on the timeline, want %d", exact, len(r.Tables), want)
		}
	}
}
