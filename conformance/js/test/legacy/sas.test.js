"use strict";
// Shared access signatures signed by the legacy azure-storage SDK
// (generateSharedAccessSignature, generateAccountSharedAccessSignature;
// sv=2018-03-28), used through createTableServiceWithSas (docs/protocol.md
// 9.6–9.8). This SDK signs and sends key ranges (spk/srk/epk/erk) itself.

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const lg = require("../../lib/legacy");

const { azure, ent } = lg;
const { TableQuery } = azure;

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

const hour = () => new Date(Date.now() + 3600e3);
const minuteAgo = () => new Date(Date.now() - 60e3);

function tableSas(svc, name, policy) {
  return svc.generateSharedAccessSignature(name, { AccessPolicy: { Start: minuteAgo(), Expiry: hour(), ...policy } });
}

describe("legacy: service SAS", () => {
  let svc;
  let name;
  before(async () => {
    svc = lg.service(tg);
    name = h.tableName();
    await lg.call(svc, "createTable", name);
    await lg.call(svc, "insertEntity", name, ent("p", "r", { V: 1 }));
  });
  after(() => lg.call(svc, "deleteTable", name));

  it("a read-only SAS reads and is refused every write: 403 AuthorizationPermissionMismatch", async () => {
    const sas = tableSas(svc, name, { Permissions: azure.TableUtilities.SharedAccessPermissions.QUERY });
    assert.match(sas, /sv=2018-03-28/);
    const ro = lg.sasService(tg, sas);
    assert.equal((await lg.call(ro, "retrieveEntity", name, "p", "r")).result.V._, 1);
    assert.ok((await lg.queryAll(ro, name, null)).rows.length >= 1);
    const denied = "AuthorizationPermissionMismatch";
    await lg.rejects(lg.call(ro, "insertEntity", name, ent("p", "new")), 403, denied);
    await lg.rejects(lg.call(ro, "mergeEntity", name, ent("p", "r", { V: 2 })), 403, denied);
    await lg.rejects(lg.call(ro, "replaceEntity", name, ent("p", "r", { V: 2 })), 403, denied);
    await lg.rejects(lg.call(ro, "insertOrMergeEntity", name, ent("p", "r", { V: 2 })), 403, denied);
    await lg.rejects(lg.call(ro, "insertOrReplaceEntity", name, ent("p", "r", { V: 2 })), 403, denied);
    await lg.rejects(lg.call(ro, "deleteEntity", name, ent("p", "r")), 403, denied);
    assert.equal((await lg.call(svc, "retrieveEntity", name, "p", "r")).result.V._, 1);
  });

  it("each permission letter grants its operations; upserts need add and update", async () => {
    const add = lg.sasService(tg, tableSas(svc, name, { Permissions: "a" }));
    await lg.call(add, "insertEntity", name, ent("p", "added"));
    await lg.rejects(lg.call(add, "retrieveEntity", name, "p", "added"), 403, "AuthorizationPermissionMismatch");
    await lg.rejects(lg.call(add, "insertOrMergeEntity", name, ent("p", "added")), 403, "AuthorizationPermissionMismatch");
    const upd = lg.sasService(tg, tableSas(svc, name, { Permissions: "u" }));
    await lg.call(upd, "mergeEntity", name, ent("p", "added", { V: 5 }));
    await lg.rejects(lg.call(upd, "insertOrReplaceEntity", name, ent("p", "added")), 403, "AuthorizationPermissionMismatch");
    const au = lg.sasService(tg, tableSas(svc, name, { Permissions: "au" }));
    await lg.call(au, "insertOrReplaceEntity", name, ent("p", "upserted", { V: 1 }));
    await lg.call(au, "insertOrMergeEntity", name, ent("p", "upserted", { W: 2 }));
    const del = lg.sasService(tg, tableSas(svc, name, { Permissions: "d" }));
    await lg.call(del, "deleteEntity", name, ent("p", "upserted"));
    await lg.call(del, "deleteEntity", name, ent("p", "added"));
  });

  it("a table SAS reaches only its table, never tables or ACLs: 403 AuthorizationFailure", async (t) => {
    const { name: other } = await lg.newTable(t, tg);
    const sas = lg.sasService(tg, tableSas(svc, name, { Permissions: "raud" }));
    await lg.rejects(lg.call(sas, "retrieveEntity", other, "p", "r"), 403, "AuthorizationFailure");
    await lg.rejects(lg.call(sas, "createTable", h.tableName()), 403, "AuthorizationFailure");
    await lg.rejects(lg.call(sas, "listTablesSegmented", null), 403, "AuthorizationFailure");
    await lg.rejects(lg.call(sas, "getTableAcl", name), 403, "AuthorizationFailure");
  });

  it("outside its time window, or with a bad signature: 403 AuthenticationFailed", async () => {
    const expired = svc.generateSharedAccessSignature(name, { AccessPolicy: { Permissions: "r", Expiry: new Date(Date.now() - 60e3) } });
    await lg.rejects(lg.call(lg.sasService(tg, expired), "retrieveEntity", name, "p", "r"), 403, "AuthenticationFailed");
    const future = tableSas(svc, name, { Permissions: "r", Start: new Date(Date.now() + 600e3) });
    await lg.rejects(lg.call(lg.sasService(tg, future), "retrieveEntity", name, "p", "r"), 403, "AuthenticationFailed");
    const tampered = tableSas(svc, name, { Permissions: "r" }).replace("sp=r", "sp=raud");
    await lg.rejects(lg.call(lg.sasService(tg, tampered), "deleteEntity", name, ent("p", "r")), 403, "AuthenticationFailed");
  });

  it("checks the IP range and the protocol", async () => {
    const here = lg.sasService(tg, tableSas(svc, name, { Permissions: "r", IPAddressOrRange: "127.0.0.1" }));
    await lg.call(here, "retrieveEntity", name, "p", "r");
    const elsewhere = lg.sasService(tg, tableSas(svc, name, { Permissions: "r", IPAddressOrRange: "10.0.0.1-10.0.0.9" }));
    await lg.rejects(lg.call(elsewhere, "retrieveEntity", name, "p", "r"), 403, "AuthorizationSourceIPMismatch");
    const both = lg.sasService(tg, tableSas(svc, name, { Permissions: "r", Protocols: "https,http" }));
    await lg.call(both, "retrieveEntity", name, "p", "r");
    const httpsOnly = lg.sasService(tg, tableSas(svc, name, { Permissions: "r", Protocols: "https" }));
    await lg.rejects(lg.call(httpsOnly, "retrieveEntity", name, "p", "r"), 403, "AuthorizationProtocolMismatch");
  });
});

describe("legacy: key-range SAS", () => {
  let svc;
  let name;
  let ranged;
  before(async () => {
    svc = lg.service(tg);
    name = h.tableName();
    await lg.call(svc, "createTable", name);
    for (const pk of ["a", "b", "c"]) {
      for (const rk of ["1", "2"]) await lg.call(svc, "insertEntity", name, ent(pk, rk));
    }
    const sas = tableSas(svc, name, { Permissions: "raud", StartPk: "a", StartRk: "2", EndPk: "b", EndRk: "1" });
    assert.match(sas, /spk=a/);
    assert.match(sas, /erk=1/);
    ranged = lg.sasService(tg, sas);
  });
  after(() => lg.call(svc, "deleteTable", name));

  it("queries see only the entities inside the range", async () => {
    const { rows } = await lg.queryAll(ranged, name, null);
    assert.deepEqual(rows.map((e) => e.PartitionKey._ + e.RowKey._), ["a2", "b1"]);
    const filtered = await lg.queryAll(ranged, name, new TableQuery().where("PartitionKey ge 'b'"));
    assert.deepEqual(filtered.rows.map((e) => e.PartitionKey._ + e.RowKey._), ["b1"]);
  });

  it("single-entity operations inside the range work", async () => {
    await lg.call(ranged, "retrieveEntity", name, "a", "2");
    await lg.call(ranged, "mergeEntity", name, ent("b", "1", { V: 1 }));
    await lg.call(ranged, "insertOrReplaceEntity", name, ent("a", "3", { V: 1 }));
    await lg.call(ranged, "deleteEntity", name, ent("a", "3"));
  });

  // Outside the range a point read finds nothing, as live answers (.NET SDK recording
  // ValidateSasCredentialsWithRowKeyAndPartitionKeyRanges); writes are refused
  // (docs/protocol.md 0.1).
  it("outside the range a read is 404 ResourceNotFound and a write 403 AuthorizationFailure", async () => {
    for (const [pk, rk] of [["a", "1"], ["b", "2"], ["c", "1"]]) {
      await lg.rejects(lg.call(ranged, "retrieveEntity", name, pk, rk), 404, "ResourceNotFound");
      await lg.rejects(lg.call(ranged, "insertEntity", name, ent(pk, `${rk}new`)), 403, "AuthorizationFailure");
      await lg.rejects(lg.call(ranged, "insertOrMergeEntity", name, ent(pk, rk)), 403, "AuthorizationFailure");
      await lg.rejects(lg.call(ranged, "replaceEntity", name, ent(pk, rk)), 403, "AuthorizationFailure");
      await lg.rejects(lg.call(ranged, "deleteEntity", name, ent(pk, rk)), 403, "AuthorizationFailure");
    }
  });
});

describe("legacy: account SAS", () => {
  const accountSas = (policy) =>
    azure.generateAccountSharedAccessSignature(tg.account, tg.key, {
      AccessPolicy: { Services: "t", ResourceTypes: "sco", Start: minuteAgo(), Expiry: hour(), ...policy },
    });

  it("grants tables and entities by resource type and permission", async () => {
    const sas = lg.sasService(tg, accountSas({ Permissions: "rlca" }));
    const name = h.tableName();
    await lg.call(sas, "createTable", name);
    try {
      const { result } = await lg.call(sas, "listTablesSegmentedWithPrefix", name, null);
      assert.deepEqual(result.entries, [name]);
      await lg.call(sas, "insertEntity", name, ent("p", "r", { V: 1 }));
      assert.equal((await lg.call(sas, "retrieveEntity", name, "p", "r")).result.V._, 1);
      await lg.rejects(lg.call(sas, "deleteEntity", name, ent("p", "r")), 403, "AuthorizationPermissionMismatch");
      await lg.rejects(lg.call(sas, "deleteTable", name), 403, "AuthorizationPermissionMismatch");
    } finally {
      await lg.call(lg.service(tg), "deleteTable", name);
    }
  });

  it("refuses a resource type or service it does not name", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.call(svc, "insertEntity", name, ent("p", "r"));
    const objects = lg.sasService(tg, accountSas({ Permissions: "rl", ResourceTypes: "o" }));
    await lg.rejects(lg.call(objects, "listTablesSegmented", null), 403, "AuthorizationResourceTypeMismatch");
    await lg.call(objects, "retrieveEntity", name, "p", "r");
    const blobs = lg.sasService(tg, accountSas({ Permissions: "rl", Services: "bq" }));
    await lg.rejects(lg.call(blobs, "listTablesSegmented", null), 403, "AuthorizationServiceMismatch");
  });
});
