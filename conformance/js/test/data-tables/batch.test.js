"use strict";
// Transactions ($batch) through @azure/data-tables: every action type,
// ETag conditions, atomic failure with the failed operation's index, and
// the service's batch limits (docs/protocol.md 7). The SDK sends CRLF
// multipart with lower-case part headers and PATCH for merges, and reads
// each sub-response's status, ETag and Location by regular expression.

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { TableTransaction, generateTableSas } = require("@azure/data-tables");
const h = require("../../lib/harness");
const dt = require("../../lib/dt");

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

const { userProps } = dt;

async function exists(client, pk, rk) {
  try {
    await client.getEntity(pk, rk);
    return true;
  } catch (e) {
    if (e.statusCode === 404) return false;
    throw e;
  }
}

// failed asserts a transaction failed at operation index with status and
// code: the SDK raises the failed part's error, whose message starts with
// the index — or, for index null, with no index: the service leaves it out
// when the transaction holds that one operation alone and it failed against
// the stored entity (docs/protocol.md 7.4).
async function failed(p, status, code, index) {
  const err = await dt.rejects(p, status, code);
  if (index === null) {
    assert.doesNotMatch(err.message, /^\d+:/, `message ${JSON.stringify(err.message)} names no operation`);
  } else {
    assert.match(err.message, new RegExp(`^${index}:`), `message ${JSON.stringify(err.message)} names operation ${index}`);
  }
  return err;
}

describe("data-tables: transactions", () => {
  it("runs every action type in one transaction", async (t) => {
    const { client } = await dt.newTable(t, tg);
    for (const rk of ["merge", "replace", "upmerge", "upreplace", "delete", "etagmerge"]) {
      await client.createEntity({ partitionKey: "p", rowKey: rk, Old: "o", Keep: 1 });
    }
    const current = await client.getEntity("p", "etagmerge");
    const tx = new TableTransaction();
    tx.createEntity({ partitionKey: "p", rowKey: "add", New: "n" });
    tx.updateEntity({ partitionKey: "p", rowKey: "merge", New: "n" }, "Merge");
    tx.updateEntity({ partitionKey: "p", rowKey: "replace", New: "n" }, "Replace");
    tx.upsertEntity({ partitionKey: "p", rowKey: "upmerge", New: "n" }, "Merge");
    tx.upsertEntity({ partitionKey: "p", rowKey: "upreplace", New: "n" }, "Replace");
    tx.upsertEntity({ partitionKey: "p", rowKey: "newmerge", New: "n" }, "Merge");
    tx.upsertEntity({ partitionKey: "p", rowKey: "newreplace", New: "n" }, "Replace");
    tx.deleteEntity("p", "delete");
    tx.updateEntity({ partitionKey: "p", rowKey: "etagmerge", New: "n" }, "Merge", { etag: current.etag });
    const res = await client.submitTransaction(tx.actions);

    assert.equal(res.status, 202);
    assert.equal(res.subResponses.length, 9);
    assert.ok(res.subResponses.every((r) => r.status === 204), JSON.stringify(res.subResponses));
    // Each write's ETag is read from its part; a delete has none.
    assert.ok(res.subResponses.slice(0, 7).every((r) => /^W\/"datetime'/.test(r.etag)));
    assert.equal(res.subResponses[7].etag, undefined);
    // The insert's part carries its Location, so the SDK can find it.
    assert.equal(res.getResponseForEntity("add").etag, (await client.getEntity("p", "add")).etag);

    const want = {
      add: { New: "n" },
      merge: { New: "n", Old: "o", Keep: 1 },
      replace: { New: "n" },
      upmerge: { New: "n", Old: "o", Keep: 1 },
      upreplace: { New: "n" },
      newmerge: { New: "n" },
      newreplace: { New: "n" },
      etagmerge: { New: "n", Old: "o", Keep: 1 },
    };
    for (const [rk, props] of Object.entries(want)) {
      assert.deepEqual(userProps(await client.getEntity("p", rk)), props, rk);
    }
    assert.equal(await exists(client, "p", "delete"), false);
  });

  it("a failing action fails the whole transaction, naming its index", async (t) => {
    const { client } = await dt.newTable(t, tg);
    await client.createEntity({ partitionKey: "p", rowKey: "taken", V: 1 });
    for (const pos of [0, 1, 2, 49, 99]) {
      const n = Math.max(5, pos + 1);
      const actions = [];
      for (let i = 0; i < n; i++) {
        actions.push(i === pos ? ["create", { partitionKey: "p", rowKey: "taken", V: 2 }] : ["upsert", { partitionKey: "p", rowKey: `r${pos}-${i}`, V: i }, "Replace"]);
      }
      const err = await failed(client.submitTransaction(actions), 409, "EntityAlreadyExists", pos);
      assert.match(err.message, /^\d+:The specified entity already exists\./);
      for (let i = 0; i < n; i++) {
        if (i !== pos) assert.equal(await exists(client, "p", `r${pos}-${i}`), false, `operation ${i} was committed although ${pos} failed`);
      }
      assert.equal((await client.getEntity("p", "taken")).V, 1);
    }
  });

  it("ETag conditions inside a transaction: a stale ETag is 412, If-Match * on a missing entity 404", async (t) => {
    const { client } = await dt.newTable(t, tg);
    const v1 = await client.createEntity({ partitionKey: "p", rowKey: "r", V: 1 });
    await client.updateEntity({ partitionKey: "p", rowKey: "r", V: 2 });
    await failed(
      client.submitTransaction([
        ["create", { partitionKey: "p", rowKey: "x" }],
        ["update", { partitionKey: "p", rowKey: "r", V: 3 }, "Replace", { etag: v1.etag }],
      ]),
      412,
      "UpdateConditionNotSatisfied",
      1,
    );
    // Cosmos DB names the index even for the one operation of a change set
    // (test_new_delete_nonexistent_entity; docs/cosmos.md, "a failed part").
    await failed(client.submitTransaction([["update", { partitionKey: "p", rowKey: "missing", V: 3 }, "Merge"]]), 404, "ResourceNotFound", h.cosmos ? 0 : null);
    await failed(
      client.submitTransaction([
        ["create", { partitionKey: "p", rowKey: "y" }],
        ["create", { partitionKey: "p", rowKey: "z" }],
        ["delete", { partitionKey: "p", rowKey: "missing" }],
      ]),
      404,
      "ResourceNotFound",
      2,
    );
    assert.equal((await client.getEntity("p", "r")).V, 2);
    for (const rk of ["x", "y", "z"]) assert.equal(await exists(client, "p", rk), false);
  });

  it("a bad entity in a transaction fails with its own code and index", async (t) => {
    const { client } = await dt.newTable(t, tg);
    await failed(
      client.submitTransaction([
        ["create", { partitionKey: "p", rowKey: "ok" }],
        ["create", { partitionKey: "p", rowKey: "big", S: "x".repeat(32 * 1024 + 1) }],
      ]),
      400,
      "PropertyValueTooLarge",
      1,
    );
    await failed(client.submitTransaction([["create", { partitionKey: "p", rowKey: "a#b" }]]), 400, "OutOfRangeInput", 0);
    assert.equal(await exists(client, "p", "ok"), false);
  });

  it("enforces the batch limits: 100 operations, one entity once", async (t) => {
    const { client } = await dt.newTable(t, tg);
    const creates = (n, prefix) => Array.from({ length: n }, (_, i) => ["create", { partitionKey: "p", rowKey: `${prefix}${String(i).padStart(3, "0")}` }]);
    const ok = await client.submitTransaction(creates(100, "a"));
    assert.equal(ok.subResponses.length, 100);
    assert.equal((await dt.listAll(client)).rows.length, 100);

    const err = await dt.rejects(client.submitTransaction(creates(101, "b")), 400, "InvalidInput");
    // Cosmos DB keeps the limit; its sentence for InvalidInput (docs/cosmos.md,
    // "operations in a change set").
    const sentence = h.cosmos ? "One of the input values is invalid." : "The batch request operation exceeds the maximum 100 changes per change set.";
    assert.ok(err.message.startsWith(`99:${sentence}`), err.message);

    await failed(
      client.submitTransaction([
        ["create", { partitionKey: "p", rowKey: "dup" }],
        ["upsert", { partitionKey: "p", rowKey: "dup" }, "Merge"],
      ]),
      400,
      "InvalidDuplicateRow",
      1,
    );
    assert.equal((await dt.listAll(client)).rows.length, 100, "nothing of the refused batches was written");
  });

  // Cosmos DB names the missing table ResourceNotFound, for the whole
  // batch: no operation's index (test_new_non_existent_table;
  // docs/cosmos.md, "Entity group transactions").
  it("a transaction on a missing table: 404, in its first part (Cosmos DB: the whole batch)", async () => {
    await failed(dt.table(tg, h.tableName()).submitTransaction([["create", { partitionKey: "p", rowKey: "r" }]]), 404, dt.code.tableNotFound, h.cosmos ? null : 0);
  });

  it("a transaction over 4 MiB is refused whole: 413 RequestBodyTooLarge", async (t) => {
    const { client } = await dt.newTable(t, tg);
    const actions = Array.from({ length: 100 }, (_, i) => ["create", { partitionKey: "p", rowKey: `r${i}`, S: "x".repeat(22000), T: "y".repeat(22000) }]);
    await dt.rejects(client.submitTransaction(actions), 413, "RequestBodyTooLarge");
    assert.equal((await dt.listAll(client)).rows.length, 0);
  });

  it("the SDK itself refuses actions on two partitions before sending", async (t) => {
    // So the service's CommandsInBatchActOnDifferentPartitions is reached
    // only through the legacy SDK (see ../legacy/batch.test.js).
    const { client } = await dt.newTable(t, tg);
    await assert.rejects(
      client.submitTransaction([
        ["create", { partitionKey: "a", rowKey: "1" }],
        ["create", { partitionKey: "b", rowKey: "1" }],
      ]),
      /same partitionKey/,
    );
  });

  // A refused part on Cosmos DB: see sas.test.js, "a read-only SAS is
  // refused a transaction".
  it("a transaction through a SAS is checked per operation", async (t) => {
    const { name, client } = await dt.newTable(t, tg);
    await client.createEntity({ partitionKey: "p", rowKey: "r" });
    const addOnly = dt.sasTable(tg, name, generateTableSas(name, dt.credential(tg), { permissions: { add: true } }));
    await addOnly.submitTransaction([["create", { partitionKey: "p", rowKey: "viaSas" }]]);
    assert.equal(await exists(client, "p", "viaSas"), true);
    await failed(
      addOnly.submitTransaction([
        ["create", { partitionKey: "p", rowKey: "x" }],
        ["delete", { partitionKey: "p", rowKey: "r" }],
      ]),
      403,
      dt.code.permission,
      1,
    );
    assert.equal(await exists(client, "p", "r"), true);
    assert.equal(await exists(client, "p", "x"), false);
  });
});
