package transfer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// scanLoki reads the outline of a LokiJS database saved as JSON
// ({"collections":[{"name":…,"data":[documents…],…},…],…}, LokiJS's
// "normal" serialization, which Azurite uses): the offset of each
// collection's data array, by collection name. It finds where values end
// without decoding them, since the file holds every entity of every
// table: walking them with encoding/json's Decoder took half the time of
// reading the database (BenchmarkOpenAzurite). The documents are decoded,
// and so checked, when they are read.
func scanLoki(r io.Reader) (map[string]int64, error) {
	s := newLokiScanner(r, 0)
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	colls := map[string]int64{}
	err := s.members(func(key string) error {
		if key != "collections" {
			return s.skip()
		}
		if err := s.expect('['); err != nil {
			return err
		}
		return s.elements(func() error {
			name, at, err := s.collection()
			if err == nil && at >= 0 {
				colls[name] = at
			}
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return colls, nil
}

// lokiScanner reads JSON values, or finds where they end, much faster
// than encoding/json can: strings are passed over with bufio's ReadSlice.
type lokiScanner struct {
	r   *bufio.Reader
	off int64 // r's offset in the file: where the next byte read is
	// capture, while capturing, collects every byte read (rawValue).
	capture   []byte
	capturing bool
}

// newLokiScanner reads r, which is at offset off of its file.
func newLokiScanner(r io.Reader, off int64) *lokiScanner {
	return &lokiScanner{r: bufio.NewReaderSize(r, 256<<10), off: off}
}

// entityDoc reads an entity's document: its keys, its properties object
// as it is written, and lastModifiedTime; other members (eTag, LokiJS's
// meta and $loki) are passed over. doc's Properties is reused.
func (s *lokiScanner) entityDoc(doc *azuriteEntity) error {
	*doc = azuriteEntity{Properties: doc.Properties[:0]}
	if err := s.expect('{'); err != nil {
		return err
	}
	return s.members(func(key string) error {
		switch key {
		case "PartitionKey", "RowKey", "lastModifiedTime":
			if c, err := s.peek(); err != nil || c != '"' {
				return s.skip() // not a string: as if absent
			}
			s.read()
			v, err := s.str()
			switch key {
			case "PartitionKey":
				doc.PartitionKey = &v
			case "RowKey":
				doc.RowKey = &v
			default:
				doc.LastModifiedTime = v
			}
			return err
		case "properties":
			raw, err := s.rawValue()
			doc.Properties = append(doc.Properties, raw...)
			return err
		}
		return s.skip()
	})
}

// rawValue reads the next value and returns it as written; the bytes are
// the scanner's until its next rawValue.
func (s *lokiScanner) rawValue() ([]byte, error) {
	if _, err := s.peek(); err != nil {
		return nil, err
	}
	s.capture, s.capturing = s.capture[:0], true
	err := s.skip()
	s.capturing = false
	return s.capture, err
}

// collection reads one collection object: its name, and the offset of its
// data array (-1 when it has none).
func (s *lokiScanner) collection() (name string, at int64, err error) {
	at = -1
	if err := s.expect('{'); err != nil {
		return "", 0, err
	}
	err = s.members(func(key string) error {
		c, err := s.peek()
		if err != nil {
			return err
		}
		switch {
		case key == "name" && c == '"':
			s.read()
			name, err = s.str()
			return err
		case key == "data" && c == '[':
			at = s.off
		}
		return s.skip()
	})
	return name, at, err
}

// members calls fn for each member of the object whose '{' was read, with
// the scanner before the member's value, which fn reads.
func (s *lokiScanner) members(fn func(key string) error) error {
	c, err := s.next()
	if err != nil || c == '}' {
		return err
	}
	for {
		if c != '"' {
			return s.unexpected(c, "a member name")
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
		if c, err = s.next(); err != nil {
			return err
		}
		switch c {
		case ',':
			if c, err = s.next(); err != nil {
				return err
			}
		case '}':
			return nil
		default:
			return s.unexpected(c, "',' or '}'")
		}
	}
}

// elements calls fn for each element of the array whose '[' was read, with
// the scanner before the element, which fn reads.
func (s *lokiScanner) elements(fn func() error) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == ']' {
		s.read()
		return nil
	}
	for {
		if err := fn(); err != nil {
			return err
		}
		c, err := s.next()
		if err != nil {
			return err
		}
		switch c {
		case ',':
		case ']':
			return nil
		default:
			return s.unexpected(c, "',' or ']'")
		}
	}
}

// skip passes over the next value, however deep.
func (s *lokiScanner) skip() error {
	depth := 0
	for {
		c, err := s.next()
		if err != nil {
			return err
		}
		switch c {
		case '"':
			if _, err := s.stringBytes(false); err != nil {
				return err
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return s.unexpected(c, "a value")
			}
		case ',', ':':
			if depth == 0 {
				return s.unexpected(c, "a value")
			}
		default: // a number, true, false or null: up to the next delimiter
			for {
				b, err := s.r.Peek(1)
				if err != nil && !errors.Is(err, io.EOF) {
					return err
				}
				if len(b) == 0 || bytes.IndexByte([]byte(",:]}\"{[ \t\r\n"), b[0]) >= 0 {
					break
				}
				s.read()
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// str reads the rest of a string whose opening quote was read.
func (s *lokiScanner) str() (string, error) {
	raw, err := s.stringBytes(true)
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), nil
	}
	var out string
	err = json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &out)
	return out, err
}

// stringBytes reads the rest of a string whose opening quote was read and,
// when keep is set, returns it as written, without the closing quote.
func (s *lokiScanner) stringBytes(keep bool) ([]byte, error) {
	var buf []byte
	backslashes := 0 // ending the bytes read so far
	for {
		chunk, err := s.r.ReadSlice('"')
		s.off += int64(len(chunk))
		if s.capturing {
			s.capture = append(s.capture, chunk...)
		}
		if keep {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			backslashes = trailing(chunk, backslashes)
			continue
		}
		if err != nil {
			return nil, eof(err)
		}
		// The quote ends the string unless an odd number of backslashes
		// escape it.
		if trailing(chunk[:len(chunk)-1], backslashes)%2 == 0 {
			if keep {
				buf = buf[:len(buf)-1]
			}
			return buf, nil
		}
		backslashes = 0
	}
}

// trailing counts the backslashes that end b, carrying before's count
// when b is all backslashes.
func trailing(b []byte, before int) int {
	n := 0
	for i := len(b) - 1; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	if n == len(b) {
		n += before
	}
	return n
}

func (s *lokiScanner) read() {
	c, _ := s.r.ReadByte()
	s.off++
	if s.capturing {
		s.capture = append(s.capture, c)
	}
}

// next reads the next byte that is not white space.
func (s *lokiScanner) next() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, eof(err)
		}
		s.off++
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			if s.capturing {
				s.capture = append(s.capture, c)
			}
			return c, nil
		}
	}
}

// peek skips white space and returns the byte after it, unread.
func (s *lokiScanner) peek() (byte, error) {
	c, err := s.next()
	if err != nil {
		return 0, err
	}
	s.r.UnreadByte()
	s.off--
	if s.capturing {
		s.capture = s.capture[:len(s.capture)-1]
	}
	return c, nil
}

func (s *lokiScanner) expect(want byte) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	if c != want {
		return s.unexpected(c, fmt.Sprintf("%q", want))
	}
	return nil
}

func (s *lokiScanner) unexpected(c byte, want string) error {
	return fmt.Errorf("found %q at byte %d where %s was expected", c, s.off-1, want)
}

func eof(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("the file ends too soon: %w", io.ErrUnexpectedEOF)
	}
	return err
}
