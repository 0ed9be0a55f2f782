"""Entities through TableClient: create, get (with select), upsert in MERGE and
REPLACE modes, update with an ETag and MatchConditions, delete with an
ETag, TableEntity.metadata (docs/protocol.md 3.9-3.13, 5)."""

import datetime
import re

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import TableClient, TableEntity, UpdateMode

from conftest import COSMOS
from helpers import expect_error

ETAG = re.compile(r"^W/\"datetime'(\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\d\.\d{7}Z)'\"$")


def test_create_returns_etag_and_get_has_metadata(table):
    resp = table.create_entity({"PartitionKey": "p", "RowKey": "r", "Name": "first", "Count": 3})
    m = ETAG.match(resp["etag"])
    assert m, resp
    assert isinstance(resp["date"], datetime.datetime)
    e = table.get_entity("p", "r")
    assert isinstance(e, TableEntity)
    assert e["PartitionKey"] == "p" and e["RowKey"] == "r"
    assert e["Name"] == "first" and e["Count"] == 3
    assert e.metadata["etag"] == resp["etag"]
    ts = e.metadata["timestamp"]
    assert isinstance(ts, datetime.datetime) and ts.tzinfo is not None
    # The ETag is the Timestamp, colons percent-encoded (docs/protocol.md 5).
    assert m.group(1).replace("%3A", ":")[:26] == ts.strftime("%Y-%m-%dT%H:%M:%S.%f")
    # Timestamp is a system property: not among the entity's own keys.
    assert "Timestamp" not in e


def test_create_existing_is_409(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    with expect_error(ResourceExistsError, 409, "EntityAlreadyExists", decoded=False):
        table.create_entity({"PartitionKey": "p", "RowKey": "r"})


def test_create_without_row_key(table):
    # The service answers 400 PropertiesNeedValue; the SDK then raises its
    # own ValueError naming the missing key.
    with pytest.raises(ValueError, match="RowKey must be present"):
        table.create_entity({"PartitionKey": "p"})


def test_get_with_select(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "A": 1, "B": "two", "C": True})
    e = table.get_entity("p", "r", select=["A", "C"])
    assert dict(e) == {"A": 1, "C": True}
    assert ETAG.match(e.metadata["etag"])
    # A selected property the entity lacks comes back as null
    # (docs/protocol.md 6.4), which the SDK keeps as None.
    e = table.get_entity("p", "r", select="B,Missing")
    assert dict(e) == {"B": "two", "Missing": None}


def test_get_missing_entity(table):
    with expect_error(ResourceNotFoundError, 404, "ResourceNotFound"):
        table.get_entity("p", "nothing")


def test_upsert_merge_and_replace(table):
    # Upsert inserts when the entity is missing, in both modes.
    table.upsert_entity({"PartitionKey": "p", "RowKey": "m", "A": 1, "B": 1}, mode=UpdateMode.MERGE)
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "A": 1, "B": 1}, mode=UpdateMode.REPLACE)
    # MERGE keeps the properties the body lacks; REPLACE drops them.
    table.upsert_entity({"PartitionKey": "p", "RowKey": "m", "B": 2, "C": 2}, mode=UpdateMode.MERGE)
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "B": 2, "C": 2}, mode=UpdateMode.REPLACE)
    assert dict(table.get_entity("p", "m")) == {"PartitionKey": "p", "RowKey": "m", "A": 1, "B": 2, "C": 2}
    assert dict(table.get_entity("p", "r")) == {"PartitionKey": "p", "RowKey": "r", "B": 2, "C": 2}
    # A merge changes a property's type along with its value.
    table.upsert_entity({"PartitionKey": "p", "RowKey": "m", "A": "now a string"}, mode=UpdateMode.MERGE)
    assert table.get_entity("p", "m")["A"] == "now a string"


def test_update_with_etag(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "V": 1, "Keep": "k"})
    v1 = table.get_entity("p", "r")
    up = table.update_entity({"PartitionKey": "p", "RowKey": "r", "V": 2}, mode=UpdateMode.MERGE,
                             etag=v1.metadata["etag"], match_condition=MatchConditions.IfNotModified)
    assert ETAG.match(up["etag"]) and up["etag"] != v1.metadata["etag"]
    v2 = table.get_entity("p", "r")
    assert v2["V"] == 2 and v2["Keep"] == "k" and v2.metadata["etag"] == up["etag"]
    # The stale ETag: ResourceModifiedError with the service's code, in both
    # modes, and nothing changes.
    for mode in (UpdateMode.MERGE, UpdateMode.REPLACE):
        with expect_error(ResourceModifiedError, 412, "UpdateConditionNotSatisfied"):
            table.update_entity({"PartitionKey": "p", "RowKey": "r", "V": 3}, mode=mode,
                                etag=v1.metadata["etag"], match_condition=MatchConditions.IfNotModified)
    assert table.get_entity("p", "r")["V"] == 2
    # REPLACE with the current ETag drops the properties the body lacks.
    table.update_entity({"PartitionKey": "p", "RowKey": "r", "V": 4}, mode=UpdateMode.REPLACE,
                        etag=v2.metadata["etag"], match_condition=MatchConditions.IfNotModified)
    assert dict(table.get_entity("p", "r")) == {"PartitionKey": "p", "RowKey": "r", "V": 4}
    # The entity's own metadata carries the ETag: passing the TableEntity.
    cur = table.get_entity("p", "r")
    cur["V"] = 5
    table.update_entity(cur, mode=UpdateMode.MERGE, etag=cur.metadata["etag"],
                        match_condition=MatchConditions.IfNotModified)
    assert table.get_entity("p", "r")["V"] == 5


def test_update_unconditional_and_missing(table):
    # Without a match condition the SDK sends If-Match: *: the entity must
    # exist (404), there is no upsert.
    for mode in (UpdateMode.MERGE, UpdateMode.REPLACE):
        with expect_error(ResourceNotFoundError, 404, "ResourceNotFound"):
            table.update_entity({"PartitionKey": "p", "RowKey": "missing", "V": 1}, mode=mode)
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "V": 1})
    table.update_entity({"PartitionKey": "p", "RowKey": "r", "V": 2}, mode=UpdateMode.REPLACE)
    assert table.get_entity("p", "r")["V"] == 2


def test_delete_with_etag(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "V": 1})
    v1 = table.get_entity("p", "r")
    table.update_entity({"PartitionKey": "p", "RowKey": "r", "V": 2})
    with expect_error(ResourceModifiedError, 412, "UpdateConditionNotSatisfied"):
        table.delete_entity("p", "r", etag=v1.metadata["etag"], match_condition=MatchConditions.IfNotModified)
    v2 = table.get_entity("p", "r")
    table.delete_entity(v2, match_condition=MatchConditions.IfNotModified)
    with expect_error(ResourceNotFoundError, 404, "ResourceNotFound"):
        table.get_entity("p", "r")
    # delete_entity on a missing entity succeeds: the SDK swallows the 404.
    table.delete_entity("p", "r")
    # Unconditional delete of an existing entity.
    table.create_entity({"PartitionKey": "p", "RowKey": "x"})
    table.delete_entity(partition_key="p", row_key="x")
    assert list(table.list_entities()) == []


def test_keys_with_special_characters(table):
    # Quotes are doubled in the URL, the rest percent-encoded
    # (docs/protocol.md 1.3); non-ASCII keys round-trip.
    keys = ["it's", "a b", "ü日本😀", "x%2Fy", "q&=+", "''", "", "(x,y)"]
    if COSMOS:
        # Cosmos DB refuses an empty key: 400 PropertiesNeedValue
        # (test_insert_entity_empty_string_pk; docs/cosmos.md).
        with expect_error(HttpResponseError, 400, "PropertiesNeedValue", decoded=False):
            table.create_entity({"PartitionKey": "", "RowKey": "!", "K": ""})
        keys.remove("")
    for k in keys:
        table.create_entity({"PartitionKey": k, "RowKey": k + "!", "K": k})
    for k in keys:
        e = table.get_entity(k, k + "!")
        assert e["PartitionKey"] == k and e["RowKey"] == k + "!" and e["K"] == k
        table.update_entity({"PartitionKey": k, "RowKey": k + "!", "K": "u"}, mode=UpdateMode.MERGE)
    assert sorted(e["PartitionKey"] for e in table.list_entities()) == sorted(keys)
    for k in keys:
        table.delete_entity(k, k + "!")
    assert list(table.list_entities()) == []


def test_forbidden_key_characters(table):
    # / \ # ? and control characters are not allowed in keys: in an insert
    # body that is 400 OutOfRangeInput (docs/protocol.md 1.5).
    for bad in ["a/b", "a\\b", "a#b", "a?b", "a\tb", "a\x7fb"]:
        with expect_error(HttpResponseError, 400, "OutOfRangeInput", decoded=False):
            table.create_entity({"PartitionKey": bad, "RowKey": "r"})
        with expect_error(HttpResponseError, 400, "OutOfRangeInput", decoded=False):
            table.create_entity({"PartitionKey": "p", "RowKey": bad})
    assert list(table.list_entities()) == []


def test_entity_too_large_and_property_limits(table):
    # 16 strings of 32,000 characters is about 1 MiB of UTF-16: over.
    big = {"PartitionKey": "p", "RowKey": "big"}
    for i in range(17):
        big[f"S{i:02d}"] = "x" * 32000
    with expect_error(HttpResponseError, 400, "EntityTooLarge", decoded=False):
        table.create_entity(big)
    # A string over 32K characters (64 KiB) is PropertyValueTooLarge.
    with expect_error(HttpResponseError, 400, "PropertyValueTooLarge", decoded=False):
        table.create_entity({"PartitionKey": "p", "RowKey": "long", "S": "x" * (32 * 1024 + 1)})
    # More than 252 user properties.
    many = {"PartitionKey": "p", "RowKey": "many"}
    many.update({f"P{i}": i for i in range(253)})
    with expect_error(HttpResponseError, 400, "TooManyProperties", decoded=False):
        table.create_entity(many)
    with expect_error(ResourceNotFoundError, 404, "ResourceNotFound"):
        table.get_entity("p", "big")


def test_cosmos_style_merge_on_localhost(server):
    # On "localhost" at any port but 10002 the SDK believes it talks to
    # Cosmos DB and sends merges as POST with X-HTTP-Method: MERGE
    # (docs/protocol.md 1.1): the same results.
    if not server.own:
        pytest.skip("needs tableemu on 127.0.0.1")
    cs = server.connection_string.replace("127.0.0.1", "localhost")
    from azure.data.tables import TableServiceClient

    with TableServiceClient.from_connection_string(cs) as svc:
        from conftest import table_name

        name = table_name()
        t = svc.create_table(name)
        try:
            t.create_entity({"PartitionKey": "p", "RowKey": "r", "A": 1})
            t.upsert_entity({"PartitionKey": "p", "RowKey": "r", "B": 2}, mode=UpdateMode.MERGE)
            v = t.get_entity("p", "r")
            assert v["A"] == 1 and v["B"] == 2
            t.update_entity({"PartitionKey": "p", "RowKey": "r", "C": 3}, mode=UpdateMode.MERGE,
                            etag=v.metadata["etag"], match_condition=MatchConditions.IfNotModified)
            with expect_error(ResourceModifiedError, 412, "UpdateConditionNotSatisfied"):
                t.update_entity({"PartitionKey": "p", "RowKey": "r", "C": 4}, mode=UpdateMode.MERGE,
                                etag=v.metadata["etag"], match_condition=MatchConditions.IfNotModified)
            assert dict(t.get_entity("p", "r")) == {"PartitionKey": "p", "RowKey": "r", "A": 1, "B": 2, "C": 3}
        finally:
            svc.delete_table(name)


def test_if_match_forms(table):
    # The SDK sends the etag it is given as If-Match (docs/protocol.md 0.1):
    # a weak ETag that matches nothing is 412, a strong one 400 InvalidInput.
    # azure-core quotes any ETag that does not start with "W/" or a quote
    # (quote_etag), so a lower-case w/ cannot be sent through this SDK: the
    # Go suite sends it raw (TestIfMatchForms).
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "V": 1})
    cur = table.get_entity("p", "r").metadata["etag"]
    cond = {"match_condition": MatchConditions.IfNotModified}
    for weak in ['W/"wrong"', 'W/""', "W/\"datetime'2000-01-01T00%3A00%3A00.0000000Z'\""]:
        with expect_error(ResourceModifiedError, 412, "UpdateConditionNotSatisfied"):
            table.update_entity({"PartitionKey": "p", "RowKey": "r", "V": 2}, etag=weak, **cond)
        with expect_error(ResourceModifiedError, 412, "UpdateConditionNotSatisfied"):
            table.delete_entity("p", "r", etag=weak, **cond)
    # '"wrong"', the entity's own ETag without W/, and 'wrong', which
    # azure-core sends quoted.
    for strong in ['"wrong"', cur[2:], "wrong", 'w/"wrong"']:
        with expect_error(HttpResponseError, 400, "InvalidInput"):
            table.update_entity({"PartitionKey": "p", "RowKey": "r", "V": 2}, mode=UpdateMode.REPLACE, etag=strong, **cond)
        with expect_error(HttpResponseError, 400, "InvalidInput"):
            table.delete_entity("p", "r", etag=strong, **cond)
    assert table.get_entity("p", "r")["V"] == 1
    table.update_entity({"PartitionKey": "p", "RowKey": "r", "V": 3}, etag=cur, **cond)
    assert table.get_entity("p", "r")["V"] == 3


def test_body_over_4_mib(table):
    # A request body over 4 MiB is 413 RequestBodyTooLarge, before the
    # entity is looked at (docs/protocol.md 0.1): 140 strings of 30,000
    # characters are 4.2 MB of JSON.
    big = {"PartitionKey": "p", "RowKey": "huge"}
    big.update({f"S{i:03d}": "x" * 30000 for i in range(140)})
    with expect_error(HttpResponseError, 413, "RequestBodyTooLarge", decoded=False):
        table.create_entity(big)
    with expect_error(HttpResponseError, 413, "RequestBodyTooLarge"):
        table.upsert_entity(big)
    assert list(table.list_entities()) == []
