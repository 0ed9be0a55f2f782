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
	// Cosmos: refuse as Azure Cosmos DB does a request beyond its
	// provisioned throughput (--profile cosmos): 429 TooManyRequests
	// with x-ms-retry-after-ms, the time until the bucket could pay
	// (Refusal), where Table storage answers 503 ServerBusy. Microsoft
	// documents the 429 and the header
	// (learn.microsoft.com/azure/cosmos-db/nosql/troubleshoot-request-rate-too-large,
	// and the Cosmos DB training module "Review rate-limiting errors":
	// "inspecting the x-ms-retry-after-ms header in the response can be
	// used as a hint to decide how long to wait"); the SDKs' retry
	// policies read it. The rates stay storage's: the buckets count
	// entities, not request units, so the profile offers the answer's
	// form, not Cosmos DB's budget.
	Cosmos bool
}

// Refusal is a request Throttle refused under Cosmos: the error, and how
// long the client should wait, for x-ms-retry-after-ms.
type Refusal struct {
	Err        *tableemu.Error
	RetryAfter time.Duration
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// RetryAfterMS is the wait in whole milliseconds, at least 1.
func (r *Refusal) RetryAfterMS() int64 {
	return max(1, (r.RetryAfter + time.Millisecond - 1).Milliseconds())
}

// refuse is the answer to a request whose bucket holds tokens of the
// need entities it must pay at rate per second: storage's err, or under
// Cosmos DB's 429 with the wait.
func (th *Throttle) refuse(err *tableemu.Error, need, tokens, rate float64) error {
	if !th.Cosmos {
		return err
	}
	wait := time.Duration((need - tokens) / rate * float64(time.Second))
	return &Refusal{Err: tableemu.New(tableemu.TooManyRequests).WithDetail("%s", err.Detail), RetryAfter: wait}
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
// account's buckets, or refuses with 503 ServerBusy (under Cosmos, 429
// TooManyRequests: a *Refusal). cost 0 (a query)
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
		pb = th.get(th.partitions, th.partitionKey(account, table, pk), PartitionTarget, now)
		if pb.tokens < need {
			return th.refuse(tableemu.New(tableemu.ServerBusy).WithDetail("partition %q of %s is over about %d entities per second (--throttle)", pk, table, PartitionTarget),
				need, pb.tokens, PartitionTarget)
		}
	}
	if ab.tokens < need {
		return th.refuse(tableemu.Newf(tableemu.ServerBusy, "Operations per second is over the account limit.").WithDetail("account %s is over about %d entities per second (--throttle)", account, AccountTarget),
			need, ab.tokens, AccountTarget)
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
		th.get(th.partitions, th.partitionKey(account, table, pk), PartitionTarget, now).tokens -= float64(n)
	}
}

// partitionKey names a partition's bucket: its table's name in any case,
// or under Cosmos exactly, since Cosmos DB's names differing in case are
// tables of their own (docs/cosmos.md, "table names").
func (th *Throttle) partitionKey(account, table, pk string) string {
	if !th.Cosmos {
		table = strings.ToLower(table)
	}
	return account + "/" + table + "/" + pk
}
