package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	_ "modernc.org/sqlite" // integrity_check of the database file
)

// The real binary, killed and restarted: what tableemu acknowledged must
// survive the death of its process in both durability modes (docs/durability.md:
// the default writes each commit to the WAL before
// answering, --fsync also waits for the disk), a $batch is all or nothing
// (docs/protocol.md 7.2), and SQLite's own integrity check passes after
// every restart.

// crashCycles is how many times TestCrashRecovery kills the server:
// TABLEEMU_CRASH_CYCLES, default 20.
func crashCycles(t *testing.T) int {
	n := 20
	if v := os.Getenv("TABLEEMU_CRASH_CYCLES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("TABLEEMU_CRASH_CYCLES=%q", v)
		}
	}
	return n
}

// props are an entity's own properties; the test writes only strings.
type props map[string]string

// partState is a partition as the test expects it: RowKey → properties.
type partState map[string]props

func (s partState) clone() partState {
	c := make(partState, len(s))
	for rk, p := range s {
		c[rk] = maps(p)
	}
	return c
}

func maps(p props) props {
	c := make(props, len(p))
	for k, v := range p {
		c[k] = v
	}
	return c
}

func (s partState) equal(o partState) bool {
	if len(s) != len(o) {
		return false
	}
	for rk, p := range s {
		q, ok := o[rk]
		if !ok || len(p) != len(q) {
			return false
		}
		for k, v := range p {
			if w, ok := q[k]; !ok || w != v {
				return false
			}
		}
	}
	return true
}

// diff describes how got differs from want, briefly.
func (s partState) diff(got partState) string {
	var out []string
	for rk, p := range s {
		q, ok := got[rk]
		switch {
		case !ok:
			out = append(out, "missing "+rk+" (Op "+p["Op"]+")")
		case !partState{rk: p}.equal(partState{rk: q}):
			out = append(out, fmt.Sprintf("%s: want Op %s Gen %s, got Op %s Gen %s", rk, p["Op"], p["Gen"], q["Op"], q["Gen"]))
		}
	}
	for rk, q := range got {
		if _, ok := s[rk]; !ok {
			out = append(out, "unexpected "+rk+" (Op "+q["Op"]+")")
		}
	}
	sort.Strings(out)
	if len(out) > 8 {
		out = append(out[:8], fmt.Sprintf("… %d more", len(out)-8))
	}
	return strings.Join(out, "; ")
}

// crashWorker owns two partitions: "e<n>" for single-entity writes and
// "b<n>" for batches. It knows their acknowledged state, and after a kill
// at most one write whose outcome it never learned (in doubt).
type crashWorker struct {
	id       int
	ents     partState
	bats     partState
	doubtOn  string    // partition of the write in doubt, "" if none
	doubtOut partState // that partition if the write applied
	rng      *rand.Rand
	seq      int

	acked, ackedBatches, ackedBatchOps, ackedDeletes int
}

func (w *crashWorker) entPart() string { return "e" + strconv.Itoa(w.id) }
func (w *crashWorker) batPart() string { return "b" + strconv.Itoa(w.id) }

func (w *crashWorker) data(max int) string {
	n := w.rng.IntN(max + 1)
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(w.rng.IntN(26))
	}
	return string(b)
}

// errKilled marks a write that failed because the server is gone.
var errKilled = errors.New("server gone")

// step sends one random write and updates the model. It returns errKilled
// when the server is gone (the write is then in doubt) and any other error
// for a genuine failure.
func (w *crashWorker) step(ctx context.Context, c *aztables.Client, cycle int) error {
	w.seq++
	op := fmt.Sprintf("%d.%d.%d", cycle, w.id, w.seq)
	if w.rng.IntN(5) == 0 {
		return w.batch(ctx, c, op)
	}
	part := w.entPart()
	rk := fmt.Sprintf("k%02d", w.rng.IntN(64))
	post := w.ents.clone()
	cur, exists := w.ents[rk]
	newProps := props{"Op": op, "Data": w.data(4000)}
	entity := func(p props) []byte {
		m := map[string]any{"PartitionKey": part, "RowKey": rk}
		for k, v := range p {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return b
	}
	var err error
	if exists {
		switch w.rng.IntN(5) {
		case 0: // merge
			mp := props{"Op": op, "Data2": w.data(200)}
			m := maps(cur)
			for k, v := range mp {
				m[k] = v
			}
			post[rk] = m
			_, err = c.UpdateEntity(ctx, entity(mp), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
		case 1: // replace
			post[rk] = newProps
			_, err = c.UpdateEntity(ctx, entity(newProps), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace})
		case 2, 3: // delete
			delete(post, rk)
			_, err = c.DeleteEntity(ctx, part, rk, nil)
		default: // insert-or-merge
			mp := props{"Op": op, "Data2": w.data(200)}
			m := maps(cur)
			for k, v := range mp {
				m[k] = v
			}
			post[rk] = m
			_, err = c.UpsertEntity(ctx, entity(mp), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
		}
	} else {
		post[rk] = newProps
		if w.rng.IntN(3) == 0 {
			_, err = c.UpsertEntity(ctx, entity(newProps), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
		} else {
			_, err = c.AddEntity(ctx, entity(newProps), nil)
		}
	}
	if err != nil {
		return w.failed(part, post, err)
	}
	if len(post) < len(w.ents) {
		w.ackedDeletes++
	}
	w.ents = post
	w.acked++
	return nil
}

// batch sends one $batch over random rows of the worker's batch partition:
// every operation type, each entity marked with the batch's id (Gen).
func (w *crashWorker) batch(ctx context.Context, c *aztables.Client, op string) error {
	part := w.batPart()
	n, size := 2+w.rng.IntN(39), 2000
	if w.rng.IntN(8) == 0 {
		n, size = 100, 30000 // about 3 MB: a long commit to be killed in
	}
	post := w.bats.clone()
	var acts []aztables.TransactionAction
	deletes := 0
	for _, i := range w.rng.Perm(100)[:n] {
		rk := fmt.Sprintf("r%02d", i)
		p := props{"Op": op, "Gen": op, "Data": w.data(size)}
		m := map[string]any{"PartitionKey": part, "RowKey": rk}
		for k, v := range p {
			m[k] = v
		}
		ent, _ := json.Marshal(m)
		cur, exists := w.bats[rk]
		var typ aztables.TransactionType
		if exists {
			switch w.rng.IntN(5) {
			case 0:
				typ = aztables.TransactionTypeUpdateMerge
			case 1:
				typ = aztables.TransactionTypeUpdateReplace
			case 2:
				typ = aztables.TransactionTypeInsertMerge
			case 3:
				typ = aztables.TransactionTypeInsertReplace
			default:
				typ = aztables.TransactionTypeDelete
			}
		} else {
			typ = []aztables.TransactionType{aztables.TransactionTypeAdd, aztables.TransactionTypeInsertMerge, aztables.TransactionTypeInsertReplace}[w.rng.IntN(3)]
		}
		switch typ {
		case aztables.TransactionTypeUpdateMerge, aztables.TransactionTypeInsertMerge:
			mp := maps(cur)
			for k, v := range p {
				mp[k] = v
			}
			post[rk] = mp
		case aztables.TransactionTypeDelete:
			delete(post, rk)
			deletes++
			ent, _ = json.Marshal(map[string]any{"PartitionKey": part, "RowKey": rk})
		default:
			post[rk] = p
		}
		acts = append(acts, aztables.TransactionAction{ActionType: typ, Entity: ent})
	}
	if _, err := c.SubmitTransaction(ctx, acts, nil); err != nil {
		return w.failed(part, post, err)
	}
	w.bats = post
	w.acked++
	w.ackedBatches++
	w.ackedBatchOps += n
	w.ackedDeletes += deletes
	return nil
}

// failed classifies a write's error: an answer from the server is a test
// failure (the model predicts success); no answer puts the write in doubt.
func (w *crashWorker) failed(part string, post partState, err error) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Errorf("worker %d: %w", w.id, err)
	}
	w.doubtOn, w.doubtOut = part, post
	return fmt.Errorf("%w: %v", errKilled, err)
}

// readPartition lists a partition through the SDK.
func readPartition(ctx context.Context, c *aztables.Client, part string) (partState, error) {
	got := partState{}
	filter := "PartitionKey eq '" + part + "'"
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range page.Entities {
			var m map[string]any
			if err := json.Unmarshal(e, &m); err != nil {
				return nil, err
			}
			p := props{}
			for k, v := range m {
				if k == "PartitionKey" || k == "RowKey" || k == "Timestamp" || strings.HasPrefix(k, "odata.") || strings.Contains(k, "@odata.") {
					continue
				}
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("property %s is %T", k, v)
				}
				p[k] = s
			}
			got[m["RowKey"].(string)] = p
		}
	}
	return got, nil
}

// TestCrashRecovery drives concurrent inserts, merges, replaces, deletes
// and batches against the real binary, kills it with SIGKILL at a random
// moment, restarts it on the same --location and checks every partition:
// it holds exactly the acknowledged writes (none lost, no deleted entity
// back), plus or minus the one write per worker that was in flight at the
// kill — whole, never in part. The database passes integrity_check after
// every restart. It runs in both durability modes: process death must
// lose nothing in either.
func TestCrashRecovery(t *testing.T) {
	skipUnderRace(t, "it kills a binary built without -race")
	bin := buildBinary(t)
	for _, mode := range []struct {
		name string
		args []string
	}{{"default", nil}, {"fsync", []string{"--fsync"}}} {
		t.Run(mode.name, func(t *testing.T) { crashRecovery(t, bin, mode.name, mode.args...) })
	}
}

func crashRecovery(t *testing.T, bin, mode string, args ...string) {
	dir := t.TempDir()
	// On PostgreSQL (TestPostgresCrash) there is no SQLite file to check.
	onFile := !slices.Contains(args, "--database")
	cycles := crashCycles(t)
	const workers = 8
	const table = "crash"
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("TABLEEMU_CRASH_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (TABLEEMU_CRASH_SEED replays it), %d cycles", seed, cycles)
	rng := rand.New(rand.NewPCG(seed, 1))
	ws := make([]*crashWorker, workers)
	for i := range ws {
		ws[i] = &crashWorker{id: i, ents: partState{}, bats: partState{}, rng: rand.New(rand.NewPCG(seed, uint64(i)+2))}
	}

	p, err := startBinary(t, bin, dir, args...)
	must(t, err)
	if _, err := p.table(t, table).CreateTable(ctx(), nil); err != nil {
		t.Fatal(err)
	}
	var applied, notApplied, doubtful int
	start := time.Now()
	for cycle := 1; cycle <= cycles; cycle++ {
		c := p.table(t, table)
		// Mostly mid-load; sometimes right after start-up.
		delay := time.Duration(100+rng.IntN(1400)) * time.Millisecond
		if rng.IntN(5) == 0 {
			delay = time.Duration(rng.IntN(30)) * time.Millisecond
		}
		var killed atomic.Bool
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for _, w := range ws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					err := w.step(rctx, c, cycle)
					cancel()
					if err != nil {
						if errors.Is(err, errKilled) && !killed.Load() {
							err = fmt.Errorf("worker %d lost the server before the kill: %v", w.id, err)
						} else if errors.Is(err, errKilled) {
							err = nil
						}
						errs[w.id] = err
						return
					}
				}
			}()
		}
		time.Sleep(delay)
		killed.Store(true)
		p.kill()
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("cycle %d: %v\nserver stderr: %s", cycle, err, p.stderr)
			}
		}

		p, err = startBinary(t, bin, dir, args...)
		if err != nil {
			t.Fatalf("cycle %d: restart after kill: %v", cycle, err)
		}
		c = p.table(t, table)
		for _, w := range ws {
			for _, pt := range []struct {
				name  string
				state *partState
			}{{w.entPart(), &w.ents}, {w.batPart(), &w.bats}} {
				got, err := readPartition(ctx(), c, pt.name)
				if err != nil {
					t.Fatalf("cycle %d: read %s after restart: %v", cycle, pt.name, err)
				}
				inDoubt := w.doubtOn == pt.name
				if inDoubt {
					doubtful++
				}
				switch {
				case pt.state.equal(got):
					if inDoubt {
						notApplied++
					}
				case inDoubt && w.doubtOut.equal(got):
					*pt.state = w.doubtOut
					applied++
				default:
					msg := pt.state.diff(got)
					if inDoubt {
						msg += fmt.Sprintf("\n(nor the in-flight write applied whole: %s)", w.doubtOut.diff(got))
					}
					t.Fatalf("cycle %d, partition %s after kill -9 and restart: %s", cycle, pt.name, msg)
				}
			}
			w.doubtOn, w.doubtOut = "", nil
		}
		if onFile {
			integrityCheck(t, dir)
		}
		if testing.Verbose() && cycle%5 == 0 {
			t.Logf("cycle %d: %d writes acknowledged so far", cycle, sumAcked(ws))
		}
	}

	// A final graceful stop closes the database cleanly.
	must(t, p.cmd.Process.Signal(syscall.SIGTERM))
	if !p.exitWithin(15 * time.Second) {
		t.Fatal("no exit 15 s after SIGTERM")
	}
	if p.err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", p.err, p.stderr)
	}
	if onFile {
		integrityCheck(t, dir)
	}
	var batches, batchOps, deletes int
	for _, w := range ws {
		batches += w.ackedBatches
		batchOps += w.ackedBatchOps
		deletes += w.ackedDeletes
	}
	where := "no database file: the data is in PostgreSQL"
	if fi, err := os.Stat(filepath.Join(dir, "tableemu.sqlite")); err == nil {
		where = fmt.Sprintf("database %d KiB, integrity_check ok after every restart", fi.Size()>>10)
	}
	// Any acknowledged write lost, deleted entity back or batch applied in
	// part has failed the test above, so the zeros are measured.
	t.Logf("crash summary (%s mode): %d cycles in %s; %d acknowledged writes verified (%d of them batches, %d batch operations, %d deletes): "+
		"0 lost, 0 deleted entities back, 0 partial batches; %d writes in flight at a kill: %d applied whole, %d not at all; %s",
		mode, cycles, time.Since(start).Round(time.Millisecond), sumAcked(ws), batches, batchOps, deletes, doubtful, applied, notApplied, where)
}

func sumAcked(ws []*crashWorker) int {
	n := 0
	for _, w := range ws {
		n += w.acked
	}
	return n
}
