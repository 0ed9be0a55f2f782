package emulator

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"
	"time"

	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
)

// Table ACLs: stored access policies (docs/protocol.md 3.4). Only the account
// key reaches these handlers: a SAS cannot authorize them (auth.Grant.Allow)
// and neither can a bearer token (oauth.go).

// aclTimeFormat is how Get Table ACL writes times: UTC with seven
// fractional digits, "2021-07-08T09:10:09.0000000Z" (docs/protocol.md 3.4).
const aclTimeFormat = "2006-01-02T15:04:05.0000000Z"

type signedIdentifiers struct {
	XMLName xml.Name           `xml:"SignedIdentifiers"`
	Items   []signedIdentifier `xml:"SignedIdentifier"`
}

type signedIdentifier struct {
	ID     *string       `xml:"Id"`
	Policy *accessPolicy `xml:"AccessPolicy"`
}

// accessPolicy fields are all optional: an empty or missing one is left to
// the SAS (docs/protocol.md 0.1).
type accessPolicy struct {
	Start      string `xml:"Start,omitempty"`
	Expiry     string `xml:"Expiry,omitempty"`
	Permission string `xml:"Permission,omitempty"`
}

// getTableACL: GET /<table>?comp=acl. 200 with the policies in the order
// set; a policy with no fields is written as a bare <Id> (docs/protocol.md 3.4).
// A missing table is 404 TableNotFound, as for entity operations.
func (s *Server) getTableACL(c *call) error {
	if s.cosmos {
		return c.cosmosUnsupported("Get Table ACL (stored access policies)")
	}
	var ids []store.SignedIdentifier
	err := s.store.ViewPoint(c.ctx(), func(tx *store.Tx) error {
		t, err := entityTable(tx, c)
		if err != nil {
			return err
		}
		ids, err = tx.TableACL(t)
		return err
	})
	if err != nil {
		return storeErr(err)
	}
	doc := signedIdentifiers{Items: make([]signedIdentifier, 0, len(ids))}
	for _, si := range ids {
		id := si.ID
		item := signedIdentifier{ID: &id}
		p := accessPolicy{Start: formatACLTime(si.Start), Expiry: formatACLTime(si.Expiry), Permission: si.Permission}
		if p != (accessPolicy{}) {
			item.Policy = &p
		}
		doc.Items = append(doc.Items, item)
	}
	return c.writeXML(http.StatusOK, doc, false)
}

// setTableACL: PUT /<table>?comp=acl. The body replaces the whole list; an
// empty body (the Go SDK's SetAccessPolicy(nil)) or an empty
// <SignedIdentifiers/> clears it. 204 on success (docs/protocol.md 3.4).
func (s *Server) setTableACL(c *call) error {
	if s.cosmos {
		return c.cosmosUnsupported("Set Table ACL (stored access policies)")
	}
	body, err := readBody(c.r)
	if err != nil {
		return err
	}
	ids, err := parseSignedIdentifiers(body)
	if err != nil {
		return err
	}
	err = s.store.Update(c.ctx(), func(tx *store.Tx) error {
		t, err := entityTable(tx, c)
		if err != nil {
			return err
		}
		return tx.SetTableACL(t, ids)
	})
	if err != nil {
		return storeErr(err)
	}
	c.w.Header().Set("Content-Length", "0")
	c.w.WriteHeader(http.StatusNoContent)
	return nil
}

// parseSignedIdentifiers reads and validates a Set Table ACL body. Every
// violation is 400 InvalidXmlDocument (docs/protocol.md 0.1, 3.4; the service's
// code for a bad permission letter is unconfirmed, docs/protocol.md 12;
// the rules on counts, Ids and permissions are package wire's, which
// imports share):
//   - more than five identifiers;
//   - an identifier without Id, or with an empty one or one longer than 64
//     characters;
//   - a Start or Expiry that is not one of the ISO 8601 forms SAS times
//     take (auth.ParseTime: date, minutes, seconds, fractions, offsets);
//   - a Permission with a letter other than r, a, u, d, or one repeated.
func parseSignedIdentifiers(body []byte) ([]store.SignedIdentifier, error) {
	if len(bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\uFEFF")))) == 0 {
		return nil, nil
	}
	var doc signedIdentifiers
	if err := decodeXML(body, &doc); err != nil {
		return nil, err
	}
	if len(doc.Items) > wire.MaxSignedIdentifiers {
		return nil, invalidXML("%d signed identifiers; at most %d are allowed", len(doc.Items), wire.MaxSignedIdentifiers)
	}
	out := make([]store.SignedIdentifier, 0, len(doc.Items))
	for i, item := range doc.Items {
		id := ""
		if item.ID != nil {
			id = *item.ID
		}
		if err := wire.ValidateIdentifier(i, id); err != nil {
			return nil, err
		}
		si := store.SignedIdentifier{ID: id}
		if p := item.Policy; p != nil {
			var err error
			if si.Start, err = parseACLTime("Start", p.Start); err != nil {
				return nil, err
			}
			if si.Expiry, err = parseACLTime("Expiry", p.Expiry); err != nil {
				return nil, err
			}
			if si.Permission, err = wire.ValidatePermission(p.Permission); err != nil {
				return nil, err
			}
		}
		out = append(out, si)
	}
	return out, nil
}

func parseACLTime(field, v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	t, ok := auth.ParseTime(v)
	if !ok {
		return time.Time{}, invalidXML("%s %q is not an ISO 8601 UTC time", field, v)
	}
	return t, nil
}

func formatACLTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(aclTimeFormat)
}
