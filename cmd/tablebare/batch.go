package main

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// batch runs a $batch of entity inserts (POST parts) in one transaction
// and answers as the service does: 202 with a part per operation, or the
// first failed part alone and nothing written.
func (s *server) batch(w http.ResponseWriter, r *http.Request, body []byte) {
	parts, ok := changeset(body)
	if !ok {
		fail(w, 400, "InvalidInput")
		return
	}
	type op struct {
		table, pk, rk string
		body          []byte
	}
	ops := make([]op, 0, len(parts))
	for _, p := range parts {
		// MIME headers, a blank line, the request line and headers, a
		// blank line, the entity.
		_, req, _ := bytes.Cut(p, []byte("\r\n\r\n"))
		head, ent, _ := bytes.Cut(req, []byte("\r\n\r\n"))
		line, _, _ := bytes.Cut(head, []byte("\r\n"))
		f := strings.Fields(string(line))
		if len(f) != 3 || f[0] != "POST" {
			fail(w, 501, "NotImplemented")
			return
		}
		ent = bytes.TrimSpace(ent)
		pk, ok1 := stringField(ent, "PartitionKey")
		rk, ok2 := stringField(ent, "RowKey")
		if !ok1 || !ok2 {
			fail(w, 400, "InvalidInput")
			return
		}
		ops = append(ops, op{f[1][strings.LastIndexByte(f[1], '/')+1:], pk, rk, ent})
	}
	failed := -1
	s.wmu.Lock()
	err := s.w.exec("BEGIN IMMEDIATE")
	for i, o := range ops {
		if err != nil {
			break
		}
		if _, err = s.w.run(`INSERT INTO entities (t, pk, rk, ts, body) VALUES (?, ?, ?, ?, ?)`, o.table, o.pk, o.rk, s.now(), o.body); err != nil {
			failed = i
		}
	}
	if err == nil {
		err = s.w.exec("COMMIT")
	}
	if err != nil {
		s.w.exec("ROLLBACK")
	}
	s.wmu.Unlock()
	if err != nil && failed < 0 {
		fail(w, 500, "InternalError")
		return
	}
	out := s.buf()
	defer s.bufs.Put(out)
	out.WriteString("--batchresponse_b\r\nContent-Type: multipart/mixed; boundary=changesetresponse_b\r\n\r\n")
	if failed >= 0 {
		fmt.Fprintf(out, "--changesetresponse_b\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"+
			"HTTP/1.1 409 Conflict\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n"+
			`{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"%d:EntityAlreadyExists"}}}`+"\r\n", failed)
	} else {
		for i := range ops {
			fmt.Fprintf(out, "--changesetresponse_b\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"+
				"HTTP/1.1 204 No Content\r\nContent-ID: %d\r\nPreference-Applied: return-no-content\r\nDataServiceVersion: 3.0;\r\n\r\n", i+1)
		}
	}
	out.WriteString("--changesetresponse_b--\r\n--batchresponse_b--\r\n")
	h := w.Header()
	h.Set("Content-Type", "multipart/mixed; boundary=batchresponse_b")
	h.Set("Content-Length", strconv.Itoa(out.Len()))
	w.WriteHeader(202)
	w.Write(out.Bytes())
}

// changeset returns the parts of a batch's one changeset.
func changeset(body []byte) ([][]byte, bool) {
	// The batch part's header names the changeset's boundary.
	i := bytes.Index(body, []byte("boundary="))
	if i < 0 {
		return nil, false
	}
	end := bytes.IndexByte(body[i:], '\r')
	if end < 0 {
		return nil, false
	}
	_, params, err := mime.ParseMediaType("multipart/mixed; " + string(body[i:i+end]))
	if err != nil || params["boundary"] == "" {
		return nil, false
	}
	sep := []byte("\r\n--" + params["boundary"])
	chunks := bytes.Split(body[i+end:], sep)
	if len(chunks) < 3 {
		return nil, false
	}
	// chunks[0] precedes the first part; the last starts with "--".
	return chunks[1 : len(chunks)-1], true
}
