package transfer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata/edm"
)

// A table's entities, read from the endpoint once and spooled.
//
// Types: the pager's Entities are the SDK's re-encoding of each entity
// through map[string]any, where a whole Double such as 2.0 becomes 2 and
// would be read back as an Int32 (aztables v1.4.1, Client.NewListEntitiesPager;
// TestEndpointFromTableemu fails so). So each page's body is taken as the
// endpoint sent it (takeBody) and its entities are decoded by the decoder
// the server uses for request bodies (wire.DecodeEntity), with full
// metadata asked for so that every type the JSON cannot carry by itself
// is annotated. The pager still pages: its continuation comes from the
// response headers, which stay.
//
// Timestamps are kept (Entity.KeepTimestamp): a copy of an account is for
// looking at its data as it is, and a Timestamp is part of that — queries
// on Timestamp ("changed since …") answer as on the source, and since
// tableemu derives an entity's ETag from its Timestamp as the service
// does (W/"datetime'…'"), ETags taken from the source match the copy.
//
// Re-reading (Table.Entities may be called again when a store transaction
// is retried): the first read appends each page to a spool file as it
// arrives, before the entities are handed on; a later read replays the
// spool and, if the first read stopped early, pages on from where it
// stopped. Every read so gives the same entities — one copy of the
// source, not a second look at a table that may have changed meanwhile —
// and the endpoint is read once. The cost is disk: about the size of the
// table's JSON, until the source is closed.

// endpointTable is one table of an endpoint and its spool.
type endpointTable struct {
	src    *endpointSource
	name   string
	client *aztables.Client

	mu      sync.Mutex
	spool   *os.File
	spooled int64 // bytes of whole pages in the spool
	count   int   // entities in the spool
	started bool  // a page has been asked for
	done    bool  // the last page is in the spool
	nextPK  *string
	nextRK  *string
}

// entities is Table.Entities.
func (t *endpointTable) entities(fn func(e Entity) error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var n int
	if t.spool != nil && t.spooled > 0 {
		r := bufio.NewReaderSize(io.NewSectionReader(t.spool, 0, t.spooled), 64<<10)
		var buf []byte
		for {
			size, err := binary.ReadUvarint(r)
			if err == io.EOF {
				break
			}
			if err != nil {
				return t.spoolError(err)
			}
			if uint64(cap(buf)) < size {
				buf = make([]byte, size)
			}
			buf = buf[:size]
			if _, err := io.ReadFull(r, buf); err != nil {
				return t.spoolError(err)
			}
			n++
			if err := t.hand(buf, n, fn); err != nil {
				return err
			}
		}
	}
	if t.done {
		return nil
	}
	return t.page(n, fn)
}

// page reads the pages after the spool's from the endpoint, spooling each
// before its entities are handed on.
func (t *endpointTable) page(n int, fn func(e Entity) error) error {
	opts := &aztables.ListEntitiesOptions{Format: to.Ptr(aztables.MetadataFormatFull)}
	if t.started {
		opts.NextPartitionKey, opts.NextRowKey = t.nextPK, t.nextRK
	}
	pager := t.client.NewListEntitiesPager(opts)
	for pager.More() {
		taken := &pageBody{}
		resp, err := pager.NextPage(context.WithValue(t.src.ctx, pageBodyKey{}, taken))
		if err != nil {
			return t.src.failed("reading table "+t.name, err)
		}
		t.started = true
		if taken.body == nil {
			return tableemu.New(tableemu.InternalError).WithHint(
				"copying from %s: the body of a page of table %s was not kept; report this to tableemu.", t.src.spec.display(), t.name)
		}
		var doc struct {
			Value []json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(taken.body, &doc); err != nil {
			return tableemu.New(tableemu.InvalidInput).WithDetail("%v", err).WithHint(
				"copying from %s: a page of table %s is not the JSON of a query's answer (%v); is the endpoint a Table service?", t.src.spec.display(), t.name, err)
		}
		if err := t.append(doc.Value); err != nil {
			return t.spoolError(err)
		}
		t.count += len(doc.Value)
		t.nextPK, t.nextRK = resp.NextPartitionKey, resp.NextRowKey
		if !pager.More() {
			t.done = true
		}
		if p := t.src.o.Progress; p != nil {
			p(t.name, t.count)
		}
		for _, raw := range doc.Value {
			n++
			if err := t.hand(raw, n, fn); err != nil {
				return err
			}
		}
	}
	t.done = true
	return nil
}

// append writes one page's entities to the spool, each as its length
// (uvarint) and its JSON, and counts them in only once all are written.
func (t *endpointTable) append(raws []json.RawMessage) error {
	if t.spool == nil {
		f, err := os.CreateTemp(t.src.o.TempDir, "tableemu-copy-*.spool")
		if err != nil {
			return err
		}
		t.spool = f
	}
	w := bufio.NewWriterSize(io.NewOffsetWriter(t.spool, t.spooled), 64<<10)
	var size [binary.MaxVarintLen64]byte
	var written int64
	for _, raw := range raws {
		k := binary.PutUvarint(size[:], uint64(len(raw)))
		if _, err := w.Write(size[:k]); err != nil {
			return err
		}
		if _, err := w.Write(raw); err != nil {
			return err
		}
		written += int64(k + len(raw))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	t.spooled += written
	return nil
}

// hand decodes the n-th entity of the table and calls fn with it.
func (t *endpointTable) hand(raw []byte, n int, fn func(e Entity) error) error {
	d, err := wire.DecodeEntity(raw)
	if err != nil {
		return t.badEntity(n, err)
	}
	// The Timestamp, which DecodeEntity skips as it does a request's.
	ts, err := timestampOf(raw)
	if err != nil {
		return t.badEntity(n, err)
	}
	e := Entity{Entity: &d.Entity, Where: t.where(&d.Entity)}
	if ts != "" {
		ticks, err := edm.ParseDateTime(ts)
		if err != nil {
			return t.badEntity(n, fmt.Errorf("its Timestamp %q is not a date-time: %v", ts, err))
		}
		e.Timestamp, e.KeepTimestamp = ticks, true
	}
	return fn(e)
}

// timestampOf returns the entity's Timestamp, "" when it has none (a
// $select without it; the copy then stamps the entity). raw is valid JSON
// (json.Unmarshal took it as a RawMessage), where an unescaped quote is
// always structural, so the first unescaped `"Timestamp":` is the key
// itself (a value's text cannot hold an unescaped quote, and a closing
// quote followed by Timestamp" is not JSON). The map below reads what
// this fast path does not (spaces around the colon, escapes in the value).
func timestampOf(raw []byte) (string, error) {
	const key = `"Timestamp":"`
	for i := 0; ; {
		j := bytes.Index(raw[i:], []byte(key))
		if j < 0 {
			break
		}
		j += i
		if backslashesBefore(raw, j)%2 == 1 {
			i = j + 1
			continue
		}
		v := raw[j+len(key):]
		if end := bytes.IndexByte(v, '"'); end >= 0 && bytes.IndexByte(v[:end], '\\') < 0 {
			return string(v[:end]), nil
		}
		break
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return "", err
	}
	v, ok := all["Timestamp"]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("its Timestamp is not a string: %s", clipBytes(v))
	}
	return s, nil
}

func backslashesBefore(b []byte, i int) int {
	n := 0
	for i > 0 && b[i-1] == '\\' {
		n++
		i--
	}
	return n
}

// pageBodyKey marks, in a request's context, where takeBody puts the body.
type pageBodyKey struct{}

type pageBody struct{ body []byte }

// takeBody is a policy of the source's pipeline: for a request whose
// context carries a *pageBody, it keeps a successful response's body
// there and hands the SDK an empty page instead, which it decodes for
// nothing: decoding each page into maps and encoding every entity again
// was a third of a copy's CPU (BenchmarkEndpointRead), all of it for
// entities that are not used. Headers, and so continuation, are kept.
type takeBody struct{}

func (takeBody) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	slot, _ := req.Raw().Context().Value(pageBodyKey{}).(*pageBody)
	if err != nil || slot == nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := runtime.Payload(resp)
	if err != nil {
		return resp, err
	}
	slot.body = body
	resp.Body = io.NopCloser(strings.NewReader(`{"value":[]}`))
	return resp, nil
}

func clipBytes(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

func (t *endpointTable) where(e *edm.Entity) string {
	return fmt.Sprintf("%s: table %s, entity (%q, %q)", t.src.spec.display(), t.name, e.PartitionKey, e.RowKey)
}

// badEntity is the error for the n-th entity of the table, which the
// endpoint sent in a form tableemu cannot read: ErrInvalidEntity, as an
// import's for an entity the service would refuse.
func (t *endpointTable) badEntity(n int, err error) error {
	var te *tableemu.Error
	if !errors.As(err, &te) {
		err = tableemu.New(tableemu.InvalidInput).WithDetail("%v", err)
	}
	return entityError(ErrInvalidEntity, err, t.name, fmt.Sprintf("%s: table %s, entity %d", t.src.spec.display(), t.name, n))
}

func (t *endpointTable) spoolError(err error) error {
	return tableemu.New(tableemu.InternalError).WithDetail("%v", err).WithHint(
		"copying table %s: the spool file under %s failed: %v. Free disk space there, or choose another directory (EndpointOptions.TempDir).", t.name, tempDir(t.src.o.TempDir), err)
}

func tempDir(dir string) string {
	if dir == "" {
		return os.TempDir()
	}
	return dir
}

func (t *endpointTable) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.spool == nil {
		return nil
	}
	name := t.spool.Name()
	err := t.spool.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	t.spool = nil
	t.spooled, t.count, t.started, t.done = 0, 0, false, false
	return err
}
