"use strict";
// Single-entity operations through the legacy azure-storage SDK: it signs
// with Shared Key (not Lite), merges with the MERGE verb, sends If-Match
// from entity['.metadata'].etag (or *), and inserts with Prefer:
// return-no-content unless echoContent (docs/protocol.md 3.9–3.13, 5, 9.3).

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const lg = require("../../lib/legacy");

const { entGen } = lg;

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

const etagShape = /^W\/"datetime'\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\d\.\d{7}Z'"$/;

function withEtag(entity, etag) {
  return { ...entity, ".metadata": { etag } };
}

describe("legacy: entities", () => {
  it("inserts (204, no echo) and retrieves an entity", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const { result, response } = await lg.call(svc, "insertEntity", name, {
      PartitionKey: entGen.String("p"),
      RowKey: entGen.String("r"),
      Name: entGen.String("n"),
      Count: entGen.Int32(3),
      Ok: entGen.Boolean(true),
    });
    assert.equal(response.statusCode, 204);
    assert.match(result[".metadata"].etag, etagShape);
    const got = await lg.call(svc, "retrieveEntity", name, "p", "r");
    assert.deepEqual(lg.plain(got.result), { PartitionKey: "p", RowKey: "r", Name: "n", Count: 3, Ok: true });
    assert.equal(got.result[".metadata"].etag, result[".metadata"].etag);
    assert.ok(got.result.Timestamp._ instanceof Date);
  });

  it("insert with echoContent answers 201 with the entity", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const { result, response } = await lg.call(svc, "insertEntity", name, { PartitionKey: "p", RowKey: "r", V: 1 }, { echoContent: true });
    assert.equal(response.statusCode, 201);
    assert.deepEqual(lg.plain(result), { PartitionKey: "p", RowKey: "r", V: 1 });
    assert.match(result[".metadata"].etag, etagShape);
  });

  it("insert errors: existing entity 409, missing table 404", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.call(svc, "insertEntity", name, { PartitionKey: "p", RowKey: "r" });
    await lg.rejects(lg.call(svc, "insertEntity", name, { PartitionKey: "p", RowKey: "r" }), 409, "EntityAlreadyExists");
    await lg.rejects(lg.call(svc, "insertEntity", h.tableName(), { PartitionKey: "p", RowKey: "r" }), 404, "TableNotFound");
  });

  it("retrieve errors: missing entity 404 ResourceNotFound, missing table 404 TableNotFound", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.rejects(lg.call(svc, "retrieveEntity", name, "p", "nope"), 404, "ResourceNotFound");
    await lg.rejects(lg.call(svc, "retrieveEntity", h.tableName(), "p", "r"), 404, "TableNotFound");
  });

  it("replaceEntity with the current ETag replaces; a stale ETag is 412", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const v1 = (await lg.call(svc, "insertEntity", name, { PartitionKey: "p", RowKey: "r", Old: "o", Keep: 1 })).result[".metadata"].etag;
    const v2 = (await lg.call(svc, "replaceEntity", name, withEtag({ PartitionKey: "p", RowKey: "r", New: "n" }, v1))).result[".metadata"].etag;
    assert.match(v2, etagShape);
    assert.notEqual(v2, v1);
    assert.deepEqual(lg.userProps((await lg.call(svc, "retrieveEntity", name, "p", "r")).result), { New: "n" });
    await lg.rejects(lg.call(svc, "replaceEntity", name, withEtag({ PartitionKey: "p", RowKey: "r", X: 1 }, v1)), 412, "UpdateConditionNotSatisfied");
  });

  it("mergeEntity (MERGE verb) with the current ETag merges; a stale ETag is 412", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const v1 = (await lg.call(svc, "insertEntity", name, { PartitionKey: "p", RowKey: "r", Old: "o", Keep: 1 })).result[".metadata"].etag;
    const v2 = (await lg.call(svc, "mergeEntity", name, withEtag({ PartitionKey: "p", RowKey: "r", Old: "changed", New: entGen.Double(2.5) }, v1))).result[".metadata"].etag;
    assert.deepEqual(lg.userProps((await lg.call(svc, "retrieveEntity", name, "p", "r")).result), { Old: "changed", Keep: 1, New: 2.5 });
    await lg.rejects(lg.call(svc, "mergeEntity", name, withEtag({ PartitionKey: "p", RowKey: "r", X: 1 }, v1)), 412, "UpdateConditionNotSatisfied");
    assert.equal((await lg.call(svc, "retrieveEntity", name, "p", "r")).result[".metadata"].etag, v2);
  });

  it("replace and merge without an ETag send If-Match: * — the entity must exist (404)", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.rejects(lg.call(svc, "replaceEntity", name, { PartitionKey: "p", RowKey: "nope" }), 404, "ResourceNotFound");
    await lg.rejects(lg.call(svc, "mergeEntity", name, { PartitionKey: "p", RowKey: "nope" }), 404, "ResourceNotFound");
  });

  it("insertOrReplace and insertOrMerge insert a missing entity and update an existing one", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.call(svc, "insertOrMergeEntity", name, { PartitionKey: "p", RowKey: "m", A: 1 });
    await lg.call(svc, "insertOrReplaceEntity", name, { PartitionKey: "p", RowKey: "rp", A: 1 });
    const m = await lg.call(svc, "insertOrMergeEntity", name, { PartitionKey: "p", RowKey: "m", B: 2 });
    const r = await lg.call(svc, "insertOrReplaceEntity", name, { PartitionKey: "p", RowKey: "rp", B: 2 });
    assert.match(m.result[".metadata"].etag, etagShape);
    assert.match(r.result[".metadata"].etag, etagShape);
    assert.deepEqual(lg.userProps((await lg.call(svc, "retrieveEntity", name, "p", "m")).result), { A: 1, B: 2 });
    assert.deepEqual(lg.userProps((await lg.call(svc, "retrieveEntity", name, "p", "rp")).result), { B: 2 });
  });

  it("deleteEntity: stale ETag 412, current ETag deletes, missing 404", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const v1 = (await lg.call(svc, "insertEntity", name, { PartitionKey: "p", RowKey: "r", A: 1 })).result[".metadata"].etag;
    await lg.call(svc, "mergeEntity", name, { PartitionKey: "p", RowKey: "r", A: 2 });
    await lg.rejects(lg.call(svc, "deleteEntity", name, withEtag({ PartitionKey: "p", RowKey: "r" }, v1)), 412, "UpdateConditionNotSatisfied");
    const current = (await lg.call(svc, "retrieveEntity", name, "p", "r")).result;
    const del = await lg.call(svc, "deleteEntity", name, current);
    assert.equal(del.response.statusCode, 204);
    await lg.rejects(lg.call(svc, "retrieveEntity", name, "p", "r"), 404, "ResourceNotFound");
    await lg.rejects(lg.call(svc, "deleteEntity", name, { PartitionKey: "p", RowKey: "r" }), 404, "ResourceNotFound");
  });

  it("an entity read back can be written back as is (its .metadata and Timestamp are not properties)", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.call(svc, "insertEntity", name, { PartitionKey: "p", RowKey: "r", A: 1 });
    const e = (await lg.call(svc, "retrieveEntity", name, "p", "r")).result;
    e.A = entGen.Int32(2);
    await lg.call(svc, "replaceEntity", name, e);
    assert.deepEqual(lg.userProps((await lg.call(svc, "retrieveEntity", name, "p", "r")).result), { A: 2 });
  });

  it("echoes x-ms-client-request-id and accepts the timeout parameter", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const { response } = await lg.call(svc, "insertEntity", name, { PartitionKey: "p", RowKey: "r" }, { clientRequestId: "legacy-req-1", timeoutIntervalInMs: 30000 });
    assert.equal(response.headers["x-ms-client-request-id"], "legacy-req-1");
    assert.match(response.headers["x-ms-request-id"], /^[0-9a-f-]{36}$/);
    assert.equal(response.headers["x-ms-version"], "2018-03-28", "the legacy SDK's version is echoed");
    const got = await lg.call(svc, "retrieveEntity", name, "p", "r", { timeoutIntervalInMs: 5000 });
    assert.equal(got.result.RowKey._, "r");
  });

  it("reads entities in every metadata format", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.call(svc, "insertEntity", name, { PartitionKey: "p", RowKey: "r", L: entGen.Int64("9007199254740993"), S: "s" });
    const { PayloadFormat } = lg.azure.TableUtilities;
    const full = (await lg.call(svc, "retrieveEntity", name, "p", "r", { payloadFormat: PayloadFormat.FULL_METADATA })).result;
    assert.deepEqual(full.L, { $: "Edm.Int64", _: "9007199254740993" });
    assert.match(full[".metadata"].etag, etagShape);
    assert.match(full[".metadata"].id, /\/[^/]+\(PartitionKey='p',RowKey='r'\)$/);
    const minimal = (await lg.call(svc, "retrieveEntity", name, "p", "r", { payloadFormat: PayloadFormat.MINIMAL_METADATA })).result;
    assert.deepEqual(minimal.L, { $: "Edm.Int64", _: "9007199254740993" });
    // No metadata: no annotations, so the SDK sees a plain string.
    const none = (await lg.call(svc, "retrieveEntity", name, "p", "r", { payloadFormat: PayloadFormat.NO_METADATA })).result;
    assert.deepEqual(none.L, { _: "9007199254740993" });
    assert.deepEqual(none.S, { _: "s" });
  });
});
