"use strict";
// Table ACLs (stored access policies) through @azure/data-tables:
// setAccessPolicy/getAccessPolicy, and service SAS tokens that name a
// policy with `si` (docs/protocol.md 3.4, 9.6).

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { generateTableSas } = require("@azure/data-tables");
const h = require("../../lib/harness");
const dt = require("../../lib/dt");

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

// Cosmos DB has no table ACLs (its FAQ); tableemu's profile refuses Get and
// Set Table ACL as Cosmos DB refuses Set Service Properties, 405
// MethodNotAllowed (docs/cosmos.md, "What Cosmos DB refuses"): the cases
// below that set or read policies are Table storage's, and the last one
// asserts the profile's answer instead.
const storageOnly = { skip: h.cosmos && "Cosmos DB has no table ACLs: see the 405 MethodNotAllowed case" };

describe("data-tables: table ACLs", () => {
  it("round-trips full, partial and empty policies; an empty list clears them", storageOnly, async (t) => {
    const { client } = await dt.newTable(t, tg);
    const start = new Date(Date.UTC(2042, 0, 1, 1, 1, 1));
    const expiry = new Date(Date.UTC(2043, 1, 3, 4, 5, 6));
    await client.setAccessPolicy([
      { id: "full", accessPolicy: { start, expiry, permission: "raud" } },
      { id: "partial", accessPolicy: { permission: "r" } },
      { id: "empty" },
    ]);
    const got = await client.getAccessPolicy();
    assert.equal(got.length, 3);
    assert.equal(got[0].id, "full");
    assert.equal(got[0].accessPolicy.start.getTime(), start.getTime());
    assert.equal(got[0].accessPolicy.expiry.getTime(), expiry.getTime());
    assert.equal(got[0].accessPolicy.permission, "raud");
    assert.deepEqual(got[1], { id: "partial", accessPolicy: { permission: "r" } });
    assert.equal(got[2].id, "empty");
    assert.deepEqual(got[2].accessPolicy ?? {}, {});

    await client.setAccessPolicy([]);
    assert.deepEqual(await client.getAccessPolicy(), []);
  });

  it("refuses more than five identifiers and bad permissions: 400 InvalidXmlDocument", storageOnly, async (t) => {
    const { client } = await dt.newTable(t, tg);
    const ids = (n) => Array.from({ length: n }, (_, i) => ({ id: `id${i}`, accessPolicy: { permission: "r" } }));
    await client.setAccessPolicy(ids(5));
    await dt.rejects(client.setAccessPolicy(ids(6)), 400, "InvalidXmlDocument");
    await dt.rejects(client.setAccessPolicy([{ id: "x", accessPolicy: { permission: "rw" } }]), 400, "InvalidXmlDocument");
    await dt.rejects(client.setAccessPolicy([{ id: "i".repeat(65) }]), 400, "InvalidXmlDocument");
    assert.equal((await client.getAccessPolicy()).length, 5, "a refused Set changes nothing");
  });

  it("ACLs of a missing table: 404 TableNotFound", storageOnly, async () => {
    const c = dt.table(tg, h.tableName());
    await dt.rejects(c.getAccessPolicy(), 404, dt.code.tableNotFound);
    await dt.rejects(c.setAccessPolicy([]), 404, dt.code.tableNotFound);
  });

  it("a SAS naming a policy takes its fields from it, and changes with it", storageOnly, async (t) => {
    const { name, client } = await dt.newTable(t, tg);
    await client.createEntity({ partitionKey: "p", rowKey: "r" });
    const expiry = new Date(Date.now() + 3600 * 1000);
    await client.setAccessPolicy([{ id: "reader", accessPolicy: { expiry, permission: "r" } }, { id: "open" }]);

    const reader = dt.sasTable(tg, name, generateTableSas(name, dt.credential(tg), { identifier: "reader" }));
    assert.match(generateTableSas(name, dt.credential(tg), { identifier: "reader" }), /si=reader/);
    await reader.getEntity("p", "r");
    await dt.rejects(reader.createEntity({ partitionKey: "p", rowKey: "new" }), 403, dt.code.permission);

    // A field in both the SAS and the policy, or in neither, is refused.
    const both = dt.sasTable(tg, name, generateTableSas(name, dt.credential(tg), { identifier: "reader", permissions: { query: true } }));
    await dt.rejects(both.getEntity("p", "r"), 403, "AuthenticationFailed");
    const neither = dt.sasTable(tg, name, generateTableSas(name, dt.credential(tg), { identifier: "open", permissions: { query: true } }));
    await dt.rejects(neither.getEntity("p", "r"), 403, "AuthenticationFailed");
    // The SAS may supply what the policy leaves out.
    const filled = dt.sasTable(tg, name, generateTableSas(name, dt.credential(tg), { identifier: "open", permissions: { query: true, add: true }, expiresOn: expiry }));
    await filled.createEntity({ partitionKey: "p", rowKey: "filled" });

    // Widening the policy widens every SAS that names it, at once.
    await client.setAccessPolicy([{ id: "reader", accessPolicy: { expiry, permission: "ra" } }]);
    await reader.createEntity({ partitionKey: "p", rowKey: "new" });
    // Removing it revokes them.
    await client.setAccessPolicy([]);
    await dt.rejects(reader.getEntity("p", "r"), 403, "AuthenticationFailed");
  });

  it("only the account key may read or set an ACL: 403 AuthorizationFailure", async (t) => {
    const { name } = await dt.newTable(t, tg);
    const sas = generateTableSas(name, dt.credential(tg), { permissions: { query: true, add: true, update: true, delete: true } });
    const c = dt.sasTable(tg, name, sas);
    await dt.rejects(c.getAccessPolicy(), 403, "AuthorizationFailure");
    await dt.rejects(c.setAccessPolicy([]), 403, "AuthorizationFailure");
  });

  it("Cosmos DB: Get and Set Table ACL are 405 MethodNotAllowed, on a missing table too", { skip: !h.cosmos && "Cosmos DB only" }, async (t) => {
    const { client } = await dt.newTable(t, tg);
    await dt.rejects(client.getAccessPolicy(), 405, "MethodNotAllowed");
    await dt.rejects(client.setAccessPolicy([{ id: "reader", accessPolicy: { permission: "r" } }]), 405, "MethodNotAllowed");
    const missing = dt.table(tg, h.tableName());
    await dt.rejects(missing.getAccessPolicy(), 405, "MethodNotAllowed");
    await dt.rejects(missing.setAccessPolicy([]), 405, "MethodNotAllowed");
  });
});
