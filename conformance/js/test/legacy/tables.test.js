"use strict";
// Tables through the legacy azure-storage SDK: create (Prefer:
// return-no-content), the "exists" check (GET /Tables('name'), docs/protocol.md
// 0.1), list with prefix and paging, delete (docs/protocol.md 3.1–3.3).

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const lg = require("../../lib/legacy");

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

async function listNames(svc, prefix, options = {}) {
  const names = [];
  const pages = [];
  let token = null;
  do {
    const { result } = await lg.call(svc, "listTablesSegmentedWithPrefix", prefix, token, options);
    pages.push(result.entries.length);
    names.push(...result.entries);
    token = result.continuationToken;
  } while (token);
  return { names, pages };
}

describe("legacy: tables", () => {
  it("creates a table (204 with Prefer: return-no-content), finds it, deletes it", async () => {
    const svc = lg.service(tg);
    const name = h.tableName();
    const { result, response } = await lg.call(svc, "createTable", name);
    assert.equal(response.statusCode, 204);
    assert.equal(result.TableName, name);
    assert.equal((await lg.call(svc, "doesTableExist", name)).result.exists, true);
    const del = await lg.call(svc, "deleteTable", name);
    assert.equal(del.response.statusCode, 204);
    assert.equal((await lg.call(svc, "doesTableExist", name)).result.exists, false);
  });

  it("createTableIfNotExists and deleteTableIfExists", async () => {
    const svc = lg.service(tg);
    const name = h.tableName();
    assert.equal((await lg.call(svc, "createTableIfNotExists", name)).result.created, true);
    assert.equal((await lg.call(svc, "createTableIfNotExists", name)).result.created, false);
    assert.equal((await lg.call(svc, "deleteTableIfExists", name)).result, true);
    assert.equal((await lg.call(svc, "deleteTableIfExists", name)).result, false);
  });

  it("a second table of the same name, in any case, is 409 TableAlreadyExists", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.rejects(lg.call(svc, "createTable", name), 409, "TableAlreadyExists");
    await lg.rejects(lg.call(svc, "createTable", name.toUpperCase()), 409, "TableAlreadyExists");
    assert.equal((await lg.call(svc, "doesTableExist", name.toUpperCase())).result.exists, true, "lookup ignores case");
  });

  it("deleting a missing table is 404 ResourceNotFound", async () => {
    await lg.rejects(lg.call(lg.service(tg), "deleteTable", h.tableName()), 404, "ResourceNotFound");
  });

  it("the SDK checks table names itself before sending", () => {
    // So the service's InvalidResourceName/OutOfRangeInput codes are
    // exercised through @azure/data-tables only.
    assert.throws(() => lg.service(tg).createTable("1nvalid", () => {}), /Table name/);
  });

  it("lists by prefix and pages with NextTableName", async (t) => {
    const svc = lg.service(tg);
    const prefix = h.tableName("lp");
    const made = [];
    for (let i = 0; i < 12; i++) {
      const name = `${prefix}${String(i).padStart(2, "0")}`;
      await lg.call(svc, "createTable", name);
      made.push(name);
      t.after(() => lg.call(svc, "deleteTableIfExists", name).catch(() => {}));
    }
    const all = await listNames(svc, prefix);
    assert.deepEqual(all.names, made);
    const paged = await listNames(svc, prefix, { maxResults: 5 });
    assert.deepEqual(paged.pages, [5, 5, 2]);
    assert.deepEqual(paged.names, made);
    // listTablesSegmented without a prefix sees them too, in order.
    const everything = [];
    let token = null;
    do {
      const { result } = await lg.call(svc, "listTablesSegmented", token, { maxResults: 7 });
      everything.push(...result.entries);
      token = result.continuationToken;
    } while (token);
    assert.deepEqual(everything.filter((n) => n.startsWith(prefix)), made);
  });

  it("lists tables in every metadata format", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const { PayloadFormat } = lg.azure.TableUtilities;
    for (const payloadFormat of [PayloadFormat.NO_METADATA, PayloadFormat.MINIMAL_METADATA, PayloadFormat.FULL_METADATA]) {
      const { names } = await listNames(svc, name, { payloadFormat });
      assert.deepEqual(names, [name], payloadFormat);
    }
  });
});
