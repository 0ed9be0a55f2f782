package conformance

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// BenchmarkBatchInsert100 measures 100-entity batch inserts, sent as the Go
// SDK formats them (docs/protocol.md 13) but built and signed here, so the
// figure is the server's rather than the SDK's. It runs against the
// in-process server, or against TABLEEMU_TEST_CONNECTION_STRING (Azurite,
// for a side-by-side figure). Each batch is a new partition of one table.
func BenchmarkBatchInsert100(b *testing.B) {
	tg := shared
	name := tableName()
	svc := tg.service(b)
	if _, err := svc.CreateTable(ctx(), name, nil); err != nil {
		b.Fatal(err)
	}
	defer svc.DeleteTable(ctx(), name, nil)
	const n = 100
	// One body, its PartitionKey rewritten in place for each batch.
	const pkTemplate = "p00000000"
	var buf bytes.Buffer
	writeInsertBatch(&buf, tg.endpoint, name, pkTemplate, n)
	body := buf.Bytes()
	var at []int
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte(pkTemplate))
		if j < 0 {
			break
		}
		at = append(at, i+j)
		i += j + len(pkTemplate)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pk := fmt.Sprintf("p%08d", i)
		for _, k := range at {
			copy(body[k:], pk)
		}
		req, err := http.NewRequest("POST", tg.endpoint+"/$batch", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "multipart/mixed; boundary=batch_bench")
		req.Header.Set("Accept", "application/json;odata=minimalmetadata")
		req.Header.Set("DataServiceVersion", "3.0")
		req.Header.Set("x-ms-version", "2019-02-02")
		tg.signLite(b, req)
		resp, err := benchClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted || resp.Header.Get("x-ms-error-code") != "" || bytes.Contains(raw, []byte("odata.error")) {
			b.Fatalf("batch %d: %d %s", i, resp.StatusCode, raw)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entities/s")
}

var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}

// writeInsertBatch writes a changeset of n inserts with Prefer:
// return-no-content, laid out as the Go SDK lays it out.
func writeInsertBatch(w *bytes.Buffer, endpoint, table, pk string, n int) {
	w.WriteString("--batch_bench\r\nContent-Type: multipart/mixed; boundary=changeset_bench\r\n\r\n")
	for i := 0; i < n; i++ {
		ent := fmt.Sprintf(`{"Amount":%d.5,"Count":%d,"Flag":true,"Name":"entity number %d of the benchmark","PartitionKey":"%s","RowKey":"%04d"}`, i, i, i, pk, i)
		fmt.Fprintf(w, "--changeset_bench\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n"+
			"POST %s/%s?%%24format=application%%2Fjson%%3Bodata%%3Dminimalmetadata HTTP/1.1\r\n"+
			"Accept: application/json;odata=minimalmetadata\r\nContent-Length: %d\r\nContent-Type: application/json\r\n"+
			"DataServiceVersion: \r\nPrefer: return-no-content\r\nx-ms-version: \r\n\r\n%s\r\n", endpoint, table, len(ent), ent)
	}
	w.WriteString("--changeset_bench--\r\n\r\n--batch_bench--")
}
