"use strict";
// Shared access signatures signed by @azure/data-tables (generateTableSas,
// generateAccountSas; sv=2019-02-02) and used through AzureSASCredential
// and SAS connection strings (docs/protocol.md 9.6–9.8).

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { generateTableSas, generateAccountSas, TableServiceClient, TableClient } = require("@azure/data-tables");
const h = require("../../lib/harness");
const dt = require("../../lib/dt");

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

const hour = () => new Date(Date.now() + 3600 * 1000);
const minuteAgo = () => new Date(Date.now() - 60 * 1000);

function tableSas(name, options) {
  return generateTableSas(name, dt.credential(tg), { startsOn: minuteAgo(), expiresOn: hour(), ...options });
}

describe("data-tables: service SAS", () => {
  let name;
  let owner;
  before(async () => {
    name = h.tableName();
    await dt.service(tg).createTable(name);
    owner = dt.table(tg, name);
    await owner.createEntity({ partitionKey: "p", rowKey: "r", V: 1 });
  });
  after(() => owner && owner.deleteTable());

  it("a read-only SAS reads and is refused every write: 403 AuthorizationPermissionMismatch", async () => {
    // generateTableSas defaults to read permission.
    const ro = dt.sasTable(tg, name, generateTableSas(name, dt.credential(tg)));
    assert.equal((await ro.getEntity("p", "r")).V, 1);
    assert.equal((await dt.listAll(ro)).rows.length >= 1, true);
    await dt.rejects(ro.createEntity({ partitionKey: "p", rowKey: "new" }), 403, dt.code.permission);
    await dt.rejects(ro.updateEntity({ partitionKey: "p", rowKey: "r", V: 2 }, "Merge"), 403, dt.code.permission);
    await dt.rejects(ro.updateEntity({ partitionKey: "p", rowKey: "r", V: 2 }, "Replace"), 403, dt.code.permission);
    await dt.rejects(ro.upsertEntity({ partitionKey: "p", rowKey: "r", V: 2 }), 403, dt.code.permission);
    await dt.rejects(ro.deleteEntity("p", "r"), 403, dt.code.permission);
    assert.equal((await owner.getEntity("p", "r")).V, 1);
  });

  // A refused part of a transaction: on Cosmos DB not in the evidence;
  // tableemu's choice is the code of the same request sent alone
  // (docs/cosmos.md, "Entity group transactions").
  it("a read-only SAS is refused a transaction: 403 in its first part", async () => {
    const ro = dt.sasTable(tg, name, generateTableSas(name, dt.credential(tg)));
    await dt.rejects(ro.submitTransaction([["create", { partitionKey: "p", rowKey: "b" }]]), 403, dt.code.permission);
    assert.equal((await owner.getEntity("p", "r")).V, 1);
  });

  it("each permission letter grants its operations; upserts need add and update", async () => {
    const add = dt.sasTable(tg, name, tableSas(name, { permissions: { add: true } }));
    await add.createEntity({ partitionKey: "p", rowKey: "added" });
    await dt.rejects(add.getEntity("p", "added"), 403, dt.code.permission);
    await dt.rejects(add.upsertEntity({ partitionKey: "p", rowKey: "added", V: 1 }, "Merge"), 403, dt.code.permission);

    const upd = dt.sasTable(tg, name, tableSas(name, { permissions: { update: true } }));
    await upd.updateEntity({ partitionKey: "p", rowKey: "added", V: 5 }, "Merge");
    await dt.rejects(upd.upsertEntity({ partitionKey: "p", rowKey: "added", V: 1 }, "Replace"), 403, dt.code.permission);

    const addUpd = dt.sasTable(tg, name, tableSas(name, { permissions: { add: true, update: true } }));
    await addUpd.upsertEntity({ partitionKey: "p", rowKey: "upserted", V: 1 }, "Replace");
    await addUpd.upsertEntity({ partitionKey: "p", rowKey: "upserted", W: 2 }, "Merge");

    const del = dt.sasTable(tg, name, tableSas(name, { permissions: { delete: true } }));
    await del.deleteEntity("p", "upserted");
    await del.deleteEntity("p", "added");
    await dt.rejects(owner.getEntity("p", "upserted"), 404, "ResourceNotFound");
  });

  it("a table SAS reaches only its table, never tables or ACLs: 403 AuthorizationFailure", async (t) => {
    const { name: other } = await dt.newTable(t, tg);
    const sas = tableSas(name, { permissions: { query: true, add: true, update: true, delete: true } });
    await dt.rejects(dt.sasTable(tg, other, sas).getEntity("p", "r"), 403, "AuthorizationFailure");
    await dt.rejects(dt.sasTable(tg, other, sas).createEntity({ partitionKey: "p", rowKey: "x" }), 403, "AuthorizationFailure");
    const svc = dt.sasService(tg, sas);
    await dt.rejects(svc.createTable(h.tableName()), 403, "AuthorizationFailure");
    await dt.rejects(svc.listTables().next(), 403, "AuthorizationFailure");
    await dt.rejects(dt.sasTable(tg, name, sas).getAccessPolicy(), 403, "AuthorizationFailure");
  });

  it("outside its time window, or with a bad signature: 403 AuthenticationFailed", async () => {
    const expired = generateTableSas(name, dt.credential(tg), { expiresOn: new Date(Date.now() - 60000) });
    await dt.rejects(dt.sasTable(tg, name, expired).getEntity("p", "r"), 403, "AuthenticationFailed");
    const future = tableSas(name, { startsOn: new Date(Date.now() + 600000) });
    await dt.rejects(dt.sasTable(tg, name, future).getEntity("p", "r"), 403, "AuthenticationFailed");
    const tampered = tableSas(name, {}).replace(/sp=r/, "sp=raud");
    await dt.rejects(dt.sasTable(tg, name, tampered).deleteEntity("p", "r"), 403, "AuthenticationFailed");
  });

  it("checks the IP range and the protocol", async () => {
    const here = tableSas(name, { ipRange: { start: "127.0.0.0", end: "127.0.0.255" } });
    assert.equal((await dt.sasTable(tg, name, here).getEntity("p", "r")).V, 1);
    const elsewhere = tableSas(name, { ipRange: { start: "10.1.2.3" } });
    await dt.rejects(dt.sasTable(tg, name, elsewhere).getEntity("p", "r"), 403, "AuthorizationSourceIPMismatch");
    const both = tableSas(name, { protocol: "https,http" });
    assert.equal((await dt.sasTable(tg, name, both).getEntity("p", "r")).V, 1);
    const httpsOnly = tableSas(name, { protocol: "https" });
    await dt.rejects(dt.sasTable(tg, name, httpsOnly).getEntity("p", "r"), 403, "AuthorizationProtocolMismatch");
  });

  it("a SAS in the URL works like AzureSASCredential", async () => {
    const c = new TableClient(`${tg.endpoint}?${generateTableSas(name, dt.credential(tg))}`, name, dt.clientOptions);
    assert.equal((await c.getEntity("p", "r")).V, 1);
    await dt.rejects(c.createEntity({ partitionKey: "p", rowKey: "x" }), 403, dt.code.permission);
  });
});

describe("data-tables: key-range SAS", () => {
  // generateTableSas in 13.3.2 both signs and sends spk/srk/epk/erk
  // (JS #25252 was about sending them); the Go SDK still cannot.
  let name;
  let ranged;
  before(async () => {
    name = h.tableName();
    await dt.service(tg).createTable(name);
    const owner = dt.table(tg, name);
    for (const pk of ["a", "b", "c"]) {
      for (const rk of ["1", "2"]) await owner.createEntity({ partitionKey: pk, rowKey: rk });
    }
    const sas = tableSas(name, {
      permissions: { query: true, add: true, update: true, delete: true },
      startPartitionKey: "a",
      startRowKey: "2",
      endPartitionKey: "b",
      endRowKey: "1",
    });
    assert.match(sas, /spk=a/);
    assert.match(sas, /erk=1/);
    ranged = dt.sasTable(tg, name, sas);
  });
  after(() => dt.service(tg).deleteTable(name));

  // Cosmos DB refuses every SAS that names a key range: 405
  // MethodNotAllowed (test_sas_add_outside_range; docs/cosmos.md).
  const rangeRefused = (p) => dt.rejects(p, 405, "MethodNotAllowed");

  it("queries see only the entities inside the range (Cosmos DB: 405)", async () => {
    if (h.cosmos) return rangeRefused(dt.listAll(ranged));
    const { rows } = await dt.listAll(ranged);
    assert.deepEqual(rows.map((e) => `${e.partitionKey}${e.rowKey}`), ["a2", "b1"]);
  });

  it("single-entity operations inside the range work (Cosmos DB: 405)", async () => {
    if (h.cosmos) {
      await rangeRefused(ranged.getEntity("a", "2"));
      return rangeRefused(ranged.upsertEntity({ partitionKey: "a", rowKey: "3", V: 1 }, "Replace"));
    }
    await ranged.getEntity("a", "2");
    await ranged.updateEntity({ partitionKey: "b", rowKey: "1", V: 1 }, "Merge");
    await ranged.upsertEntity({ partitionKey: "a", rowKey: "3", V: 1 }, "Replace");
    await ranged.deleteEntity("a", "3");
  });

  // Outside the range a point read finds nothing, as live answers (.NET SDK recording
  // ValidateSasCredentialsWithRowKeyAndPartitionKeyRanges); writes are refused
  // (docs/protocol.md 0.1).
  it("outside the range a read is 404 ResourceNotFound and a write 403 AuthorizationFailure (Cosmos DB: 405)", async () => {
    if (h.cosmos) return rangeRefused(ranged.createEntity({ partitionKey: "c", rowKey: "1new" }));
    for (const [pk, rk] of [["a", "1"], ["b", "2"], ["c", "1"], ["0", "9"]]) {
      await dt.rejects(ranged.getEntity(pk, rk), 404, "ResourceNotFound");
      await dt.rejects(ranged.createEntity({ partitionKey: pk, rowKey: `${rk}new` }), 403, "AuthorizationFailure");
      await dt.rejects(ranged.upsertEntity({ partitionKey: pk, rowKey: rk }, "Merge"), 403, "AuthorizationFailure");
      await dt.rejects(ranged.updateEntity({ partitionKey: pk, rowKey: rk }, "Replace"), 403, "AuthorizationFailure");
      await dt.rejects(ranged.deleteEntity(pk, rk), 403, "AuthorizationFailure");
    }
    // ...and inside a transaction, at the operation's index.
    const err = await dt.rejects(
      ranged.submitTransaction([
        ["update", { partitionKey: "b", rowKey: "1", V: 2 }, "Merge"],
        ["update", { partitionKey: "b", rowKey: "2", V: 2 }, "Merge"],
      ]),
      403,
      "AuthorizationFailure",
    );
    assert.match(err.message, /^1:/);
  });
});

describe("data-tables: account SAS", () => {
  const accountSas = (options) =>
    generateAccountSas(dt.credential(tg), { startsOn: minuteAgo(), expiresOn: hour(), ...options });

  it("grants tables and entities by resource type and permission", async () => {
    // No protocol is signed, so it works over plain HTTP (the Go SDK's
    // account SAS is https-only: docs/protocol.md 13).
    const sas = accountSas({ permissions: { query: true, list: true, write: true, add: true }, resourceTypes: "sco" });
    assert.doesNotMatch(sas, /spr=/);
    const svc = dt.sasService(tg, sas);
    const name = h.tableName();
    await svc.createTable(name);
    try {
      const names = [];
      for await (const tb of svc.listTables()) names.push(tb.name);
      assert.ok(names.includes(name));
      const c = dt.sasTable(tg, name, sas);
      await c.createEntity({ partitionKey: "p", rowKey: "r", V: 1 });
      assert.equal((await c.getEntity("p", "r")).V, 1);
      await dt.rejects(c.deleteEntity("p", "r"), 403, dt.code.permission);
      await dt.rejects(svc.deleteTable(name), 403, dt.code.permission);
    } finally {
      await dt.service(tg).deleteTable(name);
    }
  });

  it("refuses a resource type it does not name: 403 AuthorizationResourceTypeMismatch", async (t) => {
    const { name, client } = await dt.newTable(t, tg);
    await client.createEntity({ partitionKey: "p", rowKey: "r" });
    const objectsOnly = accountSas({ permissions: { query: true, list: true, write: true }, resourceTypes: "o" });
    await dt.rejects(dt.sasService(tg, objectsOnly).listTables().next(), 403, "AuthorizationResourceTypeMismatch");
    await dt.sasTable(tg, name, objectsOnly).getEntity("p", "r");
    const containersOnly = accountSas({ permissions: { query: true, list: true }, resourceTypes: "c" });
    await dt.rejects(dt.sasTable(tg, name, containersOnly).getEntity("p", "r"), 403, "AuthorizationResourceTypeMismatch");
  });

  it("refuses a SAS for other services only: 403 AuthorizationServiceMismatch", async () => {
    const blobOnly = accountSas({ permissions: { list: true }, resourceTypes: "sco", services: { blob: true } });
    await dt.rejects(dt.sasService(tg, blobOnly).listTables().next(), 403, "AuthorizationServiceMismatch");
  });

  it("works from a SAS connection string", async () => {
    const sas = accountSas({ permissions: { list: true }, resourceTypes: "c" });
    const cs = `TableEndpoint=${tg.endpoint};SharedAccessSignature=${sas}`;
    const svc = TableServiceClient.fromConnectionString(cs, dt.clientOptions);
    await svc.listTables().next();
  });

  it("service properties need srt=s (Cosmos DB: 405)", async () => {
    const s = accountSas({ permissions: { query: true }, resourceTypes: "s" });
    // Cosmos DB does not serve service properties (docs/cosmos.md, "What
    // Cosmos DB refuses").
    if (h.cosmos) return dt.rejects(dt.sasService(tg, s).getProperties(), 405, "MethodNotAllowed");
    const props = await dt.sasService(tg, s).getProperties();
    assert.ok(props.logging);
    const c = accountSas({ permissions: { query: true }, resourceTypes: "c" });
    await dt.rejects(dt.sasService(tg, c).getProperties(), 403, "AuthorizationResourceTypeMismatch");
  });
});
