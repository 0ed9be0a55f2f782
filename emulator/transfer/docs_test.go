package transfer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tableemu/tableemu"
)

// docSection returns the text of docs/transfer.md's section heading up to
// the next section.
func docSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/transfer.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n## "+heading+"\n")
	if i < 0 {
		t.Fatalf("docs/transfer.md has no section %q", heading)
	}
	s = s[i+1:]
	if j := strings.Index(s[3:], "\n## "); j >= 0 {
		s = s[:j+4]
	}
	return s
}

// docBlock returns the body of the section's first ``` block of kind.
func docBlock(t *testing.T, section, kind string) string {
	t.Helper()
	i := strings.Index(section, "```"+kind+"\n")
	if i < 0 {
		t.Fatalf("no ```%s block", kind)
	}
	body := section[i+len("```"+kind+"\n"):]
	return body[:strings.Index(body, "```")]
}

// TestDocs holds docs/transfer.md's JSON Lines section to the code: its
// table file imports and exports again to the same bytes, its manifest is
// one OpenDir reads, and its refusal is the one an import gives.
func TestDocs(t *testing.T) {
	sec := docSection(t, "Export and import: JSON Lines")
	st := engines[0].open(t)
	tr := newTransfer(st)

	lines := docBlock(t, sec, "jsonl")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "orders.jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	importDir(t, tr, dir, Options{Account: "a1"})
	out := exportDir(t, tr, "a1")
	if got, err := os.ReadFile(filepath.Join(out, "orders.jsonl")); err != nil || string(got) != lines {
		t.Errorf("the documented file exports again as\n%s(%v)", got, err)
	}

	manifestDir := t.TempDir()
	for name, text := range map[string]string{ManifestName: docBlock(t, sec, "json"), "orders.jsonl": lines} {
		if err := os.WriteFile(filepath.Join(manifestDir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := OpenDir(manifestDir)
	if err != nil {
		t.Fatal(err)
	}
	acct, _ := src.Accounts()
	if len(acct) != 1 || len(acct[0].Tables) != 1 || len(acct[0].Tables[0].ACL) != 1 || acct[0].Properties == nil {
		t.Errorf("the documented manifest reads as %+v", acct)
	}

	refusal := strings.TrimSpace(docBlock(t, sec, "text"))
	bad := `{"PartitionKey":"p","RowKey":"1"}` + "\n" + `{"PartitionKey":"p","RowKey":"2"}` + "\n" +
		`{"PartitionKey":"p","RowKey":"3","S":"` + strings.Repeat("x", 32769) + `"}` + "\n"
	badDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(badDir, "orders.jsonl"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if src, err = OpenDir(badDir); err != nil {
		t.Fatal(err)
	}
	_, err = tr.Import(ctx, src, Options{Account: "a2"})
	e := tableemu.From(err)
	_, hint, _ := strings.Cut(e.Message, tableemu.HintPrefix)
	code, docHint, _ := strings.Cut(refusal, " tableemu: ")
	if !strings.HasPrefix(code, string(e.Code)+": ") || hint != docHint {
		t.Errorf("the documented refusal is\n%s\nan import's\n%s: … tableemu: %s", refusal, e.Code, hint)
	}
	if !bytes.Contains([]byte(e.Message), []byte("The property value exceeds the maximum allowed size (64KB).")) {
		t.Errorf("not the service's message: %q", e.Message)
	}
}
