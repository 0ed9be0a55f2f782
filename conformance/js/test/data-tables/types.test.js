"use strict";
// Every EDM type through @azure/data-tables (docs/protocol.md 4.2), at its
// edges, read back both converted (the SDK's JS types) and with
// disableTypeConversion (the wire values and annotations as the SDK saw
// them), and used in filters (docs/protocol.md 6.2).

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { odata } = require("@azure/data-tables");
const h = require("../../lib/harness");
const dt = require("../../lib/dt");

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);
const guidLower = "c9da6455-213d-42c9-9a79-3e9149a57833";

// The SDK's own representations: bigint → Int64, Date → DateTime,
// Uint8Array → Binary, {value, type} for everything else it cannot infer.
const entity = {
  partitionKey: "types",
  rowKey: "edges",
  Str: 'héllo "quoted" \\ \n\t\u0001 😀 \u{10FFFF}',
  EmptyStr: "",
  I32Min: -2147483648,
  I32Max: 2147483647,
  I32Typed: { value: "7", type: "Int32" },
  I64Min: -9223372036854775808n,
  I64Max: 9223372036854775807n,
  I64Zero: 0n,
  I64Unsafe: 9007199254740993n, // 2^53+1: lost if it ever passed through a JS number
  I64Obj: { value: "-1", type: "Int64" },
  Dbl: 1.5,
  DblNeg: -0.25,
  DblTiny: 5e-324,
  DblHuge: 1.7976931348623157e308,
  DblWhole: { value: 2, type: "Double" },
  DblNaN: { value: "NaN", type: "Double" },
  DblInf: { value: "Infinity", type: "Double" },
  DblNegInf: { value: "-Infinity", type: "Double" },
  BoolT: true,
  BoolF: false,
  Guid: { value: guidLower, type: "Guid" },
  GuidUpper: { value: guidLower.toUpperCase(), type: "Guid" },
  Bin: allBytes,
  BinEmpty: new Uint8Array(0),
  DateMs: new Date(Date.UTC(2021, 8, 8, 18, 58, 49, 770)),
  DateMin: { value: "1601-01-01T00:00:00Z", type: "DateTime" },
  DateMax: { value: "9999-12-31T23:59:59.9999999Z", type: "DateTime" },
  Date100ns: { value: "2021-09-08T18:58:49.7704959Z", type: "DateTime" },
  DateNoFrac: { value: "1970-10-04T00:00:00.000000Z", type: "DateTime" },
  DateOffset: { value: "2021-09-08T20:58:49+02:00", type: "DateTime" },
};

describe("data-tables: EDM types", () => {
  let client;
  before(async () => {
    const name = h.tableName();
    await dt.service(tg).createTable(name);
    client = dt.table(tg, name);
    await client.createEntity(entity);
  });
  after(() => client && client.deleteTable());

  it("round-trips every type, converted to the SDK's JS types", async () => {
    const e = await client.getEntity("types", "edges");
    assert.equal(e.Str, entity.Str);
    assert.equal(e.EmptyStr, "");
    assert.equal(e.I32Min, -2147483648);
    assert.equal(e.I32Max, 2147483647);
    assert.equal(e.I32Typed, 7);
    assert.equal(e.I64Min, -9223372036854775808n);
    assert.equal(e.I64Max, 9223372036854775807n);
    assert.equal(e.I64Zero, 0n);
    assert.equal(e.I64Unsafe, 9007199254740993n);
    assert.equal(e.I64Obj, -1n);
    assert.equal(e.Dbl, 1.5);
    assert.equal(e.DblNeg, -0.25);
    assert.equal(e.DblTiny, 5e-324);
    assert.equal(e.DblHuge, 1.7976931348623157e308);
    assert.equal(e.DblWhole, 2);
    // The SDK leaves the special Doubles as the strings the service sends.
    assert.equal(e.DblNaN, "NaN");
    assert.equal(e.DblInf, "Infinity");
    assert.equal(e.DblNegInf, "-Infinity");
    assert.equal(e.BoolT, true);
    assert.equal(e.BoolF, false);
    assert.deepEqual(e.Guid, { value: guidLower, type: "Guid" });
    assert.deepEqual(e.GuidUpper, { value: guidLower, type: "Guid" }, "GUIDs come back lower-case");
    assert.ok(e.Bin instanceof Uint8Array);
    assert.deepEqual([...e.Bin], [...allBytes]);
    assert.ok(e.BinEmpty instanceof Uint8Array);
    assert.equal(e.BinEmpty.length, 0);
    assert.ok(e.DateMs instanceof Date);
    assert.equal(e.DateMs.getTime(), entity.DateMs.getTime());
    assert.equal(e.DateMin.toISOString(), "1601-01-01T00:00:00.000Z");
    assert.equal(e.DateOffset.toISOString(), "2021-09-08T18:58:49.000Z");
  });

  it("returns the wire values and annotations the service writes", async () => {
    const e = await client.getEntity("types", "edges", { disableTypeConversion: true });
    // Annotated on the wire: Int64, Guid, Binary, DateTime, special Doubles.
    assert.deepEqual(e.I64Min, { value: "-9223372036854775808", type: "Int64" });
    assert.deepEqual(e.I64Max, { value: "9223372036854775807", type: "Int64" });
    assert.deepEqual(e.I64Unsafe, { value: "9007199254740993", type: "Int64" });
    assert.deepEqual(e.DblNaN, { value: "NaN", type: "Double" });
    assert.deepEqual(e.DblInf, { value: "Infinity", type: "Double" });
    assert.deepEqual(e.DblNegInf, { value: "-Infinity", type: "Double" });
    assert.deepEqual(e.Bin, { value: Buffer.from(allBytes).toString("base64"), type: "Binary" });
    assert.deepEqual(e.BinEmpty, { value: "", type: "Binary" });
    // DateTimes keep 100 ns precision and drop trailing zeros; Cosmos DB
    // always writes seven digits (test_datetime_milliseconds; docs/cosmos.md).
    const frac = (f) => (h.cosmos ? "." + (f + "0000000").slice(0, 7) : f && "." + f);
    assert.deepEqual(e.DateMax, { value: "9999-12-31T23:59:59.9999999Z", type: "DateTime" });
    assert.deepEqual(e.Date100ns, { value: "2021-09-08T18:58:49.7704959Z", type: "DateTime" });
    assert.deepEqual(e.DateNoFrac, { value: `1970-10-04T00:00:00${frac("")}Z`, type: "DateTime" });
    assert.deepEqual(e.DateMs, { value: `2021-09-08T18:58:49${frac("77")}Z`, type: "DateTime" });
    assert.deepEqual(e.DateOffset, { value: `2021-09-08T18:58:49${frac("")}Z`, type: "DateTime" });
    // Unannotated: the SDK infers Int32/Double/String/Boolean from JSON.
    assert.deepEqual(e.I32Max, { value: "2147483647", type: "Int32" });
    assert.deepEqual(e.Dbl, { value: "1.5", type: "Double" });
    assert.deepEqual(e.Str, { value: entity.Str, type: "String" });
    assert.deepEqual(e.BoolT, { value: "true", type: "Boolean" });
    assert.equal(typeof e.timestamp, "string");
    assert.match(e.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/, "Timestamp has seven fractional digits");
  });

  it("an entity read with disableTypeConversion writes back unchanged", async () => {
    // The SDK then annotates every value and sends Int32, Double and
    // Boolean values as strings ({value: "2147483647", type: "Int32"}).
    const raw = await client.getEntity("types", "edges", { disableTypeConversion: true });
    raw.rowKey = "copy";
    delete raw.etag;
    await client.createEntity(raw);
    const copy = await client.getEntity("types", "copy", { disableTypeConversion: true });
    for (const k of Object.keys(raw)) {
      if (["rowKey", "timestamp", "odata.metadata"].includes(k)) continue;
      assert.deepEqual(copy[k], raw[k], k);
    }
    // SDK limitation, not the service's: JSON.parse drops the ".0" of a
    // whole Double, so the SDK reports DblWhole as Int32 and the copy
    // stores an Int32 (the legacy SDK keeps it a Double: ../legacy/types).
    const wire = async (rk) => (await h.rawRequest(tg, "GET", `/${client.tableName}(PartitionKey='types',RowKey='${rk}')`)).text;
    assert.match(await wire("edges"), /"DblWhole":2\.0[,}]/);
    assert.match(await wire("copy"), /"DblWhole":2[,}]/);
    await client.deleteEntity("types", "copy");
  });

  it("an untyped integer beyond Int32 is stored as a Double", async () => {
    await client.createEntity({ partitionKey: "types", rowKey: "big", Big: 2147483648, Neg: -2147483649 });
    const e = await client.getEntity("types", "big");
    assert.equal(e.Big, 2147483648);
    assert.equal(e.Neg, -2147483649);
    const n = await client.listEntities({ queryOptions: { filter: "PartitionKey eq 'types' and Big eq 2147483648.0" } }).next();
    assert.equal(n.value.rowKey, "big", "it compares as a Double");
  });

  it("refuses values outside their type's range", async () => {
    await dt.rejects(client.createEntity({ partitionKey: "types", rowKey: "x", V: { value: "9223372036854775808", type: "Int64" } }), 400, "InvalidInput");
    await dt.rejects(client.createEntity({ partitionKey: "types", rowKey: "x", V: { value: 2147483648, type: "Int32" } }), 400, "InvalidInput");
    await dt.rejects(client.createEntity({ partitionKey: "types", rowKey: "x", V: { value: "not-a-guid", type: "Guid" } }), 400, "InvalidInput");
    await dt.rejects(client.createEntity({ partitionKey: "types", rowKey: "x", V: { value: "1600-12-31T23:59:59Z", type: "DateTime" } }), 400, "OutOfRangeInput");
    await dt.rejects(client.createEntity({ partitionKey: "types", rowKey: "x", V: { value: "13e7705", type: "Double" } }), 400, "InvalidInput");
  });

  it("filters on each type's literal form", async () => {
    const match = async (filter) => {
      const rows = [];
      for await (const e of client.listEntities({ queryOptions: { filter: `PartitionKey eq 'types' and RowKey eq 'edges' and (${filter})` } })) rows.push(e.rowKey);
      return rows.length === 1;
    };
    const cases = {
      "I64Max eq 9223372036854775807L": true,
      "I64Min lt -9223372036854775807L": true,
      "I64Unsafe eq 9007199254740993L": true,
      "I64Unsafe eq 9007199254740992L": false,
      "I32Min eq -2147483648": true,
      "I32Max gt 2147483646": true,
      "Dbl eq 1.5": true,
      "DblHuge gt 1.0E308": true,
      "DblTiny gt 0.0": true,
      "BoolT eq true and BoolF eq false": true,
      [`Guid eq guid'${guidLower}'`]: true,
      [`GuidUpper eq guid'${guidLower}'`]: true,
      "Bin ge X'00'": true,
      "BinEmpty eq X''": true,
      "DateMax gt datetime'9999-12-31T23:59:59.9999998Z'": true,
      "Date100ns eq datetime'2021-09-08T18:58:49.7704959Z'": true,
      "DateMin eq datetime'1601-01-01T00:00:00Z'": true,
      [`Str eq '${entity.Str.replace(/'/g, "''")}'`]: true,
      "EmptyStr eq ''": true,
      // Mismatched types never match eq (docs/protocol.md 6.3).
      "I32Max eq 2147483647L": false,
      "Missing eq 1": false,
      "not (Missing eq 1)": true,
    };
    for (const [f, want] of Object.entries(cases)) {
      assert.equal(await match(f), want, f);
    }
    // The odata helper formats a Date and quotes strings.
    assert.equal(await match(odata`DateMs eq ${entity.DateMs}`), true);
    assert.equal(await match(odata`Str eq ${entity.Str}`), true);
  });
});
