package emulator

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// writeError is the one place an error becomes a response. Every error
// carries its code twice, in x-ms-error-code and in the body (docs/protocol.md
// 0.1, 8): an OData JSON error for the JSON operations, OData XML for the
// XML endpoints and for 415.
func (c *call) writeError(err error) {
	err = storeErr(err) // a store error that reached here untranslated
	e := c.hint(tableemu.From(err))
	activity := false
	if c.s.cosmos {
		// Cosmos DB for Table's code and sentence (error.go's table),
		// with "Request url is invalid." for a query string it cannot
		// parse (docs/cosmos.md).
		var oe *odata.Error
		e, activity = e.Cosmos(errors.As(err, &oe))
	}
	c.errCode = e.Code
	var sf *storageFault
	if e.Code == tableemu.InternalError || errors.As(err, &sf) {
		c.s.logf("request %s: %s: %v", c.reqID, e.Code, err)
	} else if c.s.debug != nil {
		c.debugError(err, e)
	}
	h := c.w.Header()
	h.Set("x-ms-error-code", string(e.Code))
	var ra retryAfter
	if errors.As(err, &ra) {
		// --throttle under --profile cosmos: Cosmos DB's 429 says how
		// long to wait (emulator/faults/throttle.go; docs/cosmos.md).
		h.Set("x-ms-retry-after-ms", strconv.FormatInt(ra.RetryAfterMS(), 10))
	}
	if e.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", auth.BearerChallenge)
	}
	front := c.frontEnd || frontEndError(e.Code)
	if front {
		// The front end answers without the Table service's headers:
		// no x-ms-version (nor, for JSON, Cache-Control and
		// X-Content-Type-Options), whatever version the request named —
		// but for a request with no credentials at all, whose 401
		// NoAuthenticationInformation live answers with x-ms-version
		// (.NET EnableTenantDiscoveryDoesNotFailAuth, 2020-12-06). A
		// refused token's 401 InvalidAuthenticationInfo echoes no
		// x-ms-client-request-id either (.NET
		// TimespanPropertyInCustomEntity…(StorageAAD), 2020-12-06).
		if e.Code != tableemu.NoAuthenticationInformation {
			delete(h, "X-Ms-Version")
		}
		if e.Code == tableemu.InvalidAuthenticationInfo {
			delete(h, "X-Ms-Client-Request-Id")
		}
	}
	// 415 AtomFormatNotSupported answers a client that asked for Atom
	// (or XML) or sent an Atom body (contenttype.go), so it gets XML.
	body := errorMessage(e.Message, c.reqID, c.s.now())
	if c.s.cosmos && !c.xml && e.Code != tableemu.AtomFormatNotSupported {
		c.writeCosmosError(e, activity)
		return
	}
	if c.xml || e.Code == tableemu.AtomFormatNotSupported {
		b := []byte(`<?xml version="1.0" encoding="utf-8"?><m:error xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><m:code>`)
		b = appendXMLText(b, string(e.Code))
		b = append(b, `</m:code><m:message xml:lang="en-US">`...)
		b = appendXMLText(b, body)
		b = append(b, `</m:message></m:error>`...)
		h.Set("Content-Type", "application/xml")
		h.Set("Content-Length", strconv.Itoa(len(b)))
		c.w.WriteHeader(e.Status)
		c.w.Write(b)
		return
	}
	if front {
		// Plain application/json: the front end negotiates no OData
		// level (live: a $batch signed with a wrong key, with Accept
		// application/json, at x-ms-version 2019-02-02 and 2025-07-05,
		// azure-data-tables test_new_invalid_key).
		b := appendJSONError(nil, e.Code, body)
		h["Content-Type"] = plainJSONHeader
		h["Content-Length"] = []string{strconv.Itoa(len(b))}
		c.w.WriteHeader(e.Status)
		if c.r.Method != http.MethodHead {
			c.w.Write(b)
		}
		return
	}
	// A JSON error carries the metadata level the request asked for in
	// its Content-Type, like a success (docs/protocol.md 8.1): live answers
	// a refused request with $format=…odata=fullmetadata with
	// "application/json; odata=fullmetadata; …" (.NET SDK recording
	// ValidateAccountSasCredentialsWithResourceTypesAsync, replayed by
	// conformance/replay_test.go). Errors found before the operation
	// negotiated its level — authentication, authorization, the URL — would
	// otherwise say minimalmetadata. The body is the same at every level.
	if lvl, nerr := negotiate(c.r, c.query()); nerr == nil {
		c.level = lvl
	}
	if parserError(e.Code) {
		c.uncached = true
	}
	c.writeJSON(e.Status, appendJSONError(nil, e.Code, body))
}

// writeCosmosError writes a JSON error as Azure Cosmos DB for Table does
// (the cosmos profile, docs/cosmos.md): lang "en-us", the message ending
// "\nRequestID:<id>\n" with no Time line, after an "ActivityId:" line
// naming the same id where Cosmos DB's back end answers (activity, from
// error.go's table); its Content-Type as recorded: plain application/json
// for a SAS refused (net-cosmos ValidateSasCredentials), the level the
// request asked for on a GET and on a 409 (python-cosmos test_get_entity_not_existing,
// test_insert_entity_conflict, test_create_table_fail_on_exist), and full
// metadata on the other writes, whatever was asked (python-cosmos
// test_delete_entity_not_existing, test_update_entity_not_existing,
// test_merge_entity_with_if_doesnt_match, test_insert_entity_missing_pk,
// test_encoder_create_entity_complex_keys). No Cache-Control or
// X-Content-Type-Options (writeJSON). x-ms-error-code stays: Cosmos DB
// sends none, but SDKs that read the code there keep working, and the
// body names the same code.
func (c *call) writeCosmosError(e *tableemu.Error, activity bool) {
	msg := e.Message
	if activity {
		// Cosmos DB names its back end's build here; tableemu names
		// itself. Its hints follow, on lines of their own.
		first, hint, hinted := strings.Cut(msg, tableemu.HintPrefix)
		msg = first + "\r\nActivityId: " + c.reqID + ", tableemu"
		if hinted {
			msg += tableemu.HintPrefix + hint
		}
	}
	msg += "\nRequestID:" + c.reqID + "\n"
	b := appendCosmosJSONError(nil, e.Code, msg)
	switch {
	case e.Code == tableemu.Forbidden || frontEndError(e.Code):
		// (An authentication failure keeps the storage front end's plain
		// JSON: nothing recorded from Cosmos DB says otherwise.)
		c.w.Header()["Content-Type"] = plainJSONHeader
		c.w.Header()["Content-Length"] = []string{strconv.Itoa(len(b))}
		c.w.WriteHeader(e.Status)
		if c.r.Method != http.MethodHead {
			c.w.Write(b)
		}
		return
	case c.r.Method == http.MethodGet || c.r.Method == http.MethodHead || e.Status == http.StatusConflict,
		strings.HasPrefix(e.Message, tableemu.CosmosSASKeyRange):
		// (A SAS naming a key range is answered at the level asked
		// for, a POST too: python-cosmos test_sas_add_outside_range.)
		if lvl, nerr := negotiate(c.r, c.query()); nerr == nil {
			c.level = lvl
		}
	default:
		c.level = wire.FullMetadata
	}
	c.writeJSON(e.Status, b)
}

// retryAfter is an error that says how long the client should wait before
// it retries (emulator/faults.Refusal).
type retryAfter interface{ RetryAfterMS() int64 }

// appendCosmosJSONError writes an error body as Cosmos DB for Table does:
// {"odata.error":{"code":…,"message":{"lang":"en-us","value":…}}}, the
// message whole (its RequestID line included). writeCosmosError and the
// failed part of a batch answer (batchcosmos.go) use it.
func appendCosmosJSONError(b []byte, code tableemu.Code, message string) []byte {
	b = append(b, `{"odata.error":{"code":`...)
	b = edm.AppendJSONString(b, string(code))
	b = append(b, `,"message":{"lang":"en-us","value":`...)
	b = edm.AppendJSONString(b, message)
	return append(b, `}}}`...)
}

// parserError reports whether the Table service answers an error of code
// without Cache-Control: the errors of its request parser, 400 InvalidInput
// (a body value, a key, a $filter or a URL it cannot read) and 404
// TableNotFound (an entity URL or entity set naming no table). Every such
// answer recorded live lacks it, and every other JSON error of the Table
// service carries it (docs/protocol.md 8.1): InvalidInput for an Int32 or
// Int64 out of range, a RowKey that is not a string or is typed on insert,
// a $filter syntax error, DELETE /<t>/Tables('t') (azure-data-tables
// test_insert_entity_with_large_int32_value_throws and _int64_,
// test_encoder_create_entity_basic and _complex_keys, test_query_invalid_filter,
// test_client_with_url_ends_with_table_name; .NET ThrowsWithTableNameInUri),
// TableNotFound for DELETE of an entity and POST /<t>/Tables
// (test_encoder_delete_entity_complex_keys, test_client_with_url_ends_with_table_name),
// PropertyNameInvalid for a property named "123" on insert, merge and
// update (test_encoder_create_entity_atypical_values, _update_, _upsert_),
// all at x-ms-version 2019-02-02; ResourceNotFound, PropertiesNeedValue,
// EntityAlreadyExists, UpdateConditionNotSatisfied, TableAlreadyExists,
// InvalidResourceName, the Authorization* codes and the rest carry it, at
// 2019-02-02, 2020-12-06 and 2025-07-05. Inside a $batch answer the failed
// part follows its own rule (batchfail.go).
func parserError(code tableemu.Code) bool {
	return code == tableemu.InvalidInput || code == tableemu.TableNotFound || code == tableemu.PropertyNameInvalid
}

// frontEndError reports whether the service's front end, rather than the
// Table service, answers an error of code: a request whose credentials do
// not authenticate it (a signature that does not verify, none at all, an
// Authorization header it cannot read). Those answers carry no
// x-ms-version, Cache-Control or X-Content-Type-Options, and their JSON is
// plain application/json whatever level the request asked for, at every
// version (docs/protocol.md 8.1; live: azure-data-tables
// test_new_invalid_key, JSON, at 2019-02-02 and 2025-07-05;
// test_create_properties and test_challenge_auth, XML, at 2019-07-07,
// 2020-12-06 and 2025-07-05). A request that authenticates but is not
// allowed (a SAS without the permission, the resource type, the key
// range) is the Table service's answer: its JSON carries the level and
// those headers (.NET recordings ValidateSasCredentials*, at 2019-02-02).
func frontEndError(code tableemu.Code) bool {
	switch code {
	case tableemu.AuthenticationFailed, tableemu.NoAuthenticationInformation, tableemu.InvalidAuthenticationInfo:
		return true
	}
	return false
}

// plainJSONHeader is the Content-Type of the front end's JSON errors.
var plainJSONHeader = []string{"application/json"}

// debugError writes to the --debug log why a request was refused: the
// error's detail, which only the log and XML auth errors carry, and for a
// signature mismatch the string tableemu signed, quoted with Go escapes
// (\n between its lines) so that it can be compared character by character
// with the one the client signed, as Azurite's debug log allows.
func (c *call) debugError(err error, e *tableemu.Error) {
	c.s.logMu.Lock()
	defer c.s.logMu.Unlock()
	// A detail may quote a string to sign, whose lines would otherwise
	// start lines of the log without a time.
	detail := strings.ReplaceAll(orDash(e.Detail), "\n", `\n`)
	c.s.debugLine(fmt.Sprintf("request %s: %d %s: %s", c.reqID, e.Status, e.Code, detail))
	var se *auth.SignatureError
	if errors.As(err, &se) {
		c.s.debugLine(fmt.Sprintf("request %s: string to sign: %s", c.reqID, strconv.Quote(se.StringToSign)))
	}
}

// errorMessage is the message value the service sends: the message, then
// the request id and time on their own lines (docs/protocol.md 8.1).
func errorMessage(msg, reqID string, now time.Time) string {
	return msg + "\nRequestId:" + reqID + "\nTime:" + edm.FormatTimestamp(edm.TicksFromTime(now))
}

// appendJSONError writes {"odata.error":{"code":…,"message":{"lang":"en-US","value":…}}}.
func appendJSONError(b []byte, code tableemu.Code, message string) []byte {
	b = append(b, `{"odata.error":{"code":`...)
	b = edm.AppendJSONString(b, string(code))
	b = append(b, `,"message":{"lang":"en-US","value":`...)
	b = edm.AppendJSONString(b, message)
	return append(b, `}}}`...)
}

func appendXMLText(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '&':
			b = append(b, "&amp;"...)
		case '"':
			b = append(b, "&quot;"...)
		case '\'':
			b = append(b, "&apos;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// Mapping of store errors. The table of codes is the root package (error.go); these are the
// store outcomes whose code depends only on what happened. Callers whose
// outcome differs by operation (a missing table is ResourceNotFound for
// Delete Table but TableNotFound for entity operations, docs/protocol.md 0.1)
// translate before calling.
func storeErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrTableNotFound):
		return tableemu.New(tableemu.TableNotFound)
	case errors.Is(err, store.ErrTableExists):
		return tableemu.New(tableemu.TableAlreadyExists)
	case errors.Is(err, store.ErrEntityNotFound):
		return tableemu.New(tableemu.ResourceNotFound)
	case errors.Is(err, store.ErrEntityExists):
		return tableemu.New(tableemu.EntityAlreadyExists)
	}
	var ae *tableemu.Error
	if errors.As(err, &ae) {
		return err
	}
	// Storage faults: the client learns what happened in the hint after
	// the service's own sentence, the operator in the log (writeError logs
	// every storageFault). A full disk, a locked file or an unreachable
	// database server may clear, so they are 503 ServerBusy, which SDKs
	// retry with back-off; the others are 500 InternalError. Nothing was
	// written: the transaction rolled back (store.Update).
	var e *tableemu.Error
	switch store.FaultOf(err) {
	case store.FaultFull:
		e = tableemu.New(tableemu.ServerBusy).WithHint("the disk holding tableemu's database is full. Free space and retry.")
	case store.FaultBusy:
		// SQLite: another process holds the file locked; PostgreSQL:
		// transactions on one entity kept conflicting past the retries.
		e = tableemu.New(tableemu.ServerBusy).WithHint("tableemu's database is locked by other work (another process holding the file, or concurrent writes to the same entities). Retry.")
	case store.FaultUnavailable:
		// The external database restarting, or out of connections: the
		// request did not take effect and may once it is back.
		e = tableemu.New(tableemu.ServerBusy).WithHint("tableemu cannot reach its database right now. Retry; if this lasts, check that the database server is running and accepts connections.")
	case store.FaultReadOnly:
		e = tableemu.New(tableemu.InternalError).WithHint("tableemu's database file or its directory is read-only.")
	case store.FaultIO:
		e = tableemu.New(tableemu.InternalError).WithHint("reading or writing tableemu's database file failed (I/O error).")
	case store.FaultCorrupt:
		e = tableemu.New(tableemu.InternalError).WithHint("tableemu's database file is damaged. Restore it from a copy, or delete it to start empty.")
	default:
		if timedOut(err) {
			return timeoutError(err) // the request's deadline (deadline.go)
		}
		return tableemu.New(tableemu.InternalError).WithDetail("%v", err)
	}
	return &storageFault{e.WithDetail("%v", err)}
}

// storageFault is a storage failure reported to the client (its *tableemu.Error)
// and logged by writeError.
type storageFault struct{ e *tableemu.Error }

func (f *storageFault) Error() string { return f.e.Error() }
func (f *storageFault) Unwrap() error { return f.e }
