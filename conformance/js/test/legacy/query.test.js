"use strict";
// queryEntities through the legacy azure-storage SDK over 2,500 entities:
// its continuation token is {nextPartitionKey, nextRowKey} from the
// x-ms-continuation-* headers, passed back as query parameters; TableQuery
// supplies $filter, $select and $top (docs/protocol.md 6).

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const lg = require("../../lib/legacy");

const { entGen, azure } = lg;
const { TableQuery } = azure;

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

const N = 2500;

function keysOf(rows) {
  return rows.map((e) => [e.PartitionKey._, e.RowKey._]);
}

function ordered(rows) {
  const k = keysOf(rows);
  for (let i = 1; i < k.length; i++) {
    if (k[i - 1][0] > k[i][0] || (k[i - 1][0] === k[i][0] && k[i - 1][1] >= k[i][1])) return false;
  }
  return true;
}

describe("legacy: queries over 2,500 entities", () => {
  let svc;
  let name;
  let seededFrom;
  before(async () => {
    seededFrom = new Date(Date.now() - 10 * 60 * 1000); // the table is new: nothing older exists
    svc = lg.service(tg);
    name = h.tableName();
    await lg.call(svc, "createTable", name);
    const entities = [];
    for (let i = N - 1; i >= 0; i--) {
      entities.push(
        lg.ent(`p${i % 5}`, `r${String(i).padStart(5, "0")}`, {
          N: entGen.Int32(i),
          Tag: entGen.String(i % 2 ? "b" : "a"),
          Big: entGen.Int64(String(BigInt(i) * 10000000000n)),
          When: entGen.DateTime(new Date(Date.UTC(2020, 0, 1) + i * 60000)),
        }),
      );
    }
    await lg.seed(svc, name, entities);
  });
  after(() => lg.call(svc, "deleteTable", name));

  it("reads all 2,500 in pages of 1,000 by continuation token, ordered", async () => {
    const { rows, pages } = await lg.queryAll(svc, name, null);
    assert.equal(rows.length, N);
    assert.deepEqual(pages, [1000, 1000, 500]);
    assert.ok(ordered(rows));
    assert.equal(new Set(rows.map((e) => e.N._)).size, N);
  });

  it("top(333) pages by 333", async () => {
    const { rows, pages } = await lg.queryAll(svc, name, new TableQuery().top(333));
    assert.equal(rows.length, N);
    assert.deepEqual(pages, [333, 333, 333, 333, 333, 333, 333, 169]);
    assert.ok(ordered(rows));
  });

  it("a saved continuation token gives the same page again", async () => {
    const q = new TableQuery().top(400);
    const first = (await lg.call(svc, "queryEntities", name, q, null)).result;
    const token = first.continuationToken;
    assert.ok(token && token.nextPartitionKey && token.nextRowKey);
    const a = (await lg.call(svc, "queryEntities", name, q, token)).result;
    const b = (await lg.call(svc, "queryEntities", name, q, token)).result;
    assert.deepEqual(keysOf(a.entries), keysOf(b.entries));
    assert.notDeepEqual(keysOf(a.entries), keysOf(first.entries));
  });

  it("filters a partition, a point, a key range with a property, and or/not", async () => {
    const count = async (q) => (await lg.queryAll(svc, name, q)).rows;
    const p3 = await count(new TableQuery().where("PartitionKey eq ?", "p3"));
    assert.equal(p3.length, N / 5);
    const point = await count(new TableQuery().where("PartitionKey eq ?", "p3").and("RowKey eq ?", "r00013"));
    assert.deepEqual(point.map((e) => e.N._), [13]);
    const range = await count(
      new TableQuery().where("PartitionKey eq ?", "p1").and("RowKey ge ?", "r00100").and("RowKey lt ?", "r00200").and("Tag eq ?", "b"),
    );
    assert.equal(range.length, 10);
    const either = await count(new TableQuery().where("N lt ?", 3).or("N ge ?", 2497));
    assert.deepEqual(either.map((e) => e.N._).sort((a, b) => a - b), [0, 1, 2, 2497, 2498, 2499]);
    assert.equal((await count(new TableQuery().where("not (Tag eq 'a') and PartitionKey eq 'p0'"))).length, 250);
    assert.equal((await count(new TableQuery().where(TableQuery.int64Filter("Big", "ge", "24900000000000")))).length, 10);
    assert.equal((await count(new TableQuery().where(TableQuery.dateFilter("When", "lt", new Date(Date.UTC(2020, 0, 1, 0, 10)))))).length, 10);
    const sparse = await lg.queryAll(svc, name, new TableQuery().where("Tag eq ?", "b"));
    assert.equal(sparse.rows.length, N / 2);
    assert.ok(sparse.pages.every((n) => n <= 1000));
    assert.ok(ordered(sparse.rows));
    assert.equal((await count(new TableQuery().where("N gt ?", 100000))).length, 0);
    // The system Timestamp filters as a DateTime.
    const since = TableQuery.dateFilter("Timestamp", "ge", seededFrom);
    assert.equal((await count(new TableQuery().where(since).and("PartitionKey eq ?", "p2"))).length, N / 5);
    assert.equal((await count(new TableQuery().where(TableQuery.dateFilter("Timestamp", "lt", seededFrom)))).length, 0);
  });

  it("select returns only the listed properties", async () => {
    const q = new TableQuery().select("RowKey", "N").where("PartitionKey eq ?", "p0").top(3);
    const { result } = await lg.call(svc, "queryEntities", name, q, null);
    assert.equal(result.entries.length, 3);
    for (const e of result.entries) {
      assert.deepEqual(Object.keys(e).sort(), [".metadata", "N", "RowKey"]);
      assert.match(e[".metadata"].etag, /^W\/"datetime'/);
    }
    // A selected property an entity lacks comes back as null.
    const missing = new TableQuery().select("N", "Nope").where("RowKey eq ?", "r00000");
    const one = (await lg.call(svc, "queryEntities", name, missing, null)).result.entries[0];
    assert.equal(one.N._, 0);
    assert.equal(one.Nope._, null);
    const all = await lg.queryAll(svc, name, new TableQuery().select("N"));
    assert.equal(all.rows.length, N);
    assert.ok(all.rows.every((e) => e.Tag === undefined));
  });

  it("queries in no-metadata format with autoResolveProperties", async () => {
    const { PayloadFormat } = azure.TableUtilities;
    const q = new TableQuery().where("RowKey eq ?", "r00007");
    const { result } = await lg.call(svc, "queryEntities", name, q, null, { payloadFormat: PayloadFormat.NO_METADATA, autoResolveProperties: true });
    const e = result.entries[0];
    assert.deepEqual(e.Tag, { $: "Edm.String", _: "b" });
    assert.deepEqual(e.Big, { $: "Edm.String", _: "70000000000" }, "without metadata an Int64 is just a string");
    assert.equal(e.N._, 7);
  });

  it("refuses a malformed filter: 400 InvalidInput; a missing table: 404 TableNotFound", async () => {
    await lg.rejects(lg.call(svc, "queryEntities", name, new TableQuery().where("N eq"), null), 400, "InvalidInput");
    await lg.rejects(lg.call(svc, "queryEntities", h.tableName(), null, null), 404, "TableNotFound");
  });
});
