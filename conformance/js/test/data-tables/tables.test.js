"use strict";
// Tables through @azure/data-tables: create, list (filter, paging), delete
// (docs/protocol.md 1.4, 3.1–3.3).

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { odata } = require("@azure/data-tables");
const h = require("../../lib/harness");
const dt = require("../../lib/dt");

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

async function tableNames(svc, options, settings) {
  const names = [];
  const pages = [];
  for await (const page of svc.listTables(options).byPage(settings)) {
    pages.push(page.length);
    names.push(...page.map((t) => t.name));
  }
  return { names, pages };
}

describe("data-tables: tables", () => {
  it("creates, finds and deletes a table (connection string client)", async () => {
    const svc = dt.serviceFromConnectionString(tg);
    const name = h.tableName();
    const seen = await dt.captured((o) => svc.createTable(name, o));
    assert.equal(seen[0].status, 201);
    const { names } = await tableNames(svc, { queryOptions: { filter: odata`TableName eq ${name}` } });
    assert.deepEqual(names, [name]);
    const del = await dt.captured((o) => svc.deleteTable(name, o));
    assert.equal(del[0].status, 204);
    assert.deepEqual((await tableNames(svc, { queryOptions: { filter: odata`TableName eq ${name}` } })).names, []);
  });

  it("TableClient.createTable and deleteTable", async () => {
    const name = h.tableName();
    const c = dt.table(tg, name);
    await c.createTable();
    await c.createEntity({ partitionKey: "p", rowKey: "r" });
    await c.deleteTable();
    await dt.rejects(c.getEntity("p", "r"), 404, dt.code.tableNotFound);
  });

  it("refuses a second table of the same name, regardless of case: 409 TableAlreadyExists", async (t) => {
    const svc = dt.service(tg);
    const { name } = await dt.newTable(t, tg);
    // The SDK swallows this 409 (createTable is "create if not exists"); the
    // response is what the service sent.
    for (const n of [name, name.toUpperCase()]) {
      const seen = await dt.captured((o) => svc.createTable(n, o));
      // (onResponse fires twice here: once from core-client, once from the
      // SDK's "already exists" handler.)
      assert.ok(seen.length >= 1);
      if (h.cosmos && n !== name) {
        // Cosmos DB's table names are case-sensitive: another case is a
        // table of its own (docs/cosmos.md, "table names").
        assert.equal(seen[0].status, 201);
        t.after(() => svc.deleteTable(n));
        continue;
      }
      assert.equal(seen[0].status, 409);
      assert.equal(seen[0].parsedBody.odataError.code, "TableAlreadyExists");
    }
  });

  it("checks table names with the service's codes", async () => {
    const svc = dt.service(tg);
    const cases = [
      ["invalid_table_name", 400, "InvalidResourceName"],
      ["1nvalid", 400, "InvalidResourceName"],
      ["tt", 400, "OutOfRangeInput"],
      ["t".repeat(64), 400, "OutOfRangeInput"],
      ["tables", 400, "InvalidInput"],
    ];
    for (const [name, status, code] of cases) {
      await dt.rejects(svc.createTable(name), status, code);
    }
  });

  it("deleting a missing table is 404 ResourceNotFound", async () => {
    const svc = dt.service(tg);
    // deleteTable swallows a 404; read the response it got.
    const seen = await dt.captured((o) => svc.deleteTable(h.tableName(), o));
    assert.equal(seen[0].status, 404);
    assert.equal(seen[0].parsedBody.odataError.code, "ResourceNotFound");
  });

  it("lists with a prefix filter and pages with NextTableName", async (t) => {
    const svc = dt.service(tg);
    const prefix = h.tableName("pg");
    const made = [];
    for (let i = 0; i < 12; i++) {
      const name = `${prefix}${String(i).padStart(2, "0")}`;
      await svc.createTable(name);
      made.push(name);
      t.after(() => svc.deleteTable(name).catch(() => {}));
    }
    // Prefix range: ge prefix and lt the next string.
    const upper = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
    const filter = odata`TableName ge ${prefix} and TableName lt ${upper}`;
    const all = await tableNames(svc, { queryOptions: { filter } });
    assert.deepEqual(all.names, made, "sorted by name, all of them");

    const paged = await tableNames(svc, { queryOptions: { filter } }, { maxPageSize: 5 });
    assert.deepEqual(paged.pages, [5, 5, 2]);
    assert.deepEqual(paged.names, made);

    // Resume from a page's continuation token.
    const iter = svc.listTables({ queryOptions: { filter } }).byPage({ maxPageSize: 5 });
    const first = (await iter.next()).value;
    assert.ok(first.continuationToken, "first page carries NextTableName");
    const rest = await tableNames(svc, { queryOptions: { filter } }, { maxPageSize: 5, continuationToken: first.continuationToken });
    assert.deepEqual(rest.names, made.slice(5));

    // Any listing includes them (no filter), in order.
    const everything = await tableNames(svc);
    const mine = everything.names.filter((n) => n.startsWith(prefix));
    assert.deepEqual(mine, made);
  });

  it("keeps the case a table was created with (Cosmos DB: names are case-sensitive)", async (t) => {
    const svc = dt.service(tg);
    const name = "Mixed" + h.tableName("Case");
    await svc.createTable(name);
    t.after(() => svc.deleteTable(name).catch(() => {}));
    const { names } = await tableNames(svc, { queryOptions: { filter: odata`TableName eq ${name}` } });
    assert.deepEqual(names, [name]);
    // Entity operations find it under another case; on Cosmos DB, whose
    // table names are case-sensitive (its FAQ), they do not: 404
    // ResourceNotFound (docs/cosmos.md, "table names").
    if (h.cosmos) return dt.rejects(dt.table(tg, name.toLowerCase()).createEntity({ partitionKey: "p", rowKey: "r" }), 404, "ResourceNotFound");
    await dt.table(tg, name.toLowerCase()).createEntity({ partitionKey: "p", rowKey: "r" });
    const e = await dt.table(tg, name).getEntity("p", "r");
    assert.equal(e.rowKey, "r");
  });

  it("deleting a table deletes its entities", async () => {
    const svc = dt.service(tg);
    const name = h.tableName();
    await svc.createTable(name);
    await dt.table(tg, name).createEntity({ partitionKey: "p", rowKey: "r" });
    await svc.deleteTable(name);
    await svc.createTable(name);
    try {
      const { rows } = await dt.listAll(dt.table(tg, name));
      assert.equal(rows.length, 0);
    } finally {
      await svc.deleteTable(name);
    }
  });
});
