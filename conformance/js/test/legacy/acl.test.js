"use strict";
// Table ACLs through the legacy azure-storage SDK: setTableAcl takes a map
// of id → policy and sends an XML declaration; setTableAcl(null) sends a PUT
// with no body (docs/protocol.md 3.4); SAS tokens name policies with `si`.

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const lg = require("../../lib/legacy");

const { ent } = lg;

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

describe("legacy: table ACLs", () => {
  it("round-trips full, partial and empty policies; null clears them", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const start = new Date(Date.UTC(2042, 0, 1, 1, 1, 1));
    const expiry = new Date(Date.UTC(2043, 1, 3, 4, 5, 6, 700));
    await lg.call(svc, "setTableAcl", name, {
      full: { Start: start, Expiry: expiry, Permissions: "raud" },
      partial: { Permissions: "r" },
      empty: {},
    });
    const { result } = await lg.call(svc, "getTableAcl", name);
    assert.deepEqual(Object.keys(result.signedIdentifiers), ["full", "partial", "empty"]);
    assert.equal(result.signedIdentifiers.full.Start.getTime(), start.getTime());
    assert.equal(result.signedIdentifiers.full.Expiry.getTime(), expiry.getTime());
    assert.equal(result.signedIdentifiers.full.Permissions, "raud");
    assert.deepEqual(result.signedIdentifiers.partial, { Permissions: "r" });
    assert.deepEqual(result.signedIdentifiers.empty, {});

    await lg.call(svc, "setTableAcl", name, null);
    assert.deepEqual((await lg.call(svc, "getTableAcl", name)).result.signedIdentifiers, {});
    await lg.call(svc, "setTableAcl", name, { one: { Permissions: "a" } });
    await lg.call(svc, "setTableAcl", name, {});
    assert.deepEqual((await lg.call(svc, "getTableAcl", name)).result.signedIdentifiers, {});
  });

  it("refuses more than five identifiers and bad permissions: 400 InvalidXmlDocument", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const ids = (n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`id${i}`, { Permissions: "r" }]));
    await lg.call(svc, "setTableAcl", name, ids(5));
    await lg.rejects(lg.call(svc, "setTableAcl", name, ids(6)), 400, "InvalidXmlDocument");
    await lg.rejects(lg.call(svc, "setTableAcl", name, { x: { Permissions: "rwx" } }), 400, "InvalidXmlDocument");
    assert.equal(Object.keys((await lg.call(svc, "getTableAcl", name)).result.signedIdentifiers).length, 5);
  });

  it("ACLs of a missing table: 404 TableNotFound", async () => {
    const svc = lg.service(tg);
    await lg.rejects(lg.call(svc, "getTableAcl", h.tableName()), 404, "TableNotFound");
    await lg.rejects(lg.call(svc, "setTableAcl", h.tableName(), {}), 404, "TableNotFound");
  });

  it("a SAS naming a policy takes its fields from it, and changes with it", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    await lg.call(svc, "insertEntity", name, ent("p", "r"));
    const expiry = new Date(Date.now() + 3600e3);
    await lg.call(svc, "setTableAcl", name, { reader: { Expiry: expiry, Permissions: "r" }, open: {} });
    const sasFor = (policy) => lg.sasService(tg, svc.generateSharedAccessSignature(name, policy));

    const reader = sasFor({ Id: "reader" });
    await lg.call(reader, "retrieveEntity", name, "p", "r");
    await lg.rejects(lg.call(reader, "insertEntity", name, ent("p", "new")), 403, "AuthorizationPermissionMismatch");
    // A field in both places, or in neither, is refused.
    await lg.rejects(lg.call(sasFor({ Id: "reader", AccessPolicy: { Permissions: "r" } }), "retrieveEntity", name, "p", "r"), 403, "AuthenticationFailed");
    await lg.rejects(lg.call(sasFor({ Id: "open", AccessPolicy: { Permissions: "r" } }), "retrieveEntity", name, "p", "r"), 403, "AuthenticationFailed");
    await lg.call(sasFor({ Id: "open", AccessPolicy: { Permissions: "ra", Expiry: expiry } }), "insertEntity", name, ent("p", "filled"));

    await lg.call(svc, "setTableAcl", name, { reader: { Expiry: expiry, Permissions: "ra" } });
    await lg.call(reader, "insertEntity", name, ent("p", "new"));
    await lg.call(svc, "setTableAcl", name, null);
    await lg.rejects(lg.call(reader, "retrieveEntity", name, "p", "r"), 403, "AuthenticationFailed");
  });

  it("only the account key may read or set an ACL: 403 AuthorizationFailure", async (t) => {
    const { name, svc } = await lg.newTable(t, tg);
    const sas = lg.sasService(tg, svc.generateSharedAccessSignature(name, { AccessPolicy: { Permissions: "raud", Expiry: new Date(Date.now() + 3600e3) } }));
    await lg.rejects(lg.call(sas, "getTableAcl", name), 403, "AuthorizationFailure");
    await lg.rejects(lg.call(sas, "setTableAcl", name, {}), 403, "AuthorizationFailure");
  });
});
