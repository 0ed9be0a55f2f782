"""The legacy azure-cosmosdb-table 1.0.6 TableService (x-ms-version
2018-03-28): tables, entity CRUD with ETags, queries with a filter and
continuation markers, batches, every entity type, SAS, ACLs, service
properties and errors with their codes (docs/protocol.md 0.1)."""

import datetime
import math
import uuid

import pytest
from azure.common import AzureConflictHttpError, AzureHttpError, AzureMissingResourceHttpError
from azure.cosmosdb.table.common.models import AccessPolicy, CorsRule, Metrics, ResourceTypes, RetentionPolicy, AccountPermissions
from azure.cosmosdb.table.common.retry import LinearRetry, no_retry
from azure.cosmosdb.table.models import AzureBatchOperationError, AzureBatchValidationError, EdmType, Entity, EntityProperty, TablePermissions
from azure.cosmosdb.table.tablebatch import TableBatch
from azure.cosmosdb.table.tableservice import TableService

from conftest import COSMOS, table_name
from helpers import PERMISSION, TABLE_NOT_FOUND

UTC = datetime.timezone.utc


def expect(exc_type, status, code):
    return _Expect(exc_type, status, code)


class _Expect:
    """The legacy SDK's errors: status_code, and error_code read from
    x-ms-error-code."""

    def __init__(self, exc_type, status, code):
        self.raises = pytest.raises(exc_type)
        self.status, self.code = status, code

    def __enter__(self):
        self.info = self.raises.__enter__()
        return self.info

    def __exit__(self, *exc):
        suppressed = self.raises.__exit__(*exc)
        if not suppressed:
            return False
        err = self.info.value
        assert err.status_code == self.status, f"status {err.status_code}, want {self.status}: {err}"
        assert err.error_code == self.code, f"error_code {err.error_code!r}, want {self.code!r}: {err}"
        return suppressed


@pytest.fixture
def ts(server):
    return TableService(connection_string=server.connection_string)


@pytest.fixture
def tname(ts):
    name = table_name("legacy")
    assert ts.create_table(name)
    yield name
    ts.delete_table(name)


def test_tables(ts):
    name = table_name("legacy")
    assert ts.create_table(name, fail_on_exist=True) is True
    try:
        assert ts.create_table(name) is False  # exists: the SDK reads the 409
        with expect(AzureConflictHttpError, 409, "TableAlreadyExists"):
            ts.create_table(name, fail_on_exist=True)
        # exists() reads GET /Tables('name') (docs/protocol.md 0.1).
        assert ts.exists(name) is True
        assert ts.exists(name + "x") is False
        assert name in [t.name for t in ts.list_tables()]
    finally:
        assert ts.delete_table(name, fail_not_exist=True) is True
    assert ts.delete_table(name) is False
    with expect(AzureMissingResourceHttpError, 404, "ResourceNotFound"):
        ts.delete_table(name, fail_not_exist=True)
    with expect(AzureHttpError, 400, "InvalidResourceName"):
        ts.create_table("bad_name")


def test_list_tables_with_markers(ts):
    prefix = table_name("lm")[:12]
    names = [prefix + str(i) for i in range(5)]
    for n in names:
        ts.create_table(n)
    try:
        seen = []
        page = ts.list_tables(num_results=2)
        while True:
            seen += [t.name for t in page]
            if not page.next_marker:
                break
            page = ts.list_tables(num_results=2, marker=page.next_marker)
        assert set(names) <= set(seen) and len(seen) == len(set(seen))
    finally:
        for n in names:
            ts.delete_table(n)


def test_entity_crud_and_etags(ts, tname):
    etag = ts.insert_entity(tname, {"PartitionKey": "p", "RowKey": "r", "Name": "one", "Keep": True})
    assert etag.startswith("W/\"datetime'")
    with expect(AzureConflictHttpError, 409, "EntityAlreadyExists"):
        ts.insert_entity(tname, {"PartitionKey": "p", "RowKey": "r"})
    e = ts.get_entity(tname, "p", "r")
    assert isinstance(e, Entity) and e.Name == "one" and e.etag == etag
    assert e.Timestamp.tzinfo is not None
    # merge (the MERGE verb) and update with the current ETag; the stale
    # one is 412.
    etag2 = ts.merge_entity(tname, {"PartitionKey": "p", "RowKey": "r", "Name": "two"}, if_match=etag)
    with expect(AzureHttpError, 412, "UpdateConditionNotSatisfied"):
        ts.update_entity(tname, {"PartitionKey": "p", "RowKey": "r", "Name": "x"}, if_match=etag)
    e = ts.get_entity(tname, "p", "r")
    assert e.Name == "two" and e.Keep is True
    ts.update_entity(tname, {"PartitionKey": "p", "RowKey": "r", "Name": "three"}, if_match=etag2)
    e = ts.get_entity(tname, "p", "r")
    assert e.Name == "three" and "Keep" not in e
    # If-Match forms (docs/protocol.md 0.1): a strong ETag is 400, a weak
    # one that matches nothing 412.
    with expect(AzureHttpError, 400, "InvalidInput"):
        ts.update_entity(tname, {"PartitionKey": "p", "RowKey": "r"}, if_match='"wrong"')
    with expect(AzureHttpError, 412, "UpdateConditionNotSatisfied"):
        ts.merge_entity(tname, {"PartitionKey": "p", "RowKey": "r"}, if_match='W/"wrong"')
    # Upserts.
    ts.insert_or_merge_entity(tname, {"PartitionKey": "p", "RowKey": "r", "Extra": 1})
    ts.insert_or_replace_entity(tname, {"PartitionKey": "p", "RowKey": "new", "Only": "x"})
    assert ts.get_entity(tname, "p", "r").Extra == 1
    assert ts.get_entity(tname, "p", "new").Only == "x"
    # get with select.
    sel = ts.get_entity(tname, "p", "r", select="Name,Extra")
    assert sel.Name == "three" and sel.Extra == 1 and "Keep" not in sel
    # delete: stale ETag 412, current deletes, then 404.
    cur = ts.get_entity(tname, "p", "r").etag
    with expect(AzureHttpError, 412, "UpdateConditionNotSatisfied"):
        ts.delete_entity(tname, "p", "r", if_match=etag)
    ts.delete_entity(tname, "p", "r", if_match=cur)
    with expect(AzureMissingResourceHttpError, 404, "ResourceNotFound"):
        ts.get_entity(tname, "p", "r")
    with expect(AzureMissingResourceHttpError, 404, "ResourceNotFound"):
        ts.delete_entity(tname, "p", "r")
    with expect(AzureMissingResourceHttpError, 404, TABLE_NOT_FOUND):
        ts.insert_entity(table_name(), {"PartitionKey": "p", "RowKey": "r"})


def test_query_with_filter_and_markers(ts, tname):
    for pk in ["a", "b", "c"]:
        with ts.batch(tname) as b:
            for i in range(20):
                b.insert_entity({"PartitionKey": pk, "RowKey": f"{i:03d}", "N": EntityProperty(EdmType.INT32, i)})
    got = list(ts.query_entities(tname, filter="N ge 15 and PartitionKey ne 'b'", select="N"))
    assert sorted(e.N.value for e in got) == [15, 15, 16, 16, 17, 17, 18, 18, 19, 19]
    # num_results pages; next_marker resumes, also from a later call.
    page = ts.query_entities(tname, filter="N lt 10", num_results=7)
    first = [(e.PartitionKey, e.RowKey) for e in page]
    assert len(first) == 7 and page.next_marker
    marker = dict(page.next_marker)
    assert set(marker) == {"nextpartitionkey", "nextrowkey"}
    rest = []
    while marker:
        page = ts.query_entities(tname, filter="N lt 10", num_results=7, marker=marker)
        rest += [(e.PartitionKey, e.RowKey) for e in page]
        marker = page.next_marker
    assert len(first + rest) == 30 and first + rest == sorted(first + rest)
    again = ts.query_entities(tname, filter="N lt 10", num_results=7, marker=dict(ts.query_entities(tname, filter="N lt 10", num_results=7).next_marker))
    assert [(e.PartitionKey, e.RowKey) for e in again] == rest[:7]
    # Iterating a generator without num_results follows markers itself.
    assert len(list(ts.query_entities(tname))) == 60
    # Boolean literals (docs/protocol.md 0.1) and a bad filter.
    assert list(ts.query_entities(tname, filter="false")) == []
    assert len(list(ts.query_entities(tname, filter="true and RowKey eq '000'"))) == 3
    with expect(AzureHttpError, 400, "InvalidInput"):
        list(ts.query_entities(tname, filter="N eq"))
    with expect(AzureHttpError, 501, "NotImplemented"):
        list(ts.query_entities(tname, filter="1 eq 2"))


def failed_batch(ts, tname, b, index, status, code):
    """Commits b, which must fail at index with status and code (the SDK
    keeps the code in .code, its docs say batch_code) and write nothing.
    index None: the message names no operation, as the service answers a
    lone operation failing against the stored entity (docs/protocol.md 7.4;
    this SDK's own recordings of test_batch_update_if_doesnt_match)."""
    before = sorted(e.RowKey for e in ts.query_entities(tname))
    with pytest.raises(AzureBatchOperationError) as info:
        ts.commit_batch(tname, b)
    err = info.value
    assert (err.status_code, err.code) == (status, code), err
    if index is None:
        assert not str(err).split(":", 1)[0].isdigit(), err
    else:
        assert str(err).startswith(f"{index}:"), err
    assert sorted(e.RowKey for e in ts.query_entities(tname)) == before


def test_batch(ts, tname):
    # The SDK retries a failed batch (see test_batch_failure_is_retried);
    # here each is sent once.
    ts.retry = no_retry
    ts.insert_entity(tname, {"PartitionKey": "p", "RowKey": "u"})
    ts.insert_entity(tname, {"PartitionKey": "p", "RowKey": "d"})
    b = TableBatch()
    b.insert_entity({"PartitionKey": "p", "RowKey": "i", "V": 1})
    b.update_entity({"PartitionKey": "p", "RowKey": "u", "V": 2})
    b.insert_or_replace_entity({"PartitionKey": "p", "RowKey": "or", "V": 4})
    b.insert_or_merge_entity({"PartitionKey": "p", "RowKey": "om", "V": 5})
    b.delete_entity("p", "d")
    etags = ts.commit_batch(tname, b)
    assert len(etags) == 5 and all(isinstance(x, str) and x.startswith("W/") for x in etags[:4])
    assert sorted(e.RowKey for e in ts.query_entities(tname)) == ["i", "om", "or", "u"]
    # A failing operation: AzureBatchOperationError naming it, nothing written.
    b = TableBatch()
    b.insert_entity({"PartitionKey": "p", "RowKey": "x"})
    b.merge_entity({"PartitionKey": "p", "RowKey": "missing", "V": 1})
    failed_batch(ts, tname, b, 1, 404, "ResourceNotFound")
    b = TableBatch()
    b.insert_entity({"PartitionKey": "p", "RowKey": "y"})
    b.insert_entity({"PartitionKey": "p", "RowKey": "i"})
    failed_batch(ts, tname, b, 1, 409, "EntityAlreadyExists")
    # A stale ETag inside a batch.
    stale = ts.get_entity(tname, "p", "u").etag
    ts.merge_entity(tname, {"PartitionKey": "p", "RowKey": "u", "W": 1})
    b = TableBatch()
    b.update_entity({"PartitionKey": "p", "RowKey": "u"}, if_match=stale)
    # Cosmos DB names index 0 even here (docs/cosmos.md, "a failed part").
    failed_batch(ts, tname, b, 0 if COSMOS else None, 412, "UpdateConditionNotSatisfied")
    # The SDK checks one partition, distinct rows and 100 operations itself.
    b = TableBatch()
    b.insert_entity({"PartitionKey": "p", "RowKey": "z"})
    with pytest.raises(AzureBatchValidationError):
        b.delete_entity("p", "z")
    b = TableBatch()
    for i in range(100):
        b.insert_entity({"PartitionKey": "p", "RowKey": f"n{i:03d}", "S": "x" * 30000, "T": "y" * 12000})
    with pytest.raises(AzureHttpError) as info:
        ts.commit_batch(tname, b)
    assert (info.value.status_code, info.value.error_code) == (413, "RequestBodyTooLarge")


def test_batch_failure_is_retried(ts, tname):
    # The SDK's own behaviour: a batch answered 202 with a failed operation
    # is treated as a failure while reading a successful response, which its
    # retry policies retry (retry.py _should_retry: 2xx is retried). The
    # live service answers such a batch 202 too (docs/protocol.md 7.4), so
    # a failed batch is sent max_attempts + 1 times; each attempt fails the
    # same way and writes nothing.
    attempts = []
    ts.retry = LinearRetry(backoff=0, max_attempts=2, random_jitter_range=0).retry
    ts.retry_callback = lambda ctx: attempts.append(ctx.count)
    ts.insert_entity(tname, {"PartitionKey": "p", "RowKey": "dup"})
    b = TableBatch()
    b.insert_entity({"PartitionKey": "p", "RowKey": "new"})
    b.insert_entity({"PartitionKey": "p", "RowKey": "dup"})
    failed_batch(ts, tname, b, 1, 409, "EntityAlreadyExists")
    assert attempts == [1, 2]


def test_entity_types(ts, tname):
    guid = uuid.UUID("c9da6455-213d-42c9-9a79-3e9149a57833")
    when = datetime.datetime(2020, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    ts.insert_entity(tname, {
        "PartitionKey": "t", "RowKey": "all",
        "Big": 2**53 + 1,  # a Python int is written as Edm.Int64 by this SDK
        "Small": EntityProperty(EdmType.INT32, -(2**31)),
        "L": EntityProperty(EdmType.INT64, -(2**63)),
        "D": 2.5, "Whole": 5.0, "Nan": float("nan"), "Inf": float("inf"), "NegInf": float("-inf"),
        "B": True, "S": "ü日本😀", "T": when,
        "G": EntityProperty(EdmType.GUID, guid),
        "Bin": EntityProperty(EdmType.BINARY, bytes(range(256))),
    })
    e = ts.get_entity(tname, "t", "all")
    assert e.Big == 2**53 + 1 and type(e.Big) is int
    assert (e.Small.type, e.Small.value) == (EdmType.INT32, -(2**31))
    assert e.L == -(2**63)
    assert e.D == 2.5 and e.Whole == 5.0 and type(e.Whole) is float
    assert math.isnan(e.Nan) and e.Inf == math.inf and e.NegInf == -math.inf
    assert e.B is True and e.S == "ü日本😀"
    # The SDK writes whole seconds ('%Y-%m-%dT%H:%M:%SZ'): its own loss of
    # the microseconds, not the service's. The instant is kept.
    assert e.T == when.replace(microsecond=0)
    assert (e.G.type, uuid.UUID(e.G.value)) == (EdmType.GUID, guid)
    assert (e.Bin.type, e.Bin.value) == (EdmType.BINARY, bytes(range(256)))
    # The same values through a query, with typed literals in the filter.
    q = list(ts.query_entities(tname, filter=f"Big eq {2**53 + 1}L and G eq guid'{guid}' and T eq datetime'2020-01-02T01:04:05Z'"))
    assert [x.RowKey for x in q] == ["all"]


# Cosmos DB refuses every SAS that names a key range: 405 MethodNotAllowed
# "Shared access signature with PartitionKey or RowKey are not supported"
# (test_sas_add_outside_range; docs/cosmos.md).
def test_table_sas_key_range(ts, server, tname):
    for pk in "abc":
        ts.insert_entity(tname, {"PartitionKey": pk, "RowKey": "1"})
    expiry = datetime.datetime.now(UTC) + datetime.timedelta(hours=1)
    token = ts.generate_table_shared_access_signature(tname, TablePermissions.QUERY, expiry, start_pk="b", end_pk="c", end_rk="1")
    sas = TableService(connection_string=f"TableEndpoint={server.endpoint};SharedAccessSignature={token}")
    if COSMOS:
        with expect(AzureHttpError, 405, "MethodNotAllowed"):
            list(sas.query_entities(tname))
        return
    assert [e.PartitionKey for e in sas.query_entities(tname)] == ["b", "c"]
    assert sas.get_entity(tname, "b", "1").RowKey == "1"
    # Outside the key range the entity exists but a point read finds nothing, as live answers;
    # writes there are refused with 403 AuthorizationFailure (docs/protocol.md 0.1).
    with expect(AzureMissingResourceHttpError, 404, "ResourceNotFound"):
        sas.get_entity(tname, "a", "1")
    with expect(AzureHttpError, 403, PERMISSION):
        sas.insert_entity(tname, {"PartitionKey": "b", "RowKey": "2"})


# Cosmos DB serves no service properties, statistics or table ACLs (its
# FAQ); tableemu's profile refuses them as Cosmos DB refuses Set Service
# Properties, 405 MethodNotAllowed (docs/cosmos.md, "What Cosmos DB refuses").
def test_table_sas_stored_policy(ts, server, tname):
    ts.insert_entity(tname, {"PartitionKey": "b", "RowKey": "1"})
    expiry = datetime.datetime.now(UTC) + datetime.timedelta(hours=1)
    if COSMOS:
        with expect(AzureHttpError, 405, "MethodNotAllowed"):
            ts.set_table_acl(tname, {"q": AccessPolicy(permission=TablePermissions.QUERY, expiry=expiry)})
        with expect(AzureHttpError, 405, "MethodNotAllowed"):
            ts.get_table_acl(tname)
        return
    # A stored access policy, named by the SAS.
    ts.set_table_acl(tname, {"q": AccessPolicy(permission=TablePermissions.QUERY + TablePermissions.ADD, expiry=expiry)})
    acl = ts.get_table_acl(tname)
    assert set(acl) == {"q"} and acl["q"].permission == "ra"
    token = ts.generate_table_shared_access_signature(tname, id="q")
    sas = TableService(connection_string=f"TableEndpoint={server.endpoint};SharedAccessSignature={token}")
    sas.insert_entity(tname, {"PartitionKey": "d", "RowKey": "1"})
    with expect(AzureHttpError, 403, PERMISSION):
        sas.delete_entity(tname, "d", "1")
    ts.set_table_acl(tname, {})
    with expect(AzureHttpError, 403, "AuthenticationFailed"):
        sas.get_entity(tname, "d", "1")
    # A SAS field given twice is 403 (docs/protocol.md 0.1), but this SDK
    # never sends one twice: it merges the token's parameters into a dict
    # (_auth.py, request.query.update), the last value winning.
    token = ts.generate_table_shared_access_signature(tname, TablePermissions.QUERY, expiry)
    dup = TableService(connection_string=f"TableEndpoint={server.endpoint};SharedAccessSignature={token}&sp=r")
    assert dup.get_entity(tname, "b", "1").RowKey == "1"


def test_account_sas(ts, server):
    expiry = datetime.datetime.now(UTC) + datetime.timedelta(hours=1)
    token = ts.generate_account_shared_access_signature(ResourceTypes.CONTAINER + ResourceTypes.OBJECT,
                                                        AccountPermissions.READ + AccountPermissions.WRITE + AccountPermissions.DELETE +
                                                        AccountPermissions.LIST + AccountPermissions.ADD + AccountPermissions.CREATE +
                                                        AccountPermissions.UPDATE, expiry)
    sas = TableService(connection_string=f"TableEndpoint={server.endpoint};SharedAccessSignature={token}")
    name = table_name("legacy")
    assert sas.create_table(name)
    try:
        sas.insert_entity(name, {"PartitionKey": "p", "RowKey": "r"})
        assert [e.RowKey for e in sas.query_entities(name)] == ["r"]
    finally:
        sas.delete_table(name)
    ro = ts.generate_account_shared_access_signature(ResourceTypes.CONTAINER, AccountPermissions.LIST, expiry)
    sas = TableService(connection_string=f"TableEndpoint={server.endpoint};SharedAccessSignature={ro}")
    list(sas.list_tables())
    with expect(AzureHttpError, 403, PERMISSION):
        sas.create_table(table_name(), fail_on_exist=True)


# Cosmos DB refuses every Set Service Properties: 405 MethodNotAllowed
# (test_too_many_cors_rules, test_retention_too_long; docs/cosmos.md).
def test_service_properties_and_stats(own_server):
    cs = own_server.connection_string + f"TableSecondaryEndpoint={own_server.endpoint}-secondary;"
    ts = TableService(connection_string=cs)
    if COSMOS:
        with expect(AzureHttpError, 405, "MethodNotAllowed"):
            ts.set_table_service_properties(cors=[CorsRule(["https://a.example"], ["GET"])] * 6)
        return
    ts.set_table_service_properties(
        hour_metrics=Metrics(enabled=True, include_apis=False, retention_policy=RetentionPolicy(enabled=True, days=3)),
        cors=[CorsRule(["https://app.example"], ["GET", "MERGE"], max_age_in_seconds=60, allowed_headers=["x-ms-*"])],
    )
    props = ts.get_table_service_properties()
    assert props.hour_metrics.enabled and props.hour_metrics.retention_policy.days == 3
    assert [(r.allowed_origins, r.allowed_methods, r.max_age_in_seconds) for r in props.cors] == [(["https://app.example"], ["GET", "MERGE"], 60)]
    stats = ts.get_table_service_stats()
    assert stats.geo_replication.status == "live" and stats.geo_replication.last_sync_time is not None
    with expect(AzureHttpError, 400, "InvalidXmlDocument"):
        ts.set_table_service_properties(cors=[CorsRule(["https://a.example"], ["GET"])] * 6)
