package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// target is one server under test, reached through its connection string.
// tablebench speaks the wire protocol itself (Shared Key Lite, JSON,
// $batch) rather than through an SDK, so that the figures are the
// server's: an SDK's own encoding and retries would be the same cost on
// every target and would only dilute the ratios.
type target struct {
	name     string
	pid      int    // the first of pids: its memory is reported
	pids     []int  // every process of the target: their CPU is summed
	endpoint string // table endpoint, e.g. http://127.0.0.1:10002/devstoreaccount1
	// endpoints are the instances of a target of several tableemu
	// processes on one database (docs/postgres.md); requests go to each
	// in turn. endpoint is the first.
	endpoints []string
	turn      atomic.Uint64
	account   string
	key       []byte
	path      string // the endpoint's path, e.g. /devstoreaccount1
	client    *http.Client
	bodies    sync.Pool // *[]byte: response buffers handed back by release
	// loaded counts the entities preload has written (tablebench -memory
	// reports how far a server got).
	loaded atomic.Int64
}

func parseTarget(spec string) (*target, error) {
	// name,pid,connection-string (pid may be empty). Several instances
	// of one service: name,pid1+pid2,cs1|cs2, with the same account.
	parts := strings.SplitN(spec, ",", 3)
	if len(parts) != 3 {
		return nil, fmt.Errorf("target %q: want name,pid,connection-string", spec)
	}
	t := &target{name: parts[0]}
	if parts[1] != "" {
		for _, p := range strings.Split(parts[1], "+") {
			var pid int
			if _, err := fmt.Sscan(p, &pid); err != nil {
				return nil, fmt.Errorf("target %q: pid: %v", spec, err)
			}
			t.pids = append(t.pids, pid)
		}
		t.pid = t.pids[0]
	}
	for _, cs := range strings.Split(parts[2], "|") {
		kv := map[string]string{}
		for _, p := range strings.Split(cs, ";") {
			if k, v, ok := strings.Cut(p, "="); ok {
				kv[k] = v
			}
		}
		ep := strings.TrimSuffix(kv["TableEndpoint"], "/")
		key, err := base64.StdEncoding.DecodeString(kv["AccountKey"])
		if err != nil || kv["AccountName"] == "" || ep == "" {
			return nil, fmt.Errorf("target %q: the connection string needs AccountName, AccountKey (base64) and TableEndpoint", t.name)
		}
		u, err := url.Parse(ep)
		if err != nil {
			return nil, err
		}
		if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
			return nil, fmt.Errorf("target %q: tablebench loads only loopback servers, not %s", t.name, h)
		}
		if t.endpoint == "" {
			t.account, t.endpoint, t.key, t.path = kv["AccountName"], ep, key, u.Path
		} else if kv["AccountName"] != t.account || u.Path != t.path {
			return nil, fmt.Errorf("target %q: its instances must serve one account at one path", t.name)
		}
		t.endpoints = append(t.endpoints, ep)
	}
	t.client = &http.Client{
		Timeout: 2 * time.Minute,
		Transport: &http.Transport{
			MaxIdleConnsPerHost: 256,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		},
	}
	return t, nil
}

// do sends one signed request; path is relative to the endpoint (e.g.
// "/bench()"), query is already encoded.
func (t *target) do(method, path, query string, hdr map[string]string, body []byte) (*http.Response, []byte, error) {
	u := t.endpoints[int(t.turn.Add(1)%uint64(len(t.endpoints)))] + path
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	h := req.Header
	h.Set("x-ms-version", "2019-02-02")
	h.Set("Accept", "application/json;odata=minimalmetadata")
	h.Set("DataServiceVersion", "3.0")
	if body != nil {
		h.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		h.Set(k, v)
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	h.Set("x-ms-date", date)
	m := hmac.New(sha256.New, t.key)
	io.WriteString(m, date+"\n/"+t.account+req.URL.EscapedPath())
	h.Set("Authorization", "SharedKeyLite "+t.account+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	// Read a body of known length in one piece: io.ReadAll grows its
	// buffer step by step, copying a megabyte page several times, and the
	// client's work counts against whichever server it waits for.
	var b []byte
	if n := resp.ContentLength; n >= 0 && n <= 64<<20 {
		if p, ok := t.bodies.Get().(*[]byte); ok && int64(cap(*p)) >= n {
			b = (*p)[:n]
		} else {
			b = make([]byte, n)
		}
		_, err = io.ReadFull(resp.Body, b)
	} else {
		b, err = io.ReadAll(resp.Body)
	}
	resp.Body.Close()
	return resp, b, err
}

// release hands a body that do returned back for reuse; the caller must
// not touch it afterwards. Paging through a table reads a megabyte per
// page, and allocating each one costs the client as much as reading it.
func (t *target) release(body []byte) {
	if cap(body) >= 64<<10 {
		t.bodies.Put(&body)
	}
}

// expect turns a response with another status into an error.
func expect(resp *http.Response, body []byte, err error, status int) error {
	if err != nil {
		return err
	}
	if resp.StatusCode != status {
		return fmt.Errorf("status %d (%s): %.200s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), body)
	}
	return nil
}

// createTable creates a table, accepting one that exists.
func (t *target) createTable(name string) error {
	resp, body, err := t.do("POST", "/Tables", "", map[string]string{"Prefer": "return-no-content"}, []byte(`{"TableName":"`+name+`"}`))
	if err == nil && resp.StatusCode == http.StatusConflict {
		return nil
	}
	return expect(resp, body, err, http.StatusNoContent)
}

func (t *target) deleteTable(name string) {
	t.do("DELETE", "/Tables('"+name+"')", "", nil, nil)
}

// batch sends one changeset of entity inserts (or upserts) for one
// partition and checks that every operation succeeded.
func (t *target) batch(table string, entities []entity) error {
	var b bytes.Buffer
	b.WriteString("--batch_tb\r\nContent-Type: multipart/mixed; boundary=changeset_tb\r\n\r\n")
	for _, ent := range entities {
		e := ent.body
		b.WriteString("--changeset_tb\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		fmt.Fprintf(&b, "POST %s/%s HTTP/1.1\r\nPrefer: return-no-content\r\n", t.endpoint, table)
		fmt.Fprintf(&b, "Accept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\nDataServiceVersion: 3.0\r\nContent-Length: %d\r\n\r\n", len(e))
		b.Write(e)
		b.WriteString("\r\n")
	}
	b.WriteString("--changeset_tb--\r\n\r\n--batch_tb--\r\n")
	resp, body, err := t.do("POST", "/$batch", "", map[string]string{"Content-Type": "multipart/mixed; boundary=batch_tb"}, b.Bytes())
	if err := expect(resp, body, err, http.StatusAccepted); err != nil {
		return err
	}
	if i := bytes.Index(body, []byte("odata.error")); i >= 0 {
		// From the error on: the part headers before it are long.
		return fmt.Errorf("batch failed: %.300s", body[i:])
	}
	return nil
}
