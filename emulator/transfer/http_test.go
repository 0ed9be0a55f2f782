package transfer

import (
	"os"
	"strings"
	"testing"

	"github.com/tableemu/tableemu"
)

// TestPaths: the transfer endpoints claim export and import under an
// account, and leave the isolation endpoints' paths to them.
func TestPaths(t *testing.T) {
	for p, want := range map[string]bool{
		"/_tableemu/accounts/a/export":           true,
		"/_tableemu/accounts/a/export/t":         true,
		"/_tableemu/accounts/a/export/t/x":       true, // ours to refuse (InvalidUri)
		"/_tableemu/accounts/a/import/t":         true,
		"/_tableemu/accounts/a/import":           true,
		"/_tableemu/accounts/a/reset":            false,
		"/_tableemu/accounts/a/snapshots/export": false,
		"/_tableemu/accounts/export":             false,
		"/_tableemu/insights":                    false,
	} {
		if got := IsPath(p); got != want {
			t.Errorf("IsPath(%q) = %v", p, got)
		}
	}
	for p, want := range map[string]route{
		"/_tableemu/accounts/a/export":        {op: "manifest", method: "GET", account: "a"},
		"/_tableemu/accounts/a/export/T%31":   {op: "export", method: "GET", account: "a", table: "T1"},
		"/_tableemu/accounts/a/import/Orders": {op: "import", method: "POST", account: "a", table: "Orders"},
	} {
		if got, ok := parsePath(p); !ok || got != want {
			t.Errorf("parsePath(%q) = %+v %v", p, got, ok)
		}
	}
	for _, p := range []string{"/_tableemu/accounts/a/import", "/_tableemu/accounts/a/export/", "/_tableemu/accounts/a/export/t/x", "/_tableemu/accounts/a/export/%zz"} {
		if got, ok := parsePath(p); ok {
			t.Errorf("parsePath(%q) = %+v, want no route", p, got)
		}
	}
}

// TestSpoolCap: a body past the cap is 413 RequestBodyTooLarge; one of
// exactly the cap is spooled whole.
func TestSpoolCap(t *testing.T) {
	f, err := spool(strings.NewReader(strings.Repeat("x", 11)), 10)
	if f != nil {
		f.Close()
		os.Remove(f.Name())
	}
	if e := tableemu.From(err); e.Code != tableemu.RequestBodyTooLarge || e.Status != 413 || !strings.Contains(e.Message, "tableemu import --location") {
		t.Fatalf("11 bytes, cap 10: %v", err)
	}
	f, err = spool(strings.NewReader(strings.Repeat("x", 10)), 10)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if fi, _ := f.Stat(); fi.Size() != 10 {
		t.Fatalf("spooled %d bytes", fi.Size())
	}
}

// TestBodyLines: an import request's body is read as a file of a
// directory is: a byte order mark and Windows line ends are skipped, a
// comment is refused as such, and a place is "line N".
func TestBodyLines(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "body")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\uFEFF{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}\r\n\r\n// fixtures for orders\n")
	src := &bodySource{table: "orders", f: f}
	var got []string
	err = src.entities(func(e Entity) error {
		got = append(got, e.Where+" "+e.PartitionKey+"/"+e.RowKey)
		return nil
	})
	if strings.Join(got, ",") != "line 1 p/1" {
		t.Errorf("entities read: %q", got)
	}
	wantCode(t, err, ErrInvalidEntity, tableemu.InvalidInput, "line 3", "a comment: JSON Lines has none")
}
