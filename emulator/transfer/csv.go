package transfer

// Azure Storage Explorer's CSV (docs/transfer.md, "Storage Explorer's
// CSV"): the file Storage Explorer writes when it exports a table's
// entities, read as a Source (OpenCSV) and written by a Sink (NewCSVSink
// in csvsink.go, beside the RFC 4180 reader and writer both use). The
// rules, with the public sources each one rests on and the ones
// inferred, are in that section of docs/transfer.md; the comments here
// name them briefly.
//
//	PartitionKey,RowKey,Timestamp,Count,Count@type,Name,Name@type
//	p1,r1,2025-09-22T09:45:35.2743359Z,12,Int32,"a, b",String
//	p1,r2,2025-09-22T09:45:36.0000000Z,,,,String
//
// Each property has a value column and a type column; a record leaves both
// cells empty where the entity has no such property, and an empty value
// typed String is the empty string (r2 above has no Count and an empty
// Name).

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata/edm"
)

// CSVOptions choose how OpenCSVWith reads Storage Explorer's CSV.
type CSVOptions struct {
	// Table names the table a single file's entities go to; "" takes the
	// file's base name without ".csv" (and without ".typed", the suffix
	// Storage Explorer before 1.22 gave typed exports). Only for a file,
	// not a directory.
	Table string
	// KeepTimestamp keeps the Timestamp column's value as the entity's
	// Timestamp. Off by default: Storage Explorer imports through the
	// Table API, which ignores a client's Timestamp (docs/protocol.md
	// 3.10), so a sample it loads into Azure gets fresh timestamps, and
	// so does one loaded into tableemu.
	KeepTimestamp bool
	// Delimiter separates the fields: 0 finds it in the header (',', ';',
	// tab or '|'; Storage Explorer lets the user choose it on export).
	Delimiter byte
}

// OpenCSV reads the CSV Storage Explorer exports: path is one file (one
// table named after the file) or a directory, each of whose *.csv files
// is a table. It is OpenCSVWith with the default options.
func OpenCSV(path string) (Source, error) { return OpenCSVWith(path, CSVOptions{}) }

// OpenCSVWith is OpenCSV with options. The headers are read and checked
// now; the entities each time a table's Entities is called, from the
// file, so that they can be read again.
func OpenCSVWith(path string, o CSVOptions) (Source, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, openError(err)
	}
	files := []string{path}
	if fi.IsDir() {
		if o.Table != "" {
			return nil, openError(fmt.Errorf("%s is a directory: the table of each file is named after the file, so no table name can be given", path))
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, openError(err)
		}
		files = files[:0]
		for _, e := range ents {
			if !e.IsDir() && strings.EqualFold(filepath.Ext(e.Name()), ".csv") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		sort.Strings(files)
		if len(files) == 0 {
			return nil, openError(fmt.Errorf("%s holds no .csv file", path))
		}
	}
	src := &csvSource{}
	seen := map[string]string{}
	for _, f := range files {
		name := o.Table
		if name == "" {
			if name, err = csvTableName(f); err != nil {
				return nil, err
			}
		}
		if prev, ok := seen[strings.ToLower(name)]; ok {
			return nil, fail(ErrInvalidTable, tableemu.New(tableemu.InvalidInput).WithHint(
				"%s and %s are both table %q (table names ignore case): import them one at a time, or rename one.", filepath.Base(prev), filepath.Base(f), name))
		}
		seen[strings.ToLower(name)] = f
		t := &csvTable{path: f, where: filepath.Base(f), table: name, o: o}
		if err := t.checkHeader(); err != nil {
			return nil, err
		}
		src.tables = append(src.tables, &Table{Name: name, Entities: t.entities})
	}
	return src, nil
}

type csvSource struct{ tables []*Table }

// Accounts returns one account with no name: the importer's.
func (s *csvSource) Accounts() ([]Account, error) {
	return []Account{{Tables: s.tables}}, nil
}

// Close has nothing to release: each Entities call opens and closes its file.
func (s *csvSource) Close() error { return nil }

// csvTableName is the table a file holds: its base name without ".csv" and
// ".typed" (Storage Explorer's default name was "<table>.typed.csv" until
// 1.22: microsoft/AzureStorageExplorer#2104). A name the service would
// refuse is refused here, with its code, where the file can be named.
func csvTableName(path string) (string, error) {
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	if ext := filepath.Ext(name); strings.EqualFold(ext, ".typed") {
		name = strings.TrimSuffix(name, ext)
	}
	if err := wire.ValidateTableName(name); err != nil {
		e := *tableemu.From(err)
		e.Message += fmt.Sprintf(" The table is named after the file %s: rename the file, or give the table's name (CSVOptions.Table).", base)
		return "", fail(ErrInvalidTable, &e)
	}
	return name, nil
}

// csvTable reads one file.
type csvTable struct {
	path, where string // where: the file's base name, for errors
	table       string
	o           CSVOptions
}

// csvHeader is what the header row says: where each column is.
type csvHeader struct {
	delim          byte
	n              int // fields per record
	pk, rk, ts     int // -1: no such column
	pkType, rkType int
	props          []csvProp // in the header's order
}

type csvProp struct {
	name     string
	val, typ int // typ -1: the column has no type column
}

func (t *csvTable) checkHeader() error {
	f, err := os.Open(t.path)
	if err != nil {
		return openError(err)
	}
	defer f.Close()
	_, _, err = t.header(f)
	return err
}

// header reads the header row of the file f.
func (t *csvTable) header(f io.Reader) (*csvReader, *csvHeader, error) {
	br := bufio.NewReaderSize(f, 64<<10)
	start, _ := br.Peek(3)
	switch {
	case bytes.HasPrefix(start, []byte{0xEF, 0xBB, 0xBF}):
		// A UTF-8 byte order mark, as Excel writes one: skipped.
		br.Discard(3)
	case bytes.HasPrefix(start, []byte{0xFF, 0xFE}), bytes.HasPrefix(start, []byte{0xFE, 0xFF}):
		return nil, nil, t.fail(1, tableemu.InvalidInput, "the file is UTF-16; save it as UTF-8 (Storage Explorer reads and writes UTF-8).")
	}
	h := &csvHeader{delim: t.o.Delimiter, pk: -1, rk: -1, ts: -1, pkType: -1, rkType: -1}
	if h.delim == 0 {
		h.delim = sniffDelimiter(br)
	}
	r := &csvReader{r: br, delim: h.delim, line: 1}
	names, line, err := r.read()
	if err == io.EOF {
		return nil, nil, t.fail(1, tableemu.InvalidInput, "the file is empty; it needs at least the header row (PartitionKey,RowKey,...).")
	}
	if err != nil {
		return nil, nil, t.at(err, line)
	}
	h.n = len(names)
	index := make(map[string]int, len(names))
	for i, n := range names {
		if !utf8.ValidString(n) {
			return nil, nil, t.fail(line, tableemu.InvalidInput, "the header is not valid UTF-8; save the file as UTF-8.")
		}
		if _, dup := index[n]; dup {
			return nil, nil, t.fail(line, tableemu.DuplicatePropertiesSpecified, "the header names the column %q twice.", n)
		}
		index[n] = i
	}
	typeCol := func(name string) int {
		if i, ok := index[name+csvTypeSuffix]; ok {
			return i
		}
		return -1
	}
	for i, n := range names {
		switch n {
		case "PartitionKey":
			h.pk, h.pkType = i, typeCol(n)
			continue
		case "RowKey":
			h.rk, h.rkType = i, typeCol(n)
			continue
		case "Timestamp":
			h.ts = i
			continue
		}
		if prop, ok := strings.CutSuffix(n, csvTypeSuffix); ok {
			if _, ok := index[prop]; !ok {
				return nil, nil, t.fail(line, tableemu.InvalidInput, "the column %q has no value column %q before or after it.", n, prop)
			}
			continue
		}
		if err := wire.ValidatePropertyName(n); err != nil {
			return nil, nil, t.at(err, line)
		}
		h.props = append(h.props, csvProp{name: n, val: i, typ: typeCol(n)})
	}
	if h.pk < 0 || h.rk < 0 {
		// Storage Explorer leaves the keys out when its export is told to
		// (microsoft/AzureStorageExplorer#4968); an entity needs both.
		return nil, nil, t.fail(line, tableemu.PropertiesNeedValue,
			"the header has no PartitionKey or no RowKey column; every entity needs both. Export again with the keys included.")
	}
	return r, h, nil
}

// csvTypeSuffix ends a type column's name.
const csvTypeSuffix = "@type"

// sniffDelimiter picks the separator the header row uses most among ',',
// ';', tab and '|', outside quotes; ',' when none appears.
func sniffDelimiter(br *bufio.Reader) byte {
	peek, _ := br.Peek(64 << 10)
	if i := bytes.IndexAny(peek, "\r\n"); i >= 0 {
		peek = peek[:i] // a header has no quoted line breaks (names cannot hold them)
	}
	counts := map[byte]int{}
	quoted := false
	for _, c := range peek {
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ',' || c == ';' || c == '\t' || c == '|'):
			counts[c]++
		}
	}
	best := byte(',')
	for _, c := range []byte{';', '\t', '|'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return best
}

// entities is the table's Table.Entities: it reads the file from the top.
func (t *csvTable) entities(fn func(e Entity) error) error {
	f, err := os.Open(t.path)
	if err != nil {
		return openError(err)
	}
	defer f.Close()
	r, h, err := t.header(f)
	if err != nil {
		return err
	}
	d := csvDecoder{t: t, h: h, first: make([]string, len(h.props))}
	for {
		line, err := r.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return t.at(err, line)
		}
		e, err := d.entity(r, line)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// csvDecoder turns the records of one read of a file into entities.
type csvDecoder struct {
	t *csvTable
	h *csvHeader
	// first holds, per property, the type its type column first named: a
	// value whose type cell is empty has that type. Storage Explorer
	// 1.40.0 wrote the types in the first record only
	// (microsoft/AzureStorageExplorer#8772), and its maintainers describe
	// the first annotated entity as the schema of an import (#4968).
	first []string
	doc   []byte
}

// entity reads one record. Its cells go to the wire's entity decoder as
// the JSON body Storage Explorer's import sends the service for it
// ({"Name":"text","Name@odata.type":"Edm.Int32"}): a cell is accepted or
// refused as the service accepts or refuses that value, with the same
// error code (the service's own message reached Storage Explorer's users:
// microsoft/AzureStorageExplorer#1855, "The value 'null' is not a valid
// Edm.Int32 ... An error occurred while processing this request").
func (d *csvDecoder) entity(r *csvReader, line int) (Entity, error) {
	t, h, cell := d.t, d.h, r.field
	if len(r.ends) != h.n {
		return Entity{}, t.fail(line, tableemu.InvalidInput,
			"the record has %d fields and the header %d; every record has one field per column (quote a value that holds the delimiter, a quote or a line break).", len(r.ends), h.n)
	}
	if !utf8.Valid(r.buf) {
		return Entity{}, t.fail(line, tableemu.InvalidInput, "the record is not valid UTF-8; save the file as UTF-8.")
	}
	for _, k := range [...]struct {
		name string
		col  int
	}{{"PartitionKey", h.pkType}, {"RowKey", h.rkType}} {
		if k.col < 0 || len(cell(k.col)) == 0 {
			continue
		}
		if typ, ok := csvType(cell(k.col)); !ok || typ != edm.String {
			return Entity{}, t.fail(line, tableemu.InvalidInput, "%s is typed %q; keys are strings: leave the cell empty or write String.", k.name, cell(k.col))
		}
	}
	b := append(d.doc[:0], `{"PartitionKey":`...)
	b = appendJSONString(b, cell(h.pk))
	b = append(b, `,"RowKey":`...)
	b = appendJSONString(b, cell(h.rk))
	for i, p := range h.props {
		v, tc := cell(p.val), []byte(nil)
		if p.typ >= 0 {
			tc = cell(p.typ)
		}
		if len(v) == 0 && len(tc) == 0 {
			continue // no such property
		}
		typ := edm.String
		if len(tc) != 0 {
			var ok bool
			if typ, ok = csvType(tc); !ok {
				return Entity{}, t.fail(line, tableemu.InvalidInput,
					"the type %q of property %q is not one of String, Int32, Int64, Double, Boolean, DateTime, Guid and Binary (with or without \"Edm.\").", tc, p.name)
			}
			if d.first[i] == "" {
				d.first[i] = string(tc)
			}
		} else if d.first[i] != "" {
			typ, _ = csvType(d.first[i])
		}
		b = append(b, ',')
		b = appendJSONString(b, p.name)
		b = append(b, ':')
		b = appendJSONString(b, v)
		if typ != edm.String {
			b = append(b, ',')
			b = appendJSONString(b, p.name)
			b = append(b[:len(b)-1], `@odata.type"`...)
			b = append(b, ':')
			b = appendJSONString(b, typ.Name())
		}
	}
	b = append(b, '}')
	d.doc = b
	dec, err := wire.DecodeEntity(b)
	if err != nil {
		return Entity{}, t.at(err, line)
	}
	// The service's limits (key characters, sizes) are the importer's
	// to check, with Where (import.go).
	e := &dec.Entity
	keep := false
	if t.o.KeepTimestamp && h.ts >= 0 && len(cell(h.ts)) != 0 {
		ticks, err := edm.ParseDateTime(string(cell(h.ts)))
		if err != nil {
			return Entity{}, t.fail(line, tableemu.InvalidInput, "the Timestamp %q is not a date and time such as 2025-09-22T09:45:35.2743359Z.", cell(h.ts))
		}
		e.Timestamp, keep = ticks, true
	}
	return Entity{Entity: e, Where: t.where + ":" + strconv.Itoa(line), KeepTimestamp: keep}, nil
}

// csvType reads a type cell. Storage Explorer 1.40 writes the bare names
// ("Int32": microsoft/AzureStorageExplorer#8772), as the Azure.Data.Tables
// CSV extension that copies its format does (ThomasPe/Azure.Data.Tables-Extensions,
// test.csv); earlier versions wrote "Edm.String" (#4212, #417). Both are
// read, in any case (inferred: hand-written files such as #417's write
// "edm.GeographyPoint").
func csvType[T string | []byte](cell T) (edm.Type, bool) {
	name := cell
	if len(name) > 4 && asciiEqualFold(name[:4], "Edm.") {
		name = name[4:]
	}
	for t := edm.String; t <= edm.Binary; t++ {
		if asciiEqualFold(name, t.Name()[4:]) {
			return t, true
		}
	}
	return 0, false
}

// asciiEqualFold reports whether a and b are equal in ASCII letters of
// any case (the type names are ASCII).
func asciiEqualFold[T string | []byte](a T, b string) bool {
	if len(a) != len(b) {
		return false
	}
	lower := func(c byte) byte {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	for i := 0; i < len(b); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// appendJSONString appends s, valid UTF-8, as a JSON string.
func appendJSONString[T string | []byte](b []byte, s T) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		default:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// fail is an error at line of the file (at).
func (t *csvTable) fail(line int, code tableemu.Code, format string, args ...any) error {
	return t.at(tableemu.New(code).WithDetail(format, args...), line)
}

// at is err at line of the file: the service's code and message, then
// "tableemu: file:line: " and why, as Import words a refused entity
// (entityError), with ErrInvalidEntity. A Go error (the file could not be
// read) is prefixed with the place.
func (t *csvTable) at(err error, line int) error {
	where := t.where + ":" + strconv.Itoa(line)
	var e *tableemu.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("%s: %w", where, err)
	}
	c := *e
	if i := strings.Index(c.Message, tableemu.HintPrefix); i >= 0 {
		if c.Detail == "" {
			c.Detail = c.Message[i+len(tableemu.HintPrefix):]
		}
		c.Message = c.Message[:i]
	}
	switch {
	case c.Detail != "":
	case c.Code == tableemu.OutOfRangeInput:
		// The wire's one OutOfRangeInput: a DateTime out of the range.
		c.Detail = "a DateTime lies outside 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z, the service's range"
	default:
		c.Detail = "the service refuses this record's entity"
	}
	c.Detail = strings.TrimSuffix(c.Detail, ".")
	return entityError(ErrInvalidEntity, &c, t.table, where)
}
