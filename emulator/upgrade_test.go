package emulator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/tableemu/tableemu/emulator/store/sqlite"
)

// TestFixtureServed: the server opens the schema 2 fixture of the store
// (emulator/store/sqlite/upgrade_test.go) and serves what it holds as the
// service would: an entity with its EDM types, and the CORS rule of its
// service properties.
func TestFixtureServed(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("store/sqlite/testdata/schema0002.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, sqlite.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Location: dir, Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer func() { hs.Close(); s.Close() }()

	req := signed(t, "GET", hs.URL, "/devstoreaccount1/FixtureTypes(PartitionKey='types',RowKey='max')", "")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e map[string]any
	if resp.StatusCode != 200 || json.Unmarshal(body, &e) != nil {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	for k, want := range map[string]any{
		"Int32": float64(2147483647), "Int64": "9223372036854775807", "Int64@odata.type": "Edm.Int64",
		"Double": 1.7976931348623157e308, "Bool": true,
		"DateTime": "9999-12-31T23:59:59.9999999Z", "DateTime@odata.type": "Edm.DateTime",
		"Guid": "ffffffff-ffff-ffff-ffff-ffffffffffff", "Guid@odata.type": "Edm.Guid",
		"Binary": "/wCAfw==", "Binary@odata.type": "Edm.Binary", "String": "ascii",
	} {
		if e[k] != want {
			t.Errorf("%s = %v, want %v", k, e[k], want)
		}
	}

	pre, _ := http.NewRequest("OPTIONS", hs.URL+"/devstoreaccount1/Tables", nil)
	pre.Header.Set("Origin", "http://app.example")
	pre.Header.Set("Access-Control-Request-Method", "PUT")
	resp, err = http.DefaultClient.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "http://app.example" {
		t.Fatalf("preflight from the fixture's CORS rule: %d %v", resp.StatusCode, resp.Header)
	}
}
