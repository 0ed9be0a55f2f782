package emulator

import (
	"regexp"
	"testing"
)

// TestCORSHeaderListsReadBackLiteralsFirst: the header lists of a CORS
// rule read back with the literal names first, then the prefixes, each
// group in the order set (live, x-ms-version 2025-07-05: azure-data-tables
// test_set_cors); the other lists and an ordered list are kept as set.
func TestCORSHeaderListsReadBackLiteralsFirst(t *testing.T) {
	_, hs := newTestServer(t)
	const set = `<?xml version='1.0' encoding='utf-8'?>
<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>www.xyz.com</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders /><ExposedHeaders /><MaxAgeInSeconds>0</MaxAgeInSeconds></CorsRule><CorsRule><AllowedOrigins>www.xyz.com,www.ab.com,www.bc.com</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods><AllowedHeaders>x-ms-meta-data*,x-ms-meta-target*,x-ms-meta-xyz,x-ms-meta-foo</AllowedHeaders><ExposedHeaders>x-ms-meta-data*,x-ms-meta-source*,x-ms-meta-abc,x-ms-meta-bcd</ExposedHeaders><MaxAgeInSeconds>500</MaxAgeInSeconds></CorsRule><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>PUT</AllowedMethods><AllowedHeaders>a,b*</AllowedHeaders><ExposedHeaders>c*</ExposedHeaders><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`
	req := signed(t, "PUT", hs.URL, "/"+DevAccount+"/?restype=service&comp=properties", set)
	req.Header.Set("Content-Type", "application/xml")
	signComp(req, "/"+DevAccount+"/", "properties")
	if r := send(t, req); r.StatusCode != 202 {
		t.Fatalf("Set: %d %s", r.StatusCode, r.body)
	}
	req = signed(t, "GET", hs.URL, "/"+DevAccount+"/?restype=service&comp=properties", "")
	signComp(req, "/"+DevAccount+"/", "properties")
	r := send(t, req)
	// The Cors element of the live answer, and of the third rule, which
	// was in order already.
	const want = `<Cors><CorsRule><AllowedMethods>GET</AllowedMethods><AllowedOrigins>www.xyz.com</AllowedOrigins><AllowedHeaders /><ExposedHeaders /><MaxAgeInSeconds>0</MaxAgeInSeconds></CorsRule><CorsRule><AllowedMethods>GET,PUT</AllowedMethods><AllowedOrigins>www.xyz.com,www.ab.com,www.bc.com</AllowedOrigins><AllowedHeaders>x-ms-meta-xyz,x-ms-meta-foo,x-ms-meta-data*,x-ms-meta-target*</AllowedHeaders><ExposedHeaders>x-ms-meta-abc,x-ms-meta-bcd,x-ms-meta-data*,x-ms-meta-source*</ExposedHeaders><MaxAgeInSeconds>500</MaxAgeInSeconds></CorsRule><CorsRule><AllowedMethods>PUT</AllowedMethods><AllowedOrigins>*</AllowedOrigins><AllowedHeaders>a,b*</AllowedHeaders><ExposedHeaders>c*</ExposedHeaders><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule></Cors>`
	// Empty elements may be written <X></X> or <X />: compare them as one.
	empty := regexp.MustCompile(`<(\w+)></(\w+)>`)
	got := regexp.MustCompile(`<Cors>.*</Cors>`).FindString(empty.ReplaceAllString(r.body, "<$1 />"))
	if r.StatusCode != 200 || got != want {
		t.Errorf("Get: %d\n got %s\nwant %s", r.StatusCode, got, want)
	}
}
