package emulator

import (
	"strings"

	"github.com/tableemu/tableemu"
)

// The Content-Type of a JSON body (docs/protocol.md 2.1, "Content-Type").
//
// Create Table, Insert Entity, Update and Merge Entity and the two upserts
// carry the table or the entity as JSON, and Learn's pages for them call
// Content-Type required: application/json (application/atom+xml only
// before version 2015-12-11). The service refuses anything else, and so
// does tableemu, for the same operations, at top level and inside a
// $batch:
//
//   - no Content-Type (or an empty one): 400 InvalidInput, "Content-Type
//     header value missing." — the live service's answer to a Create Table
//     sent without one (azure-sdk-for-net#35185);
//   - a media type naming Atom (application/atom+xml): 415
//     AtomFormatNotSupported, as the service answers an Atom Accept;
//   - any other type that is not application/json (text/plain, the form
//     types, application/xml, application/octet-stream): 415
//     MediaTypeNotSupported, "None of the provided media types are
//     supported.", the service's code for a body in a media type the
//     operation does not read (no Table answer to one was captured).
//
// application/json is accepted with any parameters, in any case and
// spacing: odata=nometadata (JS, .NET, Python), type=entry (the legacy
// SDKs), charset. docs/protocol.md 0.1 gives the evidence for the three
// answers.
//
// It is also what keeps a web page on another site from writing here
// (docs/security.md): devstoreaccount1's key is public, so a page can make
// a SAS, but what it can send without a CORS preflight — a form post, a
// no-cors fetch, sendBeacon — has a Content-Type of text/plain,
// application/x-www-form-urlencoded or multipart/form-data, or none at
// all (a Blob or ArrayBuffer body); a browser asks first before it sends
// application/json across origins, and the account's CORS rules answer
// (none by default).

// jsonBody wraps the handler of an operation whose body is a JSON table or
// entity: the body's Content-Type is checked before h reads it.
func jsonBody(h handler) handler {
	return func(c *call) error {
		if err := checkJSONContentType(c.r.Header["Content-Type"]); err != nil {
			return err
		}
		return h(c)
	}
}

// checkJSONContentType returns the service's refusal of a JSON body sent
// with the Content-Type header values ct, or nil when every value is
// application/json. It allocates nothing when it accepts: it is on every
// insert's path.
func checkJSONContentType(ct []string) *tableemu.Error {
	if len(ct) == 0 {
		return missingContentType()
	}
	for _, v := range ct {
		v = strings.TrimSpace(v)
		if v == "" {
			return missingContentType()
		}
		mt, _, _ := strings.Cut(v, ";")
		if equalFoldAny(strings.TrimSpace(mt), "application/json") {
			continue
		}
		if strings.Contains(strings.ToLower(v), "atom") {
			return tableemu.New(tableemu.AtomFormatNotSupported).WithDetail("Content-Type %q", clipText(v)).WithHint(
				"the body's Content-Type is %q; Atom bodies ended with version 2015-12-11, and the service and tableemu read JSON only. "+
					"Send the table or entity as JSON with Content-Type: application/json.", clipText(v))
		}
		return tableemu.New(tableemu.MediaTypeNotSupported).WithDetail("Content-Type %q", clipText(v)).WithHint(
			"the body's Content-Type is %q; send the table or entity as JSON with Content-Type: application/json "+
				"(parameters such as odata=nometadata or charset=utf-8 may follow), as the Azure SDKs do. "+
				"A body of another type is refused as on Azure, and because a web page on another site can send one (docs/security.md).", clipText(v))
	}
	return nil
}

// checkPartContentType checks the Content-Type of a $batch operation that
// carries an entity (an insert, update, merge or upsert; not a get or a
// delete, which have no body). The service checks each operation of a
// change set as it does a single request, and the SDKs send
// application/json in every such part: Go and Python bare, JS and .NET
// with odata=nometadata, the legacy SDKs with type=entry
// (docs/protocol.md 7.1). A refusal is that operation's, answered in the
// change set's response with its index, like any other.
func checkPartContentType(o *batchOp) error {
	if o.get || o.w.kind == opDelete {
		return nil
	}
	if err := checkJSONContentType(o.part.header["Content-Type"]); err != nil {
		return err
	}
	return nil
}

func missingContentType() *tableemu.Error {
	return tableemu.Newf(tableemu.InvalidInput, "Content-Type header value missing.").WithHint(
		"send the table or entity as JSON with Content-Type: application/json, as the Azure SDKs do. " +
			"The service requires the header; a body without one is also what a web page on another site can send (docs/security.md).")
}
