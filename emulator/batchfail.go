package emulator

import (
	"net/http"
	"strconv"

	"github.com/tableemu/tableemu"
)

// The answer to a failed $batch (docs/protocol.md 7.4): which operation
// failed, how its part is written, and the one failure that names no
// operation, an empty change set.

// batchFailure is the operation that failed a batch, and why.
type batchFailure struct {
	index int // the failed operation; -1 for an empty change set
	err   *tableemu.Error
	// group marks the failure the live service answers without the
	// operation's Cache-Control and Preference-Applied: a missing table
	// (WIRE-JS should_handle_sub_request_error, Python SDK recording
	// test_new_non_existent_table at 2025-07-05). Every other failure
	// carries them as the operation's own answer would: the batch-level
	// InvalidDuplicateRow, two entity groups and the 101st operation
	// included (WIRE-GO TestBatchError and TestBatchErrorHandleResponse;
	// Python SDK recordings test_batch_same_row_operations_fail and
	// test_batch_too_many_ops at 2019-02-02 and 2025-07-05; Java SDK
	// recording TableClientTest.submitTransactionWithDifferentPartitionKeys
	// at 2020-12-06, where CloudStub's transaction tests had it bare).
	group bool
}

func (f *batchFailure) Error() string { return strconv.Itoa(f.index) + ":" + f.err.Error() }

// failAt records operation i's failure and returns it, so the closure's
// error rolls the transaction back. Internal errors are not an operation's
// fault: they stay errors and become a top-level 500.
func failAt(fail **batchFailure, i int, err error) error {
	e := tableemu.From(err)
	if e.Status >= 500 { // InternalError, or a storage fault (errors.go storeErr)
		return err
	}
	*fail = &batchFailure{index: i, err: e}
	return *fail
}

// batchIndexed reports whether the failed operation's message starts with
// its index, in a change set of n operations. The live service leaves the
// index out only when the change set holds that one operation alone and the
// failure is one met while applying it to the stored entity — the entity
// exists, does not exist, does not match If-Match, or is too large; a
// failure found while the change set is read (a missing table, a malformed
// or invalid operation, an invalid key, the batch rules) keeps it, "0:"
// included. Observed the same at x-ms-version 2017-04-17 (legacy Python SDK
// recordings), 2019-02-02 (Go, .NET and Python SDK recordings, CloudStub's
// transaction tests), 2020-12-06 (Java SDK recording) and 2025-07-05
// (Python SDK recordings); the evidence table is in docs/protocol.md 7.4.
// EntityTooLarge is not observed in a batch: it is read as its neighbour
// PropertyValueTooLarge, which is.
func batchIndexed(f *batchFailure, n int) bool {
	if n != 1 {
		return true
	}
	switch f.err.Code {
	case tableemu.EntityAlreadyExists, tableemu.ResourceNotFound, tableemu.UpdateConditionNotSatisfied,
		tableemu.PropertyValueTooLarge, tableemu.EntityTooLarge:
		return false
	}
	return true
}

// appendFailedPart writes the failed operation's part, one of n in its
// change set: its status, the JSON error with the message prefixed
// "<index>:" where the service writes one (batchIndexed; docs/protocol.md
// 7.4, 8.1).
func (c *call) appendFailedPart(b []byte, o *batchOp, n int, f *batchFailure) []byte {
	b = appendPartHead(b, o, f.err.Status)
	if !f.group {
		b = append(b, cacheControl...)
		if o.pref != "" && o.part.method == http.MethodPost {
			// Echoed on a failed insert, as on a single one (WIRE-GO
			// TestBatchError).
			b = appendPartHeader(b, "Preference-Applied", o.pref)
		}
	}
	b = append(b, "DataServiceVersion: 3.0;\r\n"...)
	b = appendPartHeader(b, "Content-Type", o.level.ContentType())
	b = append(b, "\r\n"...)
	msg := f.err.Message
	if batchIndexed(f, n) {
		msg = strconv.Itoa(f.index) + ":" + msg
	}
	return appendJSONError(b, f.err.Code, errorMessage(msg, c.reqID, c.s.now()))
}

// emptyChangeset is the failure of a change set that holds no operation.
// The live service answers it with 202 and, inside the change set
// response, 400 InvalidInput "An error occurred while processing this
// request." (Python SDK recording test_empty_batch, x-ms-version
// 2019-02-02).
func emptyChangeset() *batchFailure {
	return &batchFailure{index: -1, err: tableemu.Newf(tableemu.InvalidInput,
		"An error occurred while processing this request.").
		WithHint("the change set holds no operations; a batch holds from 1 to 100.")}
}

// appendEmptyChangesetPart writes the answer to an empty change set as the
// live service does: an OData XML error in the default namespace, after
// only DataServiceVersion 1.0 and an XML Content-Type — no
// X-Content-Type-Options and no Cache-Control in the part (test_empty_batch).
func (c *call) appendEmptyChangesetPart(b []byte, f *batchFailure) []byte {
	b = append(b, "Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(f.err.Status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(f.err.Status)...)
	b = append(b, "\r\nDataServiceVersion: 1.0;\r\nContent-Type: application/xml;charset=utf-8\r\n\r\n"...)
	b = append(b, `<?xml version="1.0" encoding="utf-8"?><error xmlns="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><code>`...)
	b = appendXMLText(b, string(f.err.Code))
	b = append(b, `</code><message xml:lang="en-US">`...)
	b = appendXMLText(b, errorMessage(f.err.Message, c.reqID, c.s.now()))
	return append(b, `</message></error>`...)
}
