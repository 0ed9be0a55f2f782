package emulator

// Golden $batch failures in the Python SDK's layout (azure-data-tables
// 12.8.0b1, x-ms-version 2025-07-05): Content-ID among the MIME part's
// headers, which live does not echo, and the answers its recordings in
// Azure/azure-sdk-assets hold, boundaries, times and ids normalised
// (test_batch_single_op_if_doesnt_match, test_batch_same_row_operations_fail,
// test_new_non_existent_table; docs/protocol.md 7.4).

// pyOp is one operation part as the Python SDK writes it.
func pyOp(id, requestLine, headers, body string) string {
	return "--changeset_p\nContent-Type: application/http\nContent-Transfer-Encoding: binary\nContent-ID: " + id + "\n\n" +
		requestLine + " HTTP/1.1\n" + headers + "DataServiceVersion: 3.0\nx-ms-version: 2025-07-05\nAccept: application/json\n\n" + body + "\n"
}

const pyBatchStart = "--batch_p\nContent-Type: multipart/mixed; boundary=changeset_p\n\n"
const pyBatchEnd = "--changeset_p--\n\n--batch_p--\n"

var pythonGoldens = []golden{
	{
		// A lone update whose If-Match matches nothing: 412 without an index.
		name:        "python lone 412",
		setup:       []string{setupInserts("batchtbl", "py412")},
		contentType: "multipart/mixed; boundary=batch_p",
		request: pyBatchStart + pyOp("0", "PATCH http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='py412')",
			"Content-Type: application/json\nIf-Match: W/\"datetime'2012-06-15T22%3A51%3A44.9662825Z'\"\n",
			`{"PartitionKey": "p", "RowKey": "py412", "age": "abc"}`) + pyBatchEnd,
		status:    202,
		errorCode: "UpdateConditionNotSatisfied",
		response: `--batchresponse_B
Content-Type: multipart/mixed; boundary=changesetresponse_C

--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 412 Precondition Failed
X-Content-Type-Options: nosniff
Cache-Control: no-cache
DataServiceVersion: 3.0;
Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8

{"odata.error":{"code":"UpdateConditionNotSatisfied","message":{"lang":"en-US","value":"The update condition specified in the request was not satisfied.\nRequestId:ID\nTime:TS"}}}
--changesetresponse_C--
--batchresponse_B--
`,
	},
	{
		// A merge and a replace of one entity: the repeat, with its index
		// and the operation's Cache-Control.
		name:        "python same row",
		setup:       []string{setupInserts("batchtbl", "pyrow")},
		contentType: "multipart/mixed; boundary=batch_p",
		request: pyBatchStart +
			pyOp("0", "PATCH http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='pyrow')", "Content-Type: application/json\nIf-Match: *\n", `{"PartitionKey": "p", "RowKey": "pyrow", "age": "abc"}`) +
			pyOp("1", "PUT http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='pyrow')", "Content-Type: application/json\nIf-Match: *\n", `{"PartitionKey": "p", "RowKey": "pyrow", "age": 39}`) +
			pyBatchEnd,
		status:    202,
		errorCode: "InvalidDuplicateRow",
		response: `--batchresponse_B
Content-Type: multipart/mixed; boundary=changesetresponse_C

--changesetresponse_C
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 400 Bad Request
X-Content-Type-Options: nosniff
Cache-Control: no-cache
DataServiceVersion: 3.0;
Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8

{"odata.error":{"code":"InvalidDuplicateRow","message":{"lang":"en-US","value":"1:The batch request contains multiple changes with same row key. An entity can appear only once in a batch request.\nRequestId:ID\nTime:TS"}}}
--changesetresponse_C--
--batchresponse_B--
`,
	},
	{
		// An insert into a missing table: "0:" even alone, and no
		// Cache-Control.
		name:        "python missing table",
		contentType: "multipart/mixed; boundary=batch_p",
		request: pyBatchStart + pyOp("0", "POST http://HOST/devstoreaccount1/doesntexist",
			"Content-Type: application/json\n", `{"PartitionKey": "001", "RowKey": "batch_negative_1", "age": 39}`) + pyBatchEnd,
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
}
