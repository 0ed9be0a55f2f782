package emulator

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
)

// Table service properties (docs/protocol.md 3.5) and stats (3.6). The element
// order of each type is the order the service writes them in (captured
// Get Service Properties responses, e.g. azure-sdk-for-js storage
// recordings: Version, Read, Write, Delete, RetentionPolicy; AllowedMethods,
// AllowedOrigins, AllowedHeaders, ExposedHeaders, MaxAgeInSeconds). Fields
// are pointers so that a Set can tell an element left out from one given.
type serviceProperties struct {
	XMLName       xml.Name     `xml:"StorageServiceProperties"`
	Logging       *logging     `xml:"Logging"`
	HourMetrics   *metrics     `xml:"HourMetrics"`
	MinuteMetrics *metrics     `xml:"MinuteMetrics"`
	Cors          *corsRuleSet `xml:"Cors"`
}

type logging struct {
	Version         *string    `xml:"Version"`
	Read            *bool      `xml:"Read"`
	Write           *bool      `xml:"Write"`
	Delete          *bool      `xml:"Delete"`
	RetentionPolicy *retention `xml:"RetentionPolicy"`
}

type metrics struct {
	Version *string `xml:"Version"`
	Enabled *bool   `xml:"Enabled"`
	// IncludeAPIs is present only while metrics are enabled.
	IncludeAPIs     *bool      `xml:"IncludeAPIs"`
	RetentionPolicy *retention `xml:"RetentionPolicy"`
}

type retention struct {
	Enabled *bool `xml:"Enabled"`
	// Days is present only while retention is enabled.
	Days *int `xml:"Days"`
}

type corsRuleSet struct {
	Rules []corsRule `xml:"CorsRule"`
}

type corsRule struct {
	AllowedMethods  *string `xml:"AllowedMethods"`
	AllowedOrigins  *string `xml:"AllowedOrigins"`
	AllowedHeaders  *string `xml:"AllowedHeaders"`
	ExposedHeaders  *string `xml:"ExposedHeaders"`
	MaxAgeInSeconds *int    `xml:"MaxAgeInSeconds"`
}

// defaultServiceProperties are a new account's: logging and both metrics
// off, retention off, no CORS rules (docs/protocol.md 3.5).
func defaultServiceProperties() *serviceProperties {
	v, f := "1.0", false
	off := func() *retention { return &retention{Enabled: &f} }
	return &serviceProperties{
		Logging:       &logging{Version: &v, Read: &f, Write: &f, Delete: &f, RetentionPolicy: off()},
		HourMetrics:   &metrics{Version: &v, Enabled: &f, RetentionPolicy: off()},
		MinuteMetrics: &metrics{Version: &v, Enabled: &f, RetentionPolicy: off()},
		Cors:          &corsRuleSet{},
	}
}

// Limits of Set Table Service Properties (docs/protocol.md 3.5, 10): five CORS
// rules; retention of 1 to 365 days; per rule at most 64 origins and, in
// each header list, 64 literal and 2 prefixed (trailing '*') names, each at
// most 256 characters (DOC, as quoted in the azure-data-tables
// TableCorsRule reference).
const (
	maxCorsRules      = 5
	maxRetentionDays  = 365
	maxCorsListItems  = 64
	maxCorsPrefixed   = 2
	maxCorsItemLength = 256
)

// corsMethods are the methods a CORS rule may allow. The DOC lists DELETE,
// GET, HEAD, MERGE, POST, OPTIONS and PUT; PATCH is accepted as well
// because the live service stores and returns it (azure-sdk-for-js
// recordings of Get Blob Service Properties show
// "DELETE,GET,HEAD,MERGE,POST,OPTIONS,PUT,PATCH"), and the Go SDK merges
// with PATCH.
var corsMethods = map[string]bool{
	"DELETE": true, "GET": true, "HEAD": true, "MERGE": true,
	"POST": true, "OPTIONS": true, "PUT": true, "PATCH": true,
}

// invalidXML is the refusal of every malformed or invalid XML body: the
// service answers 400 InvalidXmlDocument for syntax errors, an empty
// <StorageServiceProperties/>, retention days out of range and bad ACLs
// alike (docs/protocol.md 3.4, 3.5); the detail says what was wrong.
func invalidXML(format string, args ...any) *tableemu.Error {
	return tableemu.New(tableemu.InvalidXmlDocument).WithDetail(format, args...)
}

// validate checks a Set request's document and normalises it: fields that
// only mean something while enabled (IncludeAPIs, Days) are dropped when
// disabled, so a Get returns what the service would.
func (p *serviceProperties) validate() error {
	if p.Logging == nil && p.HourMetrics == nil && p.MinuteMetrics == nil && p.Cors == nil {
		return invalidXML("StorageServiceProperties sets nothing")
	}
	if l := p.Logging; l != nil {
		if l.Version == nil || *l.Version == "" || l.Read == nil || l.Write == nil || l.Delete == nil {
			return invalidXML("Logging needs Version, Read, Write and Delete")
		}
		if err := l.RetentionPolicy.validate("Logging"); err != nil {
			return err
		}
	}
	for _, m := range []struct {
		name string
		m    *metrics
	}{{"HourMetrics", p.HourMetrics}, {"MinuteMetrics", p.MinuteMetrics}} {
		if m.m == nil {
			continue
		}
		if m.m.Version == nil || *m.m.Version == "" || m.m.Enabled == nil {
			return invalidXML("%s needs Version and Enabled", m.name)
		}
		if *m.m.Enabled && m.m.IncludeAPIs == nil {
			return invalidXML("%s is enabled and needs IncludeAPIs", m.name)
		}
		if !*m.m.Enabled {
			m.m.IncludeAPIs = nil
		}
		if err := m.m.RetentionPolicy.validate(m.name); err != nil {
			return err
		}
	}
	if p.Cors != nil {
		if len(p.Cors.Rules) > maxCorsRules {
			return invalidXML("%d CORS rules; at most %d are allowed", len(p.Cors.Rules), maxCorsRules)
		}
		for i := range p.Cors.Rules {
			if err := p.Cors.Rules[i].validate(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *retention) validate(owner string) error {
	if r == nil || r.Enabled == nil {
		return invalidXML("%s needs RetentionPolicy with Enabled", owner)
	}
	if !*r.Enabled {
		r.Days = nil
		return nil
	}
	if r.Days == nil || *r.Days < 1 || *r.Days > maxRetentionDays {
		return invalidXML("%s retention is enabled and needs Days from 1 to %d", owner, maxRetentionDays)
	}
	return nil
}

// validate checks one CORS rule. Every element is required; the header
// lists may be empty (the Python SDK sends them empty by default).
func (r *corsRule) validate() error {
	if r.AllowedOrigins == nil || r.AllowedMethods == nil || r.AllowedHeaders == nil ||
		r.ExposedHeaders == nil || r.MaxAgeInSeconds == nil {
		return invalidXML("a CorsRule needs AllowedOrigins, AllowedMethods, AllowedHeaders, ExposedHeaders and MaxAgeInSeconds")
	}
	origins := splitList(*r.AllowedOrigins)
	if len(origins) == 0 || len(origins) > maxCorsListItems {
		return invalidXML("AllowedOrigins needs 1 to %d origins", maxCorsListItems)
	}
	for _, o := range origins {
		if len(o) > maxCorsItemLength || (o == "*" && len(origins) > 1) {
			return invalidXML("AllowedOrigins %q is not valid", o)
		}
	}
	methods := splitList(*r.AllowedMethods)
	if len(methods) == 0 {
		return invalidXML("AllowedMethods is empty")
	}
	for _, m := range methods {
		if !corsMethods[m] {
			return invalidXML("AllowedMethods: %q is not one of DELETE, GET, HEAD, MERGE, POST, OPTIONS, PUT, PATCH", m)
		}
	}
	for name, list := range map[string]string{"AllowedHeaders": *r.AllowedHeaders, "ExposedHeaders": *r.ExposedHeaders} {
		literal, prefixed := 0, 0
		for _, h := range splitList(list) {
			if len(h) > maxCorsItemLength {
				return invalidXML("%s: a header name is longer than %d characters", name, maxCorsItemLength)
			}
			if strings.HasSuffix(h, "*") {
				prefixed++
			} else {
				literal++
			}
		}
		if literal > maxCorsListItems || prefixed > maxCorsPrefixed {
			return invalidXML("%s allows at most %d literal and %d prefixed headers", name, maxCorsListItems, maxCorsPrefixed)
		}
	}
	if *r.MaxAgeInSeconds < 0 || *r.MaxAgeInSeconds > math.MaxInt32 {
		return invalidXML("MaxAgeInSeconds is not a non-negative 32-bit number")
	}
	r.AllowedHeaders, r.ExposedHeaders = literalsFirst(*r.AllowedHeaders), literalsFirst(*r.ExposedHeaders)
	return nil
}

// literalsFirst is a CORS header list as the service stores it: the
// literal names first, then the prefixes ("x-ms-meta-data*"), each group in
// the order given. Live, AllowedHeaders set as
// "x-ms-meta-data*,x-ms-meta-target*,x-ms-meta-xyz,x-ms-meta-foo" read back
// as "x-ms-meta-xyz,x-ms-meta-foo,x-ms-meta-data*,x-ms-meta-target*", and
// ExposedHeaders "x-ms-meta-data*,x-ms-meta-source*,x-ms-meta-abc,x-ms-meta-bcd"
// as "x-ms-meta-abc,x-ms-meta-bcd,x-ms-meta-data*,x-ms-meta-source*"
// (azure-data-tables test_set_cors, x-ms-version 2025-07-05). Only the
// order changes: each item is kept as sent, and a list already in that
// order is kept whole.
func literalsFirst(list string) *string {
	items := strings.Split(list, ",")
	literals := make([]string, 0, len(items))
	var prefixes []string
	for _, it := range items {
		if strings.HasSuffix(strings.TrimSpace(it), "*") {
			prefixes = append(prefixes, it)
		} else {
			literals = append(literals, it)
		}
	}
	out := strings.Join(append(literals, prefixes...), ",")
	return &out
}

// splitList splits a comma-separated rule value, trimming spaces and
// dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// merged is old with the top-level elements set replaced: an element left
// out of a Set keeps its value, and an empty <Cors/> clears the rules
// (docs/protocol.md 0.1).
func (p *serviceProperties) merged(old *serviceProperties) *serviceProperties {
	out := *old
	if p.Logging != nil {
		out.Logging = p.Logging
	}
	if p.HourMetrics != nil {
		out.HourMetrics = p.HourMetrics
	}
	if p.MinuteMetrics != nil {
		out.MinuteMetrics = p.MinuteMetrics
	}
	if p.Cors != nil {
		out.Cors = p.Cors
	}
	return &out
}

// propsCache keeps each account's service properties in memory: CORS
// needs them on every request that carries an Origin, and on every GET
// (Vary), so reading the store each time would tax every request.
//
// On SQLite the cache is never stale because this Server is the only
// writer of its database: the SQLite engine locks the data directory, so
// no other process (or Server in this one) can write it while this one
// runs (emulator/store/sqlite/lock.go), and every Set goes through set,
// which updates the store and the cache under one lock. On a shared
// database (PostgreSQL, several instances) another instance may set them:
// then an entry is kept for ttl only, so a change made through one
// instance is in force on every other within ttl (docs/postgres.md).
// The zero value is ready and never expires entries.
type propsCache struct {
	mu  sync.RWMutex // m
	m   map[string]cachedProps
	ttl time.Duration // 0: for ever
	// turn is held while the store's properties are read into the cache
	// or changed (get, set, Server.unlockProps), so that a load cannot
	// overwrite a concurrent change with the older document it read. A
	// channel, not a mutex: a request waiting for its turn — behind a
	// read the database does not answer — stops at its deadline
	// (deadline.go). Made on first use, under mu.
	turn chan struct{}
}

// lock waits for the turn, or for ctx to end.
func (pc *propsCache) lock(ctx context.Context) error {
	pc.mu.Lock()
	if pc.turn == nil {
		pc.turn = make(chan struct{}, 1)
	}
	turn := pc.turn
	pc.mu.Unlock()
	select {
	case turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (pc *propsCache) unlock() { <-pc.turn }

type cachedProps struct {
	p  *serviceProperties // immutable once stored
	at time.Time
}

// sharedPropsTTL is how long an instance on a shared database trusts the
// properties it read: half the one second within which a change must be
// in force everywhere, which leaves room for the read itself.
const sharedPropsTTL = 500 * time.Millisecond

func (pc *propsCache) lookup(account string) (*serviceProperties, bool) {
	c, ok := pc.m[account]
	if !ok || pc.ttl > 0 && time.Since(c.at) >= pc.ttl {
		return nil, false
	}
	return c.p, true
}

// get returns account's properties (the defaults if none were set).
func (pc *propsCache) get(ctx context.Context, st *store.Store, account string) (*serviceProperties, error) {
	pc.mu.RLock()
	p, ok := pc.lookup(account)
	pc.mu.RUnlock()
	if ok {
		return p, nil
	}
	// Load in turn, so a concurrent set cannot be overwritten by the
	// older document read here.
	if err := pc.lock(ctx); err != nil {
		return nil, err
	}
	defer pc.unlock()
	pc.mu.RLock()
	p, ok = pc.lookup(account)
	pc.mu.RUnlock()
	if ok {
		return p, nil
	}
	err := st.View(ctx, func(tx *store.Tx) error {
		var err error
		p, err = loadProperties(tx, account)
		return err
	})
	if err != nil {
		return nil, err
	}
	pc.put(account, p)
	return p, nil
}

// set merges req into account's properties in one transaction and caches
// the result.
func (pc *propsCache) set(ctx context.Context, st *store.Store, account string, req *serviceProperties) error {
	if err := pc.lock(ctx); err != nil {
		return err
	}
	defer pc.unlock()
	var p *serviceProperties
	err := st.Update(ctx, func(tx *store.Tx) error {
		old, err := loadProperties(tx, account)
		if err != nil {
			return err
		}
		p = req.merged(old)
		doc, err := xml.Marshal(p)
		if err != nil {
			return err
		}
		return tx.SetServiceProperties(account, string(doc))
	})
	if err != nil {
		return err
	}
	pc.put(account, p)
	return nil
}

// put caches p; the caller holds the turn.
func (pc *propsCache) put(account string, p *serviceProperties) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.m == nil {
		pc.m = map[string]cachedProps{}
	}
	pc.m[account] = cachedProps{p, time.Now()}
}

func loadProperties(tx *store.Tx, account string) (*serviceProperties, error) {
	doc, ok, err := tx.ServiceProperties(account)
	if err != nil || !ok {
		return defaultServiceProperties(), err
	}
	p := &serviceProperties{}
	if err := decodeXML([]byte(doc), p); err != nil {
		return nil, errors.New("stored service properties are not readable: " + err.Error())
	}
	// Documents from before a field existed get its default.
	return p.merged(defaultServiceProperties()), nil
}

// cosmosUnsupported is Azure Cosmos DB for Table's answer to an operation
// of Table storage it does not support (the cosmos profile): 405
// MethodNotAllowed, "The requested operation is not supported.", in JSON
// even to a request for XML, as recorded for Set Service Properties
// (python-cosmos test_too_many_cors_rules, test_retention_too_long: full
// metadata, the ActivityId line). The FAQ
// (learn.microsoft.com/azure/cosmos-db/table/faq) names the others
// Cosmos DB does not support — Get Service Properties, Get Service Stats,
// Get and Set Table ACL, CORS preflight — and no recording shows their
// answer: tableemu gives them the same one (docs/cosmos.md), full metadata
// unless a GET asks for a JSON level (writeCosmosError).
func (c *call) cosmosUnsupported(what string) error {
	c.xml, c.level = false, wire.FullMetadata
	return tableemu.New(tableemu.MethodNotAllowed).WithHint(
		"Azure Cosmos DB for Table does not support %s (tableemu --profile cosmos answers as it does; docs/cosmos.md).", what)
}

// getServiceProperties: GET /?restype=service&comp=properties
// (docs/protocol.md 3.5).
func (s *Server) getServiceProperties(c *call) error {
	if s.cosmos {
		return c.cosmosUnsupported("Get Table Service Properties")
	}
	p, err := s.props.get(c.ctx(), s.store, c.res.account)
	if err != nil {
		return storeErr(err)
	}
	return c.writeXML(http.StatusOK, p, true)
}

// setServiceProperties: PUT /?restype=service&comp=properties. 202 with
// no body and none of the JSON headers (docs/protocol.md 3.5).
func (s *Server) setServiceProperties(c *call) error {
	if s.cosmos {
		return c.cosmosUnsupported("Set Table Service Properties (CORS, logging and metrics)")
	}
	body, err := readBody(c.r)
	if err != nil {
		return err
	}
	req := &serviceProperties{}
	if err := decodeXML(body, req); err != nil {
		return err
	}
	if err := req.validate(); err != nil {
		return err
	}
	if err := s.props.set(c.ctx(), s.store, c.res.account, req); err != nil {
		return storeErr(err)
	}
	c.w.Header().Set("Content-Length", "0")
	c.w.WriteHeader(http.StatusAccepted)
	return nil
}

// serviceStats is the Get Table Service Stats body (docs/protocol.md 3.6).
type serviceStats struct {
	XMLName      xml.Name `xml:"StorageServiceStats"`
	Status       string   `xml:"GeoReplication>Status"`
	LastSyncTime string   `xml:"GeoReplication>LastSyncTime"`
}

// getServiceStats: GET /?restype=service&comp=stats, served only on the
// "-secondary" account (docs/protocol.md 1.1, 3.6). An emulator has one copy of
// the data, so the secondary is always live and in sync: LastSyncTime is
// now, in RFC 1123 as the Go SDK requires (docs/protocol.md 13). On the primary
// the answer is Azurite's, 400 InvalidQueryParameterValue.
func (s *Server) getServiceStats(c *call) error {
	if s.cosmos {
		return c.cosmosUnsupported("Get Table Service Stats")
	}
	if !c.res.secondary {
		return tableemu.New(tableemu.InvalidQueryParameterValue).WithDetail(
			"Get Table Service Stats is served on the secondary endpoint only: use the account name %s%s", c.res.account, secondarySuffix)
	}
	st := &serviceStats{Status: "live", LastSyncTime: s.now().UTC().Format(http.TimeFormat)}
	return c.writeXML(http.StatusOK, st, true)
}

// writeXML sends an XML response: the declaration, then v. bom prefixes a
// UTF-8 byte order mark, as the service does for service properties and
// stats but not for ACLs (docs/protocol.md 2.2). XML responses carry neither
// Cache-Control nor nosniff.
func (c *call) writeXML(status int, v any, bom bool) error {
	var b bytes.Buffer
	if bom {
		b.WriteString("\uFEFF")
	}
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>`)
	if err := xml.NewEncoder(&b).Encode(v); err != nil {
		return tableemu.New(tableemu.InternalError).WithDetail("encoding XML: %v", err)
	}
	h := c.w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	c.w.WriteHeader(status)
	if c.r.Method != http.MethodHead {
		c.w.Write(b.Bytes())
	}
	return nil
}

// decodeXML reads a request body that must be exactly one XML document
// whose root element is v's (a leading byte order mark and the
// declaration are allowed). A syntax error, another root, an encoding other
// than UTF-8, a malformed value or anything after the root is 400
// InvalidXmlDocument (docs/protocol.md 3.4, 3.5). encoding/xml resolves no
// external entities, so hostile documents cannot reach files or the
// network.
func decodeXML(body []byte, v any) error {
	body = bytes.TrimPrefix(body, []byte("\uFEFF"))
	d := xml.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(v); err != nil {
		return invalidXML("%v", err)
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return invalidXML("after the root element: %v", err)
		}
		switch t := tok.(type) {
		case xml.Comment, xml.ProcInst:
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 {
				return invalidXML("text after the root element")
			}
		default:
			return invalidXML("content after the root element")
		}
	}
}
