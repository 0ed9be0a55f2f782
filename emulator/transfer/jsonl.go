package transfer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata/edm"
)

// Export and import as JSON Lines (docs/transfer.md, "Export and import:
// JSON Lines"): a directory with one <table>.jsonl per table, one entity a
// line as the Table service's JSON writes it in minimal metadata (without
// odata.etag: a file holds data, not versions), so that every type JSON
// cannot tell carries its "X@odata.type" (Int64, DateTime, Guid, Binary,
// Double NaN and ±Inf, and Doubles with whole values), and the entity's
// Timestamp; plus a manifest, tableemu.json, with what the lines cannot
// hold: the account's service properties and each table's stored access
// policies. A directory of hand-written <table>.jsonl files, with no
// manifest and no Timestamps, imports as well.

// ManifestName is the manifest's file name in an export's directory.
const ManifestName = "tableemu.json"

// manifestFormat names the manifest's format and version.
const manifestFormat = "tableemu-jsonl/1"

// manifest is tableemu.json.
type manifest struct {
	Format string `json:"format"`
	// Account is the account exported, for the reader: an import goes to
	// the account it is told (Options.Account), whatever this says.
	Account string `json:"account,omitempty"`
	// ServiceProperties is the Get Table Service Properties body.
	ServiceProperties string          `json:"serviceProperties,omitempty"`
	Tables            []manifestTable `json:"tables"`
}

type manifestTable struct {
	Name string      `json:"name"`
	File string      `json:"file"`
	ACL  []policyDoc `json:"acl,omitempty"`
}

// policyDoc is a stored access policy; times are RFC 3339 in UTC, empty
// when the policy leaves them to the SAS (on reading, any form a stored
// policy accepts: auth.ParseTime).
type policyDoc struct {
	ID         string `json:"id"`
	Start      string `json:"start,omitempty"`
	Expiry     string `json:"expiry,omitempty"`
	Permission string `json:"permission,omitempty"`
}

// maxLine is the longest line read. The service's largest entity is
// 1 MiB by its own measure (wire.MaxEntitySize), which counts a string's
// characters as two bytes; written as JSON, a string of control characters
// ("\u0001", six bytes each) or of astral characters escaped as surrogate
// pairs is up to three times that, and names and annotations add less
// than 100 KiB. No entity the service stores needs a longer line.
const maxLine = 4 << 20

// OpenDir opens an export's directory, or a directory of hand-written
// <table>.jsonl files, or a single FILE.jsonl (one table, named after the
// file), for Import. Every *.jsonl file in the directory is a table named
// after it; tableemu.json, when present, adds the service properties and
// the tables' stored access policies. The source's account has no name:
// the import goes to Options.Account. Entities are read when Import
// writes their table, line by line, never a whole file in memory.
//
// Lines are JSON objects, one entity each, as wire.DecodeEntity reads a
// request body; a blank line (only spaces) is skipped; there are no
// comments (JSON Lines has none, and a tool reading the files as JSON
// Lines would stop at one), so a line starting with // is an error. A
// line's Timestamp, when it has one, is kept (Entity.KeepTimestamp);
// without one the store stamps the entity as an insert does.
func OpenDir(path string) (Source, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, openError(err)
	}
	if !fi.IsDir() {
		if !strings.EqualFold(filepath.Ext(path), ".jsonl") {
			return nil, fail(ErrInvalidOptions, tableemu.New(tableemu.InvalidInput).WithHint(
				"%s is neither a directory nor a .jsonl file: import a directory of <table>.jsonl files (an export), or one <table>.jsonl.", path))
		}
		dir, file := filepath.Split(path)
		tb := &Table{Name: tableOfFile(file)}
		tb.Entities = linesOf(filepath.Join(dir, file), file, tb.Name)
		return &dirSource{acct: Account{Tables: []*Table{tb}}}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, openError(err)
	}
	var m manifest
	have := false
	if b, err := os.ReadFile(filepath.Join(path, ManifestName)); err == nil {
		if err := decodeManifest(b, &m); err != nil {
			return nil, err
		}
		have = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, openError(err)
	}
	src := &dirSource{}
	if m.ServiceProperties != "" {
		src.acct.Properties = []byte(m.ServiceProperties)
	}
	named := map[string]bool{}
	for i, mt := range m.Tables {
		if mt.File == "" {
			mt.File = mt.Name + ".jsonl"
		}
		if !filepath.IsLocal(mt.File) || strings.ContainsAny(mt.File, `/\`) {
			return nil, manifestError("table %s: file %q is not a file name in the export's directory", mt.Name, mt.File)
		}
		acl, err := mt.policies()
		if err != nil {
			return nil, manifestError("table %s (tables[%d]): %v", mt.Name, i, err)
		}
		file := filepath.Join(path, mt.File)
		if _, err := os.Stat(file); err != nil {
			return nil, manifestError("table %s: its file %s: %v", mt.Name, mt.File, err)
		}
		named[mt.File] = true
		src.acct.Tables = append(src.acct.Tables, &Table{Name: mt.Name, ACL: acl, Entities: linesOf(file, mt.File, mt.Name)})
	}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.EqualFold(filepath.Ext(name), ".jsonl") || named[name] {
			continue
		}
		t := tableOfFile(name)
		src.acct.Tables = append(src.acct.Tables, &Table{Name: t, Entities: linesOf(filepath.Join(path, name), name, t)})
	}
	if !have && len(src.acct.Tables) == 0 {
		return nil, fail(ErrInvalidOptions, tableemu.New(tableemu.InvalidInput).WithHint(
			"%s holds no <table>.jsonl file and no %s: nothing to import.", path, ManifestName))
	}
	return src, nil
}

func openError(err error) error {
	return fail(ErrInvalidOptions, tableemu.New(tableemu.InvalidInput).WithDetail("%v", err).WithHint("%v", err))
}

func manifestError(format string, args ...any) error {
	why := fmt.Sprintf(format, args...)
	return fail(ErrInvalidOptions, tableemu.New(tableemu.InvalidInput).WithDetail("%s: %s", ManifestName, why).WithHint(
		"%s: %s. The manifest is written by tableemu export; remove it to import the .jsonl files alone.", ManifestName, why))
}

func decodeManifest(b []byte, m *manifest) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(m); err != nil {
		return manifestError("not a manifest: %v", err)
	}
	if m.Format != manifestFormat {
		return manifestError("format %q, not %q (written by another version of tableemu?)", m.Format, manifestFormat)
	}
	return nil
}

func (mt manifestTable) policies() ([]store.SignedIdentifier, error) {
	if mt.ACL == nil {
		return nil, nil
	}
	out := make([]store.SignedIdentifier, 0, len(mt.ACL))
	for _, p := range mt.ACL {
		si := store.SignedIdentifier{ID: p.ID, Permission: p.Permission}
		for _, f := range []struct {
			name, v string
			t       *time.Time
		}{{"start", p.Start, &si.Start}, {"expiry", p.Expiry, &si.Expiry}} {
			if f.v == "" {
				continue
			}
			t, ok := auth.ParseTime(f.v)
			if !ok {
				return nil, fmt.Errorf("policy %q: %s %q is not an ISO 8601 UTC time", p.ID, f.name, f.v)
			}
			*f.t = t
		}
		out = append(out, si)
	}
	return out, nil
}

// tableOfFile is the table a .jsonl file holds: its name without the
// extension.
func tableOfFile(name string) string { return name[:len(name)-len(filepath.Ext(name))] }

type dirSource struct{ acct Account }

func (s *dirSource) Accounts() ([]Account, error) { return []Account{s.acct}, nil }
func (s *dirSource) Close() error                 { return nil }

// linesOf reads the entities of one .jsonl file (shown as name in
// errors), opening it at each call.
func linesOf(path, name, table string) func(fn func(Entity) error) error {
	return func(fn func(Entity) error) error {
		f, err := os.Open(path)
		if err != nil {
			return openError(err)
		}
		defer f.Close()
		return readLines(f, name, table, fn)
	}
}

// readLines calls fn with the entity of each line of r. An entity's
// Where is "name:N", or "line N" when name is "" (an import request's
// body, which Client.Import maps back to the source's place).
func readLines(r io.Reader, name, table string, fn func(Entity) error) error {
	at := func(line int) string {
		if name == "" {
			return "line " + strconv.Itoa(line)
		}
		return name + ":" + strconv.Itoa(line)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\uFEFF"))
		}
		b = bytes.TrimRight(b, "\r")
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		where := at(line)
		e, err := decodeLine(b)
		if err != nil {
			if bytes.HasPrefix(bytes.TrimSpace(b), []byte("//")) {
				err = tableemu.New(tableemu.InvalidInput).WithDetail("a comment: JSON Lines has none; remove the line")
			}
			return entityError(ErrInvalidEntity, err, table, where)
		}
		e.Where = where
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return entityError(ErrInvalidEntity, tableemu.New(tableemu.EntityTooLarge).WithDetail(
				"the line is longer than %d MiB, longer than any entity the service stores", maxLine>>20), table, at(line+1))
		}
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return nil
}

// decodeLine reads one line's entity: the keys, the properties as the
// service reads a request body (wire.DecodeEntity), and the Timestamp,
// which the service ignores there and an import keeps. The entity's
// strings point into b.
func decodeLine(b []byte) (Entity, error) {
	d, err := wire.DecodeEntityShared(b)
	if err != nil {
		return Entity{}, err
	}
	if !d.HasPartitionKey || !d.HasRowKey {
		return Entity{}, tableemu.New(tableemu.PropertiesNeedValue).WithDetail("an entity needs a PartitionKey and a RowKey, as strings")
	}
	e := Entity{Entity: &d.Entity}
	if d.HasTimestamp {
		if d.Timestamp == "" {
			return Entity{}, tableemu.New(tableemu.InvalidInput).WithDetail("Timestamp must be a string, a date and time such as \"2024-05-06T07:08:09.1234567Z\"")
		}
		ts, err := edm.ParseDateTime(d.Timestamp)
		if err != nil {
			return Entity{}, tableemu.New(tableemu.InvalidInput).WithDetail("Timestamp %q: %v", d.Timestamp, err)
		}
		e.Timestamp, e.KeepTimestamp = ts, true
	}
	return e, nil
}

// DirSink writes an export as JSON Lines into a directory (NewDirSink).
type DirSink struct {
	dir       string
	overwrite bool
	m         manifest
	// done are the tables written, each in its temporary file until
	// Close renames them all; cur is the one being written.
	done    []sinkFile
	cur     *sinkFile
	w       *bufio.Writer
	buf     []byte
	enc     wire.Options
	aborted bool
	closed  bool
}

type sinkFile struct {
	tmp, file string
	f         *os.File
}

// placeFiles renames a sink's finished files from their temporary names
// into dir; with overwrite, it then removes the files with extension ext
// that this export did not write (the tables of an older export), so
// that the directory holds exactly the account exported.
func placeFiles(dir string, done []sinkFile, overwrite bool, ext string) error {
	written := map[string]bool{}
	for _, c := range done {
		if err := os.Rename(c.tmp, filepath.Join(dir, c.file)); err != nil {
			return err
		}
		written[c.file] = true
	}
	if !overwrite {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if n := e.Name(); !e.IsDir() && strings.EqualFold(filepath.Ext(n), ext) && !written[n] {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// NewDirSink returns a sink that writes an export into dir, creating it if
// needed. A directory that already holds an export (a tableemu.json or a
// .jsonl file) is refused with ErrExportExists unless overwrite is set;
// then the .jsonl files the new export does not write are removed when it
// closes, so that the directory holds the new export alone.
//
// Each table is written to a temporary file in dir, and every file is
// renamed into place, the manifest last, only when Close ends an export
// that did not fail (Export calls Abort when it fails): a reader never
// finds a table cut short, and a failed export leaves the directory as it
// was.
func NewDirSink(dir string, overwrite bool) (Sink, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, openError(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, openError(err)
	}
	for _, e := range ents {
		n := e.Name()
		if !overwrite && (n == ManifestName || strings.EqualFold(filepath.Ext(n), ".jsonl")) {
			return nil, fail(ErrExportExists, tableemu.New(tableemu.InvalidInput).WithHint(
				"%s already holds an export (%s): export into an empty or new directory, or overwrite it (tableemu export --force).", dir, n))
		}
	}
	return &DirSink{dir: dir, overwrite: overwrite, m: manifest{Format: manifestFormat, Tables: []manifestTable{}},
		enc: wire.Options{Level: wire.MinimalMetadata, Lines: true}}, nil
}

// ErrExportExists: NewDirSink's directory already holds an export, and it
// was not told to overwrite it. 400 InvalidInput.
var ErrExportExists = errors.New("export exists")

// Properties keeps the service properties for the manifest.
func (s *DirSink) Properties(account string, doc []byte) error {
	s.m.Account = account
	s.m.ServiceProperties = string(doc)
	return nil
}

// Table ends the table before and starts t's file.
func (s *DirSink) Table(t TableInfo) error {
	if err := s.endTable(); err != nil {
		return err
	}
	if s.m.Account == "" {
		s.m.Account = t.Account
	}
	mt := manifestTable{Name: t.Name, File: t.Name + ".jsonl"}
	for _, si := range t.ACL {
		mt.ACL = append(mt.ACL, policyDoc{ID: si.ID, Start: formatPolicyTime(si.Start), Expiry: formatPolicyTime(si.Expiry), Permission: si.Permission})
	}
	s.m.Tables = append(s.m.Tables, mt)
	f, err := os.CreateTemp(s.dir, "."+mt.File+".*.tmp")
	if err != nil {
		return err
	}
	s.cur = &sinkFile{tmp: f.Name(), file: mt.File, f: f}
	if s.w == nil {
		s.w = bufio.NewWriterSize(f, 256<<10)
	} else {
		s.w.Reset(f)
	}
	return nil
}

func formatPolicyTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Entity writes e as one line of the current table's file.
func (s *DirSink) Entity(e *edm.Entity) error {
	if s.cur == nil {
		return errors.New("transfer: DirSink.Entity before Table")
	}
	s.buf = wire.AppendEntity(s.buf[:0], e, &s.enc)
	s.buf = append(s.buf, '\n')
	_, err := s.w.Write(s.buf)
	return err
}

// endTable flushes and closes the current table's file, still under its
// temporary name.
func (s *DirSink) endTable() error {
	c := s.cur
	if c == nil {
		return nil
	}
	s.cur = nil
	err := s.w.Flush()
	if err == nil {
		err = c.f.Sync()
	}
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	s.done = append(s.done, *c)
	return err
}

// Abort says the export failed: Close removes what it wrote.
func (s *DirSink) Abort() { s.aborted = true }

// Close ends the export: it renames every table's file into place, writes
// the manifest, and with overwrite removes the .jsonl files of tables the
// export did not write; after Abort, or when a file cannot be written, it
// removes the temporary files instead and leaves the directory as it was.
func (s *DirSink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.endTable()
	if s.aborted || err != nil {
		for _, c := range s.done {
			os.Remove(c.tmp)
		}
		return err
	}
	doc, err := json.MarshalIndent(s.m, "", "  ")
	if err != nil {
		return err
	}
	mf, err := os.CreateTemp(s.dir, "."+ManifestName+".*.tmp")
	if err != nil {
		return err
	}
	_, err = mf.Write(append(doc, '\n'))
	if err == nil {
		err = mf.Sync()
	}
	if cerr := mf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(mf.Name())
		return err
	}
	if err := placeFiles(s.dir, s.done, s.overwrite, ".jsonl"); err != nil {
		return err
	}
	if err := os.Rename(mf.Name(), filepath.Join(s.dir, ManifestName)); err != nil {
		return err
	}
	return syncDir(s.dir)
}

// syncDir makes the renames in dir durable where the system can sync a
// directory (Linux, macOS); elsewhere (Windows refuses) the renames are
// left to the system, as the files' contents were synced already.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	d.Sync()
	return d.Close()
}
