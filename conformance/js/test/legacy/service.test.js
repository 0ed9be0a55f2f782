"use strict";
// Service properties and statistics through the legacy azure-storage SDK
// (docs/protocol.md 3.5, 3.6). It parses the XML with xml2js after stripping
// the BOM, and reaches the secondary through an explicit secondary host.

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const lg = require("../../lib/legacy");

const { azure } = lg;

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

const own = { skip: h.ownServerOnly() };

describe("legacy: service properties", () => {
  it("a new account has logging and metrics off and no CORS rules", own, async () => {
    const { result: p } = await lg.call(lg.service(tg), "getServiceProperties");
    assert.deepEqual(p.Logging, { Version: "1.0", Delete: false, Read: false, Write: false, RetentionPolicy: { Enabled: false } });
    assert.equal(p.HourMetrics.Enabled, false);
    assert.equal(p.MinuteMetrics.Enabled, false);
    assert.deepEqual(p.Cors, {});
  });

  it("get, change, set and get again (the usual read-modify-write)", own, async () => {
    const svc = lg.service(tg);
    const { result: p } = await lg.call(svc, "getServiceProperties");
    p.Logging = { Version: "1.0", Delete: true, Read: true, Write: false, RetentionPolicy: { Enabled: true, Days: 3 } };
    p.HourMetrics = { Version: "1.0", Enabled: true, IncludeAPIs: false, RetentionPolicy: { Enabled: true, Days: 10 } };
    p.Cors = {
      CorsRule: [
        {
          AllowedOrigins: ["https://a.example", "https://b.example"],
          AllowedMethods: ["GET", "PUT"],
          AllowedHeaders: ["x-ms-meta-*"],
          ExposedHeaders: ["x-ms-request-id"],
          MaxAgeInSeconds: 60,
        },
      ],
    };
    const set = await lg.call(svc, "setServiceProperties", p);
    assert.equal(set.response.statusCode, 202);
    const { result: q } = await lg.call(svc, "getServiceProperties");
    assert.deepEqual(q.Logging, p.Logging);
    assert.deepEqual(q.HourMetrics, p.HourMetrics);
    assert.equal(q.MinuteMetrics.Enabled, false);
    assert.deepEqual(q.Cors, p.Cors);

    // Only Cors, empty: the rules go, the rest stays.
    await lg.call(svc, "setServiceProperties", { Cors: {} });
    const { result: r } = await lg.call(svc, "getServiceProperties");
    assert.deepEqual(r.Cors, {});
    assert.deepEqual(r.Logging, p.Logging);
  });

  it("refuses invalid properties: 400 InvalidXmlDocument", own, async () => {
    const svc = lg.service(tg);
    await lg.rejects(
      lg.call(svc, "setServiceProperties", { MinuteMetrics: { Enabled: true, IncludeAPIs: true, RetentionPolicy: { Enabled: true, Days: 0 } } }),
      400,
      "InvalidXmlDocument",
    );
    const rule = { AllowedOrigins: ["*"], AllowedMethods: ["GET"], MaxAgeInSeconds: 1 };
    await lg.rejects(lg.call(svc, "setServiceProperties", { Cors: { CorsRule: Array(6).fill(rule) } }), 400, "InvalidXmlDocument");
  });

  it("statistics answer on the secondary endpoint", async () => {
    const svc = azure.createTableService(tg.account, tg.key, { primaryHost: tg.endpoint, secondaryHost: `${tg.endpoint}-secondary` });
    const { result } = await lg.call(svc, "getServiceStats", { locationMode: azure.StorageUtilities.LocationMode.SECONDARY_ONLY });
    assert.equal(result.GeoReplication.Status, "live");
    assert.ok(Math.abs(new Date(result.GeoReplication.LastSyncTime).getTime() - Date.now()) < 5 * 60e3);
    // The primary refuses.
    await lg.rejects(lg.call(lg.service(tg), "getServiceStats"), 400, "InvalidQueryParameterValue");
  });
});
