package emulator

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
)

// Entity group transactions answered as Azure Cosmos DB for Table answers
// them (the cosmos profile, docs/cosmos.md): the same parsing, checks and
// transaction as Table storage's (batch.go), other part headers, other
// error bodies, and its limits. The evidence is the SDKs' recordings
// against Cosmos DB accounts: python-cosmos test_table_batch_cosmos*
// (conformance/testdata/recordings), and the .NET SDK's
// TableClientLiveTests(CosmosTableAAD) BatchInsertAndMergeAndDelete and
// BatchError and the Python SDK's test_encoder_cosmos…test_encoder_batch
// in Azure/azure-sdk-assets (recorded 2024, x-ms-version 2019-02-02 and
// 2020-12-06), which show five-operation change sets, a 201 part, a
// replace and a merge with If-Match, two deletes, and a failure at index 3.
//
// What they show, and tableemu writes:
//   - a part's headers are the operation's own and no more: no
//     DataServiceVersion, Cache-Control or X-Content-Type-Options, no
//     DataServiceId;
//   - every successful part carries Content-ID, the operation's 1-based
//     position in the change set, whatever Content-ID the request sent
//     (.NET sends none and gets 1 to 5; Python sends 0 and gets 1); a
//     failed part carries none;
//   - an insert answers ETag, Preference-Applied (when asked), its
//     Content-Type (the level, written without spaces) unless 204,
//     Location, Content-ID; an insert-or-replace or insert-or-merge ETag,
//     Content-Type: application/json, Content-ID; a replace or merge with
//     If-Match ETag, Content-ID; a delete Content-ID alone;
//   - a failed part answers Content-Type: application/json;odata=fullmetadata
//     whatever level was asked, and Cosmos DB's error body (lang en-us),
//     whose message is "<index>:<message>\n\nRequestID:<id>\n" — the index
//     even for the one operation of a change set (where Table storage
//     leaves it out, batchIndexed) — but for a missing table,
//     ResourceNotFound "The specified resource does not exist.\nRequestID:<id>\n",
//     without index or blank line.
//
// Not in the evidence, and chosen: a lone query (Get Entity) answers 200
// with ETag, its Content-Type and Content-ID 1; a failed part carries no
// ActivityId line (none recorded in a part); a refused operation's code
// and sentence are Cosmos DB's for a single request (error.go's table).
// The part framing keeps CRLF throughout, as the 2026 Python recordings
// show (the 2024 ones have LF after the MIME part headers).

// cosmosMaxBatch is the largest $batch body Cosmos DB for Table accepts:
// "Batches can only have up to 2 MBs" (FAQ,
// https://learn.microsoft.com/en-us/azure/cosmos-db/table/faq), read as
// 2 MiB, Cosmos DB's unit for its request size limit. The 100-operation
// limit is kept: the FAQ names none other, and Cosmos DB chose Table
// storage's (azure-documentdb-datamigrationtool#38, quoting the Cosmos
// DB team: "limit batches to 100 operations").
const cosmosMaxBatch = 2 << 20

// cosmosBatchTooLarge is the refusal of a $batch body over cosmosMaxBatch:
// Table storage's 413 RequestBodyTooLarge, its limit in the hint (Cosmos
// DB's own answer is not in the evidence).
func cosmosBatchTooLarge(n int) *tableemu.Error {
	return tableemu.New(tableemu.RequestBodyTooLarge).WithHint(
		"Azure Cosmos DB for Table (--profile cosmos) accepts a batch body of at most 2 MiB (%d bytes); this one has %d. Split the change set.",
		cosmosMaxBatch, n)
}

// writeCosmosBatchMalformed answers a $batch body that cannot be read, or
// whose change set holds no operation, as Cosmos DB for Table does: 400
// InvalidInput, tableemu.CosmosBatchMalformed with the ActivityId line,
// full-metadata JSON (python-cosmos test_empty_batch). Cosmos DB's answer
// to other malformed bodies is not in the evidence: tableemu gives them
// the same, and what is wrong in its hint. It is written here, not by
// writeError, whose table would give InvalidInput's generic sentence.
func (c *call) writeCosmosBatchMalformed(err error) {
	e := tableemu.Newf(tableemu.InvalidInput, "%s", tableemu.CosmosBatchMalformed)
	if _, hint, ok := strings.Cut(tableemu.From(err).Message, tableemu.HintPrefix); ok {
		e = e.WithHint("%s", hint)
	}
	c.errCode = e.Code
	c.w.Header().Set("x-ms-error-code", string(e.Code)) // kept, as writeError keeps it
	if c.s.debug != nil {
		c.debugError(err, e)
	}
	c.writeCosmosError(e, true)
}

// appendCosmosPartHead writes a part's MIME header and status line.
func appendCosmosPartHead(b []byte, status int) []byte {
	b = append(b, "Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, tableemu.StatusText(status)...)
	return append(b, "\r\n"...)
}

// appendContentID ends a successful part's headers: Content-ID, the
// operation's 1-based position (i is 0-based), and the blank line.
func appendContentID(b []byte, i int) []byte {
	b = append(b, "Content-ID: "...)
	b = strconv.AppendInt(b, int64(i)+1, 10)
	return append(b, "\r\n\r\n"...)
}

// cosmosPartContentType is an entity part's Content-Type: the level,
// without spaces or other parameters (test_encoder_batch's 201 part).
func cosmosPartContentType(l wire.Level) string {
	return "application/json;odata=" + l.String()
}

// appendCosmosOpPart is appendOpPart under the cosmos profile: the part of
// operation i, which succeeded.
func (c *call) appendCosmosOpPart(b []byte, o *batchOp, i int, t store.Table, base string) []byte {
	// An entity in a part has Cosmos DB's form too (wire.Options.Cosmos):
	// test_encoder_cosmos…test_encoder_batch's 201 part.
	opts := wire.Options{Level: o.level, BaseURL: base, Account: c.res.account, Table: t.Name, Select: o.sel, Cosmos: true}
	etag := func(b []byte) []byte {
		return append(wire.AppendETag(append(b, "ETag: "...), o.stored.Timestamp), "\r\n"...)
	}
	switch {
	case o.get:
		b = etag(appendCosmosPartHead(b, http.StatusOK))
		b = appendPartHeader(b, "Content-Type", cosmosPartContentType(o.level))
		return wire.AppendEntityDocument(appendContentID(b, i), o.stored, &opts)
	case o.w.kind == opInsert:
		noContent := o.pref == "return-no-content"
		status := http.StatusCreated
		if noContent {
			status = http.StatusNoContent
		}
		b = etag(appendCosmosPartHead(b, status))
		if o.pref != "" {
			b = appendPartHeader(b, "Preference-Applied", o.pref)
		}
		if !noContent {
			b = appendPartHeader(b, "Content-Type", cosmosPartContentType(o.level))
		}
		b = appendContentID(appendLocation(append(b, "Location: "...), &opts, o.stored), i)
		if noContent {
			return b
		}
		return wire.AppendEntityDocument(b, o.stored, &opts)
	case o.w.kind == opDelete:
		return appendContentID(appendCosmosPartHead(b, http.StatusNoContent), i)
	case o.w.kind == opInsertOrReplace || o.w.kind == opInsertOrMerge:
		b = etag(appendCosmosPartHead(b, http.StatusNoContent))
		return appendContentID(append(b, "Content-Type: application/json\r\n"...), i)
	}
	return appendContentID(etag(appendCosmosPartHead(b, http.StatusNoContent)), i)
}

// appendCosmosFailedPart is appendFailedPart under the cosmos profile. f's
// error is already Cosmos DB's (writeBatch).
func (c *call) appendCosmosFailedPart(b []byte, f *batchFailure) []byte {
	b = appendCosmosPartHead(b, f.err.Status)
	b = append(b, "Content-Type: application/json;odata=fullmetadata\r\n\r\n"...)
	var msg string
	if f.group {
		msg = f.err.Message + "\nRequestID:" + c.reqID + "\n"
	} else {
		msg = strconv.Itoa(f.index) + ":" + f.err.Message + "\n\nRequestID:" + c.reqID + "\n"
	}
	return appendCosmosJSONError(b, f.err.Code, msg)
}
