package faults

import (
	"strings"
	"sync"
	"time"

	"github.com/tableemu/tableemu"
)

// Throttling simulation (--throttle). The service's scalability targets
// are about 2,000 entities per second for one partition and 20,000 for an
// account, and it answers beyond them with 503 ServerBusy, which the SDKs
// retry with back-off. tableemu counts as the service does — every entity
// a request touches: each one written (a batch counts its operations),
// each one read, and for a query every entity it examined, not only those
// returned — in token buckets that refill at those rates and hold at most
// one second's worth. A request is refused while its partition's or its
// account's bucket cannot pay for it; a query, whose cost is known only
// afterwards, is admitted while its buckets are not in debt and then
// charged for what it examined, so a large scan throttles the requests
// that follow it. Queries that do not fix one PartitionKey count against
// the account only.

// The scalability targets, in entities per second. The insights timeline
// draws partitions against PartitionTarget.
const (
	PartitionTarget = 2000
	AccountTarget   = 20000
)

// Throttle is the simulation's buckets; NewThrottle makes one.
type Throttle struct {
	mu         sync.Mutex
	now        func() time.Time
	partitions map[string]*bucket
	accounts   map[string]*bucket
	// refused, when set (--insights too), hears of every request refused.
	refused func(account, table, pk string, hasPK bool)
}

type bucket struct {
	tokens float64
	last   time.Time
}

// NewThrottle makes the buckets, full, on the clock now. refused, if not
// nil, hears of every request refused (the insights timeline).
func NewThrottle(now func() time.Time, refused func(account, table, pk string, hasPK bool)) *Throttle {
	return &Throttle{now: now, refused: refused, partitions: map[string]*bucket{}, accounts: map[string]*bucket{}}
}

func (th *Throttle) get(m map[string]*bucket, k string, rate float64, now time.Time) *bucket {
	b := m[k]
	if b == nil {
		b = &bucket{tokens: rate, last: now}
		m[k] = b
	}
	b.tokens = min(rate, b.tokens+rate*now.Sub(b.last).Seconds())
	b.last = now
	return b
}

// Admit pays cost entities from the partition's (if pk is set) and the
// account's buckets, or refuses with 503 ServerBusy. cost 0 (a query)
// is admitted unless a bucket is in debt; Charge then bills it.
func (th *Throttle) Admit(account, table, pk string, hasPK bool, cost int) (err error) {
	th.mu.Lock()
	defer th.mu.Unlock()
	defer func() {
		if err != nil && th.refused != nil {
			th.refused(account, table, pk, hasPK)
		}
	}()
	now := th.now()
	need := max(float64(cost), 0.5) // a query needs its bucket out of debt
	ab := th.get(th.accounts, account, AccountTarget, now)
	var pb *bucket
	if hasPK {
		pb = th.get(th.partitions, partitionKey(account, table, pk), PartitionTarget, now)
		if pb.tokens < need {
			return tableemu.New(tableemu.ServerBusy).WithDetail("partition %q of %s is over about %d entities per second (--throttle)", pk, table, PartitionTarget)
		}
	}
	if ab.tokens < need {
		return tableemu.Newf(tableemu.ServerBusy, "Operations per second is over the account limit.").WithDetail("account %s is over about %d entities per second (--throttle)", account, AccountTarget)
	}
	ab.tokens -= float64(cost)
	if pb != nil {
		pb.tokens -= float64(cost)
	}
	return nil
}

// Charge bills n entities after the fact (a query's examined entities);
// the buckets may go into debt.
func (th *Throttle) Charge(account, table, pk string, hasPK bool, n int) {
	if n <= 0 {
		return
	}
	th.mu.Lock()
	defer th.mu.Unlock()
	now := th.now()
	th.get(th.accounts, account, AccountTarget, now).tokens -= float64(n)
	if hasPK {
		th.get(th.partitions, partitionKey(account, table, pk), PartitionTarget, now).tokens -= float64(n)
	}
}

func partitionKey(account, table, pk string) string {
	return account + "/" + strings.ToLower(table) + "/" + pk
}
