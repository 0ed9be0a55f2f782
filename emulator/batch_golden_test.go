package emulator

import (
	"fmt"
	"strings"
)

// Golden $batch exchanges: a request laid out exactly as an SDK lays it out,
// and the response tableemu sends, normalised (see normalize). Requests are
// written with "\n" and sent with the line endings their client uses.

type golden struct {
	name        string
	setup       []string // batches (LF, "batch_s"/"changeset_s") run first
	contentType string
	request     string
	lf          bool // send the request with LF line endings (legacy Node SDK)
	status      int
	errorCode   string // the outer x-ms-error-code; "" on success
	response    string
}

// setupInserts is a batch inserting the entities (PartitionKey "p").
func setupInserts(table string, rks ...string) string {
	var b strings.Builder
	b.WriteString("--batch_s\nContent-Type: multipart/mixed; boundary=changeset_s\n\n")
	for _, rk := range rks {
		fmt.Fprintf(&b, "--changeset_s\nContent-Type: application/http\n\nPOST /devstoreaccount1/%s HTTP/1.1\nPrefer: return-no-content\nContent-Type: application/json\n\n{\"PartitionKey\":\"p\",\"RowKey\":%q,\"V\":1}\n", table, rk)
	}
	b.WriteString("--changeset_s--\n--batch_s--\n")
	return b.String()
}

var goldens = []golden{
	{
		// aztables v1.4.1 (docs/protocol.md 13): multipart.Writer framing, part
		// headers sorted, request headers sorted by the keys as set (so
		// "x-ms-version" last, and it and DataServiceVersion empty), keys
		// in the URL neither doubled nor escaped, $format on inserts and
		// deletes, PATCH for merge, If-Match only when given.
		name:        "go",
		setup:       []string{setupInserts("batchtbl", "m1", "r1", "d1")},
		contentType: "multipart/mixed; boundary=batch_6d1e4fd2-5f1b-4d0c-6b4a-2c1f5a0b9e11",
		request: `--batch_6d1e4fd2-5f1b-4d0c-6b4a-2c1f5a0b9e11
Content-Type: multipart/mixed; boundary=changeset_0c9a1b7e-3f2d-4e5a-7b6c-8d9e0f1a2b3c

--changeset_0c9a1b7e-3f2d-4e5a-7b6c-8d9e0f1a2b3c
Content-Transfer-Encoding: binary
Content-Type: application/http

POST http://HOST/devstoreaccount1/batchtbl?%24format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1
Accept: application/json;odata=minimalmetadata
Content-Length: 59
Content-Type: application/json
DataServiceVersion: 
Prefer: return-no-content
x-ms-version: 

{"PartitionKey":"p","RowKey":"a1","Timestamp":"0001-01-01T00:00:00Z","X":1}
--changeset_0c9a1b7e-3f2d-4e5a-7b6c-8d9e0f1a2b3c
Content-Transfer-Encoding: binary
Content-Type: application/http

PATCH http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='m1') HTTP/1.1
Accept: application/json
Content-Length: 40
Content-Type: application/json
DataServiceVersion: 
If-Match: *
x-ms-version: 

{"M":"x","PartitionKey":"p","RowKey":"m1"}
--changeset_0c9a1b7e-3f2d-4e5a-7b6c-8d9e0f1a2b3c
Content-Transfer-Encoding: binary
Content-Type: application/http

PUT http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='r1') HTTP/1.1
Accept: application/json
Content-Length: 40
Content-Type: application/json
DataServiceVersion: 
x-ms-version: 

{"PartitionKey":"p","R":"y","RowKey":"r1"}
--changeset_0c9a1b7e-3f2d-4e5a-7b6c-8d9e0f1a2b3c
Content-Transfer-Encoding: binary
Content-Type: application/http

DELETE http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='d1')?%24format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1
Accept: application/json;odata=minimalmetadata
DataServiceVersion: 
If-Match: *
x-ms-version: 


--changeset_0c9a1b7e-3f2d-4e5a-7b6c-8d9e0f1a2b3c--

--batch_6d1e4fd2-5f1b-4d0c-6b4a-2c1f5a0b9e11--
`,
		status: 202,
		response: `--batchresponse_B
Content-Type: multipart/mixed; boundary=changesetresponse_C

--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
X-Content-Type-Options: nosniff
Cache-Control: no-cache
Preference-Applied: return-no-content
DataServiceVersion: 3.0;
Location: http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='a1')
DataServiceId: http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='a1')
ETag: W/"datetime'TS'"


--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
X-Content-Type-Options: nosniff
Cache-Control: no-cache
DataServiceVersion: 1.0;
ETag: W/"datetime'TS'"


--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
X-Content-Type-Options: nosniff
Cache-Control: no-cache
DataServiceVersion: 1.0;
ETag: W/"datetime'TS'"


--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
X-Content-Type-Options: nosniff
Cache-Control: no-cache
DataServiceVersion: 1.0;


--changesetresponse_C--
--batchresponse_B--
`,
	},
	{
		// The Go SDK's failure case, as recorded live (WIRE-GO
		// TestBatchError): the third insert collides.
		name:        "go conflict",
		setup:       []string{setupInserts("batchtbl", "c3")},
		contentType: "multipart/mixed; boundary=batch_00000000-0000-0000-0000-000000000000",
		request: `--batch_00000000-0000-0000-0000-000000000000
Content-Type: multipart/mixed; boundary=changeset_06082a84-84b5-4293-66fc-2bdeab9f7fa2

--changeset_06082a84-84b5-4293-66fc-2bdeab9f7fa2
Content-Transfer-Encoding: binary
Content-Type: application/http

POST http://HOST/devstoreaccount1/batchtbl?%24format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1
Accept: application/json;odata=minimalmetadata
Content-Length: 41
Content-Type: application/json
Dataserviceversion: 3.0
Prefer: return-no-content
X-Ms-Version: 2019-02-02

{"Integer":1,"PartitionKey":"p","RowKey":"c1"}
--changeset_06082a84-84b5-4293-66fc-2bdeab9f7fa2
Content-Transfer-Encoding: binary
Content-Type: application/http

POST http://HOST/devstoreaccount1/batchtbl?%24format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1
Accept: application/json;odata=minimalmetadata
Content-Length: 41
Content-Type: application/json
Dataserviceversion: 3.0
Prefer: return-no-content
X-Ms-Version: 2019-02-02

{"Integer":2,"PartitionKey":"p","RowKey":"c2"}
--changeset_06082a84-84b5-4293-66fc-2bdeab9f7fa2
Content-Transfer-Encoding: binary
Content-Type: application/http

POST http://HOST/devstoreaccount1/batchtbl?%24format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1
Accept: application/json;odata=minimalmetadata
Content-Length: 41
Content-Type: application/json
Dataserviceversion: 3.0
Prefer: return-no-content
X-Ms-Version: 2019-02-02

{"Integer":3,"PartitionKey":"p","RowKey":"c3"}
--changeset_06082a84-84b5-4293-66fc-2bdeab9f7fa2--

--batch_00000000-0000-0000-0000-000000000000--
`,
		status:    202,
		errorCode: "EntityAlreadyExists",
		response: `--batchresponse_B
Content-Type: multipart/mixed; boundary=changesetresponse_C

--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 409 Conflict
X-Content-Type-Options: nosniff
Cache-Control: no-cache
Preference-Applied: return-no-content
DataServiceVersion: 3.0;
Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8

{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"2:The specified entity already exists.\nRequestId:ID\nTime:TS"}}}
--changesetresponse_C--
--batchresponse_B--
`,
	},
	{
		// @azure/data-tables (WIRE-JS recordings batch_operations/*):
		// lower-case part and request headers, an extra blank line after
		// the changeset's header block and before each body, nometadata
		// Content-Type, a final CRLF after the close delimiter.
		name:        "js",
		setup:       []string{setupInserts("batchtbl", "j3")},
		contentType: "multipart/mixed; boundary=batch_fakeId",
		request: `--batch_fakeId
content-type: multipart/mixed; boundary=changeset_fakeId


--changeset_fakeId
content-type: application/http
content-transfer-encoding: binary

POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1
content-type: application/json;odata=nometadata
accept: application/json;odata=minimalmetadata
dataserviceversion: 3.0
prefer: return-no-content


{"PartitionKey":"p","RowKey":"j1","name":"first"}
--changeset_fakeId
content-type: application/http
content-transfer-encoding: binary

POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1
content-type: application/json;odata=nometadata
accept: application/json;odata=minimalmetadata
dataserviceversion: 3.0
prefer: return-no-content


{"PartitionKey":"p","RowKey":"j2","name":"second"}
--changeset_fakeId
content-type: application/http
content-transfer-encoding: binary

PATCH http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='j3') HTTP/1.1
content-type: application/json;odata=nometadata
accept: application/json;odata=minimalmetadata
dataserviceversion: 3.0
if-match: *


{"PartitionKey":"p","RowKey":"j3","name":"third"}
--changeset_fakeId--
--batch_fakeId--
`,
		status: 202,
		response: `--batchresponse_B
Content-Type: multipart/mixed; boundary=changesetresponse_C

--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
X-Content-Type-Options: nosniff
Cache-Control: no-cache
Preference-Applied: return-no-content
DataServiceVersion: 3.0;
Location: http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='j1')
DataServiceId: http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='j1')
ETag: W/"datetime'TS'"


--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
X-Content-Type-Options: nosniff
Cache-Control: no-cache
Preference-Applied: return-no-content
DataServiceVersion: 3.0;
Location: http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='j2')
DataServiceId: http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='j2')
ETag: W/"datetime'TS'"


--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
X-Content-Type-Options: nosniff
Cache-Control: no-cache
DataServiceVersion: 1.0;
ETag: W/"datetime'TS'"


--changesetresponse_C--
--batchresponse_B--
`,
	},
	{
		// The JS SDK's sub-request error, as recorded live (WIRE-JS
		// should_handle_sub_request_error): inserts into a missing table
		// fail the first operation with 404 TableNotFound "0:…".
		name:        "js missing table",
		contentType: "multipart/mixed; boundary=batch_fakeId",
		request: `--batch_fakeId
content-type: multipart/mixed; boundary=changeset_fakeId


--changeset_fakeId
content-type: application/http
content-transfer-encoding: binary

POST http://HOST/devstoreaccount1/noExistingTable HTTP/1.1
content-type: application/json;odata=nometadata
accept: application/json;odata=minimalmetadata
dataserviceversion: 3.0
prefer: return-no-content


{"PartitionKey":"batchTest","RowKey":"1","name":"first"}
--changeset_fakeId
content-type: application/http
content-transfer-encoding: binary

POST http://HOST/devstoreaccount1/noExistingTable HTTP/1.1
content-type: application/json;odata=nometadata
accept: application/json;odata=minimalmetadata
dataserviceversion: 3.0
prefer: return-no-content


{"PartitionKey":"batchTest","RowKey":"2","name":"second"}
--changeset_fakeId--
--batch_fakeId--
`,
		status:    202,
		errorCode: "TableNotFound",
		response: `--batchresponse_B
Content-Type: multipart/mixed; boundary=changesetresponse_C

--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 404 Not Found
X-Content-Type-Options: nosniff
DataServiceVersion: 3.0;
Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8

{"odata.error":{"code":"TableNotFound","message":{"lang":"en-US","value":"0:The table specified does not exist.\nRequestId:ID\nTime:TS"}}}
--changesetresponse_C--
--batchresponse_B--
`,
	},
	{
		// Azure.Data.Tables 12.x (request layout as in Azure/Azurite#1216's
		// debug log): part headers Content-Type first, "$format" unescaped
		// in the URL, PATCH for merge, a blank line before the close
		// delimiters.
		name:        ".NET",
		setup:       []string{setupInserts("batchtbl", "n2", "n3")},
		contentType: "multipart/mixed; boundary=batch_4e3d6f0a-7c1b-4a2e-9d8f-1b2c3d4e5f60",
		request: `--batch_4e3d6f0a-7c1b-4a2e-9d8f-1b2c3d4e5f60
Content-Type: multipart/mixed; boundary=changeset_9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d

--changeset_9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d
Content-Type: application/http
Content-Transfer-Encoding: binary

POST http://HOST/devstoreaccount1/batchtbl?$format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1
Accept: application/json;odata=minimalmetadata
Content-Type: application/json;odata=nometadata
Prefer: return-no-content
DataServiceVersion: 3.0

{"PartitionKey":"p","RowKey":"n1","Amount":2.5,"Amount@odata.type":"Edm.Double"}
--changeset_9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d
Content-Type: application/http
Content-Transfer-Encoding: binary

PATCH http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='n2')?$format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1
Accept: application/json;odata=minimalmetadata
Content-Type: application/json;odata=nometadata
If-Match: *
DataServiceVersion: 3.0

{"PartitionKey":"p","RowKey":"n2","Flag":true}
--changeset_9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d
Content-Type: application/http
Content-Transfer-Encoding: binary

DELETE http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='n3')?$format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1
Accept: application/json;odata=minimalmetadata
If-Match: *
DataServiceVersion: 3.0

--changeset_9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d--

--batch_4e3d6f0a-7c1b-4a2e-9d8f-1b2c3d4e5f60--
`,
		status: 202,
		response: `--batchresponse_B
Content-Type: multipart/mixed; boundary=changesetresponse_C

--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
X-Content-Type-Options: nosniff
Cache-Control: no-cache
Preference-Applied: return-no-content
DataServiceVersion: 3.0;
Location: http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='n1')
DataServiceId: http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='n1')
ETag: W/"datetime'TS'"


--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
X-Content-Type-Options: nosniff
Cache-Control: no-cache
DataServiceVersion: 1.0;
ETag: W/"datetime'TS'"


--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
X-Content-Type-Options: nosniff
Cache-Control: no-cache
DataServiceVersion: 1.0;


--changesetresponse_C--
--batchresponse_B--
`,
	},
	{
		// The legacy azure-storage Node SDK (captured in Azurite's
		// serialization tests): LF line endings, a quoted charset before
		// the boundary, Content-ID among the request headers, and Prefer:
		// return-content, so each insert answers 201 with the entity.
		name:        "legacy node",
		lf:          true,
		contentType: "multipart/mixed; charset=\"utf-8\"; boundary=batch_7679a9f9b2dde130e791580c53508a5a",
		request: `--batch_7679a9f9b2dde130e791580c53508a5a
content-type: multipart/mixed;charset="utf-8";boundary=changeset_7679a9f9b2dde130e791580c53508a5a

--changeset_7679a9f9b2dde130e791580c53508a5a
content-type: application/http
content-transfer-encoding: binary

POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1
Prefer: return-content
content-length: 48
content-type: application/json;type=entry
accept: application/json;odata=minimalmetadata
maxdataserviceversion: 3.0;NetFx

{"PartitionKey":"p","RowKey":"l1","myValue":"value1"}
--changeset_7679a9f9b2dde130e791580c53508a5a
content-type: application/http
content-transfer-encoding: binary

POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1
Prefer: return-content
content-length: 48
content-type: application/json;type=entry
accept: application/json;odata=fullmetadata
maxdataserviceversion: 3.0;NetFx
content-id: 1

{"PartitionKey":"p","RowKey":"l2","myValue":"value2"}
--changeset_7679a9f9b2dde130e791580c53508a5a--
--batch_7679a9f9b2dde130e791580c53508a5a--`,
		status: 202,
		response: `--batchresponse_B
Content-Type: multipart/mixed; boundary=changesetresponse_C

--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 201 Created
X-Content-Type-Options: nosniff
Cache-Control: no-cache
Preference-Applied: return-content
DataServiceVersion: 3.0;
Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8
Location: http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='l1')
ETag: W/"datetime'TS'"

{"odata.metadata":"http://HOST/devstoreaccount1/$metadata#batchtbl/@Element","odata.etag":"W/\"datetime'TS'\"","PartitionKey":"p","RowKey":"l1","Timestamp":"TS","myValue":"value1"}
--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 201 Created
Content-ID: 1
X-Content-Type-Options: nosniff
Cache-Control: no-cache
Preference-Applied: return-content
DataServiceVersion: 3.0;
Content-Type: application/json;odata=fullmetadata;streaming=true;charset=utf-8
Location: http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='l2')
ETag: W/"datetime'TS'"

{"odata.metadata":"http://HOST/devstoreaccount1/$metadata#batchtbl/@Element","odata.type":"devstoreaccount1.batchtbl","odata.id":"http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='l2')","odata.etag":"W/\"datetime'TS'\"","odata.editLink":"batchtbl(PartitionKey='p',RowKey='l2')","PartitionKey":"p","RowKey":"l2","Timestamp@odata.type":"Edm.DateTime","Timestamp":"TS","myValue":"value2"}
--changesetresponse_C--
--batchresponse_B--
`,
	},
	{
		// A query is a batch of its own: one application/http part, no
		// changeset (the legacy Node SDK's retrieve, quotes escaped).
		name:        "lone query",
		lf:          true,
		setup:       []string{setupInserts("batchtbl", "q1")},
		contentType: "multipart/mixed; boundary=batch_d737e1b79cb362526a8b4a13d46d6fc3",
		request: `--batch_d737e1b79cb362526a8b4a13d46d6fc3
content-type: application/http
content-transfer-encoding: binary

GET http://HOST/devstoreaccount1/batchtbl(PartitionKey=%27p%27,RowKey=%27q1%27) HTTP/1.1
accept: application/json;odata=minimalmetadata
maxdataserviceversion: 3.0;NetFx

--batch_d737e1b79cb362526a8b4a13d46d6fc3--`,
		status: 202,
		response: `--batchresponse_B
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 200 OK
X-Content-Type-Options: nosniff
Cache-Control: no-cache
DataServiceVersion: 3.0;
Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8
ETag: W/"datetime'TS'"

{"odata.metadata":"http://HOST/devstoreaccount1/$metadata#batchtbl/@Element","odata.etag":"W/\"datetime'TS'\"","PartitionKey":"p","RowKey":"q1","Timestamp":"TS","V":1}
--batchresponse_B--
`,
	},
}
