package wire

import (
	"strings"

	"github.com/tableemu/tableemu/odata/edm"
)

// ETag renders the entity ETag for a Timestamp in ticks:
// W/"datetime'2021-09-08T18%3A58%3A49.7704959Z'" — the Timestamp with seven
// fractional digits and each ':' percent-encoded, as the service sends it in
// the ETag header and in odata.etag (docs/protocol.md 5).
func ETag(ts int64) string {
	return string(appendETag(make([]byte, 0, 48), ts))
}

// AppendETag appends ETag(ts) to b.
func AppendETag(b []byte, ts int64) []byte { return appendETag(b, ts) }

func appendETag(b []byte, ts int64) []byte {
	var tmp [32]byte
	b = append(b, `W/"datetime'`...)
	b = appendEscapedTimestamp(b, edm.AppendTimestamp(tmp[:0], ts))
	return append(b, `'"`...)
}

// appendETagJSON appends the ETag as a JSON string ("W/\"datetime'…'\"")
// given the Timestamp already formatted (edm.AppendTimestamp): an entity
// in a response needs the text twice, as its Timestamp and in its ETag.
func appendETagJSON(b []byte, timestamp []byte) []byte {
	b = append(b, `"W/\"datetime'`...)
	b = appendEscapedTimestamp(b, timestamp)
	return append(b, `'\""`...)
}

// appendEscapedTimestamp appends a formatted Timestamp with each ':'
// percent-encoded.
func appendEscapedTimestamp(b []byte, timestamp []byte) []byte {
	// The usual fixed-width form, yyyy-mm-ddThh:mm:ss.fffffffZ, has its
	// colons at 13 and 16.
	if len(timestamp) == 28 && timestamp[13] == ':' && timestamp[16] == ':' {
		b = append(b, timestamp[:13]...)
		b = append(b, "%3A"...)
		b = append(b, timestamp[14:16]...)
		b = append(b, "%3A"...)
		return append(b, timestamp[17:]...)
	}
	for _, c := range timestamp {
		if c == ':' {
			b = append(b, "%3A"...)
		} else {
			b = append(b, c)
		}
	}
	return b
}

// ParseETag is ETag's inverse: it returns the Timestamp ticks an entity
// ETag names. It tolerates the ':' left un-encoded (or "%3a"), a missing
// "W/" prefix, and any date-time form edm.ParseDateTime reads, since
// clients echo ETags they may have re-encoded. ok is false for anything
// that is not a datetime ETag (If-Match parsing turns that into 400
// InvalidInput, docs/protocol.md 3.11).
func ParseETag(s string) (ticks int64, ok bool) {
	s = strings.TrimPrefix(s, "W/")
	rest, found := strings.CutPrefix(s, `"datetime'`)
	if !found {
		return 0, false
	}
	ts, found := strings.CutSuffix(rest, `'"`)
	if !found || strings.ContainsAny(ts, `'"`) {
		return 0, false
	}
	if strings.IndexByte(ts, '%') >= 0 {
		ts = strings.ReplaceAll(ts, "%3A", ":")
		ts = strings.ReplaceAll(ts, "%3a", ":")
	}
	t, err := edm.ParseDateTime(ts)
	if err != nil {
		return 0, false
	}
	return t, true
}

// EntityPath is an entity's path relative to the service root,
// "t(PartitionKey='a',RowKey='b')": the form of the Location and
// DataServiceId headers (after "<base>/"), odata.id (likewise) and
// odata.editLink (as is).
//
// Inside the quotes a quote is doubled and every byte but the RFC 2396
// unreserved characters (letters, digits and - _ . ! ~ * ' ( )) is
// percent-encoded in upper-case hex, UTF-8 bytes included: what .NET
// Framework's Uri.EscapeDataString (and JavaScript's encodeURIComponent)
// leave alone. This follows the live service (docs/protocol.md 1.3), which
// for RowKey RK'@*$!% answered an insert with
//
//	Location: …/uttable01ff8429c5(PartitionKey='PK',RowKey='RK''%40*%24!%25')
//
// (conformance/testdata/recordings/python/test_encoder.pyTestTableEncodertest_encoder_create_entity_basic.json,
// entry 3: '@', '$' and '%' encoded, '*' and '!' not), and for PartitionKey
// A'aaa_bbbb2" and RowKey "A'aaa_bbbb2 with
//
//	Location: …/SpecialChars(PartitionKey='A''aaa_bbbb2%22',RowKey='%22A''aaa_bbbb2')
//
// and the same DataServiceId (azure-sdk-for-js recording
// special_characters/should_handle_partition_and_row_keys_with_special_chars).
// A client that percent-decodes the path once gets the literal back.
func EntityPath(table, pk, rk string) string {
	return string(AppendEntityPath(make([]byte, 0, len(table)+len(pk)+len(rk)+28), table, pk, rk))
}

// AppendEntityPath appends EntityPath(table, pk, rk) to b.
func AppendEntityPath(b []byte, table, pk, rk string) []byte {
	b = append(b, table...)
	b = append(b, "(PartitionKey='"...)
	b = appendKeyLiteral(b, pk)
	b = append(b, "',RowKey='"...)
	b = appendKeyLiteral(b, rk)
	return append(b, "')"...)
}

func appendKeyLiteral(b []byte, s string) []byte {
	const upperHex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			b = append(b, '\'', '\'')
		case keyChar(c):
			b = append(b, c)
		default:
			b = append(b, '%', upperHex[c>>4], upperHex[c&0xF])
		}
	}
	return b
}

// AppendCosmosLocationPath appends the table and keys of an entity as
// Azure Cosmos DB for Table writes them in a Location header (the cosmos
// profile, docs/cosmos.md): inside the quotes a quote is doubled, a '%'
// is escaped twice (%2525), and every other byte is escaped as .NET's
// Uri.EscapeUriString does (all but URL syntax — RFC 3986's unreserved and
// reserved characters — as %XX), once. Cosmos DB answered an insert of
// RowKey RK'@*$!% with
//
//	Location: …/uttable015cb82f2c(PartitionKey='PK',RowKey='RK''@*$!%2525')
//
// ('@', '*', '$' and '!' as they are, '%' escaped twice:
// conformance/testdata/recordings/python-cosmos/test_encoder_cosmos.pyTestTableEncoderCosmostest_encoder_create_entity_basic.json,
// entry 3), and an insert of RowKey 你好 with RowKey='%E4%BD%A0%E5%A5%BD'
// (its UTF-8 escaped once: …test_encoder_create_entity_atypical_values,
// entry 1), where Table storage escapes '@', '$' and '%' once
// (EntityPath). That fits a key whose '%' was escaped before the URL was
// (as if Cosmos DB escaped its own escape character in the key first);
// whether '/', '?', '#' or '\\' are escaped so too is not in the evidence:
// tableemu treats them as EscapeUriString does.
func AppendCosmosLocationPath(b []byte, table, pk, rk string) []byte {
	b = append(b, table...)
	b = append(b, "(PartitionKey='"...)
	b = appendCosmosKeyLiteral(b, pk)
	b = append(b, "',RowKey='"...)
	b = appendCosmosKeyLiteral(b, rk)
	return append(b, "')"...)
}

func appendCosmosKeyLiteral(b []byte, s string) []byte {
	const upperHex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			b = append(b, '\'', '\'')
		case c == '%':
			b = append(b, "%2525"...)
		case uriChar(c):
			b = append(b, c)
		default:
			b = append(b, '%', upperHex[c>>4], upperHex[c&0xF])
		}
	}
	return b
}

// uriChar reports whether .NET's Uri.EscapeUriString leaves c as it is:
// the RFC 3986 unreserved and reserved characters.
func uriChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!#$&'()*+,/:;=?@[]", c) >= 0
}

// keyChar reports whether c stays as it is in a key of an entity's URL:
// the RFC 2396 unreserved characters (see EntityPath).
func keyChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '_', '.', '!', '~', '*', '\'', '(', ')':
		return true
	}
	return false
}
