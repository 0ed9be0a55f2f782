package conformance

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

// Batch responses read with the standard library, independently of
// tableemu's writer, and raw batches (docs/protocol.md 7).

// batchPartResponse is one operation's response inside a batch response.
type batchPartResponse struct {
	*http.Response
	mimeHeader map[string][]string
	body       []byte
}

// batchParts parses a batch response body (with the standard library,
// independently of tableemu's writer) into its operation responses,
// looking inside a changesetresponse when there is one.
func batchParts(t *testing.T, contentType string, body []byte) []*batchPartResponse {
	t.Helper()
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/mixed" || !strings.HasPrefix(params["boundary"], "batchresponse_") {
		t.Fatalf("batch response Content-Type %q", contentType)
	}
	var out []*batchPartResponse
	var walk func(r io.Reader, boundary string)
	walk = func(r io.Reader, boundary string) {
		mr := multipart.NewReader(r, boundary)
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("batch response is not multipart: %v\n%s", err, body)
			}
			data, err := io.ReadAll(p)
			must(t, err)
			if mt, params, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); mt == "multipart/mixed" {
				if !strings.HasPrefix(params["boundary"], "changesetresponse_") {
					t.Fatalf("changeset boundary %q: the JS SDK splits on --changesetresponse_", params["boundary"])
				}
				walk(bytes.NewReader(data), params["boundary"])
				continue
			}
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), nil)
			if err != nil {
				t.Fatalf("part is not an HTTP response: %v\n%q", err, data)
			}
			b, _ := io.ReadAll(resp.Body)
			out = append(out, &batchPartResponse{Response: resp, mimeHeader: p.Header, body: bytes.TrimSpace(b)})
		}
	}
	walk(bytes.NewReader(body), params["boundary"])
	return out
}

// rawBatch posts a changeset of the given operations ("METHOD path-or-URL"
// plus header lines and body, LF-separated; "EP" becomes the endpoint) and
// returns the response and its operation parts.
func rawBatch(t *testing.T, tg *target, ops ...string) (*rawResponse, []*batchPartResponse) {
	t.Helper()
	var b strings.Builder
	b.WriteString("--batch_w\r\nContent-Type: multipart/mixed; boundary=changeset_w\r\n\r\n")
	for _, op := range ops {
		op = strings.ReplaceAll(op, "EP", tg.endpoint)
		b.WriteString("--changeset_w\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString(strings.ReplaceAll(op, "\n", "\r\n"))
		b.WriteString("\r\n")
	}
	b.WriteString("--changeset_w--\r\n--batch_w--\r\n")
	r := tg.raw(t, "POST", "/$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=batch_w"}, []byte(b.String()))
	if r.StatusCode != http.StatusAccepted {
		t.Fatalf("batch: %d %s", r.StatusCode, r.body)
	}
	return r, batchParts(t, r.Header.Get("Content-Type"), r.body)
}
