package conformance

import (
	"testing"

	"github.com/tableemu/tableemu/emulator"
)

// TestCORSWithoutOrigin: with a rule allowing every origin, a GET without
// an Origin header is answered as one from any origin — Access-Control-
// Allow-Origin: * and the rule's exposed headers, no Vary — as the live
// service answered the Java SDK's GETs (conformance/testdata/recordings/
// java, docs/protocol.md 3.7); a POST without Origin gets none of them.
func TestCORSWithoutOrigin(t *testing.T) {
	tg := ownServer(t, emulator.Config{})
	_, name := tg.newNamedTable(t)
	rules := `<StorageServiceProperties><Cors><CorsRule><AllowedMethods>GET,POST</AllowedMethods>` +
		`<AllowedOrigins>*</AllowedOrigins><AllowedHeaders>*</AllowedHeaders>` +
		`<ExposedHeaders>x-ms-client-request-id</ExposedHeaders><MaxAgeInSeconds>0</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`
	if r := tg.raw(t, "PUT", "/?restype=service&comp=properties", xmlHeaders, []byte(rules)); r.StatusCode != 202 {
		t.Fatalf("set CORS rules: %d %s", r.StatusCode, r.body)
	}
	r := tg.raw(t, "GET", "/"+name+"()", map[string]string{"x-ms-client-request-id": "abc"}, nil)
	if r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Vary") != "" ||
		r.Header.Get("Access-Control-Expose-Headers") != "x-ms-client-request-id" {
		t.Fatalf("GET without Origin: %d %v", r.StatusCode, r.Header)
	}
	r = tg.raw(t, "POST", "/"+name, map[string]string{"Content-Type": "application/json"}, marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}))
	if r.StatusCode != 201 || r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Vary") != "" {
		t.Fatalf("POST without Origin: %d %v", r.StatusCode, r.Header)
	}
}
