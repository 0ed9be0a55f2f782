// Package insights is tableemu's design insight (--insights): what the
// service would make of the application's table design. Every entity
// query is classified in the design guide's terms (store.Shape) with the
// entities the service would examine and those returned, sent back in
// x-tableemu-* response headers (and by the server in its access log);
// and GET /_tableemu/insights summarises,
// per table, the query shapes seen, the table scans and their filters, the
// partitions written hottest, entities near the size and property limits,
// and batches the service refuses because their keys span partitions.
//
// The figures are the service's, not tableemu's: once an automatic index
// (emulator/store/sqlite/autoindex.go) serves a filter, the shape and the
// entities scanned stay what a scan without it examines
// (emulator/store/sqlite/servicecount.go). What tableemu itself read is
// reported apart: x-tableemu-index names the index and
// x-tableemu-entities-read counts the entities read, and the totals carry
// entitiesRead and indexedQueries.
//
// Off by default: without --insights the server keeps no statistics and
// the request path pays one nil check. The server (package emulator)
// calls it through an interface of its own, with values only (the
// account, the table, a query's store.ScanResult, the entities written),
// and hands it GET /_tableemu/insights (access.go); it does not know the
// server.
package insights

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata/edm"
)

// Config is what the server hands the collector.
type Config struct {
	Now func() time.Time
	// PartitionTarget is the service's target for one partition, in
	// entities per second, which the timeline draws partitions against
	// (emulator/faults.PartitionTarget).
	PartitionTarget int
	// Accounts are the server's accounts by name, read only; DevAccount
	// the one a loopback client may read without credentials
	// (devstoreaccount1 with its public key), or "".
	Accounts   map[string]*auth.Account
	DevAccount string
	// VerifySharedKey checks that r is signed with account's key (Shared
	// Key over /<account><path as sent>, as a Table API request is).
	VerifySharedKey func(r *http.Request, account string) error
	// ExactTableNames counts tables whose names differ only in case
	// apart, as the store keeps them under the cosmos profile
	// (store.TableKey; docs/cosmos.md, "table names").
	ExactTableNames bool
}

// Insights is the collector; New makes one.
type Insights struct {
	cfg    Config
	mu     sync.Mutex
	now    func() time.Time
	tables map[string]*tableInsight // account + "/" + lower-case table
	// timeline keeps the recent seconds (timeline.go).
	timeline timeline
}

type tableInsight struct {
	Account    string                      `json:"account"`
	Table      string                      `json:"table"`
	Shapes     map[store.Shape]*queryStats `json:"queryShapes"`
	scans      map[string]*scanStats
	partitions map[string]*partitionStats
	NearLimits []limitNote `json:"nearLimits"`
	// CrossPartitionBatches counts batches refused because their keys
	// span partitions (CommandsInBatchActOnDifferentPartitions).
	CrossPartitionBatches int64    `json:"crossPartitionBatches"`
	CrossPartitionExample []string `json:"crossPartitionExample,omitempty"`
}

// queryStats sums pages of queries. Scanned is the service's count;
// Read and Indexed are tableemu's own work: the entities it read, and the
// pages an automatic index served.
type queryStats struct {
	Queries  int64 `json:"queries"`
	Scanned  int64 `json:"entitiesScanned"`
	Returned int64 `json:"entitiesReturned"`
	Read     int64 `json:"entitiesRead"`
	Indexed  int64 `json:"indexedQueries"`
}

type scanStats struct {
	Filter string      `json:"filter"`
	Shape  store.Shape `json:"shape"`
	// Index is the automatic index that last served the filter, if any.
	Index string `json:"index,omitempty"`
	queryStats
}

type partitionStats struct {
	PartitionKey string `json:"partitionKey"`
	Writes       int64  `json:"writes"`
	// PeakPerSecond is the most entities written in one second; the
	// service's target is about 2,000 per partition.
	PeakPerSecond int64 `json:"peakWritesPerSecond"`
	// Ascending and Descending count writes whose RowKey sorts after, or
	// before, the previous write's: a partition written mostly at one
	// end is the guide's append-only (or prepend) anti-pattern.
	Ascending  int64 `json:"rowKeysAscending"`
	Descending int64 `json:"rowKeysDescending"`
	second     int64
	inSecond   int64
	lastRK     string
}

type limitNote struct {
	PartitionKey string `json:"partitionKey"`
	RowKey       string `json:"rowKey"`
	Size         int    `json:"size"`
	Properties   int    `json:"properties"`
	Why          string `json:"why"`
}

const (
	maxScansKept   = 50 // distinct scan filters per table
	maxLimitNotes  = 20
	nearLimitShare = 0.9 // "close to a limit" is within 10% of it
)

// New returns an empty collector.
func New(cfg Config) *Insights {
	return &Insights{cfg: cfg, now: cfg.Now, tables: map[string]*tableInsight{}}
}

func (in *Insights) table(account, table string) *tableInsight {
	k := account + "/" + store.TableKey(table, in.cfg.ExactTableNames)
	t := in.tables[k]
	if t == nil {
		t = &tableInsight{Account: account, Table: table, Shapes: map[store.Shape]*queryStats{},
			scans: map[string]*scanStats{}, partitions: map[string]*partitionStats{}}
		in.tables[k] = t
	}
	return t
}

// Query records one page of a query of account's table, and reports it
// in the response's headers h.
func (in *Insights) Query(h http.Header, account, table, filter string, res store.ScanResult, returned int) {
	read := Read(res)
	// Canonical names straight in the map (see emulator.Server.ServeHTTP).
	h["X-Tableemu-Query-Shape"] = []string{string(res.Shape)}
	h["X-Tableemu-Entities-Scanned"] = []string{strconv.Itoa(res.Scanned)}
	h["X-Tableemu-Entities-Returned"] = []string{strconv.Itoa(returned)}
	h["X-Tableemu-Entities-Read"] = []string{strconv.Itoa(read)}
	if res.Index != "" {
		h["X-Tableemu-Index"] = []string{res.Index}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	t := in.table(account, table)
	qs := t.Shapes[res.Shape]
	if qs == nil {
		qs = &queryStats{}
		t.Shapes[res.Shape] = qs
	}
	qs.add(res.Scanned, returned, read, res.Index)
	if res.Shape == store.TableScan || res.Shape == store.PartitionRangeScan {
		ss := t.scans[filter]
		if ss == nil {
			if len(t.scans) >= maxScansKept {
				return
			}
			ss = &scanStats{Filter: filter, Shape: res.Shape}
			t.scans[filter] = ss
		}
		ss.add(res.Scanned, returned, read, res.Index)
		if res.Index != "" {
			ss.Index = res.Index
		}
	}
}

// Read is the number of entities tableemu itself read for a page: what
// the service would examine, unless an automatic index served it.
func Read(res store.ScanResult) int {
	if res.Index != "" {
		return res.Read
	}
	return res.Scanned
}

func (q *queryStats) add(scanned, returned, read int, index string) {
	q.Queries++
	if scanned > 0 {
		q.Scanned += int64(scanned)
	}
	if read > 0 {
		q.Read += int64(read)
	}
	if index != "" {
		q.Indexed++
	}
	q.Returned += int64(returned)
}

// Writes records entities written to account's table; stubs stand for
// deleted entities (only their keys count).
func (in *Insights) Writes(account, table string, es []*edm.Entity) {
	now := in.now().Unix()
	in.mu.Lock()
	defer in.mu.Unlock()
	t := in.table(account, table)
	tl := in.timeline.table(account, table, in.cfg.ExactTableNames)
	for _, e := range es {
		if e == nil {
			continue
		}
		// Keys kept here are copies: an entity's strings may be its
		// request body's memory (emulator's decodeEntityBody), which they
		// would keep.
		tl.write(now, e.PartitionKey)
		p := t.partitions[e.PartitionKey]
		if p == nil {
			pk := strings.Clone(e.PartitionKey)
			p = &partitionStats{PartitionKey: pk}
			t.partitions[pk] = p
		}
		p.Writes++
		if p.second != now {
			p.second, p.inSecond = now, 0
		}
		p.inSecond++
		p.PeakPerSecond = max(p.PeakPerSecond, p.inSecond)
		if p.Writes > 1 {
			switch c := edm.CompareStrings(e.RowKey, p.lastRK); {
			case c > 0:
				p.Ascending++
			case c < 0:
				p.Descending++
			}
		}
		p.lastRK = strings.Clone(e.RowKey)
		t.noteLimits(e)
	}
}

func (t *tableInsight) noteLimits(e *edm.Entity) {
	size, n := wire.EntitySize(e), len(e.Properties)
	var why []string
	if float64(size) >= nearLimitShare*wire.MaxEntitySize {
		why = append(why, "size")
	}
	if float64(n) >= nearLimitShare*wire.MaxUserProperties {
		why = append(why, "property count")
	}
	for _, p := range e.Properties {
		if p.Value.T == edm.String && float64(edm.UTF16Len(p.Value.S)) >= nearLimitShare*wire.MaxStringLength ||
			p.Value.T == edm.Binary && float64(len(p.Value.B)) >= nearLimitShare*wire.MaxBinaryLength {
			why = append(why, "property "+p.Name+" size")
		}
	}
	if len(why) == 0 {
		return
	}
	if len(t.NearLimits) == maxLimitNotes {
		t.NearLimits = t.NearLimits[1:]
	}
	t.NearLimits = append(t.NearLimits, limitNote{strings.Clone(e.PartitionKey), strings.Clone(e.RowKey), size, n, strings.Join(why, ", ")})
}

// CrossPartitionBatch records a batch refused for spanning partitions.
func (in *Insights) CrossPartitionBatch(account, table string, pks []string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	t := in.table(account, table)
	t.CrossPartitionBatches++
	if t.CrossPartitionExample == nil {
		// Copies: the keys may be the request body's memory (Writes).
		ex := make([]string, len(pks))
		for i, pk := range pks {
			ex[i] = strings.Clone(pk)
		}
		t.CrossPartitionExample = ex
	}
}

// serve answers GET /_tableemu/insights with account's tables (ServeTool).
func (in *Insights) serve(w http.ResponseWriter, account string) {
	type tableOut struct {
		*tableInsight
		TableScans        []*scanStats      `json:"tableScans"`
		HottestPartitions []*partitionStats `json:"hottestPartitions"`
	}
	in.mu.Lock()
	var out []tableOut
	for _, t := range in.tables {
		if t.Account != account {
			continue
		}
		o := tableOut{tableInsight: t}
		for _, s := range t.scans {
			c := *s
			o.TableScans = append(o.TableScans, &c)
		}
		sort.Slice(o.TableScans, func(i, j int) bool { return o.TableScans[i].Scanned > o.TableScans[j].Scanned })
		for _, p := range t.partitions {
			c := *p
			o.HottestPartitions = append(o.HottestPartitions, &c)
		}
		sort.Slice(o.HottestPartitions, func(i, j int) bool {
			a, b := o.HottestPartitions[i], o.HottestPartitions[j]
			if a.PeakPerSecond != b.PeakPerSecond {
				return a.PeakPerSecond > b.PeakPerSecond
			}
			return a.Writes > b.Writes
		})
		if len(o.HottestPartitions) > 10 {
			o.HottestPartitions = o.HottestPartitions[:10]
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Account+"/"+out[i].Table < out[j].Account+"/"+out[j].Table
	})
	body, err := json.MarshalIndent(map[string]any{"tables": out, "timeline": in.timeline.report(in.now().Unix(), account, in.cfg.PartitionTarget)}, "", "  ")
	in.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}
