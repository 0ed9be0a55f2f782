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

	// tableemu's own, for its reset and snapshot endpoints under
	// /_tableemu/ (docs/isolation.md); the service has no snapshots.
	InvalidSnapshotName Code = "InvalidSnapshotName"
	SnapshotNotFound    Code = "SnapshotNotFound"
)

type entry struct {
	status  int
	message string
}

// table is the single source of status and default message per code.
var table = map[Code]entry{
	AtomFormatNotSupported:                  {415, "Atom format is not supported."},
	AuthenticationFailed:                    {403, "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."},
	AuthorizationFailure:                    {403, "This request is not authorized to perform this operation."},
	AuthorizationPermissionMismatch:         {403, "This request is not authorized to perform this operation using this permission."},
	AuthorizationProtocolMismatch:           {403, "This request is not authorized to perform this operation using this protocol."},
	AuthorizationResourceTypeMismatch:       {403, "This request is not authorized to perform this operation using this resource type."},
	AuthorizationServiceMismatch:            {403, "This request is not authorized to perform this operation using this service."},
	AuthorizationSourceIPMismatch:           {403, "This request is not authorized to perform this operation using this source IP."},
	CommandsInBatchActOnDifferentPartitions: {400, "All commands in a batch must operate on same entity group."},
	CorsPreflightFailure:                    {403, "CORS not enabled or no matching rule found for this request."},
	DuplicatePropertiesSpecified:            {400, "A property is specified more than one time."},
	EntityAlreadyExists:                     {409, "The specified entity already exists."},
	EntityTooLarge:                          {400, "The entity is larger than the maximum allowed size (1MB)."},
	InsufficientAccountPermissions:          {403, "Write operations are not allowed."},
	InternalError:                           {500, "Server encountered an internal error. Please try again after some time."},
	InvalidAuthenticationInfo:               {400, "Authentication information is not given in the correct format. Check the value of Authorization header."},
	InvalidDuplicateRow:                     {400, "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request."},
	InvalidHeaderValue:                      {400, "The value for one of the HTTP headers is not in the correct format."},
	InvalidInput:                            {400, "One of the request inputs is not valid."},
	InvalidQueryParameterValue:              {400, "Value for one of the query parameters specified in the request URI is invalid."},
	InvalidResourceName:                     {400, "The specifed resource name contains invalid characters."},
	InvalidUri:                              {400, "The requested URI does not represent any resource on the server."},
	InvalidValueType:                        {400, "The value specified is invalid."},
	InvalidXmlDocument:                      {400, "XML specified is not syntactically valid."},
	InvalidXmlNodeValue:                     {400, "The value for one of the XML nodes is not in the correct format."}, // (O) Blob's Get User Delegation Key
	JsonFormatNotSupported:                  {415, "JSON format is not supported."},
	MediaTypeNotSupported:                   {415, "None of the provided media types are supported."},
	MethodNotAllowed:                        {405, "The requested method is not allowed on the specified resource."},
	MissingRequiredHeader:                   {400, "A required HTTP header was not specified."},
	MissingRequiredXmlNode:                  {400, "A required XML node was not specified."},
	NoAuthenticationInformation:             {401, "Server failed to authenticate the request. Please refer to the information in the www-authenticate header."},
	NotImplemented:                          {501, "The requested operation is not implemented on the specified resource."},
	OperationTimedOut:                       {500, "Operation could not be completed within the specified time."},
	OutOfRangeInput:                         {400, "One of the request inputs is out of range."},
	PropertiesNeedValue:                     {400, "The values are not specified for all properties in the entity."},
	PropertyNameInvalid:                     {400, "The property name is invalid."},
	PropertyNameTooLong:                     {400, "The property name exceeds the maximum allowed length (255)."}, // (O)
	PropertyValueTooLarge:                   {400, "The property value exceeds the maximum allowed size (64KB). If the property value is a string, it is UTF-16 encoded and the maximum number of characters should be 32K or less."},
	RequestBodyTooLarge:                     {413, "The request body is too large and exceeds the maximum permissible limit."},
	RequestHeaderFieldsTooLarge:             {431, "The size of the request headers is too large."},
	ResourceNotFound:                        {404, "The specified resource does not exist."},
	ServerBusy:                              {503, "The server is busy."},
	TableAlreadyExists:                      {409, "The table specified already exists."},
	TableBeingDeleted:                       {409, "The specified table is being deleted. Try operation later."},
	TableNotFound:                           {404, "The table specified does not exist."},
	TooManyProperties:                       {400, "The entity contains more properties than allowed. Each entity can include up to 252 properties to store data. Each entity also has 3 system properties."}, // (O)
	UnsupportedHttpVerb:                     {405, "The resource doesn't support the specified HTTP verb."},
	UpdateConditionNotSatisfied:             {412, "The update condition specified in the request was not satisfied."},
	XMethodIncorrectCount:                   {400, "More than one X-HTTP-Method is specified."},
	XMethodIncorrectValue:                   {400, "The specified X-HTTP-Method is invalid."},
	XMethodNotUsingPost:                     {400, "The request uses X-HTTP-Method with an HTTP verb other than POST."},
	InvalidSnapshotName:                     {400, "The snapshot name is not valid."},
	SnapshotNotFound:                        {404, "The specified snapshot does not exist."},
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

// WithDetail returns a copy of e carrying detail (see Error.Detail).
func (e *Error) WithDetail(format string, args ...any) *Error {
	c := *e
	c.Detail = fmt.Sprintf(format, args...)
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

// Known reports whether code is in the table (for tests).
func Known(code Code) bool { _, ok := table[code]; return ok }
