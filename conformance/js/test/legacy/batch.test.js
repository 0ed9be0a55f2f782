"use strict";
// Batches through the legacy azure-storage SDK's TableBatch: bare-LF
// multipart, `Content-Type: application/json;type=entry` parts, Content-ID
// on every part but the first, MERGE verbs, the lone-GET batch, and
// failure parsing from the single failed part (docs/protocol.md 0.1, 7).

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const lg = require("../../lib/legacy");

const { azure, ent } = lg;
const { TableBatch } = azure;

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

async function exists(svc, name, pk, rk) {
  try {
    await lg.call(svc, "retrieveEntity", name, pk, rk);
    return true;
  } catch (e) {
    if (e.statusCode === 404) return false;
    throw e;
  }
}

// failed asserts a batch failed at operation index with status and code;
// the service's message starts with the index — or, for index null, with
// no index: the service leaves it out when the batch holds that one
// operation alone and it failed against the stored entity
// (docs/protocol.md 7.4).
async function failed(p, status, code, index) {
  const err = await lg.rejects(p, status, code);
  if (index === null) {
    assert.doesNotMatch(err.message, /^\d+:/, `message ${JSON.stringify(err.message)} names no operation`);
  } else {
    assert.match(err.message, new RegExp(`^${index}:`), `message ${JSON.stringify(err.message)} names operation ${index}`);
  }
  return err;
}

// unchecked adds an operation without TableBatch's client-side checks
// (one partition, 100 operations), to reach the service's own.
function unchecked(batch, type, entity) {
  batch.operations.push({ type, entity, options: {} });
}

describe("legacy: batches", () => {
  it("runs every operation type in one batch", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    for (const rk of ["merge", "replace", "upmerge", "upreplace", "delete", "etag"]) {
      await lg.call(svc, "insertEntity", name, ent("p", rk, { Old: "o", Keep: 1 }));
    }
    const current = (await lg.call(svc, "retrieveEntity", name, "p", "etag")).result;
    const b = new TableBatch();
    b.insertEntity(ent("p", "add", { New: "n" }));
    b.mergeEntity(ent("p", "merge", { New: "n" }));
    b.replaceEntity(ent("p", "replace", { New: "n" }));
    b.insertOrMergeEntity(ent("p", "upmerge", { New: "n" }));
    b.insertOrReplaceEntity(ent("p", "upreplace", { New: "n" }));
    b.insertOrMergeEntity(ent("p", "newmerge", { New: "n" }));
    b.insertOrReplaceEntity(ent("p", "newreplace", { New: "n" }));
    b.deleteEntity(ent("p", "delete"));
    b.replaceEntity({ ...ent("p", "etag", { New: "n" }), ".metadata": current[".metadata"] });
    b.insertEntity(ent("p", "echo", { New: "n" }), { echoContent: true });
    const { result } = await lg.call(svc, "executeBatch", name, b);

    assert.equal(result.length, 10);
    assert.deepEqual(
      result.map((r) => r.response.statusCode),
      [204, 204, 204, 204, 204, 204, 204, 204, 204, 201],
    );
    // Each write's ETag is read from its part.
    assert.equal(result[0].entity[".metadata"].etag, (await lg.call(svc, "retrieveEntity", name, "p", "add")).result[".metadata"].etag);
    // The echoed insert carries its entity back.
    assert.equal(result[9].entity.New._, "n");

    const want = {
      add: { New: "n" },
      merge: { New: "n", Old: "o", Keep: 1 },
      replace: { New: "n" },
      upmerge: { New: "n", Old: "o", Keep: 1 },
      upreplace: { New: "n" },
      newmerge: { New: "n" },
      newreplace: { New: "n" },
      etag: { New: "n" },
      echo: { New: "n" },
    };
    for (const [rk, props] of Object.entries(want)) {
      assert.deepEqual(lg.userProps((await lg.call(svc, "retrieveEntity", name, "p", rk)).result), props, rk);
    }
    assert.equal(await exists(svc, name, "p", "delete"), false);
  });

  it("echoes each part's Content-ID (the SDK sends one on every part but the first)", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.call(svc, "insertEntity", name, ent("p", "c"));
    const b = new TableBatch();
    b.insertEntity(ent("p", "a", { N: 1 }), { echoContent: true });
    b.insertEntity(ent("p", "b", { N: 2 }), { echoContent: true });
    b.deleteEntity(ent("p", "c"));
    const { result } = await lg.call(svc, "executeBatch", name, b);
    assert.deepEqual(result.map((r) => r.response.headers["content-id"]), [undefined, "1", "2"]);
    assert.deepEqual(result.map((r) => r.response.statusCode), [201, 201, 204]);
    // (The SDK would look up each operation's propertyResolver by that
    // Content-ID, but passes it to the parser in the wrong argument, so
    // resolvers never apply to batch results: an SDK bug.)
    assert.deepEqual(result.slice(0, 2).map((r) => r.entity.N._), [1, 2]);
  });

  it("a batch of one retrieve is served (GET outside a changeset)", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.call(svc, "insertEntity", name, ent("p", "r", { V: lg.entGen.Int64("9007199254740993") }));
    const b = new TableBatch();
    b.retrieveEntity("p", "r");
    const { result } = await lg.call(svc, "executeBatch", name, b);
    assert.equal(result.length, 1);
    assert.equal(result[0].response.statusCode, 200);
    assert.deepEqual(result[0].entity.V, { $: "Edm.Int64", _: "9007199254740993" });
    const missing = new TableBatch();
    missing.retrieveEntity("p", "nope");
    await lg.rejects(lg.call(svc, "executeBatch", name, missing), 404, "ResourceNotFound");
  });

  it("a failing operation fails the whole batch, naming its index", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.call(svc, "insertEntity", name, ent("p", "taken", { V: 1 }));
    for (const pos of [0, 1, 2, 49, 99]) {
      const n = Math.max(5, pos + 1);
      const b = new TableBatch();
      for (let i = 0; i < n; i++) {
        if (i === pos) b.insertEntity(ent("p", "taken", { V: 2 }));
        else b.insertOrReplaceEntity(ent("p", `r${pos}-${i}`, { V: i }));
      }
      const err = await failed(lg.call(svc, "executeBatch", name, b), 409, "EntityAlreadyExists", pos);
      assert.match(err.message, /^\d+:The specified entity already exists\./);
      for (let i = 0; i < n; i++) {
        if (i !== pos) assert.equal(await exists(svc, name, "p", `r${pos}-${i}`), false, `operation ${i} was committed although ${pos} failed`);
      }
    }
    assert.equal((await lg.call(svc, "retrieveEntity", name, "p", "taken")).result.V._, 1);
  });

  it("ETag conditions in a batch: stale 412, If-Match * on a missing entity 404", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const v1 = (await lg.call(svc, "insertEntity", name, ent("p", "r", { V: 1 }))).result[".metadata"];
    await lg.call(svc, "mergeEntity", name, ent("p", "r", { V: 2 }));
    const stale = new TableBatch();
    stale.insertEntity(ent("p", "x"));
    stale.mergeEntity({ ...ent("p", "r", { V: 3 }), ".metadata": v1 });
    await failed(lg.call(svc, "executeBatch", name, stale), 412, "UpdateConditionNotSatisfied", 1);
    const missing = new TableBatch();
    missing.insertEntity(ent("p", "y"));
    missing.deleteEntity(ent("p", "nope"));
    await failed(lg.call(svc, "executeBatch", name, missing), 404, "ResourceNotFound", 1);
    const replaceMissing = new TableBatch();
    replaceMissing.replaceEntity(ent("p", "nope"));
    await failed(lg.call(svc, "executeBatch", name, replaceMissing), 404, "ResourceNotFound", null);
    assert.equal(await exists(svc, name, "p", "x"), false);
    assert.equal(await exists(svc, name, "p", "y"), false);
  });

  it("the service's batch rules: one partition, each entity once, 100 operations, a table", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    // TableBatch refuses these itself; sent unchecked, the service does.
    assert.throws(() => {
      const b = new TableBatch();
      b.insertEntity(ent("a", "1"));
      b.insertEntity(ent("b", "1"));
    }, /PartitionKey/i);
    const twoPk = new TableBatch();
    twoPk.insertEntity(ent("a", "1"));
    twoPk.insertEntity(ent("a", "2"));
    unchecked(twoPk, "INSERT", ent("b", "1"));
    await failed(lg.call(svc, "executeBatch", name, twoPk), 400, "CommandsInBatchActOnDifferentPartitions", 2);

    const dup = new TableBatch();
    dup.insertEntity(ent("a", "1"));
    dup.insertOrMergeEntity(ent("a", "1"));
    await failed(lg.call(svc, "executeBatch", name, dup), 400, "InvalidDuplicateRow", 1);

    const big = new TableBatch();
    for (let i = 0; i < 100; i++) big.insertEntity(ent("a", `r${i}`));
    unchecked(big, "INSERT", ent("a", "r100"));
    const err = await lg.rejects(lg.call(svc, "executeBatch", name, big), 400, "InvalidInput");
    assert.match(err.message, /^\d+:The batch request operation exceeds the maximum 100 changes per change set\./);

    const { rows } = await lg.queryAll(svc, name, null);
    assert.equal(rows.length, 0, "nothing of the refused batches was written");

    const b = new TableBatch();
    b.insertEntity(ent("a", "1"));
    await failed(lg.call(svc, "executeBatch", h.tableName(), b), 404, "TableNotFound", 0);
  });

  it("a batch over 4 MiB is refused whole: 413 RequestBodyTooLarge", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const b = new TableBatch();
    for (let i = 0; i < 100; i++) b.insertEntity(ent("p", `r${i}`, { S: "x".repeat(22000), T: "y".repeat(22000) }));
    await lg.rejects(lg.call(svc, "executeBatch", name, b), 413, "RequestBodyTooLarge");
    assert.equal((await lg.queryAll(svc, name, null)).rows.length, 0);
  });

  it("a batch of 100 inserts succeeds", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const b = new TableBatch();
    for (let i = 0; i < 100; i++) b.insertEntity(ent("a", `r${String(i).padStart(3, "0")}`, { I: i }));
    const { result } = await lg.call(svc, "executeBatch", name, b);
    assert.equal(result.length, 100);
    assert.ok(result.every((r) => r.response.statusCode === 204));
    assert.equal((await lg.queryAll(svc, name, null)).rows.length, 100);
  });

  it("a batch through a SAS is checked per operation", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.call(svc, "insertEntity", name, ent("p", "r"));
    const sas = svc.generateSharedAccessSignature(name, { AccessPolicy: { Permissions: "a", Expiry: new Date(Date.now() + 3600e3) } });
    const sasSvc = lg.sasService(tg, sas);
    const ok = new TableBatch();
    ok.insertEntity(ent("p", "viaSas"));
    await lg.call(sasSvc, "executeBatch", name, ok);
    const refused = new TableBatch();
    refused.insertEntity(ent("p", "x"));
    refused.deleteEntity(ent("p", "r"));
    await failed(lg.call(sasSvc, "executeBatch", name, refused), 403, "AuthorizationPermissionMismatch", 1);
    assert.equal(await exists(svc, name, "p", "viaSas"), true);
    assert.equal(await exists(svc, name, "p", "x"), false);
  });
});
