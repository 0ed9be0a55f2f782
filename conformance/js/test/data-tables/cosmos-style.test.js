"use strict";
// @azure/data-tables takes an endpoint on host "localhost" whose path does
// not start with /devstoreaccount1 (and whose account is not in the
// client's AZURITE_ACCOUNTS) for a Cosmos DB endpoint, and then sends every
// merge as POST with X-HTTP-Method: MERGE — at the top level and inside
// transactions (docs/protocol.md 1.1, 1.2). That is what a user with their own
// account name sees; tableemu must accept that spelling too.

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const dt = require("../../lib/dt");
const { startCosmosMode, cosmosModeTable } = require("../../lib/cosmos");

let tg;
let methods;
before(async () => {
  if (h.ownServerOnly()) return;
  tg = await startCosmosMode([], "myaccount");
});
after(() => tg && tg.stop());

// recorder is a pipeline policy that notes each request's method and the
// batch bodies, so the test can see the SDK really chose the Cosmos form.
function recorder() {
  return {
    name: "recorder",
    sendRequest: (req, next) => {
      methods.push({ method: req.method, xMethod: req.headers.get("X-HTTP-Method"), body: typeof req.body === "string" ? req.body : "" });
      return next(req);
    },
  };
}

describe("data-tables: Cosmos-style merges (POST + X-HTTP-Method: MERGE)", { skip: h.ownServerOnly() }, () => {
  let client;
  before(async () => {
    client = await cosmosModeTable(tg);
    client.pipeline.addPolicy(recorder(), { afterPhase: "Retry" });
  });
  after(() => client && client.deleteTable());

  it("merges, upserts and ETag conditions work with POST + X-HTTP-Method: MERGE", async () => {
    methods = [];
    const v1 = await client.createEntity({ partitionKey: "p", rowKey: "r", A: 1 });
    await client.updateEntity({ partitionKey: "p", rowKey: "r", B: 2 }, "Merge", { etag: v1.etag });
    await client.upsertEntity({ partitionKey: "p", rowKey: "new", C: 3 }, "Merge");
    await client.upsertEntity({ partitionKey: "p", rowKey: "new", D: 4 }, "Merge");
    assert.ok(methods.some((m) => m.method === "POST" && m.xMethod === "MERGE"), JSON.stringify(methods.map((m) => [m.method, m.xMethod])));
    assert.ok(!methods.some((m) => m.method === "PATCH" || m.method === "MERGE"));
    assert.deepEqual(dt.userProps(await client.getEntity("p", "r")), { A: 1, B: 2 });
    assert.deepEqual(dt.userProps(await client.getEntity("p", "new")), { C: 3, D: 4 });
    await dt.rejects(client.updateEntity({ partitionKey: "p", rowKey: "r", X: 1 }, "Merge", { etag: v1.etag }), 412, "UpdateConditionNotSatisfied");
    await dt.rejects(client.updateEntity({ partitionKey: "p", rowKey: "missing", X: 1 }, "Merge"), 404, "ResourceNotFound");
  });

  it("transactions carry the same form inside their parts", async () => {
    methods = [];
    await client.submitTransaction([
      ["update", { partitionKey: "p", rowKey: "r", E: 5 }, "Merge"],
      ["upsert", { partitionKey: "p", rowKey: "tx", F: 6 }, "Merge"],
      ["upsert", { partitionKey: "p", rowKey: "new", G: 7 }, "Replace"],
    ]);
    const batch = methods.find((m) => m.body.includes("changeset_"));
    assert.ok(batch, "the transaction was sent");
    assert.match(batch.body, /POST http[^\n]*\(PartitionKey='p',RowKey='r'\) HTTP\/1\.1\r\n(?:[^\r\n]+\r\n)*X-HTTP-Method: MERGE\r\n/i);
    assert.deepEqual(dt.userProps(await client.getEntity("p", "r")), { A: 1, B: 2, E: 5 });
    assert.deepEqual(dt.userProps(await client.getEntity("p", "tx")), { F: 6 });
    assert.deepEqual(dt.userProps(await client.getEntity("p", "new")), { G: 7 });
    const err = await dt.rejects(
      client.submitTransaction([
        ["create", { partitionKey: "p", rowKey: "y" }],
        ["update", { partitionKey: "p", rowKey: "missing", X: 1 }, "Merge"],
      ]),
      404,
      "ResourceNotFound",
    );
    assert.match(err.message, /^1:/);
  });
});
