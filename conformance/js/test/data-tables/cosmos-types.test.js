"use strict";
// Typed values under tableemu --profile cosmos (docs/cosmos.md, "Entities'
// typed values"): Azure Cosmos DB for Table accepts a number annotated
// Edm.String and reads it back as the number, where Table storage answers
// 400 InvalidInput (the Python SDK's test_entity_with_edmtypes, recorded
// against both). @azure/data-tables sends { value: 42, type: "String" } as
// it is, so a JavaScript user meets the difference: under the profile the
// insert, the upsert (a merge, POST with X-HTTP-Method: MERGE in the SDK's
// Cosmos mode) and a transaction succeed; without it each is refused.

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const dt = require("../../lib/dt");
const { startCosmosMode, cosmosModeTable } = require("../../lib/cosmos");

// The values of test_entity_with_edmtypes, as the SDK sends them.
function lenient(rowKey) {
  return {
    partitionKey: "p",
    rowKey,
    bool: { value: "false", type: "Boolean" },
    text: { value: 42, type: "String" },
    number: { value: "23", type: "Int32" },
    amount: { value: "0", type: "Double" },
    since: { value: "2008-07-10T00:00:00", type: "DateTime" },
  };
}

// wantRead checks an entity read back holds what Cosmos DB answered:
// false, 42 and 23 as numbers (no annotation), 0, the DateTime in UTC.
function wantRead(e) {
  assert.equal(e.bool, false);
  assert.equal(e.text, 42);
  assert.equal(e.number, 23);
  assert.equal(e.amount, 0);
  const since = e.since instanceof Date ? e.since.toISOString() : e.since.value ?? e.since;
  assert.match(String(since), /^2008-07-10T00:00:00(\.0+)?Z$/);
}

let cosmos;
let storage;
before(async () => {
  if (h.ownServerOnly()) return;
  cosmos = await startCosmosMode(["--profile", "cosmos"]);
  // Named, for the suite's cosmos run (TABLEEMU_PROFILE=cosmos) too: the
  // flag wins over the variable.
  storage = await h.startServer(["--profile", "storage"]);
});
after(async () => {
  if (cosmos) await cosmos.stop();
  if (storage) await storage.stop();
});

describe("data-tables: typed values under --profile cosmos", { skip: h.ownServerOnly() }, () => {
  let client;
  before(async () => {
    client = await cosmosModeTable(cosmos);
  });
  after(() => client && client.deleteTable());

  it("accepts a number annotated Edm.String on insert, upsert and in a transaction", async () => {
    await client.createEntity(lenient("ins"));
    await client.upsertEntity(lenient("ups"), "Merge");
    await client.submitTransaction([
      ["create", lenient("b1")],
      ["upsert", lenient("b2"), "Replace"],
    ]);
    for (const rk of ["ins", "ups", "b1", "b2"]) wantRead(await client.getEntity("p", rk));
  });

  it("refuses what is not in the evidence: a boolean annotated Edm.String", async () => {
    await dt.rejects(client.createEntity({ partitionKey: "p", rowKey: "no", text: { value: true, type: "String" } }), 400, "InvalidInput");
  });

  it("without the profile, answers as Table storage: 400 InvalidInput", async () => {
    const name = h.tableName();
    await dt.service(storage).createTable(name);
    const t = dt.table(storage, name);
    await dt.rejects(t.createEntity(lenient("ins")), 400, "InvalidInput");
    await dt.rejects(t.upsertEntity(lenient("ups"), "Merge"), 400, "InvalidInput");
    await dt.rejects(t.submitTransaction([["create", lenient("b1")]]), 400, "InvalidInput");
    await dt.service(storage).deleteTable(name);
  });
});
