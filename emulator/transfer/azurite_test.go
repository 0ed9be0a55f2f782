package transfer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tableemu/tableemu/emulator/transfer/azuritetest"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata/edm"
)

// azuriteDB is the table database a real Azurite wrote once, shared by
// the tests that read it (starting Azurite and filling it takes seconds).
var azuriteDB struct {
	once sync.Once
	file []byte
	data *azuriteData
}

// writtenByAzurite returns a directory holding a copy of the shared
// database, for a test to read or change as it likes, and what was
// written into it.
func writtenByAzurite(t *testing.T) (string, *azuriteData) {
	t.Helper()
	azuriteDB.once.Do(func() {
		t.Run("azurite", func(t *testing.T) {
			a := azuritetest.Start(t, "", []string{azuriteAccounts})
			data := fillAzurite(t, a)
			a.Stop(t) // SIGINT: Azurite saves the database as it ends
			b, err := os.ReadFile(filepath.Join(a.Dir, AzuriteFile))
			if err != nil {
				t.Fatal(err)
			}
			azuriteDB.file, azuriteDB.data = b, data
		})
	})
	if azuriteDB.data == nil {
		t.Skip("Azurite did not run or was not filled (see the first test that asked for it)")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, AzuriteFile), azuriteDB.file, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, azuriteDB.data
}

// TestOpenAzurite reads a directory a real Azurite wrote and finds every
// account, table, entity (every EDM type exactly, Timestamps and ETags as
// Azurite answered them), access policy and CORS rule written to it.
func TestOpenAzurite(t *testing.T) {
	dir, want := writtenByAzurite(t)
	src, err := OpenAzurite(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	accounts, err := src.Accounts()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range accounts {
		names = append(names, a.Name)
	}
	if !reflect.DeepEqual(names, []string{"devstoreaccount1", secondName}) {
		t.Fatalf("accounts %v", names)
	}
	for _, a := range accounts {
		var tables []string
		for _, tb := range a.Tables {
			tables = append(tables, tb.Name)
			if acl := want.acls[a.Name+"/"+tb.Name]; !reflect.DeepEqual(tb.ACL, acl) {
				t.Errorf("%s/%s: ACL %+v, want %+v", a.Name, tb.Name, tb.ACL, acl)
			}
			checkEntities(t, a.Name, tb, want.entities[a.Name][tb.Name])
			// A second read gives the same (a retried import reads again).
			checkEntities(t, a.Name, tb, want.entities[a.Name][tb.Name])
		}
		if len(tables) != len(want.entities[a.Name]) {
			t.Errorf("%s: tables %v, want those of %v", a.Name, tables, want.entities[a.Name])
		}
		checkCors(t, a, want.cors[a.Name])
	}
	skipped := src.(*AzuriteSource).Skipped()
	if len(skipped) != 1 || !strings.Contains(skipped[0], skippedName) || !strings.Contains(skipped[0], "not imported") {
		t.Errorf("Skipped() = %q, want the table %s", skipped, skippedName)
	}
}

// checkEntities compares a table's entities with what was written.
func checkEntities(t *testing.T, account string, tb *Table, want map[string]*wantEntity) {
	t.Helper()
	n := 0
	err := tb.Entities(func(e Entity) error {
		n++
		w := want[e.PartitionKey+"\x00"+e.RowKey]
		if w == nil {
			t.Errorf("%s: not written", e.Where)
			return nil
		}
		if !strings.Contains(e.Where, "account "+account+", table "+tb.Name) {
			t.Errorf("Where %q does not name the account and table", e.Where)
		}
		checkEntity(t, e, w)
		return nil
	})
	if err != nil {
		t.Fatalf("%s/%s: %v", account, tb.Name, err)
	}
	if n != len(want) {
		t.Errorf("%s/%s: %d entities, want %d", account, tb.Name, n, len(want))
	}
}

func checkEntity(t *testing.T, e Entity, w *wantEntity) {
	t.Helper()
	if !e.KeepTimestamp {
		t.Errorf("%s: Timestamp not kept", e.Where)
	}
	if got := edm.FormatTimestamp(e.Timestamp); got != w.timestamp {
		t.Errorf("%s: Timestamp %s, Azurite answered %s", e.Where, got, w.timestamp)
	}
	if got := wire.ETag(e.Timestamp); got != w.etag {
		t.Errorf("%s: the ETag tableemu derives is %s, Azurite answered %s", e.Where, got, w.etag)
	}
	got := map[string]edm.Value{}
	for _, p := range e.Properties {
		got[p.Name] = p.Value
	}
	if len(got) != len(w.props) {
		var names []string
		for n := range got {
			names = append(names, n)
		}
		t.Errorf("%s: %d properties %v, want %d", e.Where, len(got), names, len(w.props))
	}
	for _, p := range w.props {
		v, ok := got[p.name]
		if !ok {
			t.Errorf("%s: no property %s", e.Where, p.name)
			continue
		}
		if !sameValue(v, p.want) {
			t.Errorf("%s: %s = %s %.80s, want %s %.80s", e.Where, p.name, v.T, v.String(), p.want.T, p.want.String())
		}
	}
}

// sameValue is exact equality: the type, and a Double's bits (NaN any).
func sameValue(a, b edm.Value) bool {
	if a.T != b.T {
		return false
	}
	switch a.T {
	case edm.Double:
		return math.Float64bits(a.F) == math.Float64bits(b.F) || math.IsNaN(a.F) && math.IsNaN(b.F)
	case edm.Binary:
		return bytes.Equal(a.B, b.B) && (a.B == nil) == (b.B == nil)
	}
	return a.S == b.S && a.N == b.N
}

// checkCors reads the account's Set Table Service Properties body back
// with the SDK's own model and compares the CORS rules.
func checkCors(t *testing.T, a Account, want []*aztables.CorsRule) {
	t.Helper()
	if a.Properties == nil {
		t.Errorf("%s: no service properties", a.Name)
		return
	}
	var got aztables.ServiceProperties
	if err := xml.Unmarshal(a.Properties, &got); err != nil {
		t.Fatalf("%s: %v\n%s", a.Name, err, a.Properties)
	}
	if !reflect.DeepEqual(got.Cors, want) {
		t.Errorf("%s: CORS rules\n%s\nwant %v", a.Name, a.Properties, want)
	}
	if a.Name == "devstoreaccount1" {
		if m := got.HourMetrics; m == nil || !*m.Enabled || !*m.IncludeAPIs || !*m.RetentionPolicy.Enabled || *m.RetentionPolicy.Days != 7 {
			t.Errorf("HourMetrics not as set:\n%s", a.Properties)
		}
	}
}

// TestOpenAzuriteNoDatabase: a directory without Azurite's table database
// is refused with what to do.
func TestOpenAzuriteNoDatabase(t *testing.T) {
	dir := t.TempDir()
	_, err := OpenAzurite(dir)
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{"no Azurite table data in " + dir + " (__azurite_db_table__.json)", "\ntableemu: ", "--location"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

// TestOpenAzuriteNotLoki: a file that is not LokiJS's JSON, or was cut
// short, is refused as such.
func TestOpenAzuriteNotLoki(t *testing.T) {
	dir, _ := writtenByAzurite(t)
	path := filepath.Join(dir, AzuriteFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{
		"truncated":      b[:len(b)/2],
		"not json":       []byte("this is not JSON"),
		"no tables":      []byte(`{"collections":[{"name":"other","data":[]}]}`),
		"json, not loki": []byte(`[1,2,3]`),
	} {
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := OpenAzurite(dir)
		if err == nil || !strings.Contains(err.Error(), "is not an Azurite table database") {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

// TestOpenAzuriteChanged: a database written again after it was opened
// (Azurite still running) is not read half old, half new.
func TestOpenAzuriteChanged(t *testing.T) {
	dir, _ := writtenByAzurite(t)
	src, err := OpenAzurite(dir)
	if err != nil {
		t.Fatal(err)
	}
	accounts, _ := src.Accounts()
	f, err := os.OpenFile(filepath.Join(dir, AzuriteFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n")
	f.Close()
	err = accounts[0].Tables[0].Entities(func(Entity) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "changed while it was read") || !strings.Contains(err.Error(), "stop Azurite") {
		t.Errorf("error %v", err)
	}
}

// TestOpenAzuriteOlderShapes reads what older Azurites wrote, made from a
// 3.37.0 database by changing what changed since (Azure/Azurite's
// ChangeLog and the history of src/table): a Guid kept as its text (before
// 3.21 the base64 of the text), lastModifiedTime a JavaScript Date's JSON
// in milliseconds with the ETag carrying more digits (before 3.20), and a
// table's collection under its lower-cased name (which Azurite's
// getEntityCollection looks up first).
func TestOpenAzuriteOlderShapes(t *testing.T) {
	dir, want := writtenByAzurite(t)
	path := filepath.Join(dir, AzuriteFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var db map[string]any
	if err := dec.Decode(&db); err != nil {
		t.Fatal(err)
	}
	for _, c := range db["collections"].([]any) {
		c := c.(map[string]any)
		switch c["name"] {
		case "devstoreaccount1$Orders":
			c["name"] = "devstoreaccount1$orders"
		case "devstoreaccount1$Types":
			for _, d := range c["data"].([]any) {
				d := d.(map[string]any)
				props := d["properties"].(map[string]any)
				if g, ok := props["Guid"].(string); ok {
					text, err := base64.StdEncoding.DecodeString(g)
					if err != nil {
						t.Fatalf("Guid %q is not stored as base64: %v", g, err)
					}
					props["Guid"] = string(text)
				}
				ms := d["lastModifiedTime"].(string)[:23] + "Z" // 2026-11-28T23:50:50.743Z
				d["lastModifiedTime"] = ms
				props["Timestamp"] = ms
				d["eTag"] = `W/"datetime'` + url.QueryEscape(ms[:23]+"1234Z") + `'"`
			}
		}
	}
	b, err = json.Marshal(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}

	src, err := OpenAzurite(dir)
	if err != nil {
		t.Fatal(err)
	}
	accounts, _ := src.Accounts()
	for _, tb := range accounts[0].Tables {
		n := 0
		err := tb.Entities(func(e Entity) error {
			n++
			w := *want.entities["devstoreaccount1"][tb.Name][e.PartitionKey+"\x00"+e.RowKey]
			if tb.Name == "Types" {
				ticks, _ := edm.ParseDateTime(w.timestamp[:23] + "Z")
				w.timestamp, w.etag = edm.FormatTimestamp(ticks), wire.ETag(ticks)
			}
			checkEntity(t, e, &w)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != len(want.entities["devstoreaccount1"][tb.Name]) {
			t.Errorf("%s: %d entities", tb.Name, n)
		}
	}
}
