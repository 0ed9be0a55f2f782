package auth

import (
	"strings"
	"testing"

	"github.com/tableemu/tableemu"
)

func TestOpString(t *testing.T) {
	seen := map[string]bool{}
	for _, op := range Ops() {
		s := op.String()
		if s == "" || strings.HasPrefix(s, "Op(") || seen[s] {
			t.Errorf("op %d: %q", int(op), s)
		}
		seen[s] = true
	}
	if len(seen) != 20 {
		t.Errorf("%d ops", len(seen))
	}
	if s := Op(0).String(); s != "Op(0)" {
		t.Errorf("zero op: %q", s)
	}
	if s := Op(99).String(); s != "Op(99)" {
		t.Errorf("unknown op: %q", s)
	}
	if QueryTables.String() != "QueryTables" || InsertOrMergeEntity.String() != "InsertOrMergeEntity" {
		t.Error("names")
	}
}

func TestSharedKeyGrantAllowsEverything(t *testing.T) {
	g := &Grant{Kind: SharedKeyGrant}
	token := &Grant{Kind: SharedKeyGrant, Identity: &Identity{ObjectID: "o", TenantID: "t"}}
	for _, op := range Ops() {
		if err := token.Allow(op, "anytable"); err != nil {
			t.Errorf("token %s: %v", op, err)
		}
		if op == GetUserDelegationKey {
			// Only a bearer token may ask for a user delegation key.
			wantErr(t, g.Allow(op, ""), tableemu.AuthenticationFailed)
			continue
		}
		if err := g.Allow(op, "anytable"); err != nil {
			t.Errorf("%s: %v", op, err)
		}
	}
	if !g.InRange("any", "thing") {
		t.Error("shared key has no key range")
	}
	if err := (&Grant{}).Allow(QueryEntities, "t"); err == nil {
		t.Error("zero grant allowed")
	}
}

// serviceNeeds is docs/protocol.md 9.6 written out again: the letters each
// operation needs, or "-" for never.
var serviceNeeds = map[Op]string{
	QueryTables:           "-",
	CreateTable:           "-",
	DeleteTable:           "-",
	GetTable:              "-",
	QueryEntities:         "r",
	GetEntity:             "r",
	InsertEntity:          "a",
	UpdateEntity:          "u",
	MergeEntity:           "u",
	DeleteEntity:          "d",
	InsertOrReplaceEntity: "au",
	InsertOrMergeEntity:   "au",
	GetTableACL:           "-",
	SetTableACL:           "-",
	GetServiceProperties:  "-",
	SetServiceProperties:  "-",
	GetServiceStats:       "-",
	Batch:                 "",
	GetUserDelegationKey:  "!",
	Preflight:             "",
}

func TestServiceSASPermissions(t *testing.T) {
	if len(serviceNeeds) != len(Ops()) {
		t.Fatalf("table covers %d of %d ops", len(serviceNeeds), len(Ops()))
	}
	for _, perms := range []string{"", "r", "a", "u", "d", "au", "ra", "ud", "raud"} {
		g := &Grant{Kind: ServiceSASGrant, Table: "MyTable", Permissions: perms}
		for _, op := range Ops() {
			need := serviceNeeds[op]
			err := g.Allow(op, "mytable")
			switch {
			case need == "-":
				wantErr(t, err, tableemu.AuthorizationFailure)
			case need == "!":
				wantErr(t, err, tableemu.AuthenticationFailed)
			case hasAll(perms, need):
				if err != nil {
					t.Errorf("sp=%q %s: %v", perms, op, err)
				}
			default:
				wantErr(t, err, tableemu.AuthorizationPermissionMismatch)
			}
		}
	}
	// Another table is refused whatever the permissions; case does not matter.
	g := &Grant{Kind: ServiceSASGrant, Table: "MyTable", Permissions: "raud"}
	wantErr(t, g.Allow(QueryEntities, "OtherTable"), tableemu.AuthorizationFailure)
	wantErr(t, g.Allow(Batch, "OtherTable"), tableemu.AuthorizationFailure)
	if err := g.Allow(InsertOrMergeEntity, "MYTABLE"); err != nil {
		t.Error(err)
	}
	// Upserts need both a and u.
	wantErr(t, (&Grant{Kind: ServiceSASGrant, Table: "t", Permissions: "a"}).Allow(InsertOrReplaceEntity, "t"), tableemu.AuthorizationPermissionMismatch)
	wantErr(t, (&Grant{Kind: ServiceSASGrant, Table: "t", Permissions: "u"}).Allow(InsertOrMergeEntity, "t"), tableemu.AuthorizationPermissionMismatch)
}

// accountNeeds is docs/protocol.md 9.7 (current DOC page) written out again:
// resource type, then permission alternatives; "-" for never.
var accountNeeds = map[Op]struct {
	srt   string
	perms []string
}{
	QueryTables:           {"c", []string{"l"}},
	CreateTable:           {"c", []string{"c", "w"}},
	DeleteTable:           {"c", []string{"d"}},
	GetTable:              {"c", []string{"l", "r"}},
	QueryEntities:         {"o", []string{"r"}},
	GetEntity:             {"o", []string{"r"}},
	InsertEntity:          {"o", []string{"a"}},
	UpdateEntity:          {"o", []string{"u"}},
	MergeEntity:           {"o", []string{"u"}},
	DeleteEntity:          {"o", []string{"d"}},
	InsertOrReplaceEntity: {"o", []string{"au"}},
	InsertOrMergeEntity:   {"o", []string{"au"}},
	GetTableACL:           {"-", nil},
	SetTableACL:           {"-", nil},
	GetServiceProperties:  {"s", []string{"r"}},
	SetServiceProperties:  {"s", []string{"w"}},
	GetServiceStats:       {"s", []string{"r"}},
	Batch:                 {"o", []string{""}},
	GetUserDelegationKey:  {"!", nil},
	Preflight:             {"", []string{""}},
}

func TestAccountSASPermissions(t *testing.T) {
	if len(accountNeeds) != len(Ops()) {
		t.Fatalf("table covers %d of %d ops", len(accountNeeds), len(Ops()))
	}
	for _, srt := range []string{"s", "c", "o", "sc", "co", "sco"} {
		for _, sp := range []string{"r", "w", "d", "l", "a", "c", "u", "au", "rwdlacup", "p"} {
			g := &Grant{Kind: AccountSASGrant, ResourceTypes: srt, Permissions: sp}
			for _, op := range Ops() {
				need := accountNeeds[op]
				err := g.Allow(op, "t")
				if need.srt == "-" {
					wantErr(t, err, tableemu.AuthorizationFailure)
					continue
				}
				if need.srt == "!" {
					wantErr(t, err, tableemu.AuthenticationFailed)
					continue
				}
				if need.srt != "" && !strings.Contains(srt, need.srt) {
					wantErr(t, err, tableemu.AuthorizationResourceTypeMismatch)
					continue
				}
				allowed := false
				for _, p := range need.perms {
					allowed = allowed || hasAll(sp, p)
				}
				if allowed {
					if err != nil {
						t.Errorf("srt=%s sp=%s %s: %v", srt, sp, op, err)
					}
				} else {
					wantErr(t, err, tableemu.AuthorizationPermissionMismatch)
				}
			}
		}
	}
	// Live: GET /Tables with srt=s is a resource-type mismatch
	// (microsoft/AzureStorageExplorer#6203).
	g := &Grant{Kind: AccountSASGrant, ResourceTypes: "s", Permissions: "rwdlacupiyx"}
	wantErr(t, g.Allow(QueryTables, ""), tableemu.AuthorizationResourceTypeMismatch)
}

func TestKeyRangeEdges(t *testing.T) {
	type probe struct {
		pk, rk string
		in     bool
	}
	cases := []struct {
		name   string
		k      KeyRange
		probes []probe
	}{
		{"spk", KeyRange{StartPK: "b", HasStartPK: true}, []probe{
			{"a", "zzz", false}, {"b", "", true}, {"b", "a", true}, {"ba", "", true}, {"c", "", true},
		}},
		{"spk srk", KeyRange{StartPK: "b", StartRK: "m", HasStartPK: true, HasStartRK: true}, []probe{
			{"a", "z", false}, {"b", "l", false}, {"b", "lzzz", false}, {"b", "m", true}, {"b", "ma", true},
			{"b", "z", true}, {"ba", "", true}, {"c", "a", true},
		}},
		{"epk", KeyRange{EndPK: "m", HasEndPK: true}, []probe{
			{"", "", true}, {"a", "zzz", true}, {"m", "zzzz", true}, {"ma", "", false}, {"n", "", false},
		}},
		{"epk erk", KeyRange{EndPK: "m", EndRK: "k", HasEndPK: true, HasEndRK: true}, []probe{
			{"l", "zzz", true}, {"m", "", true}, {"m", "k", true}, {"m", "ka", false}, {"m", "l", false}, {"n", "a", false},
		}},
		{"one partition", KeyRange{StartPK: "p", EndPK: "p", HasStartPK: true, HasEndPK: true}, []probe{
			{"p", "", true}, {"p", "anything", true}, {"o", "z", false}, {"pa", "", false},
		}},
		{"one entity", KeyRange{StartPK: "p", StartRK: "r", EndPK: "p", EndRK: "r",
			HasStartPK: true, HasStartRK: true, HasEndPK: true, HasEndRK: true}, []probe{
			{"p", "r", true}, {"p", "q", false}, {"p", "ra", false}, {"o", "r", false}, {"q", "r", false},
		}},
		{"empty spk still bounds rows", KeyRange{StartPK: "", StartRK: "m", HasStartPK: true, HasStartRK: true}, []probe{
			{"", "a", false}, {"", "m", true}, {"a", "", true},
		}},
		// UTF-16 order, not UTF-8: U+1F600 is D83D DE00 in UTF-16, below
		// U+FF61, but its UTF-8 bytes sort above.
		{"utf-16 order", KeyRange{EndPK: "\uff61", HasEndPK: true}, []probe{
			{"\U0001F600", "", true}, {"\uff62", "", false},
		}},
		{"utf-16 order start", KeyRange{StartPK: "\uff61", HasStartPK: true}, []probe{
			{"\U0001F600", "", false}, {"\uff61", "", true},
		}},
	}
	for _, tc := range cases {
		g := &Grant{Kind: ServiceSASGrant, Table: "t", Permissions: "r", keys: tc.k}
		k, bounded := g.KeyRange()
		if !bounded || k != tc.k {
			t.Errorf("%s: KeyRange() = %+v, %v", tc.name, k, bounded)
		}
		for _, p := range tc.probes {
			if got := g.InRange(p.pk, p.rk); got != p.in {
				t.Errorf("%s: InRange(%q, %q) = %v, want %v", tc.name, p.pk, p.rk, got, p.in)
			}
		}
	}
	wantErr(t, OutOfRange(), tableemu.AuthorizationFailure)
}

// The key range arrives through the SAS query string.
func TestKeyRangeFromSAS(t *testing.T) {
	f := copyFields(baseService, "spk", "p1", "srk", "r5", "epk", "p3")
	g := ok(t)(verifyService(t, f, VerifyOptions{}))
	k, bounded := g.KeyRange()
	want := KeyRange{StartPK: "p1", StartRK: "r5", EndPK: "p3", HasStartPK: true, HasStartRK: true, HasEndPK: true}
	if !bounded || k != want {
		t.Fatalf("KeyRange() = %+v, %v", k, bounded)
	}
	for _, p := range []struct {
		pk, rk string
		in     bool
	}{{"p1", "r4", false}, {"p1", "r5", true}, {"p2", "", true}, {"p3", "zzz", true}, {"p4", "", false}} {
		if g.InRange(p.pk, p.rk) != p.in {
			t.Errorf("InRange(%q, %q) != %v", p.pk, p.rk, p.in)
		}
	}
	// A SAS key range is signed: dropping one bound breaks the signature.
	q := serviceSAS(devKey, "devstoreaccount1", f, false)
	q.Del("epk")
	s, _ := ParseSAS(q)
	wantErr(t, sidecar(s.Verify(sasRequest(q, false), dev, VerifyOptions{})), tableemu.AuthenticationFailed)
}
