"use strict";
// Keys with awkward characters through @azure/data-tables: in the URL of
// every single-entity operation (quotes doubled, then percent-encoded by
// the SDK), in $filter literals, in batch sub-requests (docs/protocol.md 1.3),
// and the characters the service forbids (docs/protocol.md 1.5).

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { odata } = require("@azure/data-tables");
const h = require("../../lib/harness");
const dt = require("../../lib/dt");
const { awkward, forbidden, label } = require("../../lib/keys");

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

describe("data-tables: awkward keys", () => {
  let client;
  before(async () => {
    const name = h.tableName();
    await dt.service(tg).createTable(name);
    client = dt.table(tg, name);
  });
  after(() => client && client.deleteTable());

  // Cosmos DB refuses an empty key, 400 PropertiesNeedValue
  // (test_insert_entity_empty_string_pk), and a RowKey over 255 bytes (its
  // FAQ; tableemu: 400 PropertyValueTooLarge, docs/cosmos.md).
  const cosmosRefuses = (k) =>
    !h.cosmos ? null : k === "" ? [400, "PropertiesNeedValue"] : Buffer.byteLength(k) > 255 ? [400, "PropertyValueTooLarge"] : null;

  for (const [i, k] of awkward.entries()) {
    it(`round-trips key ${label(k)} through every operation`, async () => {
      const pk = `pk${i}` + (k.length > 100 ? "" : k);
      const refused = cosmosRefuses(k);
      if (refused) return dt.rejects(client.createEntity({ partitionKey: pk, rowKey: k, I: i }), ...refused);
      const created = await client.createEntity({ partitionKey: pk, rowKey: k, I: i });
      let e = await client.getEntity(pk, k);
      assert.equal(e.partitionKey, pk);
      assert.equal(e.rowKey, k);
      assert.equal(e.etag, created.etag);

      await client.updateEntity({ partitionKey: pk, rowKey: k, M: 1 }, "Merge", { etag: e.etag });
      await client.updateEntity({ partitionKey: pk, rowKey: k, R: 2 }, "Replace");
      await client.upsertEntity({ partitionKey: pk, rowKey: k, U: 3 }, "Merge");
      e = await client.getEntity(pk, k);
      assert.deepEqual([e.R, e.U, e.M, e.I], [2, 3, undefined, undefined]);

      const found = [];
      for await (const x of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${pk} and RowKey eq ${k}` } })) found.push(x);
      assert.equal(found.length, 1);
      assert.equal(found[0].rowKey, k);

      await client.deleteEntity(pk, k, { etag: e.etag });
      await dt.rejects(client.getEntity(pk, k), 404, "ResourceNotFound");
    });
  }

  // Cosmos DB refuses them: 400 PropertiesNeedValue "PartitionKey/RowKey
  // cannot be empty" (test_insert_entity_empty_string_pk; docs/cosmos.md).
  it("an empty PartitionKey and RowKey are legal (Cosmos DB: 400)", async () => {
    if (h.cosmos) return dt.rejects(client.createEntity({ partitionKey: "", rowKey: "", V: 1 }), 400, "PropertiesNeedValue");
    await client.createEntity({ partitionKey: "", rowKey: "", V: 1 });
    assert.equal((await client.getEntity("", "")).V, 1);
    await client.updateEntity({ partitionKey: "", rowKey: "", V: 2 }, "Replace");
    const found = [];
    for await (const e of client.listEntities({ queryOptions: { filter: "PartitionKey eq '' and RowKey eq ''" } })) found.push(e.V);
    assert.deepEqual(found, [2]);
    await client.submitTransaction([["upsert", { partitionKey: "", rowKey: "", V: 3 }, "Merge"]]);
    await client.deleteEntity("", "");
    await dt.rejects(client.getEntity("", ""), 404, "ResourceNotFound");
  });

  it("carries awkward keys through a transaction", async () => {
    const pk = "batch 'pk' %2F 😀";
    const rows = awkward.filter((k) => k.length < 100 && !cosmosRefuses(k));
    await client.submitTransaction(rows.map((k) => ["create", { partitionKey: pk, rowKey: k, V: 1 }]));
    await client.submitTransaction([
      ...rows.slice(0, 8).map((k) => ["update", { partitionKey: pk, rowKey: k, V: 2 }, "Merge"]),
      ...rows.slice(8, 16).map((k) => ["upsert", { partitionKey: pk, rowKey: k, V: 3 }, "Replace"]),
      ...rows.slice(16).map((k) => ["delete", { partitionKey: pk, rowKey: k }]),
    ]);
    const got = new Map();
    for await (const e of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${pk}` } })) got.set(e.rowKey, e.V);
    const want = new Map([...rows.slice(0, 8).map((k) => [k, 2]), ...rows.slice(8, 16).map((k) => [k, 3])]);
    assert.deepEqual([...got.entries()].sort(), [...want.entries()].sort());
  });

  it("keys of 1024 UTF-16 units are legal; longer is PropertyValueTooLarge (Cosmos DB: a RowKey of 255 bytes)", async () => {
    if (h.cosmos) {
      // docs/cosmos.md, "RowKey size" and "PartitionKey size".
      await client.createEntity({ partitionKey: "long", rowKey: "😀".repeat(63) + "abc" });
      await dt.rejects(client.createEntity({ partitionKey: "long", rowKey: "😀".repeat(64) }), 400, "PropertyValueTooLarge");
      await client.createEntity({ partitionKey: "k".repeat(1024), rowKey: "r" });
      await dt.rejects(client.createEntity({ partitionKey: "k".repeat(1025), rowKey: "r" }), 400, "PropertyValueTooLarge");
      return;
    }
    await client.createEntity({ partitionKey: "long", rowKey: "😀".repeat(512) });
    await dt.rejects(client.createEntity({ partitionKey: "long", rowKey: "k".repeat(1025) }), 400, "PropertyValueTooLarge");
    await dt.rejects(client.createEntity({ partitionKey: "k".repeat(2048), rowKey: "r" }), 400, "PropertyValueTooLarge");
  });

  for (const bad of forbidden) {
    it(`refuses forbidden key ${label(bad)}`, async () => {
      await dt.rejects(client.createEntity({ partitionKey: "p", rowKey: bad }), 400, "OutOfRangeInput");
      await dt.rejects(client.createEntity({ partitionKey: bad, rowKey: "r" }), 400, "OutOfRangeInput");
      // Addressed in the URL (an upsert is a PUT): '/' and '\' break the
      // service's URL parsing, the others are out of range.
      const code = bad === "a/b" || bad === "a\\b" ? "InvalidInput" : "OutOfRangeInput";
      await dt.rejects(client.upsertEntity({ partitionKey: "p", rowKey: bad }, "Replace"), 400, code);
    });
  }

  it("stored nothing with a forbidden key", async () => {
    const { rows } = await dt.listAll(client, { queryOptions: { filter: "PartitionKey eq 'p'" } });
    assert.deepEqual(rows, []);
  });
});
