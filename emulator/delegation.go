package emulator

import (
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"strings"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
)

// Get User Delegation Key for tables (docs/protocol.md 9.10): POST
// /?restype=service&comp=userdelegationkey, new in service version
// 2025-07-05, authorized with a Microsoft Entra ID bearer token only
// (auth.Grant.Allow refuses every other credential 403
// AuthenticationFailed). The key is derived, not stored (auth/delegation.go),
// so a SAS signed with it verifies on any instance and after a restart.

// keyInfo is the request body: <KeyInfo><Start/><Expiry/></KeyInfo>, Start
// optional, Expiry required; DelegatedUserTid optional (the tenant of the
// user the key's SAS will be for, from 2025-07-05 on).
type keyInfo struct {
	XMLName          xml.Name `xml:"KeyInfo"`
	Start            *string  `xml:"Start"`
	Expiry           *string  `xml:"Expiry"`
	DelegatedUserTid *string  `xml:"DelegatedUserTid"`
}

// userDelegationKey is the answer, its elements in the live answer's order
// (azure-data-tables test_get_user_delegation_key, 2025-07-05): SignedOid,
// SignedTid, SignedStart, SignedExpiry, SignedService, SignedVersion,
// Value; SignedDelegatedUserTid, only for a key asked for with one, before
// Value as in Blob storage's schema.
type userDelegationKey struct {
	XMLName                xml.Name `xml:"UserDelegationKey"`
	SignedOid              string   `xml:"SignedOid"`
	SignedTid              string   `xml:"SignedTid"`
	SignedStart            string   `xml:"SignedStart"`
	SignedExpiry           string   `xml:"SignedExpiry"`
	SignedService          string   `xml:"SignedService"`
	SignedVersion          string   `xml:"SignedVersion"`
	SignedDelegatedUserTid string   `xml:"SignedDelegatedUserTid,omitempty"`
	Value                  string   `xml:"Value"`
}

// invalidKeyTime is the refusal of a Start or Expiry the service does not
// accept: 400 InvalidXmlNodeValue, which Blob storage answers for an
// Expiry more than seven days away (Azure/azure-sdk-for-net#17690 and
// #45789, jschneier/django-storages#1525; its XmlNodeName and XmlNodeValue
// elements both hold the value). tableemu applies it to every time rule of
// the Learn page "Get User Delegation Key": a time it cannot read, an
// Expiry already past or more than seven days away, a Start more than seven
// days away, a Start not before the Expiry.
func invalidKeyTime(node, value, why string) *tableemu.Error {
	return tableemu.New(tableemu.InvalidXmlNodeValue).
		WithDetail("%s %q: %s", node, value, why).
		WithHint("the key's %s %s (%s): a user delegation key is valid for at most seven days from now.", node, value, why)
}

// getUserDelegationKey answers Get User Delegation Key.
func (s *Server) getUserDelegationKey(c *call) error {
	if v := header(c.r.Header, "X-Ms-Version"); v < auth.DelegationVersion {
		// Before 2025-07-05 the Table service has no such operation, and
		// answers as to any service request it does not know
		// (unknownServiceOp).
		return unknownServiceOp(c).WithHint(
			"Get User Delegation Key for tables needs x-ms-version %s or later (this request names %q).", auth.DelegationVersion, v)
	}
	body, err := readBody(c.r)
	if err != nil {
		return err
	}
	var ki keyInfo
	if err := decodeXML(body, &ki); err != nil {
		return err
	}
	if ki.Expiry == nil {
		return tableemu.New(tableemu.MissingRequiredXmlNode).WithDetail("KeyInfo needs Expiry").
			WithHint("the request body needs <Expiry>, the key's expiry time in ISO 8601 UTC.")
	}
	now := s.now().UTC()
	limit := now.Add(auth.MaxDelegationKeyLifetime)
	expiry, ok := auth.ParseTime(strings.TrimSpace(*ki.Expiry))
	switch {
	case !ok:
		return invalidKeyTime("Expiry", *ki.Expiry, "not an ISO 8601 UTC time")
	case !expiry.After(now):
		return invalidKeyTime("Expiry", *ki.Expiry, "already past")
	case expiry.After(limit):
		return invalidKeyTime("Expiry", *ki.Expiry, "more than seven days from now")
	}
	// Without Start the key is valid from now (Learn: "the start time for
	// the user delegation SAS").
	start := now
	if ki.Start != nil {
		if start, ok = auth.ParseTime(strings.TrimSpace(*ki.Start)); !ok {
			return invalidKeyTime("Start", *ki.Start, "not an ISO 8601 UTC time")
		}
		if start.After(limit) {
			return invalidKeyTime("Start", *ki.Start, "more than seven days from now")
		}
		if !start.Before(expiry) {
			return invalidKeyTime("Start", *ki.Start, "not before the Expiry")
		}
	}
	key := auth.DelegationKey{
		ObjectID: c.grant.Identity.ObjectID,
		TenantID: c.grant.Identity.TenantID,
		// To the second, as the SAS will repeat them.
		Start:   start.Truncate(time.Second),
		Expiry:  expiry.Truncate(time.Second),
		Service: "t",
		Version: header(c.r.Header, "X-Ms-Version"),
	}
	if ki.DelegatedUserTid != nil {
		key.DelegatedUserTenantID = strings.TrimSpace(*ki.DelegatedUserTid)
	}
	return c.writeXML(http.StatusOK, &userDelegationKey{
		SignedOid:              key.ObjectID,
		SignedTid:              key.TenantID,
		SignedStart:            key.Start.Format(auth.DelegationTimeLayout),
		SignedExpiry:           key.Expiry.Format(auth.DelegationTimeLayout),
		SignedService:          key.Service,
		SignedVersion:          key.Version,
		SignedDelegatedUserTid: key.DelegatedUserTenantID,
		Value:                  base64.StdEncoding.EncodeToString(key.Value(c.acct.Name, c.acct.Keys[0])),
	}, true)
}

// unknownServiceOp is the answer to a service request no operation
// serves: 400 InvalidUri in JSON, as tableemu answers any other
// ?restype=service&comp=… it does not know.
func unknownServiceOp(c *call) *tableemu.Error {
	c.xml = false
	return tableemu.New(tableemu.InvalidUri)
}
