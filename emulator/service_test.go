package emulator

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
)

func wantXMLError(t *testing.T, err error) {
	t.Helper()
	var e *tableemu.Error
	if !errors.As(err, &e) || e.Code != tableemu.InvalidXmlDocument {
		t.Fatalf("got %v, want InvalidXmlDocument", err)
	}
}

// TestDecodeXML: one document, UTF-8 only, nothing after the root; no
// entity tricks (encoding/xml expands none beyond the predefined five).
func TestDecodeXML(t *testing.T) {
	type root struct {
		XMLName xml.Name `xml:"R"`
		V       string   `xml:"V"`
	}
	ok := map[string]string{
		"plain":       "<R><V>x</V></R>",
		"BOM":         "\uFEFF<?xml version=\"1.0\" encoding=\"utf-8\"?><R><V>x</V></R>",
		"trailing ws": "<R><V>x</V></R>\n\t ",
		"comment":     "<R><V>x</V></R><!-- done -->",
	}
	for name, doc := range ok {
		var r root
		if err := decodeXML([]byte(doc), &r); err != nil || r.V != "x" {
			t.Errorf("%s: %v %+v", name, err, r)
		}
	}
	bad := map[string]string{
		"empty":           "",
		"wrong root":      "<S><V>x</V></S>",
		"two roots":       "<R/><R/>",
		"text after":      "<R/>junk",
		"unclosed":        "<R><V>x</V>",
		"utf-16":          `<?xml version="1.0" encoding="utf-16"?><R/>`,
		"custom entity":   `<!DOCTYPE R [<!ENTITY e SYSTEM "file:///etc/passwd">]><R><V>&e;</V></R>`,
		"undefined ref":   "<R><V>&nope;</V></R>",
		"deep nesting":    strings.Repeat("<V>", 20000) + strings.Repeat("</V>", 20000),
		"mismatched tags": "<R><V>x</W></R>",
	}
	for name, doc := range bad {
		var r root
		err := decodeXML([]byte(doc), &r)
		if err == nil {
			t.Errorf("%s: accepted, V=%q", name, r.V)
			continue
		}
		wantXMLError(t, err)
	}
}

func TestServicePropertiesValidate(t *testing.T) {
	parse := func(doc string) error {
		p := &serviceProperties{}
		if err := decodeXML([]byte(doc), p); err != nil {
			return err
		}
		return p.validate()
	}
	metrics := func(inner string) string {
		return "<StorageServiceProperties><HourMetrics><Version>1.0</Version>" + inner + "</HourMetrics></StorageServiceProperties>"
	}
	rule := func(methods, origins, allowed, exposed, age string) string {
		return "<StorageServiceProperties><Cors><CorsRule><AllowedMethods>" + methods + "</AllowedMethods><AllowedOrigins>" + origins +
			"</AllowedOrigins><AllowedHeaders>" + allowed + "</AllowedHeaders><ExposedHeaders>" + exposed +
			"</ExposedHeaders><MaxAgeInSeconds>" + age + "</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>"
	}
	valid := []string{
		metrics("<Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>"),
		metrics("<Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>1</Days></RetentionPolicy>"),
		rule("GET,PUT,PATCH", "http://a, http://b", "", "", "0"),
		rule("OPTIONS", "*", "x-ms-meta-*,x-ms-blob-*,a,b", "*", "2147483647"),
		"<StorageServiceProperties><Cors/></StorageServiceProperties>",
	}
	for _, doc := range valid {
		if err := parse(doc); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
	invalid := []string{
		"<StorageServiceProperties/>",
		"<StorageServiceProperties><Unknown/></StorageServiceProperties>",
		metrics("<Enabled>true</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>"),
		metrics("<Enabled>false</Enabled>"),
		metrics("<Enabled>false</Enabled><RetentionPolicy><Enabled>true</Enabled><Days>366</Days></RetentionPolicy>"),
		metrics("<Enabled>false</Enabled><RetentionPolicy><Enabled>true</Enabled><Days>-1</Days></RetentionPolicy>"),
		metrics("<Enabled>false</Enabled><RetentionPolicy><Enabled>true</Enabled><Days>99999999999999999999</Days></RetentionPolicy>"),
		rule("get", "*", "", "", "1"),
		rule("GET", "*,http://a", "", "", "1"),
		rule("GET", " , ", "", "", "1"),
		rule("GET", "*", "a*,b*,c*", "", "1"),
		rule("GET", "*", "", strings.Repeat("h,", 65), "1"),
		rule("GET", "*", strings.Repeat("h", 257), "", "1"),
		rule("GET", strings.Repeat("o", 257), "", "", "1"),
		rule("GET", "*", "", "", "-1"),
		rule("GET", "*", "", "", "2147483648"),
		"<StorageServiceProperties><Cors>" + strings.Repeat("<CorsRule/>", 1) + "</Cors></StorageServiceProperties>",
	}
	for _, doc := range invalid {
		err := parse(doc)
		if err == nil {
			t.Errorf("accepted %s", doc)
			continue
		}
		wantXMLError(t, err)
	}
}

// TestMergedKeepsOmitted: a Set replaces only the elements it carries.
func TestMergedKeepsOmitted(t *testing.T) {
	old := defaultServiceProperties()
	on := true
	req := &serviceProperties{Cors: &corsRuleSet{}, Logging: &logging{Read: &on}}
	m := req.merged(old)
	if m.Logging != req.Logging || m.HourMetrics != old.HourMetrics || m.MinuteMetrics != old.MinuteMetrics || m.Cors != req.Cors {
		t.Fatalf("merged %+v", m)
	}
	if old.Logging.Read == nil || *old.Logging.Read {
		t.Fatal("merged changed the old document")
	}
}

func TestHeaderMatches(t *testing.T) {
	cases := []struct {
		entry, name string
		want        bool
	}{
		{"x-ms-meta-*", "x-ms-meta-color", true},
		{"x-ms-meta-*", "X-MS-META-", true},
		{"x-ms-meta-*", "x-ms-met", false},
		{"*", "anything", true},
		{"content-type", "Content-Type", true},
		{"content-type", "content-type2", false},
		{"", "", true},
	}
	for _, tc := range cases {
		if got := headerMatches(tc.entry, tc.name); got != tc.want {
			t.Errorf("headerMatches(%q, %q) = %v", tc.entry, tc.name, got)
		}
	}
}

func TestParseSignedIdentifiers(t *testing.T) {
	ids, err := parseSignedIdentifiers([]byte("  \n"))
	if err != nil || ids != nil {
		t.Fatalf("blank body: %v %v", ids, err)
	}
	ids, err = parseSignedIdentifiers([]byte(`<SignedIdentifiers><SignedIdentifier><AccessPolicy><Permission>ru</Permission>` +
		`<Expiry>2042-01-01T01:01:01.000000001Z</Expiry><Start>2042-01-01T00:00:00+02:00</Start></AccessPolicy><Id>é</Id></SignedIdentifier></SignedIdentifiers>`))
	if err != nil || len(ids) != 1 || ids[0].ID != "é" || ids[0].Permission != "ru" || ids[0].Start.Hour() != 22 || ids[0].Expiry.Nanosecond() != 1 {
		t.Fatalf("the Go SDK's element order and forms: %+v %v", ids, err)
	}
	if formatACLTime(ids[0].Expiry) != "2042-01-01T01:01:01.0000000Z" || formatACLTime(ids[0].Start) != "2041-12-31T22:00:00.0000000Z" {
		t.Fatalf("formatted %s %s", formatACLTime(ids[0].Expiry), formatACLTime(ids[0].Start))
	}
	// 64 characters, not bytes.
	if _, err := parseSignedIdentifiers([]byte("<SignedIdentifiers><SignedIdentifier><Id>" + strings.Repeat("é", 64) + "</Id></SignedIdentifier></SignedIdentifiers>")); err != nil {
		t.Fatalf("64 two-byte characters: %v", err)
	}
}

// FuzzXMLBodies: the XML request bodies never panic the parsers, and every
// refusal is InvalidXmlDocument.
func FuzzXMLBodies(f *testing.F) {
	f.Add([]byte(`<StorageServiceProperties><Logging><Version>1.0</Version><Read>true</Read><Write>false</Write><Delete>false</Delete><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging><Cors><CorsRule><AllowedMethods>GET</AllowedMethods><AllowedOrigins>*</AllowedOrigins><AllowedHeaders>*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`))
	f.Add([]byte(`<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>2042-01-01</Start><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`))
	f.Add([]byte("\uFEFF<?xml version=\"1.0\"?><SignedIdentifiers/>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		p := &serviceProperties{}
		err := decodeXML(body, p)
		if err == nil {
			err = p.validate()
		}
		if err == nil {
			if _, err := xml.Marshal(p.merged(defaultServiceProperties())); err != nil {
				t.Fatalf("a valid document does not encode: %v", err)
			}
		} else {
			wantXMLError(t, err)
		}
		if _, err := parseSignedIdentifiers(body); err != nil {
			wantXMLError(t, err)
		}
	})
}

// TestServicePropertiesConcurrent: Sets racing each other and CORS reads
// (run with -race); the last Set wins in the store and the cache alike.
func TestServicePropertiesConcurrent(t *testing.T) {
	s, hs := newTestServer(t)
	doc := func(i int) string {
		return "<StorageServiceProperties><Cors><CorsRule><AllowedMethods>GET</AllowedMethods><AllowedOrigins>http://o" + itoa(i) +
			"</AllowedOrigins><AllowedHeaders/><ExposedHeaders/><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>"
	}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			req := signed(t, "PUT", hs.URL, "/"+DevAccount+"/?restype=service&comp=properties", doc(i))
			signComp(req, "/"+DevAccount+"/", "properties")
			resp, err := hs.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 202 {
				t.Errorf("Set: %d", resp.StatusCode)
			}
		}()
		go func() {
			defer wg.Done()
			req := signed(t, "GET", hs.URL, "/"+DevAccount+"/Tables", "")
			req.Header.Set("Origin", "http://o"+itoa(i))
			resp, err := hs.Client().Do(req)
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	cached, err := s.props.get(context.Background(), s.store, DevAccount)
	if err != nil {
		t.Fatal(err)
	}
	var stored *serviceProperties
	err = s.store.View(context.Background(), func(tx *store.Tx) error {
		stored, err = loadProperties(tx, DevAccount)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if *cached.Cors.Rules[0].AllowedOrigins != *stored.Cors.Rules[0].AllowedOrigins {
		t.Fatalf("cache %s, store %s", *cached.Cors.Rules[0].AllowedOrigins, *stored.Cors.Rules[0].AllowedOrigins)
	}
}

// signComp re-signs req (Shared Key Lite) with "?comp=" in the
// canonicalized resource, which signed leaves out (docs/protocol.md 9.5).
func signComp(req *http.Request, path, comp string) {
	key, _ := base64.StdEncoding.DecodeString(DevKey)
	m := hmac.New(sha256.New, key)
	io.WriteString(m, req.Header.Get("x-ms-date")+"\n/"+DevAccount+path+"?comp="+comp)
	req.Header.Set("Authorization", "SharedKeyLite "+DevAccount+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
}
