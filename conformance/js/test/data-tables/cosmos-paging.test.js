"use strict";
// Paging under tableemu --profile cosmos (docs/cosmos.md, "Queries and
// paging"): Azure Cosmos DB for Table answers a query of entities with more
// to come with NextPartitionKey {"token":…,"range":{"min":"","max":"FF"}}
// (in an array after the first page) and NextRowKey "NA". @azure/data-tables,
// in its Cosmos mode (a localhost endpoint whose account is not Azurite's,
// as in cosmos-style.test.js), wraps both in its own continuation token;
// tableemu must take them back, page after page and from a saved token.

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const { startCosmosMode, cosmosModeTable } = require("../../lib/cosmos");

let tg;
before(async () => {
  if (h.ownServerOnly()) return;
  tg = await startCosmosMode(["--profile", "cosmos"]);
});
after(() => tg && tg.stop());

describe("data-tables: paging under --profile cosmos", { skip: h.ownServerOnly() }, () => {
  let client;
  let headers;
  const keys = [];
  for (const pk of ["a", "b'1", "c é", "d+=&"]) for (let i = 0; i < 7; i++) keys.push([pk, `r0${i}`]);

  before(async () => {
    client = await cosmosModeTable(tg);
    // Note each answer's continuation headers.
    client.pipeline.addPolicy(
      {
        name: "continuation",
        sendRequest: async (req, next) => {
          const res = await next(req);
          headers.push([res.headers.get("x-ms-continuation-NextPartitionKey"), res.headers.get("x-ms-continuation-NextRowKey")]);
          return res;
        },
      },
      { afterPhase: "Retry" },
    );
    headers = [];
    for (const [pk, rk] of keys) await client.createEntity({ partitionKey: pk, rowKey: rk });
  });
  after(() => client && client.deleteTable());

  it("pages through every entity with Cosmos DB's tokens", async () => {
    headers = [];
    const got = [];
    let pages = 0;
    for await (const page of client.listEntities().byPage({ maxPageSize: 3 })) {
      pages++;
      got.push(...page.map((e) => [e.partitionKey, e.rowKey]));
    }
    assert.equal(pages, Math.ceil(keys.length / 3));
    assert.deepEqual(got, keys);
    assert.match(headers[0][0], /^\{"token":"[A-Za-z0-9+/]+=*","range":\{"min":"","max":"FF"\}\}$/);
    assert.match(headers[1][0], /^\[\{"token":"[A-Za-z0-9+/]+=*","range":\{"min":"","max":"FF"\}\}\]$/);
    assert.ok(headers.slice(0, -1).every(([, nrk]) => nrk === "NA"), JSON.stringify(headers));
    assert.ok(!headers[headers.length - 1][0] && !headers[headers.length - 1][1], "the last page names no continuation");
  });

  it("resumes from a saved continuation token", async () => {
    const first = (await client.listEntities().byPage({ maxPageSize: 3 }).next()).value;
    const resumed = (await client.listEntities().byPage({ maxPageSize: 3, continuationToken: first.continuationToken }).next()).value;
    assert.deepEqual(
      resumed.map((e) => [e.partitionKey, e.rowKey]),
      keys.slice(3, 6),
    );
  });
});
