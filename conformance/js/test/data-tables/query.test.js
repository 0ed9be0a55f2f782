"use strict";
// listEntities through @azure/data-tables over 2,500 entities: paging by
// continuation (the SDK wraps NextPartitionKey/NextRowKey in its own
// base64 JSON token), $top, $filter, $select (docs/protocol.md 6).

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { odata } = require("@azure/data-tables");
const h = require("../../lib/harness");
const dt = require("../../lib/dt");

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

const N = 2500;

// ordered: Table storage answers by PartitionKey, then RowKey; Cosmos DB
// for Table (tableemu --profile cosmos) by PartitionKey, then in the order
// each partition's entities were created (docs/cosmos.md, "order of query
// results"), which dt.seed's concurrent batches leave open here. Either way
// every entity once.
function ordered(rows) {
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1];
    const b = rows[i];
    if (a.partitionKey > b.partitionKey) return false;
    if (!h.cosmos && a.partitionKey === b.partitionKey && a.rowKey >= b.rowKey) return false;
  }
  return new Set(rows.map((r) => `${r.partitionKey}/${r.rowKey}`)).size === rows.length;
}

describe("data-tables: queries over 2,500 entities", () => {
  let client;
  let seededFrom;
  before(async () => {
    seededFrom = new Date(Date.now() - 10 * 60 * 1000); // the table is new: nothing older exists
    const name = h.tableName();
    await dt.service(tg).createTable(name);
    client = dt.table(tg, name);
    const entities = [];
    for (let i = N - 1; i >= 0; i--) {
      entities.push({
        partitionKey: `p${i % 5}`,
        rowKey: `r${String(i).padStart(5, "0")}`,
        N: i,
        Tag: i % 2 ? "b" : "a",
        Big: BigInt(i) * 10000000000n,
        When: new Date(Date.UTC(2020, 0, 1) + i * 60000),
      });
    }
    await dt.seed(client, entities);
  });
  after(() => client && client.deleteTable());

  it("lists all 2,500 in pages of 1,000, ordered by PartitionKey then RowKey", async () => {
    const { rows, pages } = await dt.listAll(client);
    assert.equal(rows.length, N);
    assert.deepEqual(pages, [1000, 1000, 500]);
    assert.ok(ordered(rows));
    assert.equal(new Set(rows.map((r) => r.N)).size, N);
  });

  it("the async iterator walks every page", async () => {
    let n = 0;
    for await (const e of client.listEntities()) {
      assert.equal(typeof e.N, "number");
      n++;
    }
    assert.equal(n, N);
  });

  it("maxPageSize sends $top: 8 pages of at most 333", async () => {
    const { rows, pages } = await dt.listAll(client, {}, { maxPageSize: 333 });
    assert.equal(rows.length, N);
    assert.deepEqual(pages, [333, 333, 333, 333, 333, 333, 333, 169]);
    assert.ok(ordered(rows));
  });

  it("resumes from a saved continuation token", async () => {
    const iter = client.listEntities().byPage({ maxPageSize: 400 });
    const first = (await iter.next()).value;
    const second = (await iter.next()).value;
    assert.ok(first.continuationToken);
    const again = (await client.listEntities().byPage({ maxPageSize: 400, continuationToken: first.continuationToken }).next()).value;
    assert.deepEqual(again.map((e) => e.rowKey), second.map((e) => e.rowKey), "the same token gives the same page");
    const rest = await dt.listAll(client, {}, { maxPageSize: 1000, continuationToken: first.continuationToken });
    assert.equal(rest.rows.length, N - 400);
    assert.equal(rest.rows[0].rowKey, second[0].rowKey);
  });

  it("filters a partition, a point, a key range with a property, and or/not", async () => {
    const count = async (filter, settings) => (await dt.listAll(client, { queryOptions: { filter } }, settings)).rows;
    const p3 = await count(odata`PartitionKey eq ${"p3"}`);
    assert.equal(p3.length, N / 5);
    assert.ok(p3.every((r) => r.partitionKey === "p3"));
    const point = await count("PartitionKey eq 'p3' and RowKey eq 'r00013'");
    assert.deepEqual(point.map((r) => r.N), [13]);
    // i%5==1 in [100,200) → 101,106,…,196 (20); of those odd → 10.
    const range = await count("PartitionKey eq 'p1' and RowKey ge 'r00100' and RowKey lt 'r00200' and Tag eq 'b'");
    assert.equal(range.length, 10);
    const either = await count("N lt 3 or N ge 2497");
    assert.deepEqual(either.map((r) => r.N).sort((a, b) => a - b), [0, 1, 2, 2497, 2498, 2499]);
    const notA = await count("not (Tag eq 'a') and PartitionKey eq 'p0'");
    assert.equal(notA.length, 250);
    // A literal on the left (docs/protocol.md 0.1).
    assert.equal((await count("2490 lt N")).length, 9);
    // Typed comparisons: Int64 and DateTime properties.
    assert.equal((await count("Big ge 24900000000000L")).length, 10);
    assert.equal((await count(odata`When lt ${new Date(Date.UTC(2020, 0, 1, 0, 10))}`)).length, 10);
    // A sparse filter still pages: 1,250 matches in pages of at most 1,000.
    const sparse = await dt.listAll(client, { queryOptions: { filter: "Tag eq 'b'" } });
    assert.equal(sparse.rows.length, N / 2);
    assert.ok(sparse.pages.every((n) => n <= 1000));
    assert.ok(ordered(sparse.rows));
    // The system Timestamp filters as a DateTime.
    assert.equal((await count(odata`Timestamp ge ${seededFrom} and PartitionKey eq 'p2'`)).length, N / 5);
    assert.equal((await count(odata`Timestamp lt ${seededFrom}`)).length, 0);
    // Matching nothing is an empty list.
    assert.equal((await count("N gt 100000")).length, 0);
  });

  it("select returns only the listed properties (and the ETag)", async () => {
    const page = (await client.listEntities({ queryOptions: { filter: "PartitionKey eq 'p0'", select: ["rowKey", "N"] } }).byPage({ maxPageSize: 3 }).next()).value;
    assert.equal(page.length, 3);
    for (const e of page) {
      assert.deepEqual(Object.keys(e).sort(), ["N", "etag", "rowKey"]);
    }
    // A selected property an entity lacks comes back as null.
    const withMissing = (await client.listEntities({ queryOptions: { filter: "RowKey eq 'r00000'", select: ["N", "Nope"] } }).next()).value;
    assert.equal(withMissing.N, 0);
    assert.equal(withMissing.Nope, null);
    // select with paging keeps selecting on every page.
    const all = await dt.listAll(client, { queryOptions: { select: ["N"] } });
    assert.equal(all.rows.length, N);
    assert.ok(all.rows.every((e) => e.Tag === undefined && typeof e.N === "number"));
  });

  it("refuses a malformed filter and a bad $top with 400 InvalidInput (Cosmos DB: $top past 1000)", async () => {
    await dt.rejects(client.listEntities({ queryOptions: { filter: "N eq" } }).next(), 400, "InvalidInput");
    // Cosmos DB does not cap $top at 1000 (its FAQ); tableemu's profile
    // takes up to 2^31-1 (docs/cosmos.md, "$top").
    if (h.cosmos) {
      const page = (await client.listEntities().byPage({ maxPageSize: 1001 }).next()).value;
      assert.ok(page.length > 0 && page.length <= 1001, `a page of ${page.length}`);
      return dt.rejects(client.listEntities().byPage({ maxPageSize: 2 ** 31 }).next(), 400, "InvalidInput");
    }
    await dt.rejects(client.listEntities().byPage({ maxPageSize: 1001 }).next(), 400, "InvalidInput");
  });

  it("querying a missing table is 404 TableNotFound", async () => {
    await dt.rejects(dt.table(tg, h.tableName()).listEntities().next(), 404, dt.code.tableNotFound);
  });
});
