package emulator

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
)

// Paging under the cosmos profile (docs/cosmos.md, "Queries and paging").
//
// Azure Cosmos DB for Table answers a query of entities with more to come
// with the whole position in x-ms-continuation-NextPartitionKey, as a
// continuation of Cosmos DB's own query engine, and NextRowKey "NA":
//
//	x-ms-continuation-NextPartitionKey: {"token":"qd5zAMLeWPQCAAAAAAAAAA==","range":{"min":"","max":"FF"}}
//	x-ms-continuation-NextRowKey: NA
//
// and on the pages after the first, the same object inside a JSON array
// ([{…}]) (python-cosmos test_query_entities_with_top_and_next, whose SDK
// sends both back as received). Cosmos DB's token has the shape of a
// document's resource id (16 bytes, the first 8 the table's, then a
// counter); tableemu's carries its own position instead, the entity the
// next page starts at in creation order (store.OrderCreation): standard
// base64, padded as Cosmos DB's, of a version byte (2), the PartitionKey's
// length as a uvarint, the PartitionKey, the entity's creation sequence as
// a uvarint, and the RowKey. Clients treat it as opaque. The range is
// always the whole key space ("" to "FF"): tableemu has one physical
// partition.
//
// Version 1, before the creation order, held the keys alone: a position
// in key order, which means nothing in creation order. Such a token (from
// a tableemu of before, still held by a client) is refused, 400
// InvalidInput, with a hint to start the query again.
//
// Query Tables' NextTableName is, from Cosmos DB, 8 bytes in standard base64
// ("BoZsAPosJ6A=", the shape of a table's resource id; python-cosmos
// test_query_tables_with_marker); tableemu's is the base64, padded, of a
// version byte and the name the next page starts at.

// cosmosTokenVersion starts every entity token tableemu issues under the
// profile, so that a change of form can tell its old tokens apart;
// cosmosTableTokenVersion starts Query Tables' (unchanged since version 1).
const (
	cosmosTokenVersion      = 2
	cosmosTableTokenVersion = 1
)

// cosmosKeyRange is the partition key range every entity token names.
const cosmosKeyRange = `"range":{"min":"","max":"FF"}`

// cosmosNextRowKey is Cosmos DB's NextRowKey on every page that has a next.
const cosmosNextRowKey = "NA"

// cosmosMaxTop is the largest $top under the profile. Cosmos DB for Table
// does not cap $top at 1000 (FAQ: "TableQuery TakeCount isn't limited to
// 1000"); the evidence names no other cap, so tableemu takes what fits
// OData's Edm.Int32, as the SDKs send it.
const cosmosMaxTop = 1<<31 - 1

// cosmosMaxPage is the largest answer to a query under the profile: Cosmos
// DB's documented response size limit, 4 MB, beyond which "it returns a page
// of results and a continuation token" (Azure Cosmos DB service quotas,
// https://learn.microsoft.com/azure/cosmos-db/concepts-limits). With $top
// uncapped, this is what bounds a page (and tableemu's memory for it).
const cosmosMaxPage = 4 << 20

// entityOrder is the order queries of entities answer in.
func (s *Server) entityOrder() store.Order {
	if s.cosmos {
		return store.OrderCreation
	}
	return store.OrderKeys
}

// maxTop is the largest $top a query of entities takes.
func (s *Server) maxTop() int {
	if s.cosmos {
		return cosmosMaxTop
	}
	return odata.MaxTop
}

// entityStart reads the continuation of a query of entities, from
// NextPartitionKey (npk, not empty) and NextRowKey (nrk): Table storage's
// pair of tokens, or under the profile Cosmos DB's form, whose NextRowKey
// is "NA" (or absent).
func (s *Server) entityStart(npk, nrk string) (*store.Key, error) {
	if !s.cosmos {
		start := &store.Key{}
		var err error
		if start.PK, err = decodeToken(npk); err != nil {
			return nil, err
		}
		if nrk != "" {
			if start.RK, err = decodeToken(nrk); err != nil {
				return nil, err
			}
		}
		return start, nil
	}
	bad := func() error { return badCosmosToken("NextPartitionKey", npk) }
	if nrk != "" && nrk != cosmosNextRowKey {
		return nil, badCosmosToken("NextRowKey", nrk)
	}
	var tok struct {
		Token *string `json:"token"`
		Range *struct {
			Min *string `json:"min"`
			Max *string `json:"max"`
		} `json:"range"`
	}
	raw := []byte(npk)
	if strings.HasPrefix(npk, "[") {
		// A later page's token: one range, in an array.
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil || len(list) != 1 {
			return nil, bad()
		}
		raw = list[0]
	}
	if json.Unmarshal(raw, &tok) != nil || tok.Token == nil || tok.Range == nil ||
		tok.Range.Min == nil || *tok.Range.Min != "" || tok.Range.Max == nil || *tok.Range.Max != "FF" {
		return nil, bad()
	}
	b, ok := cosmosTokenBytes(*tok.Token, cosmosTokenVersion)
	if !ok {
		if old, ok := cosmosTokenBytes(*tok.Token, 1); ok && len(old) > 0 {
			return nil, oldCosmosToken(npk)
		}
		return nil, bad()
	}
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return nil, bad()
	}
	k := &store.Key{PK: string(b[w : w+int(n)])}
	b = b[w+int(n):]
	seq, w := binary.Uvarint(b)
	if w <= 0 || seq > 1<<63-1 {
		return nil, bad()
	}
	k.Seq, k.RK = int64(seq), string(b[w:])
	if !keyText(k.PK) || !keyText(k.RK) {
		return nil, bad()
	}
	return k, nil
}

// setEntityNext writes the continuation headers of a page of entities
// whose next page starts at next. continued says the request carried a
// continuation: Cosmos DB then writes its token inside an array.
func (c *call) setEntityNext(next *store.Key, continued bool) {
	h := c.w.Header()
	if !c.s.cosmos {
		// Both headers whenever more results exist, neither on the last
		// page (docs/protocol.md 0.1).
		h.Set("x-ms-continuation-NextPartitionKey", encodeToken(next.PK))
		h.Set("x-ms-continuation-NextRowKey", encodeToken(next.RK))
		return
	}
	raw := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(next.PK)+len(next.RK))
	raw = append(raw, cosmosTokenVersion)
	raw = binary.AppendUvarint(raw, uint64(len(next.PK)))
	raw = append(raw, next.PK...)
	raw = binary.AppendUvarint(raw, uint64(next.Seq))
	raw = append(raw, next.RK...)
	// base64 needs no JSON escaping.
	v := `{"token":"` + base64.StdEncoding.EncodeToString(raw) + `",` + cosmosKeyRange + `}`
	if continued {
		v = "[" + v + "]"
	}
	h.Set("x-ms-continuation-NextPartitionKey", v)
	h.Set("x-ms-continuation-NextRowKey", cosmosNextRowKey)
}

// tableToken is Query Tables' NextTableName for a next page starting at
// name.
func (s *Server) tableToken(name string) string {
	if !s.cosmos {
		return encodeToken(name)
	}
	return base64.StdEncoding.EncodeToString(append([]byte{cosmosTableTokenVersion}, name...))
}

// tableAfter reads a NextTableName back.
func (s *Server) tableAfter(tok string) (string, error) {
	if !s.cosmos {
		return decodeToken(tok)
	}
	b, ok := cosmosTokenBytes(tok, cosmosTableTokenVersion)
	if !ok || len(b) == 0 || !keyText(string(b)) {
		return "", badCosmosToken("NextTableName", tok)
	}
	return string(b), nil
}

// cosmosTokenBytes decodes a token's base64 and checks its version byte,
// which it drops.
func cosmosTokenBytes(tok string, version byte) ([]byte, bool) {
	b, err := base64.StdEncoding.DecodeString(tok)
	if err != nil || len(b) == 0 || b[0] != version {
		return nil, false
	}
	return b[1:], true
}

// keyText reports whether s can be a key or a name the store holds: UTF-8
// without NUL (PostgreSQL's text refuses NUL).
func keyText(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

// badCosmosToken refuses a continuation tableemu did not issue under the
// profile. What Cosmos DB for Table answers a malformed token is not in the
// evidence: tableemu answers as Table storage does, 400 InvalidInput (which
// the profile words as Cosmos DB words InvalidInput, error.go).
func badCosmosToken(param, tok string) error {
	return tableemu.New(tableemu.InvalidInput).WithDetail("continuation token %s=%q was not issued by tableemu", param, tok).
		WithHint("send back the x-ms-continuation-NextPartitionKey and -NextRowKey (or -NextTableName) of the previous page, " +
			"unchanged, to the same tableemu and profile.")
}

// oldCosmosToken refuses an entity continuation of version 1, issued by a
// tableemu of before the creation order: a position in key order, which
// the creation order cannot continue from (as InvalidInput, as
// badCosmosToken).
func oldCosmosToken(tok string) error {
	return tableemu.New(tableemu.InvalidInput).WithDetail("continuation token NextPartitionKey=%q is of an earlier tableemu, which answered in key order", tok).
		WithHint("queries under --profile cosmos now answer in creation order (docs/cosmos.md); start the query again without a continuation.")
}
