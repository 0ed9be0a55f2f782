"use strict";
// Keys with awkward characters through the legacy azure-storage SDK: it
// doubles quotes and encodeURIComponent()s each key in the URL, signs the
// encoded path with Shared Key, and writes the same URLs into batch
// parts (docs/protocol.md 1.3, 1.5, 9.5).

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const lg = require("../../lib/legacy");
const { awkward, forbidden, label } = require("../../lib/keys");

const { azure } = lg;
const { TableQuery } = azure;

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

describe("legacy: awkward keys", () => {
  let svc;
  let name;
  before(async () => {
    svc = lg.service(tg);
    name = h.tableName();
    await lg.call(svc, "createTable", name);
  });
  after(() => lg.call(svc, "deleteTable", name));

  for (const [i, k] of awkward.entries()) {
    it(`round-trips key ${label(k)} through every operation`, async () => {
      const pk = `pk${i}` + (k.length > 100 ? "" : k);
      const ins = await lg.call(svc, "insertEntity", name, { PartitionKey: pk, RowKey: k, I: i });
      let { result: e } = await lg.call(svc, "retrieveEntity", name, pk, k);
      assert.equal(e.PartitionKey._, pk);
      assert.equal(e.RowKey._, k);
      assert.equal(e[".metadata"].etag, ins.result[".metadata"].etag);

      await lg.call(svc, "mergeEntity", name, { PartitionKey: pk, RowKey: k, M: 1, ".metadata": e[".metadata"] });
      await lg.call(svc, "replaceEntity", name, { PartitionKey: pk, RowKey: k, R: 2 });
      await lg.call(svc, "insertOrMergeEntity", name, { PartitionKey: pk, RowKey: k, U: 3 });
      await lg.call(svc, "insertOrReplaceEntity", name, { PartitionKey: pk, RowKey: k, R: 2, U: 3 });
      ({ result: e } = await lg.call(svc, "retrieveEntity", name, pk, k));
      assert.deepEqual(lg.userProps(e), { R: 2, U: 3 });

      const q = new TableQuery().where("PartitionKey eq ? and RowKey eq ?", pk, k);
      const { result } = await lg.call(svc, "queryEntities", name, q, null);
      assert.equal(result.entries.length, 1);
      assert.equal(result.entries[0].RowKey._, k);

      await lg.call(svc, "deleteEntity", name, e);
      await lg.rejects(lg.call(svc, "retrieveEntity", name, pk, k), 404, "ResourceNotFound");
    });
  }

  it("an empty PartitionKey and RowKey are legal", async () => {
    await lg.call(svc, "insertEntity", name, lg.ent("", "", { V: 1 }));
    assert.equal((await lg.call(svc, "retrieveEntity", name, "", "")).result.V._, 1);
    await lg.call(svc, "replaceEntity", name, lg.ent("", "", { V: 2 }));
    const { rows } = await lg.queryAll(svc, name, new TableQuery().where("PartitionKey eq ? and RowKey eq ?", "", ""));
    assert.deepEqual(rows.map((e) => e.V._), [2]);
    const b = new azure.TableBatch();
    b.insertOrMergeEntity(lg.ent("", "", { V: 3 }));
    await lg.call(svc, "executeBatch", name, b);
    await lg.call(svc, "deleteEntity", name, lg.ent("", ""));
    await lg.rejects(lg.call(svc, "retrieveEntity", name, "", ""), 404, "ResourceNotFound");
  });

  it("carries awkward keys through a batch (LF line endings, Content-ID, type=entry parts)", async () => {
    const pk = "batch 'pk' %2F 😀";
    const rows = awkward.filter((k) => k.length < 100);
    const b1 = new azure.TableBatch();
    for (const k of rows) b1.insertEntity(lg.ent(pk, k, { V: 1 }));
    await lg.call(svc, "executeBatch", name, b1);
    const b2 = new azure.TableBatch();
    for (const k of rows.slice(0, 8)) b2.mergeEntity(lg.ent(pk, k, { V: 2 }));
    for (const k of rows.slice(8, 16)) b2.insertOrReplaceEntity(lg.ent(pk, k, { V: 3 }));
    for (const k of rows.slice(16)) b2.deleteEntity(lg.ent(pk, k));
    await lg.call(svc, "executeBatch", name, b2);
    const { rows: got } = await lg.queryAll(svc, name, new TableQuery().where("PartitionKey eq ?", pk));
    const want = [...rows.slice(0, 8).map((k) => [k, 2]), ...rows.slice(8, 16).map((k) => [k, 3])].sort();
    assert.deepEqual(got.map((e) => [e.RowKey._, e.V._]).sort(), want);
  });

  for (const bad of forbidden) {
    it(`refuses forbidden key ${label(bad)}`, async () => {
      await lg.rejects(lg.call(svc, "insertEntity", name, { PartitionKey: "p", RowKey: bad }), 400, "OutOfRangeInput");
      await lg.rejects(lg.call(svc, "insertEntity", name, { PartitionKey: bad, RowKey: "r" }), 400, "OutOfRangeInput");
      const code = bad === "a/b" || bad === "a\\b" ? "InvalidInput" : "OutOfRangeInput";
      await lg.rejects(lg.call(svc, "insertOrReplaceEntity", name, { PartitionKey: "p", RowKey: bad }), 400, code);
    });
  }
});
