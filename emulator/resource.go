package emulator

import (
	"net"
	"net/url"
	"strings"

	"github.com/tableemu/tableemu"
)

// resKind is the kind of resource a request path names (docs/protocol.md 1.2).
type resKind int

const (
	kService  resKind = iota + 1 // "/" : service properties and stats
	kTables                      // "/Tables", "/Tables()"
	kTable                       // "/Tables('name')"
	kEntities                    // "/name", "/name()"
	kEntity                      // "/name(PartitionKey='p',RowKey='r')"
	kBatch                       // "/$batch"
	// A table name before another resource, "/<t>/<rest>": a client given
	// a table's URL as its account endpoint (a TableClient built from
	// ".../account/t" puts its requests below it). The service reads the
	// first segment as the table (docs/protocol.md 0.1); these kinds are the
	// forms whose answers are known.
	kUnderTableTables  // "/<t>/Tables", "/<t>/Tables()"
	kUnderTableTable   // "/<t>/Tables('x')"
	kUnderTableBatch   // "/<t>/$batch"
	kUnderTableService // "/<t>/" with ?restype=service
)

// resource is the parsed request target.
type resource struct {
	account   string // primary account name
	secondary bool   // addressed as "<account>-secondary"
	hostStyle bool   // account taken from the Host header
	kind      resKind
	table     string
	pk, rk    string
	// rawPath is the path exactly as the client sent it, still
	// percent-encoded: signatures are computed over it (docs/protocol.md 9.5).
	rawPath string
	// keyErr is set when the key literal of an entity path is present but
	// unusable; reported after authentication, like other input errors.
	keyErr *tableemu.Error
}

const secondarySuffix = "-secondary"

// parseResource finds the account and the resource a request addresses.
// Path-style is /<account>/<resource>. Host-style takes the account from
// the first label of the Host ("devstoreaccount1.table.localhost:10002"),
// but only when that label names a configured account: Azurite treats any
// dotted host name as host-style, which breaks path-style URLs through
// names like "emulator.local"; requiring a known account keeps both working.
func (s *Server) parseResource(host, requestURI string) (resource, *tableemu.Error) {
	var res resource
	raw := requestURI
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	if strings.HasPrefix(raw, "http://") || strings.HasPrefix(raw, "https://") {
		// Absolute-form request target (a proxy-style request line).
		if u, err := url.Parse(raw); err == nil {
			raw = u.EscapedPath()
		}
	}
	res.rawPath = raw
	rest := raw
	if acct, ok := s.hostAccount(host); ok {
		res.account, res.hostStyle = acct, true
	} else if s.cosmos && s.cosmosEmulatorHost(host, rest) {
		res.account, res.hostStyle = CosmosEmulatorAccount, true
	} else {
		seg := strings.TrimPrefix(rest, "/")
		i := strings.IndexByte(seg, '/')
		if i < 0 {
			i = len(seg)
		}
		name, err := url.PathUnescape(seg[:i])
		if err != nil || name == "" {
			return res, tableemu.New(tableemu.InvalidUri)
		}
		res.account = name
		rest = seg[i:]
	}
	if strings.HasSuffix(res.account, secondarySuffix) {
		res.account = strings.TrimSuffix(res.account, secondarySuffix)
		res.secondary = true
		// Python's azure-data-tables derives a path-style secondary
		// endpoint by putting "/<account>-secondary" in front of the
		// primary's path, which already starts with "/<account>"
		// (_base_client.py, secondary_hostname): its Get Service Stats is
		// GET /acct-secondary/acct/?restype=service&comp=stats. Azurite
		// serves that, so a drop-in must too. A table name holds no '/',
		// so a repeated account segment followed by '/' is unambiguous.
		if !res.hostStyle {
			if r, ok := strings.CutPrefix(rest, "/"+res.account+"/"); ok {
				rest = "/" + r
			}
		}
	}
	path, err := url.PathUnescape(rest)
	if err != nil {
		return res, tableemu.New(tableemu.InvalidUri)
	}
	path = strings.TrimPrefix(path, "/")
	switch {
	case path == "":
		res.kind = kService
	case path == "Tables" || path == "Tables()":
		res.kind = kTables
	case path == "$batch":
		res.kind = kBatch
	// len: "Tables(')" has the prefix and the suffix sharing its quote
	// (found by FuzzResourcePath; it sliced out of range, a 500).
	case len(path) >= len("Tables('')") && strings.HasPrefix(path, "Tables('") && strings.HasSuffix(path, "')"):
		res.kind = kTable
		res.table = strings.ReplaceAll(path[len("Tables('"):len(path)-2], "''", "'")
	case strings.Contains(path, "/") && !strings.Contains(path[:strings.IndexByte(path, '/')], "("):
		slash := strings.IndexByte(path, '/')
		res.table = path[:slash]
		if res.kind = underTable(path[slash+1:]); res.kind == 0 {
			// What follows is unknown; a first segment that cannot be a
			// table name is the mistake to report ("a//" from a client
			// given that name: docs/protocol.md 0.1).
			if err := entityTableNameError(res.table); err != nil {
				return res, err
			}
			return res, tableemu.New(tableemu.InvalidUri)
		}
	default:
		open := strings.IndexByte(path, '(')
		if open < 0 {
			if strings.ContainsAny(path, "/)") {
				return res, tableemu.New(tableemu.InvalidUri)
			}
			res.kind, res.table = kEntities, path
			break
		}
		res.table = path[:open]
		args := path[open:]
		if args == "()" {
			res.kind = kEntities
			break
		}
		if !strings.HasSuffix(args, ")") || strings.Contains(res.table, "/") {
			return res, tableemu.New(tableemu.InvalidUri)
		}
		res.kind = kEntity
		pk, rk, ok := parseKeyArgs(args[1 : len(args)-1])
		if !ok {
			return res, tableemu.Newf(tableemu.InvalidInput, "Bad Request - Error in query syntax.")
		}
		res.pk, res.rk = pk, rk
		res.keyErr = urlKeyError(pk, rk)
	}
	return res, nil
}

// underTable is the kind of "<rest>" in "/<t>/<rest>", or 0 for the forms
// tableemu does not know the service's answer to (400 InvalidUri).
func underTable(rest string) resKind {
	switch {
	case rest == "Tables" || rest == "Tables()":
		return kUnderTableTables
	case strings.HasPrefix(rest, "Tables(") && strings.HasSuffix(rest, ")"):
		return kUnderTableTable
	case rest == "$batch":
		return kUnderTableBatch
	case rest == "":
		return kUnderTableService
	}
	return 0
}

// hostAccount returns the account named by a host-style Host header,
// unless --disableProductStyleUrl says to read the path only.
func (s *Server) hostAccount(host string) (string, bool) {
	if s.cfg.DisableProductStyleURL {
		return "", false
	}
	return s.accountInHost(host)
}

// accountInHost returns the first label of a host name (with its
// "-secondary" suffix, if any) when it names a configured account.
func (s *Server) accountInHost(host string) (string, bool) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	dot := strings.IndexByte(host, '.')
	if dot <= 0 || net.ParseIP(strings.Trim(host, "[]")) != nil {
		return "", false
	}
	label := strings.ToLower(host[:dot])
	if _, ok := s.accounts[strings.TrimSuffix(label, secondarySuffix)]; !ok {
		return "", false
	}
	return label, true
}

// cosmosEmulatorHost reports whether a request under the cosmos profile is
// addressed as to Microsoft's Azure Cosmos DB emulator: its documented
// connection string (config.go, CosmosEmulatorAccount) makes the SDKs send
// Host "localhost:8902" and paths with no account segment ("/Tables",
// "/mytable()"), signed for account "localhost" as "/localhost/Tables".
// So a request whose host is localhost (any case, any port) and whose first
// path segment does not name a configured account (with or without
// "-secondary") is the account localhost's, host-style without a dot.
// Path-style URLs on localhost ("http://localhost:8902/devstoreaccount1/…",
// what docs/cosmos.md gives for the SDKs' Cosmos mode) keep their
// account. The one ambiguity, a table of account localhost named like a
// configured account and addressed by its bare name (Insert Entity's
// "POST /devstoreaccount1"), is read as path-style (docs/cosmos.md). Not
// in the evidence (the emulator was not recorded); tableemu chooses what
// the emulator's users' connection strings need. --disableProductStyleUrl
// turns this off, as it turns off host-style addressing.
func (s *Server) cosmosEmulatorHost(host, path string) bool {
	if s.cfg.DisableProductStyleURL {
		return false
	}
	if _, ok := s.accounts[CosmosEmulatorAccount]; !ok {
		return false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if !strings.EqualFold(host, "localhost") {
		return false
	}
	seg := strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(seg, '/'); i >= 0 {
		seg = seg[:i]
	}
	if name, err := url.PathUnescape(seg); err == nil {
		seg = name
	}
	_, named := s.accounts[strings.TrimSuffix(seg, secondarySuffix)]
	return !named
}

// parseKeyArgs reads "PartitionKey='p',RowKey='r'" (either order, optional
// spaces), undoing the doubled quotes clients write inside the literals
// (docs/protocol.md 1.3). The Go SDK does not double quotes inside $batch parts
// (docs/protocol.md 13), so when the strict reading fails the literals are taken
// greedily between the fixed delimiters instead.
func parseKeyArgs(s string) (pk, rk string, ok bool) {
	if pk, rk, ok = parseKeyArgsStrict(s); ok {
		return pk, rk, true
	}
	const pre, mid = "PartitionKey='", "',RowKey='"
	// len(s) > len(pre): the closing quote must not be pre's own
	// ("PartitionKey='" alone once sliced out of range, a 500).
	if len(s) <= len(pre) || !strings.HasPrefix(s, pre) || !strings.HasSuffix(s, "'") {
		return "", "", false
	}
	body := s[len(pre) : len(s)-1]
	i := strings.LastIndex(body, mid)
	if i < 0 {
		return "", "", false
	}
	return strings.ReplaceAll(body[:i], "''", "'"), strings.ReplaceAll(body[i+len(mid):], "''", "'"), true
}

func parseKeyArgsStrict(s string) (pk, rk string, ok bool) {
	var havePK, haveRK bool
	for {
		s = strings.TrimLeft(s, " ")
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return "", "", false
		}
		name := strings.TrimSpace(s[:eq])
		s = strings.TrimLeft(s[eq+1:], " ")
		if !strings.HasPrefix(s, "'") {
			return "", "", false
		}
		var val strings.Builder
		i := 1
		for {
			if i >= len(s) {
				return "", "", false
			}
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					val.WriteByte('\'')
					i += 2
					continue
				}
				break
			}
			val.WriteByte(s[i])
			i++
		}
		switch {
		case name == "PartitionKey" && !havePK:
			pk, havePK = val.String(), true
		case name == "RowKey" && !haveRK:
			rk, haveRK = val.String(), true
		default:
			return "", "", false
		}
		s = strings.TrimLeft(s[i+1:], " ")
		if s == "" {
			return pk, rk, havePK && haveRK
		}
		if s[0] != ',' {
			return "", "", false
		}
		s = s[1:]
	}
}

// urlKeyError classifies a key addressed in the URL that the service
// refuses (docs/protocol.md 1.5): '/' and '\' break its URL parsing (InvalidInput,
// "Bad Request - Error in query syntax."); other forbidden characters are
// OutOfRangeInput. Control characters the service's HTTP layer rejects
// outright get the same OutOfRangeInput here, so the caller sees a code.
func urlKeyError(keys ...string) *tableemu.Error {
	for _, k := range keys {
		if strings.ContainsAny(k, `/\`) {
			return tableemu.Newf(tableemu.InvalidInput, "Bad Request - Error in query syntax.")
		}
	}
	for _, k := range keys {
		for _, r := range k {
			if r == '#' || r == '?' || r < 0x20 || (r >= 0x7F && r <= 0x9F) {
				return tableemu.New(tableemu.OutOfRangeInput)
			}
		}
	}
	return nil
}
