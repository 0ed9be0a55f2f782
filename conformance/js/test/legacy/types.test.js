"use strict";
// Every EDM type through the legacy azure-storage SDK's entityGenerator
// (docs/protocol.md 4.2). This SDK sends every Double as a JSON *string* with
// an Edm.Double annotation ("1.5", "NaN", "1.7976931348623157e+308"),
// Int64 as an annotated string, and reads Int64 back as a string.

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const h = require("../../lib/harness");
const lg = require("../../lib/legacy");

const { entGen, azure } = lg;
const { TableQuery, TableUtilities } = azure;
const { QueryComparisons, TableOperators } = TableUtilities;

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const guidLower = "c9da6455-213d-42c9-9a79-3e9149a57833";
const str = 'héllo "quoted" \\ \n\t\u0001 😀 \u{10FFFF}';

const entity = {
  PartitionKey: entGen.String("types"),
  RowKey: entGen.String("edges"),
  Str: entGen.String(str),
  EmptyStr: entGen.String(""),
  I32Min: entGen.Int32(-2147483648),
  I32Max: entGen.Int32(2147483647),
  I64Min: entGen.Int64("-9223372036854775808"),
  I64Max: entGen.Int64("9223372036854775807"),
  I64Unsafe: entGen.Int64("9007199254740993"),
  Dbl: entGen.Double(1.5),
  DblNeg: entGen.Double(-0.25),
  DblTiny: entGen.Double(5e-324),
  DblHuge: entGen.Double(1.7976931348623157e308),
  DblWhole: entGen.Double(2),
  DblExp: entGen.Double(1e21), // sent as "1e+21"
  DblSmallExp: entGen.Double(1.5e-10), // sent as "1.5e-10"
  DblPrecise: entGen.Double(0.1 + 0.2), // sent as "0.30000000000000004"
  DblNaN: entGen.Double(NaN),
  DblInf: entGen.Double(Infinity),
  DblNegInf: entGen.Double(-Infinity),
  BoolT: entGen.Boolean(true),
  BoolF: entGen.Boolean(false),
  Guid: entGen.Guid(guidLower),
  GuidUpper: entGen.Guid(guidLower.toUpperCase()),
  Bin: entGen.Binary(allBytes),
  BinEmpty: entGen.Binary(Buffer.alloc(0)),
  DateMs: entGen.DateTime(new Date(Date.UTC(2021, 8, 8, 18, 58, 49, 770))),
  DateMin: entGen.DateTime(new Date(Date.UTC(1601, 0, 1))),
  DateMax: entGen.DateTime("9999-12-31T23:59:59.9999999Z"),
  Date100ns: entGen.DateTime("2021-09-08T18:58:49.7704959Z"),
  // Plain JS values: the SDK infers String, Int32, Double, Boolean, DateTime.
  PlainInt: 42,
  PlainDbl: 0.5,
  PlainBool: true,
  PlainDate: new Date(Date.UTC(2000, 0, 1)),
};

describe("legacy: EDM types", () => {
  let svc;
  let name;
  before(async () => {
    svc = lg.service(tg);
    name = h.tableName();
    await lg.call(svc, "createTable", name);
    await lg.call(svc, "insertEntity", name, entity);
  });
  after(() => lg.call(svc, "deleteTable", name));

  it("round-trips every type as the SDK represents it", async () => {
    const { result: e } = await lg.call(svc, "retrieveEntity", name, "types", "edges");
    assert.deepEqual(e.Str, { _: str });
    assert.deepEqual(e.EmptyStr, { _: "" });
    assert.deepEqual(e.I32Min, { _: -2147483648 });
    assert.deepEqual(e.I32Max, { _: 2147483647 });
    assert.deepEqual(e.I64Min, { $: "Edm.Int64", _: "-9223372036854775808" });
    assert.deepEqual(e.I64Max, { $: "Edm.Int64", _: "9223372036854775807" });
    assert.deepEqual(e.I64Unsafe, { $: "Edm.Int64", _: "9007199254740993" });
    // Doubles sent as strings come back as JSON numbers (no annotation)...
    assert.deepEqual(e.Dbl, { _: 1.5 });
    assert.deepEqual(e.DblNeg, { _: -0.25 });
    assert.deepEqual(e.DblTiny, { _: 5e-324 });
    assert.deepEqual(e.DblHuge, { _: 1.7976931348623157e308 });
    // A whole Double is written "2.0" (docs/protocol.md 0.1): the SDK's JSON
    // parser (json-edm-parser) takes a literal with a point for Edm.Double,
    // so the type survives a read-modify-write.
    assert.deepEqual(e.DblWhole, { $: "Edm.Double", _: 2 });
    assert.equal(e.DblExp._, 1e21);
    assert.equal(e.DblSmallExp._, 1.5e-10);
    assert.equal(e.DblPrecise._, 0.1 + 0.2);
    // ...except the specials, which stay annotated strings; the SDK parses them.
    assert.equal(e.DblNaN.$, "Edm.Double");
    assert.ok(Number.isNaN(e.DblNaN._));
    assert.deepEqual(e.DblInf, { $: "Edm.Double", _: Infinity });
    assert.deepEqual(e.DblNegInf, { $: "Edm.Double", _: -Infinity });
    assert.deepEqual(e.BoolT, { _: true });
    assert.deepEqual(e.BoolF, { _: false });
    assert.deepEqual(e.Guid, { $: "Edm.Guid", _: guidLower });
    assert.deepEqual(e.GuidUpper, { $: "Edm.Guid", _: guidLower });
    assert.equal(e.Bin.$, "Edm.Binary");
    assert.ok(allBytes.equals(e.Bin._));
    assert.equal(e.BinEmpty._.length, 0);
    assert.equal(e.DateMs._.getTime(), Date.UTC(2021, 8, 8, 18, 58, 49, 770));
    assert.equal(e.DateMin._.getTime(), Date.UTC(1601, 0, 1));
    assert.equal(e.PlainInt._, 42);
    assert.equal(e.PlainDbl._, 0.5);
    assert.equal(e.PlainBool._, true);
    assert.equal(e.PlainDate._.getTime(), Date.UTC(2000, 0, 1));
  });

  it("a whole Double read back and written back stays a Double", async () => {
    const { result: e } = await lg.call(svc, "retrieveEntity", name, "types", "edges");
    e.RowKey = entGen.String("copy");
    delete e[".metadata"];
    await lg.call(svc, "insertEntity", name, e);
    const q = new TableQuery().where("RowKey eq 'copy' and DblWhole eq 2.0 and I64Unsafe eq 9007199254740993L");
    const { result } = await lg.call(svc, "queryEntities", name, q, null);
    assert.equal(result.entries.length, 1, "DblWhole compares as a Double and I64Unsafe kept every digit");
    await lg.call(svc, "deleteEntity", name, { PartitionKey: "types", RowKey: "copy" });
  });

  it("keeps DateTime to 100 ns (read as strings through a property resolver)", async () => {
    const asString = (pk, rk, prop, value, type) => (type === "Edm.DateTime" ? "Edm.String" : type);
    const { result: e } = await lg.call(svc, "retrieveEntity", name, "types", "edges", { propertyResolver: asString });
    assert.equal(e.DateMax._, "9999-12-31T23:59:59.9999999Z");
    assert.equal(e.Date100ns._, "2021-09-08T18:58:49.7704959Z");
    assert.equal(e.DateMs._, "2021-09-08T18:58:49.77Z");
    assert.equal(e.DateMin._, "1601-01-01T00:00:00Z");
    assert.match(e.Timestamp._, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
  });

  it("refuses Doubles that overflow and values outside their type", async () => {
    const bad = (prop) => lg.call(svc, "insertEntity", name, { PartitionKey: "types", RowKey: "bad", V: prop });
    await lg.rejects(bad({ $: "Edm.Double", _: "13e7705" }), 400, "InvalidInput");
    await lg.rejects(bad(entGen.Int64("9223372036854775808")), 400, "InvalidInput");
    await lg.rejects(bad(entGen.Int32(Infinity)), 400, "InvalidInput");
    await lg.rejects(bad(entGen.Guid("not-a-guid")), 400, "InvalidInput");
    await lg.rejects(bad(entGen.DateTime(new Date(Date.UTC(1600, 11, 31)))), 400, "OutOfRangeInput");
  });

  it("filters with the SDK's typed filter builders", async () => {
    const match = async (filter) => {
      const q = new TableQuery().where(TableQuery.combineFilters("RowKey eq 'edges'", TableOperators.AND, filter));
      const { result } = await lg.call(svc, "queryEntities", name, q, null);
      return result.entries.length === 1;
    };
    const EQ = QueryComparisons.EQUAL;
    const cases = [
      [TableQuery.int64Filter("I64Max", EQ, "9223372036854775807"), true],
      [TableQuery.int64Filter("I64Unsafe", EQ, "9007199254740992"), false],
      [TableQuery.int64Filter("I64Min", QueryComparisons.LESS_THAN, "-9223372036854775807"), true],
      [TableQuery.int32Filter("I32Min", EQ, -2147483648), true],
      [TableQuery.doubleFilter("Dbl", EQ, 1.5), true],
      [TableQuery.doubleFilter("DblWhole", EQ, 2), true],
      [TableQuery.doubleFilter("DblHuge", QueryComparisons.GREATER_THAN, 1e308), true],
      [TableQuery.booleanFilter("BoolF", EQ, false), true],
      [TableQuery.guidFilter("GuidUpper", EQ, guidLower), true],
      [TableQuery.binaryFilter("Bin", QueryComparisons.GREATER_THAN_OR_EQUAL, Buffer.from([0])), true],
      [TableQuery.dateFilter("DateMs", EQ, new Date(Date.UTC(2021, 8, 8, 18, 58, 49, 770))), true],
      [TableQuery.dateFilter("DateMin", EQ, new Date(Date.UTC(1601, 0, 1))), true],
      [TableQuery.stringFilter("Str", EQ, str), true],
      [TableQuery.stringFilter("EmptyStr", EQ, ""), true],
      [TableQuery.int32Filter("Missing", EQ, 1), false],
    ];
    for (const [f, want] of cases) assert.equal(await match(f), want, f);
    // where() with ? placeholders escapes quotes and types values.
    const q = new TableQuery().where("Str eq ? and I32Max eq ?", str, 2147483647);
    assert.equal((await lg.call(svc, "queryEntities", name, q, null)).result.entries.length, 1);
  });
});
