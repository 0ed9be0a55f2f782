"use strict";
// Single-entity operations through @azure/data-tables: insert, get,
// update and merge with ETag conditions, upserts, delete (docs/protocol.md
// 3.9–3.13, 5). The SDK merges with PATCH (docs/protocol.md 1.2).

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const dt = require("../../lib/dt");

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

const etagShape = /^W\/"datetime'\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\d\.\d{7}Z'"$/;

const { userProps } = dt;

describe("data-tables: entities", () => {
  it("inserts and gets an entity; ETag and Timestamp agree", async (t) => {
    const { client } = await dt.newTable(t, tg);
    const res = await client.createEntity({ partitionKey: "p", rowKey: "r", Name: "n", Count: 3, Ok: true });
    assert.match(res.etag, etagShape);
    const e = await client.getEntity("p", "r");
    assert.equal(e.partitionKey, "p");
    assert.equal(e.rowKey, "r");
    assert.equal(e.etag, res.etag);
    assert.deepEqual(userProps(e), { Name: "n", Count: 3, Ok: true });
    // The ETag is the Timestamp with ':' escaped (docs/protocol.md 5).
    assert.equal(e.etag, `W/"datetime'${e.timestamp.replace(/:/g, "%3A")}'"`);
  });

  it("insert errors: existing entity 409, missing table 404, no keys 400", async (t) => {
    const { client } = await dt.newTable(t, tg);
    await client.createEntity({ partitionKey: "p", rowKey: "r" });
    await dt.rejects(client.createEntity({ partitionKey: "p", rowKey: "r" }), 409, "EntityAlreadyExists");
    await dt.rejects(dt.table(tg, h.tableName()).createEntity({ partitionKey: "p", rowKey: "r" }), 404, dt.code.tableNotFound);
    await dt.rejects(client.createEntity({ partitionKey: "p" }), 400, "PropertiesNeedValue");
  });

  it("get errors: missing entity 404 ResourceNotFound, missing table 404 TableNotFound", async (t) => {
    const { client } = await dt.newTable(t, tg);
    await dt.rejects(client.getEntity("p", "nope"), 404, "ResourceNotFound");
    await dt.rejects(dt.table(tg, h.tableName()).getEntity("p", "r"), 404, dt.code.tableNotFound);
  });

  it("getEntity with select returns only those properties", async (t) => {
    const { client } = await dt.newTable(t, tg);
    await client.createEntity({ partitionKey: "p", rowKey: "r", A: 1, B: "b", C: true });
    const e = await client.getEntity("p", "r", { queryOptions: { select: ["A", "C"] } });
    assert.deepEqual(userProps(e), { A: 1, C: true });
    assert.equal(e.partitionKey, undefined);
    assert.match(e.etag, etagShape, "odata.etag is returned even when not selected");
  });

  it("update Replace with the current ETag replaces; a stale ETag is 412", async (t) => {
    const { client } = await dt.newTable(t, tg);
    const v1 = await client.createEntity({ partitionKey: "p", rowKey: "r", Old: "o", Keep: 1 });
    const v2 = await client.updateEntity({ partitionKey: "p", rowKey: "r", New: "n" }, "Replace", { etag: v1.etag });
    assert.match(v2.etag, etagShape);
    assert.notEqual(v2.etag, v1.etag, "every write gets a new ETag");
    assert.deepEqual(userProps(await client.getEntity("p", "r")), { New: "n" });
    await dt.rejects(client.updateEntity({ partitionKey: "p", rowKey: "r", X: 1 }, "Replace", { etag: v1.etag }), 412, "UpdateConditionNotSatisfied");
    assert.deepEqual(userProps(await client.getEntity("p", "r")), { New: "n" }, "a refused update changes nothing");
  });

  it("update Merge with the current ETag merges; a stale ETag is 412", async (t) => {
    const { client } = await dt.newTable(t, tg);
    const v1 = await client.createEntity({ partitionKey: "p", rowKey: "r", Old: "o", Keep: 1 });
    const v2 = await client.updateEntity({ partitionKey: "p", rowKey: "r", Old: "changed", New: 2.5 }, "Merge", { etag: v1.etag });
    assert.deepEqual(userProps(await client.getEntity("p", "r")), { Old: "changed", Keep: 1, New: 2.5 });
    await dt.rejects(client.updateEntity({ partitionKey: "p", rowKey: "r", X: 1 }, "Merge", { etag: v1.etag }), 412, "UpdateConditionNotSatisfied");
    // The ETag from the merge is the entity's.
    assert.equal((await client.getEntity("p", "r")).etag, v2.etag);
  });

  it("update without an ETag sends If-Match: * — the entity must exist (404)", async (t) => {
    const { client } = await dt.newTable(t, tg);
    await dt.rejects(client.updateEntity({ partitionKey: "p", rowKey: "nope", X: 1 }, "Merge"), 404, "ResourceNotFound");
    await dt.rejects(client.updateEntity({ partitionKey: "p", rowKey: "nope", X: 1 }, "Replace"), 404, "ResourceNotFound");
    await client.createEntity({ partitionKey: "p", rowKey: "r", A: 1 });
    await client.updateEntity({ partitionKey: "p", rowKey: "r", B: 2 });
    assert.deepEqual(userProps(await client.getEntity("p", "r")), { A: 1, B: 2 }, "the default mode is Merge");
  });

  it("a merge changes a property's type; null properties are ignored by merge and dropped by replace", async (t) => {
    const { client } = await dt.newTable(t, tg);
    await client.createEntity({ partitionKey: "p", rowKey: "r", A: 1, B: "b" });
    await client.updateEntity({ partitionKey: "p", rowKey: "r", A: "now a string", B: null }, "Merge");
    assert.deepEqual(userProps(await client.getEntity("p", "r")), { A: "now a string", B: "b" });
    await client.updateEntity({ partitionKey: "p", rowKey: "r", A: 1, B: null }, "Replace");
    assert.deepEqual(userProps(await client.getEntity("p", "r")), { A: 1 });
  });

  it("upsert Merge and Replace insert a missing entity and update an existing one", async (t) => {
    const { client } = await dt.newTable(t, tg);
    await client.upsertEntity({ partitionKey: "p", rowKey: "m", A: 1 }, "Merge");
    await client.upsertEntity({ partitionKey: "p", rowKey: "rp", A: 1 }, "Replace");
    assert.deepEqual(userProps(await client.getEntity("p", "m")), { A: 1 });
    assert.deepEqual(userProps(await client.getEntity("p", "rp")), { A: 1 });
    const r1 = await client.upsertEntity({ partitionKey: "p", rowKey: "m", B: 2 }, "Merge");
    const r2 = await client.upsertEntity({ partitionKey: "p", rowKey: "rp", B: 2 }, "Replace");
    assert.deepEqual(userProps(await client.getEntity("p", "m")), { A: 1, B: 2 });
    assert.deepEqual(userProps(await client.getEntity("p", "rp")), { B: 2 });
    assert.match(r1.etag, etagShape);
    assert.match(r2.etag, etagShape);
  });

  it("delete: stale ETag 412, current ETag deletes, missing entity 404", async (t) => {
    const { client } = await dt.newTable(t, tg);
    const v1 = await client.createEntity({ partitionKey: "p", rowKey: "r", A: 1 });
    await client.updateEntity({ partitionKey: "p", rowKey: "r", A: 2 });
    await dt.rejects(client.deleteEntity("p", "r", { etag: v1.etag }), 412, "UpdateConditionNotSatisfied");
    const current = await client.getEntity("p", "r");
    await client.deleteEntity("p", "r", { etag: current.etag });
    await dt.rejects(client.getEntity("p", "r"), 404, "ResourceNotFound");
    await dt.rejects(client.deleteEntity("p", "r"), 404, "ResourceNotFound");
    await dt.rejects(dt.table(tg, h.tableName()).deleteEntity("p", "r"), 404, dt.code.tableNotFound);
  });

  it("an entity read back can be written back as is (odata.*, etag and timestamp are not properties)", async (t) => {
    const { client } = await dt.newTable(t, tg);
    await client.createEntity({ partitionKey: "p", rowKey: "r", A: 1, L: 5n, D: new Date(Date.UTC(2020, 0, 2)) });
    // getEntity keeps odata.metadata; the SDK serialises it, etag (as
    // odata.etag) and timestamp (as an untyped Timestamp) into the body.
    const e = await client.getEntity("p", "r");
    assert.ok(e["odata.metadata"] && e.etag && e.timestamp);
    e.A = 2;
    await client.updateEntity(e, "Replace", { etag: e.etag });
    const back = await client.getEntity("p", "r");
    assert.deepEqual(dt.userProps(back), { A: 2, L: 5n, D: new Date(Date.UTC(2020, 0, 2)) });
    assert.notEqual(back.timestamp, e.timestamp, "the server sets Timestamp");
    // The same with typed values as the SDK reports them untouched.
    const raw = await client.getEntity("p", "r", { disableTypeConversion: true });
    raw.L = { value: "6", type: "Int64" };
    await client.updateEntity(raw, "Merge");
    assert.equal((await client.getEntity("p", "r")).L, 6n);
  });

  it("echoes x-ms-client-request-id and the request's x-ms-version (Cosmos DB: neither)", async (t) => {
    const { client } = await dt.newTable(t, tg);
    const seen = await dt.captured((o) => client.createEntity({ partitionKey: "p", rowKey: "r" }, o));
    const res = seen[0];
    if (h.cosmos) {
      // Cosmos DB sends none of the three (docs/cosmos.md, "Headers").
      assert.deepEqual(
        ["x-ms-client-request-id", "x-ms-version", "x-ms-request-id"].map((n) => res.headers.get(n)),
        [undefined, undefined, undefined],
      );
      return;
    }
    assert.equal(res.headers.get("x-ms-client-request-id"), res.request.headers.get("x-ms-client-request-id"));
    assert.equal(res.headers.get("x-ms-version"), "2019-02-02");
    assert.match(res.headers.get("x-ms-request-id"), /^[0-9a-f-]{36}$/);
  });

  it("an ETag that is not a quoted ETag is 400 InvalidInput", async (t) => {
    const { client } = await dt.newTable(t, tg);
    await client.createEntity({ partitionKey: "p", rowKey: "r" });
    await dt.rejects(client.updateEntity({ partitionKey: "p", rowKey: "r", X: 1 }, "Replace", { etag: "garbage" }), 400, "InvalidInput");
  });

  it("property names may be any C#-style identifier, Unicode letters included", async (t) => {
    const { client } = await dt.newTable(t, tg);
    const props = { Größe: 1, 名前: "n", _under: true, Ünïcode2: 2.5, ["N".repeat(255)]: 3 };
    await client.createEntity({ partitionKey: "p", rowKey: "r", ...props });
    assert.deepEqual(dt.userProps(await client.getEntity("p", "r")), props);
    const hit = await client.listEntities({ queryOptions: { filter: "Größe eq 1 and 名前 eq 'n'", select: ["名前"] } }).next();
    assert.deepEqual(dt.userProps(hit.value), { 名前: "n" });
  });

  it("entity and property limits with the service's codes", async (t) => {
    const { client } = await dt.newTable(t, tg);
    await dt.rejects(client.createEntity({ partitionKey: "p", rowKey: "big", S: "x".repeat(32 * 1024 + 1) }), 400, "PropertyValueTooLarge");
    const many = { partitionKey: "p", rowKey: "many" };
    for (let i = 0; i < 253; i++) many[`P${i}`] = i;
    await dt.rejects(client.createEntity(many), 400, "TooManyProperties");
    delete many.P252;
    await client.createEntity(many);
    await dt.rejects(client.createEntity({ partitionKey: "p", rowKey: "name", "bad-name": 1 }), 400, "PropertyNameInvalid");
    await dt.rejects(client.createEntity({ partitionKey: "p", rowKey: "long", ["N".repeat(256)]: 1 }), 400, "PropertyNameTooLong");
    // Just under 1 MiB of strings is fine; just over is EntityTooLarge.
    const chunk = "y".repeat(32 * 1024);
    const big = { partitionKey: "p", rowKey: "mb" };
    for (let i = 0; i < 15; i++) big[`S${i}`] = chunk;
    big.T = "z".repeat(32000); // about 1,048,000 by the service's estimator (docs/protocol.md 10)
    await client.createEntity(big);
    big.rowKey = "mb2";
    big.S15 = chunk;
    await dt.rejects(client.createEntity(big), 400, "EntityTooLarge");
  });
});
