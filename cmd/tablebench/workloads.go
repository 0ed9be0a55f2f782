package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// entity is one generated ~1 KiB entity: a few typed properties and an
// 800-character string, the shape of the design guides' typical rows.
type entity struct {
	pk, rk string
	body   []byte
}

var pad = strings.Repeat("x", 800)

func makeEntity(pk string, i int) entity {
	rk := fmt.Sprintf("r%07d", i)
	return entity{pk, rk, []byte(fmt.Sprintf(
		`{"PartitionKey":"%s","RowKey":"%s","Name":"name%d","Age":%d,"Score":%d.5,"Flag":%v,"Pad":"%s","Tag":"t%d"}`,
		pk, rk, i, i%100, i, i%2 == 0, pad, i%1000))}
}

// The preloaded data sets, per target: a point table of pointN entities
// and a scan table of scanN entities in 100 partitions, loaded with
// batches and reused by every round.
const (
	pointTable = "tbpoint"
	scanTable  = "tbscan"
)

func (t *target) preload(table string, n int) error {
	if err := t.createTable(table); err != nil {
		return err
	}
	// Already loaded by an earlier run against the same server?
	resp, body, err := t.do("GET", "/"+table+"(PartitionKey='p000',RowKey='r"+fmt.Sprintf("%07d", (n/100-1)*100)+"')", "", nil, nil)
	if err == nil && resp.StatusCode == http.StatusOK && len(body) > 0 {
		return nil
	}
	parts := n / 100
	start := time.Now()
	before := t.loaded.Load()
	defer func() {
		d, done := time.Since(start), t.loaded.Load()-before
		fmt.Fprintf(os.Stderr, "tablebench: %s: loaded %d entities into %s in %.1f s (%.0f entities/s)\n",
			t.name, done, table, d.Seconds(), float64(done)/d.Seconds())
	}()
	jobs := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				// batch k: partition k%100, 100 consecutive rows of it
				pk := fmt.Sprintf("p%03d", k%100)
				var es []entity
				for j := 0; j < 100; j++ {
					es = append(es, makeEntity(pk, (k/100*100+j)*100+k%100))
				}
				if err := t.loadBatch(table, es); err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				t.loaded.Add(int64(len(es)))
			}
		}()
	}
	for k := 0; k < parts; k++ {
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return fmt.Errorf("preload %s: %w", table, err)
	default:
		return nil
	}
}

// loadBatch inserts a preload batch, again after a connection reset:
// Azurite 3.37 reset one of the 10,000 batches of a million-entity load
// in two runs of three, hours into a side-by-side run. A batch is
// atomic, so when the retry finds the entities there, the reset one had
// landed whole.
func (t *target) loadBatch(table string, es []entity) error {
	err := t.batch(table, es)
	for try := 0; try < 3 && errors.Is(err, syscall.ECONNRESET); try++ {
		time.Sleep(time.Second)
		if err = t.batch(table, es); err != nil && strings.Contains(err.Error(), "EntityAlreadyExists") {
			return nil
		}
	}
	return err
}

// A workload runs operations against one target; each call of op is one
// timed operation, and counts how many units (entities, requests) it did.
type workload struct {
	name  string
	unit  string // what the rate counts: "ops", "entities", "scans"
	setup func(t *target, cfg *config) error
	op    func(t *target, cfg *config, r *rand.Rand, seq *atomic.Int64) (units int, err error)
	// serial workloads (scan, drain) run one client: they measure the
	// time one caller waits, not server throughput.
	serial bool
}

func workloads() []workload {
	return []workload{
		{name: "insert", unit: "ops", setup: freshTable("tbinsert"), op: func(t *target, cfg *config, r *rand.Rand, seq *atomic.Int64) (int, error) {
			i := int(seq.Add(1))
			e := makeEntity(fmt.Sprintf("p%03d", i%100), i)
			resp, body, err := t.do("POST", "/tbinsert", "", map[string]string{"Prefer": "return-no-content"}, e.body)
			return 1, expect(resp, body, err, http.StatusNoContent)
		}},
		{name: "point", unit: "ops", setup: preloaded(pointN), op: func(t *target, cfg *config, r *rand.Rand, _ *atomic.Int64) (int, error) {
			i := r.IntN(cfg.pointN)
			resp, body, err := t.do("GET", fmt.Sprintf("/%s(PartitionKey='p%03d',RowKey='r%07d')", cfg.pointTable, i%100, i), "", nil, nil)
			return 1, expect(resp, body, err, http.StatusOK)
		}},
		{name: "batch", unit: "entities", setup: freshTable("tbbatch"), op: func(t *target, cfg *config, r *rand.Rand, seq *atomic.Int64) (int, error) {
			k := int(seq.Add(1))
			pk := fmt.Sprintf("b%07d", k)
			es := make([]entity, 100)
			for j := range es {
				es[j] = makeEntity(pk, j)
			}
			return 100, t.batch("tbbatch", es)
		}},
		{name: "range", unit: "ops", setup: preloaded(scanN), op: func(t *target, cfg *config, r *rand.Rand, _ *atomic.Int64) (int, error) {
			// 1000 consecutive rows of one partition: rows of p are
			// p, p+100, p+200, ... so a RowKey range of 100000 holds 1000.
			p := r.IntN(100)
			lo := r.IntN(cfg.scanN/100000) * 100000
			// RowKeys have seven digits: the last range of ten million
			// ends before "s", not at "r10000000" (which sorts first).
			hi := fmt.Sprintf("r%07d", lo+100000)
			if lo+100000 >= 10_000_000 {
				hi = "s"
			}
			f := fmt.Sprintf("PartitionKey eq 'p%03d' and RowKey ge 'r%07d' and RowKey lt '%s'", p, lo, hi)
			n, _, err := t.query(scanTable, f)
			if err == nil && n != 1000 {
				err = fmt.Errorf("range returned %d entities, want 1000", n)
			}
			return 1, err
		}},
		{name: "scan", unit: "scans", serial: true, setup: preloaded(scanN), op: func(t *target, cfg *config, r *rand.Rand, _ *atomic.Int64) (int, error) {
			// A non-key filter matching 0.1% of the entities.
			n, _, err := t.query(scanTable, fmt.Sprintf("Tag eq 't%d'", r.IntN(1000)))
			if err == nil && n != cfg.scanN/1000 {
				err = fmt.Errorf("scan returned %d entities, want %d", n, cfg.scanN/1000)
			}
			return 1, err
		}},
		{name: "drain", unit: "scans", serial: true, setup: preloaded(scanN), op: func(t *target, cfg *config, r *rand.Rand, _ *atomic.Int64) (int, error) {
			n, _, err := t.query(scanTable, "")
			if err == nil && n != cfg.scanN {
				err = fmt.Errorf("drain returned %d entities, want %d", n, cfg.scanN)
			}
			return 1, err
		}},
		{name: "update", unit: "ops", setup: preloaded(pointN), op: func(t *target, cfg *config, r *rand.Rand, _ *atomic.Int64) (int, error) {
			return 1, t.merge(r, cfg)
		}},
		{name: "mixed", unit: "ops", setup: preloaded(pointN), op: func(t *target, cfg *config, r *rand.Rand, seq *atomic.Int64) (int, error) {
			switch x := r.IntN(10); {
			case x < 7:
				i := r.IntN(cfg.pointN)
				resp, body, err := t.do("GET", fmt.Sprintf("/%s(PartitionKey='p%03d',RowKey='r%07d')", cfg.pointTable, i%100, i), "", nil, nil)
				return 1, expect(resp, body, err, http.StatusOK)
			case x < 9:
				return 1, t.merge(r, cfg)
			default:
				i := cfg.pointN + int(seq.Add(1))
				e := makeEntity(fmt.Sprintf("m%03d", i%100), i)
				resp, body, err := t.do("POST", "/"+cfg.pointTable, "", map[string]string{"Prefer": "return-no-content"}, e.body)
				return 1, expect(resp, body, err, http.StatusNoContent)
			}
		}},
	}
}

// merge is a MERGE of one property with If-Match: *.
func (t *target) merge(r *rand.Rand, cfg *config) error {
	i := r.IntN(cfg.pointN)
	body := []byte(fmt.Sprintf(`{"Score":%d.25,"Seen":true}`, r.IntN(1000000)))
	resp, rb, err := t.do("MERGE", fmt.Sprintf("/%s(PartitionKey='p%03d',RowKey='r%07d')", cfg.pointTable, i%100, i), "", map[string]string{"If-Match": "*"}, body)
	return expect(resp, rb, err, http.StatusNoContent)
}

// query follows continuations to the end and counts the entities.
func (t *target) query(table, filter string) (entities, pages int, err error) {
	q := url.Values{}
	if filter != "" {
		q.Set("$filter", filter)
	}
	for {
		resp, body, err := t.do("GET", "/"+table+"()", q.Encode(), nil, nil)
		if err := expect(resp, body, err, http.StatusOK); err != nil {
			return entities, pages, err
		}
		pages++
		entities += bytes.Count(body, []byte(`"odata.etag"`))
		t.release(body)
		npk := resp.Header.Get("x-ms-continuation-NextPartitionKey")
		if npk == "" {
			return entities, pages, nil
		}
		q.Set("NextPartitionKey", npk)
		q.Set("NextRowKey", resp.Header.Get("x-ms-continuation-NextRowKey"))
	}
}

func freshTable(name string) func(t *target, cfg *config) error {
	return func(t *target, cfg *config) error {
		t.deleteTable(name)
		// The service (and Azurite) may refuse to recreate a table just
		// deleted; retry briefly.
		var err error
		for i := 0; i < 50; i++ {
			if err = t.createTable(name); err == nil {
				return nil
			}
			time.Sleep(100 * time.Millisecond)
		}
		return err
	}
}

const (
	pointN = iota
	scanN
)

// preloaded loads the point table (pointN entities, or the scan table
// itself with -share-table) or the scan table (scanN).
func preloaded(which int) func(t *target, cfg *config) error {
	return func(t *target, cfg *config) error {
		if which == scanN || cfg.pointTable == scanTable {
			return t.preload(scanTable, cfg.scanN)
		}
		return t.preload(pointTable, cfg.pointN)
	}
}
