package transfer

import (
	"bufio"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/odata/edm"
)

// The Sink of Storage Explorer's CSV, and the RFC 4180 records that it and
// the Source (csv.go) write and read.

// NewCSVSink writes an export as Storage Explorer's CSV (csv.go;
// docs/transfer.md, "Storage Explorer's CSV"): one file dir/<table>.csv
// per table, dir created if needed. The CSV has no place for service
// properties or a table's stored access policies: they are left out.
//
// As NewDirSink: a directory that already holds a .csv file is refused
// with ErrExportExists unless overwrite is set, and then the .csv files
// of tables the export does not write are removed when it closes, so that
// the directory holds the new export alone; every file is renamed into
// place only when Close ends an export that did not fail (Export calls
// Abort when it fails), so a failed export leaves the directory as it was.
//
// The header names every property of the table, known only after its last
// entity: so that no table is held in memory, each entity goes to a spool
// file in dir as it comes, and the table's file is written from the spool
// when the table ends.
func NewCSVSink(dir string, overwrite bool) (Sink, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, openError(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, openError(err)
	}
	for _, e := range ents {
		if n := e.Name(); !overwrite && !e.IsDir() && strings.EqualFold(filepath.Ext(n), ".csv") {
			return nil, fail(ErrExportExists, tableemu.New(tableemu.InvalidInput).WithHint(
				"%s already holds CSV files (%s): export into an empty or new directory, or overwrite it (tableemu export --format csv --force).", dir, n))
		}
	}
	return &CSVSink{dir: dir, overwrite: overwrite}, nil
}

// CSVSink writes an export as Storage Explorer's CSV (NewCSVSink).
type CSVSink struct {
	dir       string
	overwrite bool
	table     string
	spool     *os.File
	w         *bufio.Writer
	names     map[string]struct{} // the current table's property names
	rec       []byte
	done      []sinkFile // the tables written, in temporary files until Close
	err       error
	aborted   bool
	closed    bool
}

// Properties ignores the account's service properties: the CSV has no
// place for them.
func (s *CSVSink) Properties(account string, doc []byte) error { return nil }

// Table ends the previous table and starts t; its policies are left out.
func (s *CSVSink) Table(t TableInfo) error {
	if err := s.finish(); err != nil {
		return err
	}
	f, err := os.CreateTemp(s.dir, "."+t.Name+".csv.*.spool")
	if err != nil {
		return s.fail(err)
	}
	s.table, s.spool = t.Name, f
	if s.w == nil {
		s.w = bufio.NewWriterSize(f, 64<<10)
	} else {
		s.w.Reset(f)
	}
	s.names = map[string]struct{}{}
	return nil
}

// Entity spools e as one record: its keys, Timestamp, then each
// property's name, type and value text.
func (s *CSVSink) Entity(e *edm.Entity) error {
	if s.err != nil {
		return s.err
	}
	if s.spool == nil {
		return errors.New("transfer: CSVSink.Entity before Table")
	}
	b := appendCSVField(s.rec[:0], e.PartitionKey, ',')
	b = append(b, ',')
	b = appendCSVField(b, e.RowKey, ',')
	b = append(b, ',')
	if e.Timestamp != 0 {
		b = edm.AppendTimestamp(b, e.Timestamp)
	}
	for i := range e.Properties {
		p := &e.Properties[i]
		if _, ok := s.names[p.Name]; !ok {
			// A copy: e's strings may be the exporter's buffers.
			s.names[strings.Clone(p.Name)] = struct{}{}
		}
		b = append(b, ',')
		b = appendCSVField(b, p.Name, ',')
		b = append(b, ',')
		b = append(b, csvTypeName(p.Value.T)...)
		b = append(b, ',')
		b = appendCSVValue(b, p.Value)
	}
	b = append(b, '\r', '\n')
	s.rec = b
	if _, err := s.w.Write(b); err != nil {
		return s.fail(err)
	}
	return nil
}

// Abort says the export failed: Close removes what it wrote.
func (s *CSVSink) Abort() { s.aborted = true }

// Close ends the export: it renames every table's file into place and,
// with overwrite, removes the .csv files of tables the export did not
// write; after Abort, or when a file could not be written, it removes its
// temporary files instead and leaves the directory as it was.
func (s *CSVSink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.aborted && s.spool != nil { // no need to write the table out
		s.spool.Close()
		os.Remove(s.spool.Name())
		s.spool = nil
	}
	err := s.finish()
	if err == nil {
		err = s.err
	}
	if s.aborted || err != nil {
		for _, c := range s.done {
			os.Remove(c.tmp)
		}
		return err
	}
	written := map[string]bool{}
	for _, c := range s.done {
		if err := os.Rename(c.tmp, filepath.Join(s.dir, c.file)); err != nil {
			return err
		}
		written[c.file] = true
	}
	if s.overwrite {
		ents, err := os.ReadDir(s.dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if n := e.Name(); !e.IsDir() && strings.EqualFold(filepath.Ext(n), ".csv") && !written[n] {
				if err := os.Remove(filepath.Join(s.dir, n)); err != nil {
					return err
				}
			}
		}
	}
	return syncDir(s.dir)
}

func (s *CSVSink) fail(err error) error {
	if s.err == nil {
		s.err = err
	}
	return s.err
}

// finish writes the current table's file, under a temporary name, from
// its spool: the header (PartitionKey, RowKey, Timestamp, then each
// property's value and type columns, by name), then one record per
// spooled entity.
func (s *CSVSink) finish() error {
	if s.spool == nil {
		return s.err
	}
	spool := s.spool
	s.spool = nil
	defer os.Remove(spool.Name())
	defer spool.Close()
	if s.err != nil {
		return s.err
	}
	if err := s.w.Flush(); err != nil {
		return s.fail(err)
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return s.fail(err)
	}
	names := make([]string, 0, len(s.names))
	for n := range s.names {
		names = append(names, n)
	}
	sort.Strings(names) // inferred order: see docs/transfer.md
	col := make(map[string]int, len(names))
	header := []string{"PartitionKey", "RowKey", "Timestamp"}
	for _, n := range names {
		col[n] = len(header)
		header = append(header, n, n+csvTypeSuffix)
	}

	out, err := os.CreateTemp(s.dir, "."+s.table+".csv.*.tmp")
	if err != nil {
		return s.fail(err)
	}
	s.done = append(s.done, sinkFile{tmp: out.Name(), file: s.table + ".csv"})
	w := bufio.NewWriterSize(out, 64<<10)
	b := appendCSVRecord(s.rec[:0], header, ',')
	r := &csvReader{r: bufio.NewReaderSize(spool, 64<<10), delim: ','}
	cells := make([][]byte, len(header))
	for {
		if _, err := w.Write(b); err != nil {
			out.Close()
			return s.fail(err)
		}
		_, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			out.Close()
			return s.fail(err)
		}
		clear(cells)
		for i := range 3 {
			cells[i] = r.field(i)
		}
		for i := 3; i+2 < len(r.ends); i += 3 {
			c := col[string(r.field(i))]
			cells[c], cells[c+1] = r.field(i+2), r.field(i+1)
		}
		b = appendCSVRecord(b[:0], cells, ',')
	}
	s.rec = b
	err = w.Flush()
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s.fail(err)
	}
	return nil
}

// csvTypeName is the type column's text: the EDM name without "Edm.", as
// Storage Explorer 1.40 writes it (microsoft/AzureStorageExplorer#8772).
func csvTypeName(t edm.Type) string { return t.Name()[len("Edm."):] }

// appendCSVValue appends a value's cell: the wire's text for each type
// (Int64 in decimal, Double as the service prints it, NaN and ±Infinity
// included, DateTime in ISO 8601 UTC with up to seven fractional digits,
// Guid in lower case, Binary in base64, Boolean as true or false), quoted
// as a String needs. Only a String can hold a delimiter, a quote or a
// line break.
func appendCSVValue(b []byte, v edm.Value) []byte {
	switch v.T {
	case edm.String, edm.Guid:
		return appendCSVField(b, v.S, ',')
	case edm.Int32, edm.Int64:
		return strconv.AppendInt(b, v.N, 10)
	case edm.Double:
		return edm.AppendDouble(b, v.F)
	case edm.Boolean:
		return strconv.AppendBool(b, v.Bool())
	case edm.DateTime:
		return edm.AppendDateTime(b, v.N)
	case edm.Binary:
		return base64.StdEncoding.AppendEncode(b, v.B)
	}
	return b
}

// appendCSVRecord appends fields as one record ending in CRLF (RFC 4180).
func appendCSVRecord[T string | []byte](b []byte, fields []T, delim byte) []byte {
	for i, f := range fields {
		if i > 0 {
			b = append(b, delim)
		}
		b = appendCSVField(b, f, delim)
	}
	return append(b, '\r', '\n')
}

// appendCSVField appends s, in double quotes when it holds the delimiter,
// a quote, a line break (Storage Explorer quotes those since
// microsoft/AzureStorageExplorer#6625), or begins or ends with a space or
// tab (which some readers trim), its quotes doubled.
func appendCSVField[T string | []byte](b []byte, s T, delim byte) []byte {
	n := len(s)
	quote := n > 0 && (s[0] == ' ' || s[0] == '\t' || s[n-1] == ' ' || s[n-1] == '\t')
	for i := 0; i < n && !quote; i++ {
		c := s[i]
		quote = c == delim || c == '"' || c == '\r' || c == '\n'
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	from := 0
	for i := 0; i < n; i++ {
		if s[i] == '"' {
			b = append(b, s[from:i+1]...)
			b = append(b, '"')
			from = i + 1
		}
	}
	b = append(b, s[from:]...)
	return append(b, '"')
}

// csvReader reads RFC 4180 records (https://www.rfc-editor.org/rfc/rfc4180):
// fields separated by delim, records by CRLF, LF or a lone CR, a field in
// double quotes holding delimiters, line breaks and doubled quotes. A
// quoted field's bytes are kept exactly: encoding/csv turns a quoted
// "\r\n" into "\n", which would change a stored string. A quote inside an
// unquoted field is kept as a character (files edited by hand have them).
// Empty lines are skipped.
type csvReader struct {
	r     *bufio.Reader
	delim byte
	line  int // the line the next byte is on
	// buf holds the last record's fields one after another, ends where
	// each ends: reused from record to record, so that reading costs no
	// allocation per field.
	buf  []byte
	ends []int
}

// maxCSVRecord bounds a record's length, so that a file with a missing
// quote or no line breaks is refused before it fills the memory: an entity
// is at most 1 MiB (docs/protocol.md 10), which as UTF-8 and base64 text
// is well under 8 MiB.
const maxCSVRecord = 8 << 20

var errCSVRecordSize = tableemu.New(tableemu.EntityTooLarge).WithHint(
	"the record is longer than 8 MiB, and no entity the service stores is: a quote may be missing.")

// read returns the next record as new strings, and the line it starts on;
// io.EOF after the last.
func (c *csvReader) read() ([]string, int, error) {
	line, err := c.next()
	if err != nil {
		return nil, line, err
	}
	rec := make([]string, len(c.ends))
	for i := range rec {
		rec[i] = string(c.field(i))
	}
	return rec, line, nil
}

// field is field i of the record next read, valid until the next call.
func (c *csvReader) field(i int) []byte {
	from := 0
	if i > 0 {
		from = c.ends[i-1]
	}
	return c.buf[from:c.ends[i]]
}

// next reads the next record into buf and ends and returns the line it
// starts on; io.EOF after the last.
func (c *csvReader) next() (int, error) {
	c.buf, c.ends = c.buf[:0], c.ends[:0]
	start := c.line
	for {
		b, err := c.r.ReadByte()
		if err == io.EOF && len(c.ends) == 0 {
			return start, io.EOF
		}
		if len(c.ends) == 0 && (b == '\n' || b == '\r') && err == nil {
			c.newline(b) // an empty line
			start = c.line
			continue
		}
		if err == nil && b == '"' {
			if err := c.quoted(); err != nil {
				return start, err
			}
			b, err = c.r.ReadByte()
			if err == nil && b != c.delim && b != '\n' && b != '\r' {
				return start, tableemu.New(tableemu.InvalidInput).WithHint(
					"a quoted field is followed by %q, not by the delimiter or the end of the line; a quote inside a quoted field is written twice (\"\").", b)
			}
		} else {
			for err == nil && b != c.delim && b != '\n' && b != '\r' {
				c.buf = append(c.buf, b)
				c.plain(c.delim)
				if len(c.buf) > maxCSVRecord {
					return start, errCSVRecordSize
				}
				b, err = c.r.ReadByte()
			}
		}
		if err != nil && err != io.EOF {
			return start, err
		}
		if c.ends = append(c.ends, len(c.buf)); len(c.buf)+len(c.ends) > maxCSVRecord {
			return start, errCSVRecordSize
		}
		if err == io.EOF {
			return start, nil
		}
		if b != c.delim {
			c.newline(b)
			return start, nil
		}
	}
}

// quoted reads a quoted field after its opening quote, up to and with
// its closing quote.
func (c *csvReader) quoted() error {
	for {
		c.plain('"')
		b, err := c.r.ReadByte()
		switch {
		case err == io.EOF:
			return tableemu.New(tableemu.InvalidInput).WithHint("a quoted field of this record is never closed: a quote is missing.")
		case err != nil:
			return err
		case len(c.buf) > maxCSVRecord:
			return errCSVRecordSize
		case b == '"':
			if next, err := c.r.Peek(1); err != nil || next[0] != '"' {
				return nil
			}
			c.r.ReadByte()
		case b == '\n':
			c.line++
		case b == '\r':
			if next, err := c.r.Peek(1); err != nil || next[0] != '\n' {
				c.line++ // a lone CR ends a line; CRLF is counted at its LF
			}
		}
		c.buf = append(c.buf, b)
	}
}

// plain moves the buffered bytes up to the next stop, CR or LF into the
// field at once: reading them one by one took a third of an import's time.
func (c *csvReader) plain(stop byte) {
	buf, _ := c.r.Peek(c.r.Buffered())
	i := 0
	for i < len(buf) && buf[i] != stop && buf[i] != '\r' && buf[i] != '\n' {
		i++
	}
	c.buf = append(c.buf, buf[:i]...)
	c.r.Discard(i)
}

// newline counts the line break that starts with b, taking the LF of a CRLF.
func (c *csvReader) newline(b byte) {
	if b == '\r' {
		if next, err := c.r.Peek(1); err == nil && next[0] == '\n' {
			c.r.ReadByte()
		}
	}
	c.line++
}
