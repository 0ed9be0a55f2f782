package emulator

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// Entity group transactions, POST /$batch (docs/protocol.md 7). The body is
// parsed (batchparse.go), every operation is validated as its single
// request would be, and then all of them run in one store.Update, through
// the same entityWrite.apply as single requests: the first failure rolls
// back the whole changeset.
//
// A malformed body, an oversized one or an authentication failure is an
// ordinary top-level error. Everything that concerns one operation —
// including the batch-level rules (more than 100 operations, two
// partitions, the same entity twice, a missing table) — answers 202 with a
// response holding only the failed operation. Its message starts with the
// operation's 0-based index and a colon, except when the change set holds
// that one operation alone and the failure is one met while applying it to
// the stored entity (batchIndexed; docs/protocol.md 7.4 has the evidence,
// recorded from x-ms-version 2017-04-17 to 2025-07-05: the rule does not
// depend on the version). An empty change set is answered inside the 202
// too (emptyChangeset). batchfail.go writes the failures.

const (
	// maxBatchOps is the service's limit on a change set (docs/protocol.md
	// 7.2, 10); its 4 MiB limit is the server's body limit, maxBody.
	maxBatchOps = 100
)

// batchOp is one operation of a batch, checked and ready to run.
type batchOp struct {
	part   *batchPart
	op     auth.Op
	get    bool        // Get Entity (the only query a batch may hold)
	hidden bool        // a get outside the SAS key range: not found (authz.go hidden)
	w      entityWrite // the write, or for get the keys
	res    resource    // what the operation's URL addresses
	level  wire.Level  // metadata level of its response body
	sel    []string    // $select of a get
	pref   string      // Prefer, for inserts
	stored *edm.Entity // after the run: the entity as stored or read
}

// batch: POST /$batch (docs/protocol.md 7).
func (s *Server) batch(c *call) error {
	body, err := readBody(c.r)
	if err != nil {
		return err
	}
	if s.cosmos && len(body) > cosmosMaxBatch {
		return cosmosBatchTooLarge(len(body))
	}
	req, err := parseBatch(c.r.Header.Get("Content-Type"), body)
	if s.cosmos && (err != nil || req.changeset && len(req.parts) == 0) {
		// Cosmos DB refuses both outright (batchcosmos.go).
		if err == nil {
			err = emptyChangeset().err
		}
		c.writeCosmosBatchMalformed(err)
		return nil
	}
	if err != nil {
		return err
	}
	if req.changeset && len(req.parts) == 0 {
		s.writeBatch(c, true, nil, store.Table{}, emptyChangeset())
		return nil
	}
	ops := make([]batchOp, len(req.parts))
	for i := range ops {
		ops[i].part = &req.parts[i]
		ops[i].pref = prefer(req.parts[i].header)
	}
	table, fail := s.checkBatch(c, ops)
	if fail != nil && fail.err.Code == tableemu.CommandsInBatchActOnDifferentPartitions && s.ins != nil {
		var pks []string
		for i := range ops {
			if ops[i].res.table != "" && (len(pks) == 0 || pks[len(pks)-1] != ops[i].w.pk) {
				pks = append(pks, ops[i].w.pk)
			}
		}
		s.ins.CrossPartitionBatch(c.res.account, ops[0].res.table, pks)
	}
	if fail == nil && s.thr != nil {
		// Every operation is one entity of the batch's partition.
		if err := s.thr.Admit(c.res.account, table, ops[0].w.pk, true, len(ops)); err != nil {
			return err
		}
	}
	var t store.Table
	if fail == nil {
		if t, fail, err = s.runBatch(c, table, ops); err != nil {
			return err
		}
		if fail == nil && s.ins != nil && !ops[0].get {
			es := make([]*edm.Entity, len(ops))
			for i := range ops {
				if es[i] = ops[i].stored; es[i] == nil {
					es[i] = &edm.Entity{PartitionKey: ops[i].w.pk, RowKey: ops[i].w.rk}
				}
			}
			s.noteWrites(c, t.Name, es...)
		}
	}
	s.writeBatch(c, req.changeset, ops, t, fail)
	return nil
}

// checkBatch validates everything that can be known before the store is
// touched, in operation order, so a failure carries the index of the
// operation that causes it (docs/protocol.md 7.4). It returns the batch's table.
func (s *Server) checkBatch(c *call, ops []batchOp) (string, *batchFailure) {
	if len(ops) > maxBatchOps {
		// Live names the last operation a change set may hold, 99, and
		// answers with that operation's headers (Python SDK recordings
		// test_batch_too_many_ops: x-ms-version 2019-02-02 in 2021 and
		// 2025-07-05 in 2026; docs/protocol.md 7.4).
		o := &ops[maxBatchOps-1]
		o.pref = prefer(o.part.header)
		o.level = partLevel(o.part)
		e := tableemu.Newf(tableemu.InvalidInput, "The batch request operation exceeds the maximum 100 changes per change set.")
		if s.cosmos { // Cosmos DB's InvalidInput sentence replaces this one (error.go)
			e = e.WithHint("a change set holds at most 100 operations, under --profile cosmos too; this one has more.")
		}
		return "", &batchFailure{index: maxBatchOps - 1, err: e}
	}
	type entityKey struct{ pk, rk string } // pairs: "a"+"bc" is not "ab"+"c"
	seen := make(map[entityKey]struct{}, len(ops))
	var table, pk string
	var memo opMemo
	for i := range ops {
		o := &ops[i]
		if err := s.prepareOp(c, o, len(ops), &memo); err != nil {
			return "", &batchFailure{index: i, err: tableemu.From(err)}
		}
		if i == 0 {
			table, pk = o.res.table, o.w.pk
		} else if !sameTable(o.res.table, table, s.cosmos) || o.w.pk != pk {
			// An entity group is one table and one PartitionKey. Another
			// table has no observed code of its own (docs/protocol.md 12.3);
			// the service's wording covers it. Under the cosmos profile a
			// name in another case is another table (docs/cosmos.md).
			return "", &batchFailure{index: i, err: tableemu.New(tableemu.CommandsInBatchActOnDifferentPartitions)}
		}
		k := entityKey{o.w.pk, o.w.rk}
		if _, dup := seen[k]; dup {
			return "", &batchFailure{index: i, err: tableemu.New(tableemu.InvalidDuplicateRow)}
		}
		seen[k] = struct{}{}
	}
	return table, nil
}

// prepareOp reads one operation the way its single request is read: the
// method (X-HTTP-Method applied) and URL pick the operation, the SAS must
// allow it, then the keys, If-Match and body are parsed and checked.
func (s *Server) prepareOp(c *call, o *batchOp, n int, memo *opMemo) error {
	p := o.part
	// resolveMethod and negotiate read an *http.Request; one is reused.
	memo.url = url.URL{}
	memo.req = http.Request{Method: p.method, Header: p.header, URL: &memo.url}
	r := &memo.req
	if _, ok := p.header["X-Http-Method"]; ok {
		if err := resolveMethod(r); err != nil {
			return err
		}
	}
	target := p.target
	if q := strings.IndexByte(target, '?'); q >= 0 {
		r.URL.RawQuery = target[q+1:]
		target = target[:q]
	}
	// The level is read first so that any refusal of this operation
	// carries it (writeError, errors.go); its own error waits until after
	// authorization, as for a single request.
	var lvlErr error
	o.level, lvlErr = memo.level(r)
	res, err := memo.resource(s, c, target)
	if err != nil {
		return err
	}
	o.res = res
	_, ifMatch := p.header["If-Match"]
	switch {
	case r.Method == http.MethodGet && res.kind == kEntity:
		o.get, o.op = true, auth.GetEntity
	case r.Method == http.MethodPost && res.kind == kEntities:
		o.w.kind, o.op = opInsert, auth.InsertEntity
	case r.Method == http.MethodPut && res.kind == kEntity && ifMatch:
		o.w.kind, o.op = opReplace, auth.UpdateEntity
	case r.Method == http.MethodPut && res.kind == kEntity:
		o.w.kind, o.op = opInsertOrReplace, auth.InsertOrReplaceEntity
	case (r.Method == "MERGE" || r.Method == http.MethodPatch) && res.kind == kEntity && ifMatch:
		o.w.kind, o.op = opMerge, auth.MergeEntity
	case (r.Method == "MERGE" || r.Method == http.MethodPatch) && res.kind == kEntity:
		o.w.kind, o.op = opInsertOrMerge, auth.InsertOrMergeEntity
	case r.Method == http.MethodDelete && res.kind == kEntity:
		o.w.kind, o.op = opDelete, auth.DeleteEntity
	case res.kind == kEntity || res.kind == kEntities:
		return tableemu.New(tableemu.UnsupportedHttpVerb).WithDetail("%s %s in a batch", r.Method, clipText(p.target))
	default:
		return tableemu.New(tableemu.InvalidInput).WithHint(
			"a batch operation must address entities of a table; %s %s does not.", r.Method, clipText(p.target))
	}
	if o.get && n > 1 {
		// A query is a batch of its own (docs/protocol.md 7.1); mixing it with
		// writes has no observed code (docs/protocol.md 12.3).
		return tableemu.New(tableemu.InvalidInput).WithHint(
			"a query (GET) must be the only operation in its batch; this batch has %d operations.", n)
	}
	// Each operation needs its own permission (docs/protocol.md 7.4, 9.6): the
	// outer request was only checked for the Batch operation. As for a
	// single request, authorization comes before content negotiation.
	if c.grant != nil {
		if err := c.grant.Allow(o.op, res.table); err != nil {
			return err
		}
	}
	if lvlErr != nil {
		return lvlErr
	}
	if err := checkPartContentType(o); err != nil {
		return err
	}
	if o.w.kind == opInsert {
		e, err := decodeEntityBody(p.body, "", "", false, c.s.cosmos)
		if err != nil {
			return err
		}
		o.w.entity, o.w.pk, o.w.rk = e, e.PartitionKey, e.RowKey
		return c.inScope(e.PartitionKey, e.RowKey)
	}
	if res.keyErr != nil {
		return res.keyErr
	}
	o.w.pk, o.w.rk = res.pk, res.rk
	if o.get {
		o.hidden = c.hidden(res.pk, res.rk)
	} else if err := c.inScope(res.pk, res.rk); err != nil {
		return err
	}
	if o.get {
		sel, err := odata.ParseSelect(r.URL.Query().Get("$select"))
		if err != nil {
			return filterErr(err)
		}
		o.sel = sel
		return nil
	}
	cond, err := parseIfMatch(p.header)
	if err != nil {
		return err
	}
	o.w.cond = cond
	if o.w.kind == opDelete {
		if !cond.present {
			return tableemu.New(tableemu.MissingRequiredHeader).WithDetail("Delete Entity needs If-Match (* or an ETag)")
		}
		return nil
	}
	o.w.entity, err = decodeEntityBody(p.body, res.pk, res.rk, true, c.s.cosmos)
	return err
}

// opMemo carries what one operation's preparation can reuse from the
// previous one's. The operations of a batch nearly always share Accept and
// $format, and inserts share their URL; parsing those a hundred times is a
// measurable part of a batch's cost.
type opMemo struct {
	req http.Request
	url url.URL

	negotiated    bool
	query, accept string
	lvl           wire.Level
	lvlErr        *tableemu.Error

	target string // "" when nothing is remembered
	res    resource
}

func (m *opMemo) level(r *http.Request) (wire.Level, error) {
	accept := strings.Join(r.Header.Values("Accept"), ",")
	if !m.negotiated || m.query != r.URL.RawQuery || m.accept != accept {
		m.lvl, m.lvlErr = negotiate(r, r.URL.Query())
		m.negotiated, m.query, m.accept = true, r.URL.RawQuery, accept
	}
	if m.lvlErr != nil {
		return m.lvl, m.lvlErr
	}
	return m.lvl, nil
}

func (m *opMemo) resource(s *Server, c *call, target string) (resource, error) {
	if target != "" && target == m.target {
		return m.res, nil
	}
	res, err := s.partResource(c, target)
	if err != nil {
		return res, err
	}
	m.target, m.res = target, res
	return res, nil
}

// partLevel is the metadata level an operation's headers and $format ask
// for, for the answer to an operation that was not otherwise read (the
// 101st of a change set); one that cannot be negotiated is minimal.
func partLevel(p *batchPart) wire.Level {
	u := url.URL{}
	if _, q, ok := strings.Cut(p.target, "?"); ok {
		u.RawQuery = q
	}
	r := &http.Request{Method: p.method, Header: p.header, URL: &u}
	lvl, _ := negotiate(r, u.Query())
	return lvl
}

// partResource resolves an operation's URL: absolute (with any host — the
// Go SDK writes its own endpoint), a path, or a path relative to the batch
// URL. It must address the account the batch was sent to.
func (s *Server) partResource(c *call, target string) (resource, error) {
	host := c.r.Host
	if i := strings.Index(target, "://"); i > 0 && !strings.ContainsAny(target[:i], "/(") {
		rest := target[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			host = rest[:j]
		} else {
			host = rest
		}
		if !strings.EqualFold(target[:i], "http") && !strings.EqualFold(target[:i], "https") {
			return resource{}, tableemu.New(tableemu.InvalidInput).WithHint("a batch operation's URL must be http or https: %s", clipText(target))
		}
		// parseResource reads absolute URLs that start "http://" or "https://".
		target = strings.ToLower(target[:i]) + target[i:]
	} else if !strings.HasPrefix(target, "/") {
		dir := c.res.rawPath[:strings.LastIndexByte(c.res.rawPath, '/')+1]
		target = dir + target
	} else if !c.res.hostStyle {
		// An absolute path from the service root, "/table(...)": the
		// legacy Python SDK (azure-cosmosdb-table) writes its operations
		// so unless told it talks to the emulator, which on the service
		// (host-style) names the table. On a path-style URL the root is
		// "/<account>": a path that does not start with the batch's own
		// account segment is read below it.
		acct := strings.TrimPrefix(c.res.rawPath, "/")
		acct = acct[:max(strings.IndexByte(acct, '/'), 0)]
		first := strings.TrimPrefix(target, "/")
		if i := strings.IndexAny(first, "/?"); i >= 0 {
			first = first[:i]
		}
		if acct != "" && first != acct {
			target = "/" + acct + target
		}
	}
	res, err := s.parseResource(host, target)
	if err != nil {
		return res, err
	}
	if res.account != c.res.account || res.secondary != c.res.secondary {
		return res, tableemu.New(tableemu.InvalidInput).WithHint(
			"a batch operation addresses account '%s', but the batch was sent to account '%s'.", clipText(res.account), c.res.account)
	}
	return res, nil
}

// runBatch runs the operations in one transaction (a lone query in a read
// snapshot). It returns the failed operation, or an error for failures of
// the store itself, which are answered as top-level errors.
func (s *Server) runBatch(c *call, table string, ops []batchOp) (store.Table, *batchFailure, error) {
	var t store.Table
	var fail *batchFailure
	run := func(tx *store.Tx) error {
		var err error
		if t, err = tx.GetTable(c.res.account, table); err != nil {
			// A missing table fails the first operation (docs/protocol.md 7.4).
			err = failAt(&fail, 0, missingTable(table, err))
			if fail != nil {
				fail.group = true
			}
			return err
		}
		// The live service gives the entities one change set writes one
		// Timestamp and ETag (docs/protocol.md 7.3).
		tx.ShareTimestamp()
		for i := range ops {
			o := &ops[i]
			if o.hidden {
				err = outOfRangeRead()
			} else if o.get {
				o.stored, err = tx.GetEntity(t, o.w.pk, o.w.rk)
				err = storeErr(err)
			} else {
				o.stored, err = o.w.apply(tx, t, s.cosmos)
			}
			if err != nil {
				return failAt(&fail, i, err)
			}
		}
		return nil
	}
	// A client that hangs up does not cut a batch short: it commits or
	// rolls back whole either way. The request's deadline still holds
	// (deadline.go).
	var ctx context.Context = context.WithoutCancel(c.r.Context())
	if c.dl != nil {
		ctx = c.dl.detached()
	}
	var err error
	if len(ops) == 1 && ops[0].get {
		err = s.store.View(ctx, run)
	} else {
		err = s.store.Update(ctx, run)
	}
	if fail != nil {
		return t, fail, nil
	}
	return t, nil, err
}

// writeBatch sends the 202 (docs/protocol.md 7.3, 7.4): a batchresponse holding
// a changesetresponse (when the request had a changeset) with one part per
// operation in order, or only the failed operation's part. Lines end with
// CRLF and the header is written "ETag" exactly: the JS SDK matches
// "ETag: " case-sensitively and splits on "--changesetresponse_".
func (s *Server) writeBatch(c *call, changeset bool, ops []batchOp, t store.Table, fail *batchFailure) {
	// Boundaries need only be unique, as request IDs: newRequestID's
	// UUIDs, without the system call of uuid.NewString.
	outer := "batchresponse_" + newRequestID()
	inner := ""
	base := c.baseURL()
	// The response is built in a pooled buffer, which net/http has copied
	// or sent by the time Write returns.
	buf := getBuf()
	defer putBuf(buf)
	b := (*buf)[:0]
	b = append(b, "--"...)
	b = append(b, outer...)
	b = append(b, "\r\n"...)
	delim := outer
	if changeset {
		inner = "changesetresponse_" + newRequestID()
		b = append(b, "Content-Type: multipart/mixed; boundary="...)
		b = append(b, inner...)
		b = append(b, "\r\n\r\n--"...)
		b = append(b, inner...)
		b = append(b, "\r\n"...)
		delim = inner
	}
	switch {
	case fail != nil && fail.index < 0:
		b = c.appendEmptyChangesetPart(b, fail)
	case fail != nil && c.s.cosmos:
		// Cosmos DB's code and sentence, in the part and in
		// x-ms-error-code below (batchcosmos.go).
		fail.err, _ = fail.err.Cosmos(false)
		b = c.appendCosmosFailedPart(b, fail)
	case fail != nil:
		b = c.appendFailedPart(b, &ops[fail.index], len(ops), fail)
	default:
		for i := range ops {
			if i > 0 {
				b = append(b, "\r\n--"...)
				b = append(b, delim...)
				b = append(b, "\r\n"...)
			}
			if c.s.cosmos {
				b = c.appendCosmosOpPart(b, &ops[i], i, t, base)
			} else {
				b = c.appendOpPart(b, &ops[i], t, base)
			}
		}
	}
	if changeset {
		b = append(b, "\r\n--"...)
		b = append(b, inner...)
		b = append(b, "--"...)
	}
	b = append(b, "\r\n--"...)
	b = append(b, outer...)
	b = append(b, "--\r\n"...)

	*buf = b          // keep the grown buffer for the pool
	h := c.w.Header() // canonical names straight in the map: see ServeHTTP
	h["Content-Type"] = []string{"multipart/mixed; boundary=" + outer}
	if !c.s.cosmos { // Cosmos DB for Table sends neither (docs/cosmos.md)
		h["Cache-Control"] = noCacheHeader
		h["X-Content-Type-Options"] = nosniffHeader
	}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	if fail != nil {
		// The live service sends no x-ms-error-code on the 202 (Go
		// TestBatchError, JS should_handle_sub_request_error). tableemu
		// adds it: the Go SDK reports a failed batch as a ResponseError
		// whose ErrorCode is empty unless this header is set (docs/protocol.md
		// 13), and clients that parse the parts ignore it.
		h.Set("x-ms-error-code", string(fail.err.Code))
		c.errCode = fail.err.Code
	}
	c.w.WriteHeader(http.StatusAccepted)
	c.w.Write(b)
}

// appendPartHead writes an operation part's MIME header, status line,
// Content-ID and X-Content-Type-Options.
func appendPartHead(b []byte, o *batchOp, status int) []byte {
	b = append(b, "Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, tableemu.StatusText(status)...)
	b = append(b, "\r\n"...)
	if id := o.part.contentID; id != "" {
		// The one client-supplied value in a part: a line break in it
		// (a folded header) is cut rather than allowed to forge headers.
		if i := strings.IndexAny(id, "\r\n"); i >= 0 {
			id = id[:i]
		}
		b = appendPartHeader(b, "Content-ID", id)
	}
	return append(b, "X-Content-Type-Options: nosniff\r\n"...)
}

const cacheControl = "Cache-Control: no-cache\r\n"

// appendLocation appends the rest of a Location (or DataServiceId) header
// line for entity e, as insertReply builds its value.
func appendLocation(b []byte, o *wire.Options, e *edm.Entity) []byte {
	return append(appendLocationURL(b, o, e), "\r\n"...)
}

func appendPartHeader(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, value...)
	return append(b, "\r\n"...)
}

// appendOpPart writes a successful operation's part: what its single
// request answers, as the service sends it inside a batch (docs/protocol.md 7.3,
// WIRE-GO TestBatchMixed: DataServiceVersion 3.0; for inserts and queries,
// 1.0; for updates, merges and deletes; Location and DataServiceId for
// inserts only; no ETag after a delete).
func (c *call) appendOpPart(b []byte, o *batchOp, t store.Table, base string) []byte {
	opts := wire.Options{Level: o.level, BaseURL: base, Account: c.res.account, Table: t.Name, Select: o.sel}
	switch {
	case o.get:
		b = appendPartHead(b, o, http.StatusOK)
		b = append(b, cacheControl+"DataServiceVersion: 3.0;\r\n"...)
		b = appendPartHeader(b, "Content-Type", o.level.ContentType())
		b = appendPartHeader(b, "ETag", wire.ETag(o.stored.Timestamp))
		b = append(b, "\r\n"...)
		return wire.AppendEntityDocument(b, o.stored, &opts)
	case o.w.kind == opInsert:
		// insertReply's answer, written in place: no strings per part.
		noContent := o.pref == "return-no-content"
		status := http.StatusCreated
		if noContent {
			status = http.StatusNoContent
		}
		b = appendPartHead(b, o, status)
		b = append(b, cacheControl...)
		if o.pref != "" {
			b = appendPartHeader(b, "Preference-Applied", o.pref)
		}
		b = append(b, "DataServiceVersion: 3.0;\r\n"...)
		if !noContent {
			b = appendPartHeader(b, "Content-Type", o.level.ContentType())
		}
		b = appendLocation(append(b, "Location: "...), &opts, o.stored)
		if noContent {
			b = appendLocation(append(b, "DataServiceId: "...), &opts, o.stored)
		}
		b = append(wire.AppendETag(append(b, "ETag: "...), o.stored.Timestamp), "\r\n\r\n"...)
		if noContent {
			return b
		}
		return wire.AppendEntityDocument(b, o.stored, &opts)
	}
	b = appendPartHead(b, o, http.StatusNoContent)
	b = append(b, cacheControl+"DataServiceVersion: 1.0;\r\n"...)
	if o.w.kind != opDelete {
		b = appendPartHeader(b, "ETag", wire.ETag(o.stored.Timestamp))
	}
	return append(b, "\r\n"...)
}
