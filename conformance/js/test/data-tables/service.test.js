"use strict";
// Service properties and statistics through @azure/data-tables
// (docs/protocol.md 3.5, 3.6). Setting properties changes the whole account, so
// against an external endpoint these tests skip themselves.

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { TableServiceClient } = require("@azure/data-tables");
const h = require("../../lib/harness");
const dt = require("../../lib/dt");

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

const own = { skip: h.ownServerOnly() };

describe("data-tables: service properties", () => {
  it("a new account has logging and metrics off and no CORS rules (Cosmos DB: 405)", own, async () => {
    // Cosmos DB serves no service properties or statistics (its FAQ);
    // tableemu's profile refuses them as Set: 405 MethodNotAllowed
    // (docs/cosmos.md, "What Cosmos DB refuses").
    if (h.cosmos) return dt.rejects(dt.service(tg).getProperties(), 405, "MethodNotAllowed");
    const p = await dt.service(tg).getProperties();
    assert.deepEqual(
      { read: p.logging.read, write: p.logging.write, delete: p.logging.delete, retention: p.logging.retentionPolicy.enabled },
      { read: false, write: false, delete: false, retention: false },
    );
    assert.equal(p.hourMetrics.enabled, false);
    assert.equal(p.minuteMetrics.enabled, false);
    assert.deepEqual(p.cors ?? [], []);
  });

  // Cosmos DB refuses every Set Service Properties: 405 MethodNotAllowed
  // (test_too_many_cors_rules, test_retention_too_long; docs/cosmos.md).

  it("sets and gets logging, metrics and CORS; a partial Set keeps the rest (Cosmos DB: 405)", own, async () => {
    const svc = dt.service(tg);
    if (h.cosmos) {
      await dt.rejects(svc.setProperties({ minuteMetrics: { version: "1.0", enabled: false, retentionPolicy: { enabled: false } } }), 405, "MethodNotAllowed");
      return;
    }
    const res = await svc.setProperties({
      logging: { version: "1.0", read: true, write: true, delete: true, retentionPolicy: { enabled: true, days: 5 } },
      hourMetrics: { version: "1.0", enabled: true, includeAPIs: true, retentionPolicy: { enabled: true, days: 7 } },
      minuteMetrics: { version: "1.0", enabled: false, retentionPolicy: { enabled: false } },
      cors: [
        {
          allowedOrigins: "https://www.example.com",
          allowedMethods: "GET,PUT,MERGE",
          allowedHeaders: "x-ms-meta-data*",
          exposedHeaders: "x-ms-meta-source*",
          maxAgeInSeconds: 500,
        },
      ],
    });
    assert.ok(res.requestId, "Set answers with a request id");
    let p = await svc.getProperties();
    assert.equal(p.logging.read, true);
    assert.equal(p.logging.delete, true);
    assert.equal(p.logging.retentionPolicy.days, 5);
    assert.equal(p.hourMetrics.enabled, true);
    assert.equal(p.hourMetrics.includeAPIs, true);
    assert.equal(p.hourMetrics.retentionPolicy.days, 7);
    assert.equal(p.minuteMetrics.enabled, false);
    assert.deepEqual(p.cors, [
      {
        allowedOrigins: "https://www.example.com",
        allowedMethods: "GET,PUT,MERGE",
        allowedHeaders: "x-ms-meta-data*",
        exposedHeaders: "x-ms-meta-source*",
        maxAgeInSeconds: 500,
      },
    ]);

    // Only MinuteMetrics: logging, hour metrics and CORS keep their values.
    await svc.setProperties({ minuteMetrics: { version: "1.0", enabled: true, includeAPIs: false, retentionPolicy: { enabled: true, days: 1 } } });
    p = await svc.getProperties();
    assert.equal(p.minuteMetrics.enabled, true);
    assert.equal(p.logging.read, true);
    assert.equal(p.cors.length, 1);

    // An empty CORS list clears the rules (the SDK sends <Cors/>).
    await svc.setProperties({ cors: [] });
    p = await svc.getProperties();
    assert.deepEqual(p.cors ?? [], []);
    assert.equal(p.logging.read, true);
  });

  it("refuses invalid properties: 400 InvalidXmlDocument (Cosmos DB: 405)", own, async () => {
    const svc = dt.service(tg);
    const [status, code] = h.cosmos ? [405, "MethodNotAllowed"] : [400, "InvalidXmlDocument"];
    await dt.rejects(
      svc.setProperties({ hourMetrics: { version: "1.0", enabled: false, retentionPolicy: { enabled: true, days: 366 } } }),
      status,
      code,
    );
    const rule = { allowedOrigins: "*", allowedMethods: "GET", allowedHeaders: "", exposedHeaders: "", maxAgeInSeconds: 1 };
    await dt.rejects(svc.setProperties({ cors: Array(6).fill(rule) }), status, code);
    await dt.rejects(svc.setProperties({ cors: [{ ...rule, allowedMethods: "FETCH" }] }), status, code);
  });

  it("statistics answer on the secondary endpoint (Cosmos DB: 405)", async () => {
    // The SDK makes the secondary URL by suffixing the host's first label
    // ("127-secondary.0.0.1" for an IP address), so an emulator's path-style
    // secondary is reached as localhost with the -secondary account.
    const u = new URL(tg.endpoint);
    if (u.hostname !== "127.0.0.1" && u.hostname !== "localhost") return;
    const secondary = `${u.protocol}//localhost:${u.port}${u.pathname}-secondary`;
    const svc = new TableServiceClient(secondary, dt.credential(tg), dt.clientOptions);
    if (h.cosmos) return dt.rejects(svc.getStatistics(), 405, "MethodNotAllowed");
    const stats = await svc.getStatistics();
    assert.equal(stats.geoReplication.status, "live");
    assert.ok(stats.geoReplication.lastSyncTime instanceof Date);
    assert.ok(Math.abs(stats.geoReplication.lastSyncTime.getTime() - Date.now()) < 5 * 60 * 1000);
  });

  it("statistics on the primary are 400 InvalidQueryParameterValue (Cosmos DB: 405)", async () => {
    // Sent by hand: the SDK always rewrites the URL to the secondary.
    const r = await h.rawRequest(tg, "GET", "/?restype=service&comp=stats", { headers: { Accept: "application/xml" } });
    assert.deepEqual([r.status, r.headers.get("x-ms-error-code")], h.cosmos ? [405, "MethodNotAllowed"] : [400, "InvalidQueryParameterValue"]);
  });
});
