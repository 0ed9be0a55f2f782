"""Every EDM type through EntityProperty/EdmType, written and read back exactly,
by a point read and by a query (docs/protocol.md 4.2, 10)."""

import datetime
import math
import uuid

from azure.core.exceptions import HttpResponseError
from azure.data.tables import EdmType, EntityProperty, UpdateMode

from conftest import COSMOS
from helpers import expect_error

UTC = datetime.timezone.utc
IST = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
PST = datetime.timezone(datetime.timedelta(hours=-8))
GUID = uuid.UUID("c9da6455-213d-42c9-9a79-3e9149a57833")


def entity(rk, **props):
    return {"PartitionKey": "types", "RowKey": rk, **props}


def read_both(table, rk):
    """The entity by a point read and by a query; both must agree."""
    got = table.get_entity("types", rk)
    queried = list(table.query_entities("PartitionKey eq 'types' and RowKey eq @rk", parameters={"rk": rk}))
    assert len(queried) == 1
    assert dict(queried[0]) == dict(got) or any(isinstance(v, float) and math.isnan(v) for v in got.values())
    return got


def test_int64_beyond_2_53(table):
    values = [2**53 + 1, 2**63 - 1, -(2**63), -(2**53) - 1, 0, 255]
    table.create_entity(entity("i64", **{f"L{i}": EntityProperty(v, EdmType.INT64) for i, v in enumerate(values)}))
    got = read_both(table, "i64")
    for i, v in enumerate(values):
        assert got[f"L{i}"] == EntityProperty(v, EdmType.INT64), (i, got[f"L{i}"])
    # Filters compare them exactly, past 2^53 where doubles would round.
    hits = list(table.query_entities("L0 eq @v", parameters={"v": 2**53 + 1}))
    assert [e["RowKey"] for e in hits] == ["i64"]
    assert list(table.query_entities("L0 eq @v", parameters={"v": 2**53})) == []
    assert list(table.query_entities("L1 eq 9223372036854775807L"))


def test_int32(table):
    table.create_entity(entity("i32", A=2**31 - 1, B=-(2**31), C=EntityProperty(7, EdmType.INT32), D=0))
    got = read_both(table, "i32")
    assert (got["A"], got["B"], got["C"], got["D"]) == (2**31 - 1, -(2**31), 7, 0)
    assert all(type(got[k]) is int for k in "ABCD")


def test_datetime_microseconds_and_time_zones(table):
    values = {
        "Utc": datetime.datetime(2020, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
        "Ist": datetime.datetime(2021, 6, 30, 23, 59, 59, 999999, tzinfo=IST),
        "Pst": datetime.datetime(1999, 12, 31, 20, 0, 0, 1, tzinfo=PST),
        "Whole": datetime.datetime(2008, 7, 10, tzinfo=UTC),
        "Min": datetime.datetime(1601, 1, 1, tzinfo=UTC),
        "Max": datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    }
    table.create_entity(entity("dt", **values))
    got = read_both(table, "dt")
    for k, v in values.items():
        assert got[k] == v, (k, got[k], v)  # the same instant
        assert got[k].tzinfo is not None and got[k].utcoffset() == datetime.timedelta(0)
    # Stored and returned in UTC with Z (docs/protocol.md 4.2).
    # Cosmos DB always writes seven digits (test_datetime_milliseconds;
    # docs/cosmos.md).
    if COSMOS:
        assert got["Ist"].tables_service_value == "2021-06-30T18:29:59.9999990Z"
        assert got["Whole"].tables_service_value == "2008-07-10T00:00:00.0000000Z"
    else:
        assert got["Ist"].tables_service_value == "2021-06-30T18:29:59.999999Z"
        assert got["Whole"].tables_service_value == "2008-07-10T00:00:00Z"
    # Filters see the instant, whatever zone the literal was written in.
    hits = list(table.query_entities("Ist eq @t", parameters={"t": datetime.datetime(2021, 6, 30, 18, 29, 59, 999999, tzinfo=UTC)}))
    assert len(hits) == 1


def test_datetime_seven_digits_round_trip(table):
    # The service keeps 100 ns ticks. Python's datetime holds microseconds,
    # so the SDK keeps the service's text beside it (tables_service_value)
    # and sends that text back when the value is written again.
    table.create_entity(entity("dt7", T=EntityProperty("2020-01-02T03:04:05.1234567Z", EdmType.DATETIME)))
    got = read_both(table, "dt7")
    assert got["T"].tables_service_value == "2020-01-02T03:04:05.1234567Z"
    assert got["T"].microsecond == 123456
    table.upsert_entity(entity("dt7b", T=got["T"]), mode=UpdateMode.REPLACE)
    assert table.get_entity("types", "dt7b")["T"].tables_service_value == "2020-01-02T03:04:05.1234567Z"
    assert [e["RowKey"] for e in table.query_entities("T gt datetime'2020-01-02T03:04:05.1234566Z'")] == ["dt7", "dt7b"]
    assert list(table.query_entities("T gt datetime'2020-01-02T03:04:05.1234567Z'")) == []


def test_datetime_before_1601_is_out_of_range(table):
    with expect_error(HttpResponseError, 400, "OutOfRangeInput", decoded=False):
        table.create_entity(entity("old", T=datetime.datetime(1600, 12, 31, 23, 59, 59, tzinfo=UTC)))


def test_guid(table):
    table.create_entity(entity("g", G=GUID, U=EntityProperty("A455C695-DF98-5678-AAAA-81D3367E5A34", EdmType.GUID),
                               S=str(GUID)))
    got = read_both(table, "g")
    assert got["G"] == GUID and isinstance(got["G"], uuid.UUID)
    assert got["U"] == uuid.UUID("a455c695-df98-5678-aaaa-81d3367e5a34")
    # A GUID-shaped string stays a string.
    assert got["S"] == str(GUID) and isinstance(got["S"], str)
    assert len(list(table.query_entities("G eq @g", parameters={"g": GUID}))) == 1
    # A Guid property does not equal a string literal (a type mismatch).
    assert list(table.query_entities("G eq @s", parameters={"s": str(GUID)})) == []


def test_binary(table):
    blobs = {"All": bytes(range(256)), "Empty": b"", "Big": b"\xff" * 65536, "Prop": EntityProperty(b"\x00\x01", EdmType.BINARY)}
    table.create_entity(entity("bin", **blobs))
    got = read_both(table, "bin")
    assert got["All"] == bytes(range(256))
    assert got["Empty"] == b""
    assert got["Big"] == b"\xff" * 65536
    assert got["Prop"] == b"\x00\x01"
    assert len(list(table.query_entities("Prop eq @b", parameters={"b": b"\x00\x01"}))) == 1
    # 64 KiB is the limit for a binary value.
    with expect_error(HttpResponseError, 400, "PropertyValueTooLarge", decoded=False):
        table.create_entity(entity("binbig", B=b"\x00" * 65537))


def test_double_including_nan_and_infinities(table):
    values = {"Half": 1.5, "Whole": 5.0, "NegZero": -0.0, "Max": 1.7976931348623157e308, "Tiny": 5e-324,
              "Nan": float("nan"), "Inf": float("inf"), "NegInf": float("-inf"),
              "FromInt": EntityProperty(7, EdmType.DOUBLE), "FromStr": EntityProperty("0.25", EdmType.DOUBLE)}
    table.create_entity(entity("dbl", **values))
    got = read_both(table, "dbl")
    for k in values:
        assert type(got[k]) is float, (k, got[k])
    assert got["Half"] == 1.5 and got["Whole"] == 5.0 and got["Max"] == 1.7976931348623157e308 and got["Tiny"] == 5e-324
    assert got["NegZero"] == 0.0
    assert math.isnan(got["Nan"]) and got["Inf"] == math.inf and got["NegInf"] == -math.inf
    assert got["FromInt"] == 7.0 and got["FromStr"] == 0.25
    # A whole Double stays a Double when written back (docs/protocol.md 0.1).
    table.upsert_entity(entity("dbl2", Whole=got["Whole"]))
    assert type(table.get_entity("types", "dbl2")["Whole"]) is float
    # Comparisons: Infinity orders, NaN matches only ne.
    assert [e["RowKey"] for e in table.query_entities("Inf gt 1e308")] == ["dbl"]
    assert list(table.query_entities("Nan eq 1.0")) == []
    assert [e["RowKey"] for e in table.query_entities("Nan ne 1.0")] == ["dbl"]
    assert [e["RowKey"] for e in table.query_entities("Whole eq 5")] == ["dbl", "dbl2"]


def test_boolean(table):
    table.create_entity(entity("b", T=True, F=False, P=EntityProperty(True, EdmType.BOOLEAN)))
    got = read_both(table, "b")
    assert got["T"] is True and got["F"] is False and got["P"] is True
    assert [e["RowKey"] for e in table.query_entities("T eq @v and F eq @w", parameters={"v": True, "w": False})] == ["b"]


def test_strings_non_ascii(table):
    values = {"Uni": "ü日本語😀 — ñ", "Ctl": "tab\tnew\nline\r", "Quote": "it's \"quoted\" \\", "Empty": "",
              "Numeric": EntityProperty("123", EdmType.STRING), "Long": "é" * 32767, "Pua": "\ue000\uffff"}
    table.create_entity(entity("s", **values))
    got = read_both(table, "s")
    for k, v in values.items():
        want = v.value if isinstance(v, EntityProperty) else v
        assert got[k] == want and type(got[k]) is str, k
    hits = list(table.query_entities("Uni eq @u and Quote eq @q", parameters={"u": values["Uni"], "q": values["Quote"]}))
    assert len(hits) == 1
    # Ordinal UTF-16 order: the private-use character sorts after the emoji's
    # surrogates (docs/protocol.md 6.3).
    assert len(list(table.query_entities("Pua gt '😀'"))) == 1


def test_property_names(table):
    table.create_entity(entity("n", Größe=1, _under=2, CamelCase=3))
    got = table.get_entity("types", "n")
    assert (got["Größe"], got["_under"], got["CamelCase"]) == (1, 2, 3)
    assert [e["RowKey"] for e in table.query_entities("Größe eq 1")] == ["n"]
