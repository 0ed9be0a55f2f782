package transfer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata/edm"
)

// From Azurite, with its data (docs/transfer.md): Azurite keeps its table
// service in one LokiJS database, AzuriteFile in the directory it runs in
// (its --location). LokiJS saves it as the JSON of the whole database
// ({"collections":[{"name":…,"data":[documents…],…},…],…}); Azurite's
// src/table/persistence/LokiTableMetadataStore.ts (Azure/Azurite, read at
// 3.37.0) names the collections:
//
//   - "$TABLES_COLLECTION$": one document per table,
//     {"account","table","tableAcl":[{"id","accessPolicy":{"start","expiry","permission"}}]};
//   - "$SERVICES_COLLECTION$": one per account that set its service
//     properties, {"accountName","cors":[…],"logging":{…},"hourMetrics":{…},"minuteMetrics":{…}}
//     (azurite_props.go);
//   - "<account>$<table>": a table's entities, each
//     {"PartitionKey","RowKey","properties":{…},"lastModifiedTime","eTag"},
//     where properties is the entity as the client sent it on the wire —
//     "@odata.type" annotations, Int64 as a string, Double's NaN and
//     ±Infinity as strings, DateTime as sent (a "Z" added when it had
//     none), Binary as base64 — plus PartitionKey, RowKey and Timestamp,
//     except that a Guid is stored as the base64 of its text
//     (src/table/entity/EdmGuid.ts, since 3.21; older versions kept the
//     text, and both are read).
//
// So an entity's properties are read by the wire's own decoder
// (wire.DecodeEntity), as if the client had sent them to tableemu; Import
// checks them against the service's limits.
//
// The file is read as a stream: opening it notes where each collection's
// documents start, and a table's entities are decoded one at a time
// from there when its Entities is called, so a large database is never
// held in memory.

// AzuriteFile is the name of Azurite's table database in its directory.
const AzuriteFile = "__azurite_db_table__.json"

const (
	azuriteTables   = "$TABLES_COLLECTION$"
	azuriteServices = "$SERVICES_COLLECTION$"
)

// AzuriteSource is an Azurite data directory opened by OpenAzurite.
type AzuriteSource struct {
	path     string
	size     int64
	modTime  time.Time
	accounts []Account
	skipped  []string
}

// OpenAzurite opens the table database of the Azurite data directory dir
// (Azurite's --location) for an import: every account's tables with their
// entities, Timestamps (kept: Azurite's ETag is derived from the same
// instant, as tableemu's is, so ETags are kept too) and access policies,
// and each account's service properties. Stop Azurite first: it writes
// the file when it ends on Ctrl-C (SIGINT) and otherwise only every 5
// seconds. A table whose name Azure does not allow is left out and named
// by Skipped; the returned Source is an *AzuriteSource.
func OpenAzurite(dir string) (Source, error) {
	path := filepath.Join(dir, AzuriteFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("no Azurite table data in %s (%s): %w\ntableemu: give the directory Azurite ran in "+
			"(its --location, else the directory it was started from); Azurite writes %s there when its table service "+
			"stops on Ctrl-C, and writes nothing with --inMemoryPersistence", dir, AzuriteFile, err, AzuriteFile)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	s := &AzuriteSource{path: path, size: fi.Size(), modTime: fi.ModTime()}
	colls, err := scanLoki(f)
	if err != nil {
		return nil, s.notLoki(err)
	}
	if err := s.read(colls); err != nil {
		return nil, err
	}
	return s, nil
}

// Accounts returns the accounts that have tables or service properties,
// by name, each account's tables by name.
func (s *AzuriteSource) Accounts() ([]Account, error) { return s.accounts, nil }

// Skipped names the tables OpenAzurite left out, and why.
func (s *AzuriteSource) Skipped() []string { return s.skipped }

// Close releases nothing: each read opens the file and closes it.
func (s *AzuriteSource) Close() error { return nil }

func (s *AzuriteSource) notLoki(err error) error {
	return fmt.Errorf("%s is not an Azurite table database (LokiJS's JSON): %v\n"+
		"tableemu: give the directory of an Azurite 3 table service, stopped with Ctrl-C so that it saved the file whole", s.path, err)
}

// read builds the accounts from the tables and services collections.
func (s *AzuriteSource) read(colls map[string]int64) error {
	tablesAt, ok := colls[azuriteTables]
	if !ok {
		return s.notLoki(fmt.Errorf("it has no %s collection", azuriteTables))
	}
	accounts := map[string]*Account{}
	account := func(name string) *Account {
		a := accounts[name]
		if a == nil {
			a = &Account{Name: name}
			accounts[name] = a
		}
		return a
	}
	if at, ok := colls[azuriteServices]; ok {
		err := s.eachDoc(at, func(sc *lokiScanner) error {
			var doc azuriteService
			if err := s.decodeDoc(sc, &doc, "a document of "+azuriteServices); err != nil {
				return err
			}
			if doc.AccountName == "" {
				return nil
			}
			body, err := doc.setBody()
			if err != nil {
				return fmt.Errorf("azurite: account %s, service properties: %v", doc.AccountName, err)
			}
			if body != nil {
				account(doc.AccountName).Properties = body
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	err := s.eachDoc(tablesAt, func(sc *lokiScanner) error {
		var doc azuriteTable
		if err := s.decodeDoc(sc, &doc, "a document of "+azuriteTables); err != nil {
			return err
		}
		where := fmt.Sprintf("azurite: account %s, table %s", doc.Account, doc.Table)
		if why := tableNameRule(doc.Table); why != "" {
			s.skipped = append(s.skipped, fmt.Sprintf("%s: not imported: %s", where, why))
			return nil
		}
		key := doc.Account + "$" + strings.ToLower(doc.Table)
		if seen[key] {
			s.skipped = append(s.skipped, fmt.Sprintf("%s: not imported: the account has another table of that name in another case, and table names are case-insensitive", where))
			return nil
		}
		seen[key] = true
		acl, err := doc.acl()
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		// Azurite looks a table's entities up under the lower-cased name
		// first, then under the name as created (getEntityCollection:
		// some versions created the collection lower-cased).
		at, found := colls[doc.Account+"$"+strings.ToLower(doc.Table)]
		if !found {
			at, found = colls[doc.Account+"$"+doc.Table]
		}
		t := &Table{Name: doc.Table, ACL: acl}
		acct, table := doc.Account, doc.Table
		t.Entities = func(fn func(Entity) error) error {
			if !found {
				return nil // a table without its collection: Azurite answers TableNotExist to its entity operations
			}
			return s.entities(at, acct, table, fn)
		}
		a := account(doc.Account)
		a.Tables = append(a.Tables, t)
		return nil
	})
	if err != nil {
		return err
	}
	names := make([]string, 0, len(accounts))
	for n := range accounts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a := accounts[n]
		sort.Slice(a.Tables, func(i, j int) bool { return a.Tables[i].Name < a.Tables[j].Name })
		s.accounts = append(s.accounts, *a)
	}
	return nil
}

// tableNameRule says why Azure refuses a table name ("" when it does
// not): 3 to 63 letters and digits, starting with a letter, and not
// "tables" (docs/protocol.md 1.4). Azurite before 3.13 checked no names,
// and every version lets names starting "$Metric" through.
func tableNameRule(name string) string {
	if len(name) < 3 || len(name) > 63 {
		return "Azure's table names are 3 to 63 characters long"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return "Azure's table names are letters and digits, starting with a letter"
		}
	}
	if strings.EqualFold(name, "tables") {
		return `"tables" is reserved`
	}
	return ""
}

type azuriteTable struct {
	Account  string `json:"account"`
	Table    string `json:"table"`
	TableACL []struct {
		ID           string `json:"id"`
		AccessPolicy *struct {
			Start      string `json:"start"`
			Expiry     string `json:"expiry"`
			Permission string `json:"permission"`
		} `json:"accessPolicy"`
	} `json:"tableAcl"`
}

// acl is the table's stored access policies; never nil, since Azurite
// has them for every table (none is an empty list).
func (d *azuriteTable) acl() ([]store.SignedIdentifier, error) {
	out := make([]store.SignedIdentifier, 0, len(d.TableACL))
	for _, a := range d.TableACL {
		si := store.SignedIdentifier{ID: a.ID}
		if p := a.AccessPolicy; p != nil {
			var err error
			if si.Start, err = aclTime(p.Start); err != nil {
				return nil, fmt.Errorf("access policy %q: start %v", a.ID, err)
			}
			if si.Expiry, err = aclTime(p.Expiry); err != nil {
				return nil, fmt.Errorf("access policy %q: expiry %v", a.ID, err)
			}
			si.Permission = p.Permission
		}
		out = append(out, si)
	}
	return out, nil
}

// aclTime reads a policy time as Azurite keeps it: the text the client
// sent, or a JavaScript Date's JSON ("2026-01-02T03:04:05.000Z").
func aclTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an ISO 8601 time", s)
	}
	return t.UTC(), nil
}

// azuriteEntity is what is read of a document of a table's collection
// (lokiScanner.entityDoc).
type azuriteEntity struct {
	PartitionKey, RowKey *string
	Properties           []byte // the JSON object
	LastModifiedTime     string
}

// entities calls fn with each entity of the collection whose documents
// start at offset at.
func (s *AzuriteSource) entities(at int64, account, table string, fn func(Entity) error) error {
	var doc azuriteEntity
	return s.eachDoc(at, func(sc *lokiScanner) error {
		if err := sc.entityDoc(&doc); err != nil {
			return s.notLoki(err)
		}
		if doc.PartitionKey == nil || doc.RowKey == nil {
			return fmt.Errorf("azurite: account %s, table %s: an entity's document has no PartitionKey or RowKey (properties %.200s)", account, table, doc.Properties)
		}
		where := fmt.Sprintf("azurite: account %s, table %s, entity (%s, %s)", account, table, *doc.PartitionKey, *doc.RowKey)
		e, keep, err := azuriteEntityValue(&doc)
		if err != nil {
			// A value Azurite kept and the service refuses (Azurite
			// checks few): the import's refusal of an entity.
			return entityError(ErrInvalidEntity, err, table, where)
		}
		return fn(Entity{Entity: e, Where: where, KeepTimestamp: keep})
	})
}

// azuriteEntityValue converts one stored entity. Its Timestamp is kept
// when lastModifiedTime reads as one: it is the Timestamp Azurite
// answered with, and since 3.20 its ETag is W/"datetime'<that instant>'",
// the ETag tableemu derives from the Timestamp (wire.ETag). Before 3.20
// lastModifiedTime had milliseconds and the ETag was not always made from
// it (3.17 gave it digits of its own; ChangeLog 3.17.0, 3.20.0): the
// Timestamp is kept and the ETag may then differ.
func azuriteEntityValue(doc *azuriteEntity) (*edm.Entity, bool, error) {
	props := []byte(doc.Properties)
	if len(props) == 0 || string(props) == "null" {
		props = []byte("{}")
	}
	if bytes.Contains(props, []byte(`"Edm.Guid"`)) {
		props = guidsAsText(props)
	}
	d, err := wire.DecodeEntity(props)
	if err != nil {
		return nil, false, err
	}
	e := &d.Entity
	e.PartitionKey, e.RowKey = *doc.PartitionKey, *doc.RowKey
	ts, err := edm.ParseDateTime(doc.LastModifiedTime)
	if err != nil {
		return e, false, nil
	}
	e.Timestamp = ts
	return e, true, nil
}

// guidsAsText rewrites the properties object with each Edm.Guid value that
// is the base64 of a GUID's text replaced by that text: the value Azurite
// answers with (EdmGuid.toJsonPropertyValueString). A value that is not
// (a GUID stored before 3.21) is left as it is, and so is the whole
// object when it is not a flat JSON object: the decoder then says what is
// wrong with it.
func guidsAsText(props []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(props))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return props
	}
	type member struct {
		name  string
		value any
	}
	var members []member
	guid := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return props
		}
		name, _ := t.(string)
		v, err := dec.Token()
		if err != nil {
			return props
		}
		if _, nested := v.(json.Delim); nested {
			return props
		}
		if prop, ok := strings.CutSuffix(name, "@odata.type"); ok && v == "Edm.Guid" {
			guid[prop] = true
		}
		members = append(members, member{name, v})
	}
	out := append(make([]byte, 0, len(props)), '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = edm.AppendJSONString(out, m.name)
		out = append(out, ':')
		switch v := m.value.(type) {
		case string:
			if guid[m.name] {
				if b, err := base64.StdEncoding.DecodeString(v); err == nil {
					if _, err := edm.ParseGuid(string(b)); err == nil {
						v = string(b)
					}
				}
			}
			out = edm.AppendJSONString(out, v)
		case json.Number:
			out = append(out, v...)
		case bool:
			out = fmt.Appendf(out, "%t", v)
		default:
			out = append(out, "null"...)
		}
	}
	return append(out, '}')
}

// eachDoc calls fn once for each document of the data array that starts
// at offset at, fn reading it from sc, and stops at fn's first error.
func (s *AzuriteSource) eachDoc(at int64, fn func(sc *lokiScanner) error) error {
	f, err := os.Open(s.path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != s.size || !fi.ModTime().Equal(s.modTime) {
		return fmt.Errorf("%s changed while it was read\ntableemu: stop Azurite (Ctrl-C) before importing its data, and import again", s.path)
	}
	if _, err := f.Seek(at, io.SeekStart); err != nil {
		return err
	}
	sc := newLokiScanner(f, at)
	if err := sc.expect('['); err != nil {
		return s.notLoki(err)
	}
	return sc.elements(func() error { return fn(sc) })
}

// decodeDoc reads the next document into v with encoding/json; a document
// that is not JSON makes the file not Azurite's, one of another shape is
// what.
func (s *AzuriteSource) decodeDoc(sc *lokiScanner, v any, what string) error {
	raw, err := sc.rawValue()
	if err != nil {
		return s.notLoki(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: %v", what, err)
		}
		return s.notLoki(err)
	}
	return nil
}
