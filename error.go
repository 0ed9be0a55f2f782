// Package tableemu, the module's root, holds the one table of Azure Table
// service error codes: each code's HTTP status and default message, as
// observed on the live service or documented (docs/protocol.md 8.3). Handlers
// return *Error values; one writer in package emulator turns them into
// responses. Nothing else picks a status. It sits at the root, importing
// nothing of ours, so odata, auth and emulator all reach it with every
// import pointing down (as benbjohnson/wtf keeps its domain errors).
package tableemu

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Code is an Azure error code, sent in x-ms-error-code and odata.error.code.
type Code string

// The codes tableemu returns. Messages marked (O) were observed on the wire,
// the others are documented; see docs/protocol.md 8.3.
const (
	AtomFormatNotSupported                  Code = "AtomFormatNotSupported"
	AuthenticationFailed                    Code = "AuthenticationFailed"
	AuthorizationFailure                    Code = "AuthorizationFailure"
	AuthorizationPermissionMismatch         Code = "AuthorizationPermissionMismatch"
	AuthorizationProtocolMismatch           Code = "AuthorizationProtocolMismatch"
	AuthorizationResourceTypeMismatch       Code = "AuthorizationResourceTypeMismatch"
	AuthorizationServiceMismatch            Code = "AuthorizationServiceMismatch"
	AuthorizationSourceIPMismatch           Code = "AuthorizationSourceIPMismatch"
	CommandsInBatchActOnDifferentPartitions Code = "CommandsInBatchActOnDifferentPartitions"
	CorsPreflightFailure                    Code = "CorsPreflightFailure"
	DuplicatePropertiesSpecified            Code = "DuplicatePropertiesSpecified"
	EntityAlreadyExists                     Code = "EntityAlreadyExists"
	EntityTooLarge                          Code = "EntityTooLarge"
	InsufficientAccountPermissions          Code = "InsufficientAccountPermissions"
	InternalError                           Code = "InternalError"
	InvalidAuthenticationInfo               Code = "InvalidAuthenticationInfo"
	InvalidDuplicateRow                     Code = "InvalidDuplicateRow"
	InvalidHeaderValue                      Code = "InvalidHeaderValue"
	InvalidInput                            Code = "InvalidInput"
	InvalidQueryParameterValue              Code = "InvalidQueryParameterValue"
	InvalidResourceName                     Code = "InvalidResourceName"
	InvalidUri                              Code = "InvalidUri"
	InvalidValueType                        Code = "InvalidValueType"
	InvalidXmlDocument                      Code = "InvalidXmlDocument"
	InvalidXmlNodeValue                     Code = "InvalidXmlNodeValue"
	JsonFormatNotSupported                  Code = "JsonFormatNotSupported"
	MediaTypeNotSupported                   Code = "MediaTypeNotSupported"
	MethodNotAllowed                        Code = "MethodNotAllowed"
	MissingRequiredHeader                   Code = "MissingRequiredHeader"
	MissingRequiredXmlNode                  Code = "MissingRequiredXmlNode"
	NoAuthenticationInformation             Code = "NoAuthenticationInformation"
	NotImplemented                          Code = "NotImplemented"
	OperationTimedOut                       Code = "OperationTimedOut"
	OutOfRangeInput                         Code = "OutOfRangeInput"
	PropertiesNeedValue                     Code = "PropertiesNeedValue"
	PropertyNameInvalid                     Code = "PropertyNameInvalid"
	PropertyNameTooLong                     Code = "PropertyNameTooLong"
	PropertyValueTooLarge                   Code = "PropertyValueTooLarge"
	RequestBodyTooLarge                     Code = "RequestBodyTooLarge"
	RequestHeaderFieldsTooLarge             Code = "RequestHeaderFieldsTooLarge"
	ResourceNotFound                        Code = "ResourceNotFound"
	ServerBusy                              Code = "ServerBusy"
	TableAlreadyExists                      Code = "TableAlreadyExists"
	TableBeingDeleted                       Code = "TableBeingDeleted"
	TableNotFound                           Code = "TableNotFound"
	TooManyProperties                       Code = "TooManyProperties"
	UnsupportedHttpVerb                     Code = "UnsupportedHttpVerb"
	UpdateConditionNotSatisfied             Code = "UpdateConditionNotSatisfied"
	XMethodIncorrectCount                   Code = "XMethodIncorrectCount"
	XMethodIncorrectValue                   Code = "XMethodIncorrectValue"
	XMethodNotUsingPost                     Code = "XMethodNotUsingPost"

	// Forbidden is Azure Cosmos DB for Table's code for a request its
	// SAS does not permit, where Table storage says
	// AuthorizationPermissionMismatch (cosmosAnswer).
	Forbidden Code = "Forbidden"

	// TooManyRequests is Azure Cosmos DB's answer to a request beyond
	// the provisioned throughput: 429 "Request rate is large", with
	// x-ms-retry-after-ms (learn.microsoft.com/azure/cosmos-db/nosql/troubleshoot-request-rate-too-large).
	// tableemu sends it under --profile cosmos --throttle only
	// (emulator/faults/throttle.go); Table storage answers 503 ServerBusy.
	TooManyRequests Code = "TooManyRequests"

	// tableemu's own, for its reset and snapshot endpoints under
	// /_tableemu/ (docs/isolation.md); the service has no snapshots.
	InvalidSnapshotName Code = "InvalidSnapshotName"
	SnapshotNotFound    Code = "SnapshotNotFound"
)

type entry struct {
	status  int
	message string
	cosmos  cosmosAnswer // Azure Cosmos DB for Table's, where it differs
}

// cosmosAnswer is how Azure Cosmos DB for Table answers a code where it
// differs from Table storage (the cosmos profile, docs/cosmos.md): another
// code, another message, and whether the message carries Cosmos DB's
// "ActivityId:" line (its back end's errors do; its gateway's 404, 409
// and 412 do not). Each is as recorded from it
// (conformance/testdata/recordings/python-cosmos and net-cosmos, the file
// named beside each row). A message holding %s names the input the error
// is about (Error.Subject), as Cosmos DB's for PropertyNameInvalid names
// the property.
type cosmosAnswer struct {
	code     Code
	message  string
	activity bool
}

// CosmosURLInvalid is Cosmos DB for Table's message for a query string it
// cannot parse ($filter, $select, $top), code InvalidInput, where Table
// storage names the position (python-cosmos
// test_table_entity_cosmos…test_query_invalid_filter).
const CosmosURLInvalid = "Request url is invalid."

// CosmosSASKeyRange is Cosmos DB for Table's message, code
// MethodNotAllowed, for a shared access signature that names a key range
// (spk, srk, epk, erk), which it refuses whatever the entity, where Table
// storage checks the range (python-cosmos
// test_table_entity_cosmos…test_sas_add_outside_range).
const CosmosSASKeyRange = "Shared access signature with PartitionKey or RowKey are not supported"

// CosmosBatchMalformed is Cosmos DB for Table's message for a $batch body
// it cannot read — a change set with no operation recorded (python-cosmos
// test_table_batch_cosmos…test_empty_batch) — code InvalidInput, answered
// 400 for the whole request where Table storage answers 202.
const CosmosBatchMalformed = "The batch request body is malformed. Please see https://docs.microsoft.com/en-us/rest/api/storageservices/performing-entity-group-transactions"

// cosmosPropertyNameInvalid is Cosmos DB for Table's message for
// PropertyNameInvalid, naming the property (Error.Subject) where Table
// storage does not (python-cosmos
// test_encoder_cosmos…test_encoder_create_entity_atypical_values, a
// property named 123).
const cosmosPropertyNameInvalid = "The property name '%s' is invalid. See https://docs.microsoft.com/en-us/rest/api/storageservices/Understanding-the-Table-Service-Data-Model"

// table is the single source of status and default message per code.
var table = map[Code]entry{
	AtomFormatNotSupported:                  {status: 415, message: "Atom format is not supported."},
	AuthenticationFailed:                    {status: 403, message: "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."},
	AuthorizationFailure:                    {status: 403, message: "This request is not authorized to perform this operation."},
	AuthorizationPermissionMismatch:         {status: 403, message: "This request is not authorized to perform this operation using this permission.", cosmos: cosmosAnswer{code: Forbidden, activity: true}}, // net-cosmos ValidateSasCredentials
	AuthorizationProtocolMismatch:           {status: 403, message: "This request is not authorized to perform this operation using this protocol."},
	AuthorizationResourceTypeMismatch:       {status: 403, message: "This request is not authorized to perform this operation using this resource type."},
	AuthorizationServiceMismatch:            {status: 403, message: "This request is not authorized to perform this operation using this service."},
	AuthorizationSourceIPMismatch:           {status: 403, message: "This request is not authorized to perform this operation using this source IP."},
	CommandsInBatchActOnDifferentPartitions: {status: 400, message: "All commands in a batch must operate on same entity group."},
	CorsPreflightFailure:                    {status: 403, message: "CORS not enabled or no matching rule found for this request."},
	DuplicatePropertiesSpecified:            {status: 400, message: "A property is specified more than one time."},
	EntityAlreadyExists:                     {status: 409, message: "The specified entity already exists."},
	EntityTooLarge:                          {status: 400, message: "The entity is larger than the maximum allowed size (1MB)."},
	InsufficientAccountPermissions:          {status: 403, message: "Write operations are not allowed."},
	InternalError:                           {status: 500, message: "Server encountered an internal error. Please try again after some time."},
	InvalidAuthenticationInfo:               {status: 400, message: "Authentication information is not given in the correct format. Check the value of Authorization header."},
	InvalidDuplicateRow:                     {status: 400, message: "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request."},
	InvalidHeaderValue:                      {status: 400, message: "The value for one of the HTTP headers is not in the correct format."},
	InvalidInput:                            {status: 400, message: "One of the request inputs is not valid.", cosmos: cosmosAnswer{message: "One of the input values is invalid.", activity: true}}, // python-cosmos test_encoder_create_entity_complex_keys
	InvalidQueryParameterValue:              {status: 400, message: "Value for one of the query parameters specified in the request URI is invalid."},
	InvalidResourceName:                     {status: 400, message: "The specifed resource name contains invalid characters."},
	InvalidUri:                              {status: 400, message: "The requested URI does not represent any resource on the server."},
	InvalidValueType:                        {status: 400, message: "The value specified is invalid."},
	InvalidXmlDocument:                      {status: 400, message: "XML specified is not syntactically valid."},
	InvalidXmlNodeValue:                     {status: 400, message: "The value for one of the XML nodes is not in the correct format."}, // (O) Blob's Get User Delegation Key
	JsonFormatNotSupported:                  {status: 415, message: "JSON format is not supported."},
	MediaTypeNotSupported:                   {status: 415, message: "None of the provided media types are supported."},
	MethodNotAllowed:                        {status: 405, message: "The requested method is not allowed on the specified resource.", cosmos: cosmosAnswer{message: "The requested operation is not supported.", activity: true}}, // python-cosmos test_too_many_cors_rules
	MissingRequiredHeader:                   {status: 400, message: "A required HTTP header was not specified."},
	MissingRequiredXmlNode:                  {status: 400, message: "A required XML node was not specified."},
	NoAuthenticationInformation:             {status: 401, message: "Server failed to authenticate the request. Please refer to the information in the www-authenticate header."},
	NotImplemented:                          {status: 501, message: "The requested operation is not implemented on the specified resource."},
	OperationTimedOut:                       {status: 500, message: "Operation could not be completed within the specified time."},
	OutOfRangeInput:                         {status: 400, message: "One of the request inputs is out of range."},
	PropertiesNeedValue:                     {status: 400, message: "The values are not specified for all properties in the entity.", cosmos: cosmosAnswer{message: "PartitionKey/RowKey cannot be empty", activity: true}}, // python-cosmos test_insert_entity_missing_pk
	PropertyNameInvalid:                     {status: 400, message: "The property name is invalid.", cosmos: cosmosAnswer{message: cosmosPropertyNameInvalid, activity: true}},                                              // python-cosmos test_encoder_create_entity_atypical_values
	PropertyNameTooLong:                     {status: 400, message: "The property name exceeds the maximum allowed length (255)."},                                                                                          // (O)
	PropertyValueTooLarge:                   {status: 400, message: "The property value exceeds the maximum allowed size (64KB). If the property value is a string, it is UTF-16 encoded and the maximum number of characters should be 32K or less."},
	RequestBodyTooLarge:                     {status: 413, message: "The request body is too large and exceeds the maximum permissible limit."},
	RequestHeaderFieldsTooLarge:             {status: 431, message: "The size of the request headers is too large."},
	ResourceNotFound:                        {status: 404, message: "The specified resource does not exist."},
	ServerBusy:                              {status: 503, message: "The server is busy."},
	TableAlreadyExists:                      {status: 409, message: "The table specified already exists.", cosmos: cosmosAnswer{message: "The specified table: [] already exists."}}, // python-cosmos test_create_table_fail_on_exist (the brackets empty as recorded)
	TableBeingDeleted:                       {status: 409, message: "The specified table is being deleted. Try operation later."},
	TableNotFound:                           {status: 404, message: "The table specified does not exist.", cosmos: cosmosAnswer{code: ResourceNotFound, message: "The specified resource does not exist."}},                    // python-cosmos test_new_non_existent_table ($batch)
	TooManyProperties:                       {status: 400, message: "The entity contains more properties than allowed. Each entity can include up to 252 properties to store data. Each entity also has 3 system properties."}, // (O)
	TooManyRequests:                         {status: 429, message: "Request rate is large. More Request Units may be needed, so no changes were made. Please retry this request later.", cosmos: cosmosAnswer{activity: true}},
	UnsupportedHttpVerb:                     {status: 405, message: "The resource doesn't support the specified HTTP verb."},
	UpdateConditionNotSatisfied:             {status: 412, message: "The update condition specified in the request was not satisfied."},
	XMethodIncorrectCount:                   {status: 400, message: "More than one X-HTTP-Method is specified."},
	XMethodIncorrectValue:                   {status: 400, message: "The specified X-HTTP-Method is invalid."},
	XMethodNotUsingPost:                     {status: 400, message: "The request uses X-HTTP-Method with an HTTP verb other than POST."},
	Forbidden:                               {status: 403, message: "This request is not authorized to perform this operation using this permission."},
	InvalidSnapshotName:                     {status: 400, message: "The snapshot name is not valid."},
	SnapshotNotFound:                        {status: 404, message: "The specified snapshot does not exist."},
}

// Error is an Azure error: a code, its HTTP status and the message sent in
// odata.error.message (before the RequestId/Time suffix the writer adds).
type Error struct {
	Code    Code
	Status  int
	Message string
	// Detail, when set, is extra text for logs and the XML
	// AuthenticationErrorDetail element; it never replaces Message.
	Detail string
	// Subject is the input the error is about (a property's name), for a
	// message that names it: Cosmos DB's for PropertyNameInvalid
	// (WithSubject). Table storage's messages do not.
	Subject string
	// cosmosOwn: Message is already Cosmos DB for Table's (NewCosmos),
	// which Cosmos keeps.
	cosmosOwn bool
}

// Error is e on one line, for logs and Go callers: a hint follows the
// service's text after a space instead of on a line of its own.
func (e *Error) Error() string {
	msg := strings.ReplaceAll(e.Message, "\n", " ")
	if e.Detail != "" {
		return fmt.Sprintf("%s (%d): %s [%s]", e.Code, e.Status, msg, e.Detail)
	}
	return fmt.Sprintf("%s (%d): %s", e.Code, e.Status, msg)
}

// New returns the error for code with the table's status and message.
// An unknown code is a programming error and becomes InternalError.
func New(code Code) *Error {
	ent, ok := table[code]
	if !ok {
		ent = table[InternalError]
		return &Error{Code: InternalError, Status: ent.status, Message: ent.message, Detail: "unknown error code " + string(code)}
	}
	return &Error{Code: code, Status: ent.status, Message: ent.message}
}

// Newf returns the error for code with a specific message, for the codes
// whose message names the input (docs/protocol.md 1.5: "The 'PartitionKey'
// parameter of value '…' is out of range.").
func Newf(code Code, format string, args ...any) *Error {
	e := New(code)
	e.Message = fmt.Sprintf(format, args...)
	return e
}

// NewCosmos returns the error for code with a message of Azure Cosmos DB
// for Table's own, for a request only Cosmos DB refuses (the cosmos
// profile, docs/cosmos.md): Cosmos keeps that message where it would put
// the table's Cosmos sentence for the code.
func NewCosmos(code Code, message string) *Error {
	e := New(code)
	e.Message, e.cosmosOwn = message, true
	return e
}

// WithDetail returns a copy of e carrying detail (see Error.Detail).
func (e *Error) WithDetail(format string, args ...any) *Error {
	c := *e
	c.Detail = fmt.Sprintf(format, args...)
	return &c
}

// WithSubject returns a copy of e about subject (see Error.Subject).
func (e *Error) WithSubject(subject string) *Error {
	c := *e
	c.Subject = subject
	return &c
}

// HintPrefix starts the line tableemu adds to a message (WithHint).
const HintPrefix = "\ntableemu: "

// WithHint returns a copy of e whose message is followed by a line from
// tableemu saying what to do: "<service message>\ntableemu: <hint>". The
// status, the code and the service's text are kept, the text exactly as
// the service's first line, so SDKs parse the error as they would Azure's
// and a test comparing that line with the service's passes; the hint
// reaches the person reading the exception (docs/protocol.md 8.1, 8.3).
// The writer puts the RequestId and Time lines after it. This is the one
// way tableemu adds hints.
func (e *Error) WithHint(format string, args ...any) *Error {
	c := *e
	c.Message = e.Message + HintPrefix + fmt.Sprintf(format, args...)
	return &c
}

// Hinted reports whether e's message already carries tableemu's hint.
func (e *Error) Hinted() bool { return strings.Contains(e.Message, HintPrefix) }

// From returns err as an *Error: itself if it is (or wraps) one, otherwise
// an InternalError that keeps err's text as its detail.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return New(InternalError).WithDetail("%v", err)
}

// StatusText is the reason phrase for a status: the standard one.
func StatusText(status int) string { return http.StatusText(status) }

// Cosmos returns e as Azure Cosmos DB for Table answers it (the cosmos
// profile, docs/cosmos.md): its code and its sentence where the table
// records them, in place of the service's first line (tableemu's hints,
// the lines after it, stay). urlErr says the request's query string could
// not be parsed, which Cosmos DB answers CosmosURLInvalid. activity reports
// whether Cosmos DB's message carries its ActivityId line.
func (e *Error) Cosmos(urlErr bool) (c *Error, activity bool) {
	ca := table[e.Code].cosmos
	out := *e
	if ca.code != "" {
		out.Code = ca.code
	}
	msg := ca.message
	if urlErr && e.Code == InvalidInput {
		msg = CosmosURLInvalid
	}
	if strings.Contains(msg, "%s") {
		msg = strings.Replace(msg, "%s", e.Subject, 1)
	}
	if msg != "" && !e.cosmosOwn {
		_, hint, _ := strings.Cut(e.Message, HintPrefix)
		out.Message = msg
		if hint != "" {
			out.Message += HintPrefix + hint
		}
	}
	return &out, ca.activity
}

// Known reports whether code is in the table (for tests).
func Known(code Code) bool { _, ok := table[code]; return ok }
