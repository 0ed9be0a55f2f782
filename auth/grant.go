package auth

import (
	"strconv"
	"strings"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/odata/edm"
)

// Op is a Table service operation, the unit SAS permissions are granted in.
type Op int

// The operations. The route table names one per route.
const (
	QueryTables           Op = iota + 1 // GET /Tables
	CreateTable                         // POST /Tables
	DeleteTable                         // DELETE /Tables('t')
	GetTable                            // GET /Tables('t')
	QueryEntities                       // GET /t()
	GetEntity                           // GET /t(PK,RK)
	InsertEntity                        // POST /t
	UpdateEntity                        // PUT /t(PK,RK) with If-Match
	MergeEntity                         // MERGE|PATCH /t(PK,RK) with If-Match
	DeleteEntity                        // DELETE /t(PK,RK)
	InsertOrReplaceEntity               // PUT /t(PK,RK) without If-Match
	InsertOrMergeEntity                 // MERGE|PATCH /t(PK,RK) without If-Match
	GetTableACL                         // GET /t?comp=acl
	SetTableACL                         // PUT /t?comp=acl
	GetServiceProperties                // GET /?restype=service&comp=properties
	SetServiceProperties                // PUT /?restype=service&comp=properties
	GetServiceStats                     // GET /?restype=service&comp=stats
	Batch                               // POST /$batch (each sub-operation is checked on its own)
	GetUserDelegationKey                // POST /?restype=service&comp=userdelegationkey (bearer tokens only)
	Preflight                           // OPTIONS, unauthenticated
)

var opNames = [...]string{
	QueryTables:           "QueryTables",
	CreateTable:           "CreateTable",
	DeleteTable:           "DeleteTable",
	GetTable:              "GetTable",
	QueryEntities:         "QueryEntities",
	GetEntity:             "GetEntity",
	InsertEntity:          "InsertEntity",
	UpdateEntity:          "UpdateEntity",
	MergeEntity:           "MergeEntity",
	DeleteEntity:          "DeleteEntity",
	InsertOrReplaceEntity: "InsertOrReplaceEntity",
	InsertOrMergeEntity:   "InsertOrMergeEntity",
	GetTableACL:           "GetTableACL",
	SetTableACL:           "SetTableACL",
	GetServiceProperties:  "GetServiceProperties",
	SetServiceProperties:  "SetServiceProperties",
	GetServiceStats:       "GetServiceStats",
	Batch:                 "Batch",
	GetUserDelegationKey:  "GetUserDelegationKey",
	Preflight:             "Preflight",
}

func (op Op) String() string {
	if op > 0 && int(op) < len(opNames) {
		return opNames[op]
	}
	return "Op(" + strconv.Itoa(int(op)) + ")"
}

// Writes reports whether op changes data or settings: the operations the
// read-only secondary endpoint refuses (docs/protocol.md 0.1). A $batch
// counts as a write whatever it holds.
func (op Op) Writes() bool {
	switch op {
	case CreateTable, DeleteTable, InsertEntity, UpdateEntity, MergeEntity, DeleteEntity,
		InsertOrReplaceEntity, InsertOrMergeEntity, SetTableACL, SetServiceProperties, Batch:
		return true
	}
	return false
}

// Ops lists every operation, for tests and route tables.
func Ops() []Op {
	ops := make([]Op, 0, len(opNames)-1)
	for op := QueryTables; op <= Preflight; op++ {
		ops = append(ops, op)
	}
	return ops
}

// GrantKind says which credential produced a Grant.
type GrantKind int

const (
	SharedKeyGrant  GrantKind = iota + 1 // account key: everything
	ServiceSASGrant                      // service SAS: one table's entities
	AccountSASGrant                      // account SAS: by resource type and permission
)

// Grant is what a verified credential allows.
type Grant struct {
	Kind GrantKind
	// Table is the service SAS's tn, as given (compared case-insensitively).
	Table string
	// Permissions are the permission letters in force: the service SAS's
	// sp or its stored policy's (a subset of "raud"), or the account SAS's sp.
	Permissions string
	// ResourceTypes is the account SAS's srt (a subset of "sco").
	ResourceTypes string
	// Expiry is when a SAS stops being valid; zero for Shared Key.
	Expiry time.Time
	// Identity is who the bearer token that produced the grant names;
	// nil for every other credential. Only a token's grant may get a
	// user delegation key (Allow).
	Identity *Identity
	keys     KeyRange
}

// KeyRange is a service SAS's entity scope (spk, srk, epk, erk).
//
// It is the keyset interval [(StartPK, StartRK), (EndPK, EndRK)] in
// (PartitionKey, RowKey) order, strings compared by UTF-16 code unit: a
// missing StartRK is the lowest RowKey (""), a missing EndRK means every
// RowKey of EndPK, and a missing StartPK or EndPK leaves that side open.
// That is exactly the scope table of docs/protocol.md 9.6, so a store can turn it
// into an index range.
type KeyRange struct {
	StartPK, StartRK, EndPK, EndRK             string
	HasStartPK, HasStartRK, HasEndPK, HasEndRK bool
}

// Bounded reports whether the range restricts anything.
func (k KeyRange) Bounded() bool { return k.HasStartPK || k.HasEndPK }

// Contains reports whether the entity (pk, rk) is inside the range
// (docs/protocol.md 9.6):
//
//	spk       PK ≥ spk
//	epk       PK ≤ epk
//	spk, srk  PK > spk, or PK = spk and RK ≥ srk
//	epk, erk  PK < epk, or PK = epk and RK ≤ erk
func (k KeyRange) Contains(pk, rk string) bool {
	if k.HasStartPK {
		c := edm.CompareStrings(pk, k.StartPK)
		if c < 0 || (c == 0 && k.HasStartRK && edm.CompareStrings(rk, k.StartRK) < 0) {
			return false
		}
	}
	if k.HasEndPK {
		c := edm.CompareStrings(pk, k.EndPK)
		if c > 0 || (c == 0 && k.HasEndRK && edm.CompareStrings(rk, k.EndRK) > 0) {
			return false
		}
	}
	return true
}

// KeyRange returns the grant's entity scope and whether it has one; a query
// must return only entities inside it (docs/protocol.md 0.1, 9.6).
func (g *Grant) KeyRange() (KeyRange, bool) { return g.keys, g.keys.Bounded() }

// InRange reports whether the entity (pk, rk) is inside the grant's key
// range; always true without one. A write outside the range (and each
// batch write) is refused: the caller returns OutOfRange(). A point read
// outside it finds nothing, 404 ResourceNotFound, as live answers
// (docs/protocol.md 0.1).
func (g *Grant) InRange(pk, rk string) bool { return g.keys.Contains(pk, rk) }

// OutOfRange is the refusal of a write to an entity outside the key range.
// The code is unconfirmed on the live service (docs/protocol.md 9.6 "403 ⚠");
// the SAS error table files scope refusals other than permission, service,
// resource type, IP and protocol under AuthorizationFailure. (A read outside
// the range is not refused but not found: docs/protocol.md 0.1.)
func OutOfRange() *tableemu.Error {
	return tableemu.New(tableemu.AuthorizationFailure).WithDetail("The entity is outside the key range of the shared access signature.")
}

// Allow reports whether the grant permits op on table ("" for service-level
// operations); nil means yes.
//
//   - Shared Key: everything.
//   - Service SAS (docs/protocol.md 9.6): only entity operations on the table
//     named by tn (case-insensitive); anything else — list, create, get or
//     delete tables, ACLs, service properties and stats, another table — is
//     403 AuthorizationFailure (the live service answers a service SAS on GET
//     /Tables with AuthorizationFailure, slingdata-io/sling-cli#635). A
//     missing permission is 403 AuthorizationPermissionMismatch (live:
//     aztables TestSASClientReadOnly). Upserts need a and u.
//   - Account SAS (docs/protocol.md 9.7, mapping from the current "Create an
//     account SAS" page): wrong srt is AuthorizationResourceTypeMismatch,
//     then a missing permission AuthorizationPermissionMismatch. ss was
//     checked when the SAS was verified.
//
// Batch checks only what covers the whole request — the table for a service
// SAS, srt=o for an account SAS; the caller checks each sub-operation.
// Preflight is always allowed. Get User Delegation Key is allowed to a
// bearer token's grant only (one with an Identity).
func (g *Grant) Allow(op Op, table string) error {
	if op == GetUserDelegationKey && g.Identity == nil {
		// "Only authorization with Microsoft Entra ID is supported"
		// (Learn, Get User Delegation Key). Blob storage answers an
		// account key's request 403 AuthenticationFailed
		// (Azure/azure-sdk-for-net#12052), Azurite with the detail below
		// for any credential that is not a token; a SAS gets the same.
		return authFailed("Only authentication scheme Bearer is supported").
			WithHint("Get User Delegation Key needs a Microsoft Entra ID token: start tableemu with --oauth basic, serve HTTPS, and use a token credential.")
	}
	switch g.Kind {
	case SharedKeyGrant:
		return nil
	case ServiceSASGrant:
		return g.allowService(op, table)
	case AccountSASGrant:
		return g.allowAccount(op)
	}
	return tableemu.New(tableemu.AuthorizationFailure).WithDetail("auth: empty grant")
}

// servicePerms: the sp letters each entity operation needs, all of them
// (docs/protocol.md 9.6 permission table).
var servicePerms = map[Op]string{
	QueryEntities:         "r",
	GetEntity:             "r",
	InsertEntity:          "a",
	UpdateEntity:          "u",
	MergeEntity:           "u",
	DeleteEntity:          "d",
	InsertOrReplaceEntity: "au",
	InsertOrMergeEntity:   "au",
	Batch:                 "",
}

func (g *Grant) allowService(op Op, table string) error {
	if op == Preflight {
		return nil
	}
	need, ok := servicePerms[op]
	if !ok {
		return tableemu.New(tableemu.AuthorizationFailure).WithDetail("A service SAS cannot authorize %s.", op)
	}
	if !strings.EqualFold(table, g.Table) {
		return tableemu.New(tableemu.AuthorizationFailure).WithDetail("The SAS is for table '%s', not '%s'.", g.Table, table)
	}
	if !hasAll(g.Permissions, need) {
		return tableemu.New(tableemu.AuthorizationPermissionMismatch).WithDetail("%s needs permission '%s'; the SAS grants '%s'.", op, need, g.Permissions)
	}
	return nil
}

// accountRule is one row of the account SAS table: the srt letter the
// operation needs and the sp letter sets any one of which suffices (each set
// needs all its letters).
type accountRule struct {
	resource byte
	perms    []string
}

// accountRules is docs/protocol.md 9.7 as the current DOC page has it, which the
// live service confirms where it was observed: GET /Tables with srt=s is
// AuthorizationResourceTypeMismatch (microsoft/AzureStorageExplorer#6203), so
// Query Tables is srt=c; upserts need a AND u (earlier pages said "or").
// GET /Tables('t') is Query Tables with a key, so it takes the same rule,
// with r accepted beside l as it only reads one table.
var accountRules = map[Op]accountRule{
	GetServiceProperties:  {'s', []string{"r"}},
	SetServiceProperties:  {'s', []string{"w"}},
	GetServiceStats:       {'s', []string{"r"}},
	QueryTables:           {'c', []string{"l"}},
	GetTable:              {'c', []string{"l", "r"}},
	CreateTable:           {'c', []string{"c", "w"}},
	DeleteTable:           {'c', []string{"d"}},
	QueryEntities:         {'o', []string{"r"}},
	GetEntity:             {'o', []string{"r"}},
	InsertEntity:          {'o', []string{"a"}},
	InsertOrMergeEntity:   {'o', []string{"au"}},
	InsertOrReplaceEntity: {'o', []string{"au"}},
	UpdateEntity:          {'o', []string{"u"}},
	MergeEntity:           {'o', []string{"u"}},
	DeleteEntity:          {'o', []string{"d"}},
	Batch:                 {'o', []string{""}},
}

func (g *Grant) allowAccount(op Op) error {
	if op == Preflight {
		return nil
	}
	rule, ok := accountRules[op]
	if !ok {
		// Table ACLs: "Account SAS does not enable access to permission
		// related operations including Set Table ACL" (Azure Storage team
		// blog, 2016-01-12); Get Table ACL is refused alike (docs/protocol.md 3.4).
		return tableemu.New(tableemu.AuthorizationFailure).WithDetail("An account SAS cannot authorize %s.", op)
	}
	if strings.IndexByte(g.ResourceTypes, rule.resource) < 0 {
		return tableemu.New(tableemu.AuthorizationResourceTypeMismatch).WithDetail("%s needs signed resource type '%c'; the SAS grants '%s'.", op, rule.resource, g.ResourceTypes)
	}
	for _, set := range rule.perms {
		if hasAll(g.Permissions, set) {
			return nil
		}
	}
	return tableemu.New(tableemu.AuthorizationPermissionMismatch).WithDetail("%s needs permission '%s'; the SAS grants '%s'.", op, strings.Join(rule.perms, "' or '"), g.Permissions)
}

func hasAll(have, need string) bool {
	for i := 0; i < len(need); i++ {
		if strings.IndexByte(have, need[i]) < 0 {
			return false
		}
	}
	return true
}
