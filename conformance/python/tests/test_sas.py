"""Shared access signatures made by the SDK: generate_table_sas with
permissions and key ranges, generate_account_sas, a SAS naming a stored
access policy, each used through AzureSasCredential (docs/protocol.md 0.1, 9)."""

import datetime
from urllib.parse import parse_qs

import pytest
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ResourceNotFoundError
from azure.data.tables import (
    AccountSasPermissions,
    ResourceTypes,
    TableAccessPolicy,
    TableClient,
    TableSasPermissions,
    TableServiceClient,
    TableTransactionError,
    UpdateMode,
    generate_account_sas,
    generate_table_sas,
)

from conftest import COSMOS, table_name
from helpers import PERMISSION, expect_error


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def sas_table(server, name, token):
    return TableClient(server.endpoint, name, credential=AzureSasCredential(token))


def keys(entities):
    return [(e["PartitionKey"], e["RowKey"]) for e in entities]


def test_table_sas_permissions(server, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "V": 1})
    name = table.table_name
    read = generate_table_sas(server.credential, name, permission=TableSasPermissions(read=True),
                              start=now() - datetime.timedelta(minutes=5), expiry=now() + datetime.timedelta(hours=1))
    with sas_table(server, name, read) as ro:
        assert ro.get_entity("p", "r")["V"] == 1
        assert keys(ro.list_entities()) == [("p", "r")]
        with expect_error(HttpResponseError, 403, PERMISSION, decoded=False):
            ro.create_entity({"PartitionKey": "p", "RowKey": "new"})
        with expect_error(HttpResponseError, 403, PERMISSION):
            ro.delete_entity("p", "r")
        with expect_error(HttpResponseError, 403, PERMISSION):
            ro.update_entity({"PartitionKey": "p", "RowKey": "r", "V": 2})
    # Add alone: inserts, but an upsert needs add and update.
    add = generate_table_sas(server.credential, name, permission="a", expiry=now() + datetime.timedelta(hours=1))
    with sas_table(server, name, add) as ao:
        ao.create_entity({"PartitionKey": "p", "RowKey": "added"})
        with expect_error(HttpResponseError, 403, PERMISSION):
            ao.upsert_entity({"PartitionKey": "p", "RowKey": "added"})
    both = generate_table_sas(server.credential, name, permission=TableSasPermissions(add=True, update=True),
                              expiry=now() + datetime.timedelta(hours=1))
    with sas_table(server, name, both) as uo:
        uo.upsert_entity({"PartitionKey": "p", "RowKey": "added", "V": 3}, mode=UpdateMode.REPLACE)
    assert table.get_entity("p", "added")["V"] == 3
    # A table SAS reaches only its table.
    other = table_name()
    with TableServiceClient.from_connection_string(server.connection_string) as svc:
        svc.create_table(other)
        try:
            with sas_table(server, other, read) as wrong:
                with expect_error(HttpResponseError, 403, "AuthorizationFailure"):
                    list(wrong.list_entities())
        finally:
            svc.delete_table(other)


def test_table_sas_key_range(server, table):
    for pk in "abc":
        for rk in "12":
            table.create_entity({"PartitionKey": pk, "RowKey": rk})
    token = generate_table_sas(server.credential, table.table_name, permission="raud",
                               expiry=now() + datetime.timedelta(hours=1), start_pk="a", start_rk="2", end_pk="b", end_rk="1")
    q = parse_qs(token)
    assert (q["spk"], q["srk"], q["epk"], q["erk"]) == (["a"], ["2"], ["b"], ["1"])
    if COSMOS:
        # Cosmos DB refuses every SAS that names a key range: 405
        # MethodNotAllowed (test_sas_add_outside_range; docs/cosmos.md).
        with sas_table(server, table.table_name, token) as sc:
            with expect_error(HttpResponseError, 405, "MethodNotAllowed"):
                sc.get_entity("a", "2")
        return
    with sas_table(server, table.table_name, token) as sc:
        # Queries see only the entities inside the range.
        assert keys(sc.list_entities()) == [("a", "2"), ("b", "1")]
        assert keys(sc.query_entities("RowKey eq '1'")) == [("b", "1")]
        assert sc.get_entity("a", "2")["RowKey"] == "2"
        sc.upsert_entity({"PartitionKey": "b", "RowKey": "0", "In": True})
        # Outside it a point read finds nothing, as live answers (.NET SDK recording
        # ValidateSasCredentialsWithRowKeyAndPartitionKeyRanges), and every write is 403
        # (docs/protocol.md 0.1).
        for pk, rk in [("a", "1"), ("b", "2"), ("c", "1"), ("0", "0")]:
            with expect_error(ResourceNotFoundError, 404, "ResourceNotFound"):
                sc.get_entity(pk, rk)
            with expect_error(HttpResponseError, 403, "AuthorizationFailure", decoded=False):
                sc.create_entity({"PartitionKey": pk, "RowKey": rk + "x"})
            with expect_error(HttpResponseError, 403, "AuthorizationFailure"):
                sc.upsert_entity({"PartitionKey": pk, "RowKey": rk})
            with expect_error(HttpResponseError, 403, "AuthorizationFailure"):
                sc.delete_entity(pk, rk)
        # And each operation of a transaction.
        with pytest.raises(TableTransactionError) as info:
            sc.submit_transaction([("upsert", {"PartitionKey": "b", "RowKey": "05"}), ("upsert", {"PartitionKey": "b", "RowKey": "3"})])
        assert (info.value.index, info.value.status_code, info.value.error_code) == (1, 403, "AuthorizationFailure")
    assert ("b", "05") not in keys(table.list_entities())


def test_account_sas(server):
    token = generate_account_sas(server.credential, resource_types=ResourceTypes(service=True, container=True, object=True),
                                 permission=AccountSasPermissions(read=True, write=True, delete=True, list=True, add=True,
                                                                  create=True, update=True),
                                 expiry=now() + datetime.timedelta(hours=1), start=now() - datetime.timedelta(minutes=5))
    name = table_name()
    with TableServiceClient(server.endpoint, credential=AzureSasCredential(token)) as svc:
        t = svc.create_table(name)
        try:
            assert name in [x.name for x in svc.list_tables()]
            t.create_entity({"PartitionKey": "p", "RowKey": "r"})
            assert keys(t.list_entities()) == [("p", "r")]
            t.delete_entity("p", "r")
        finally:
            svc.delete_table(name)
    # Read and list only: no table creation.
    ro = generate_account_sas(server.credential, resource_types=ResourceTypes(container=True, object=True),
                              permission=AccountSasPermissions(read=True, list=True), expiry=now() + datetime.timedelta(hours=1))
    with TableServiceClient(server.endpoint, credential=AzureSasCredential(ro)) as svc:
        list(svc.list_tables())
        with expect_error(HttpResponseError, 403, PERMISSION):
            svc.create_table(table_name())
    # Objects only: the table list is a container operation.
    objects = generate_account_sas(server.credential, resource_types=ResourceTypes(object=True),
                                   permission="rl", expiry=now() + datetime.timedelta(hours=1))
    with TableServiceClient(server.endpoint, credential=AzureSasCredential(objects)) as svc:
        with expect_error(HttpResponseError, 403, "AuthorizationResourceTypeMismatch"):
            list(svc.list_tables())


# Cosmos DB serves no service properties, statistics or table ACLs (its
# FAQ); tableemu's profile refuses them as Cosmos DB refuses Set Service
# Properties, 405 MethodNotAllowed (docs/cosmos.md, "What Cosmos DB refuses").
def test_stored_access_policy(server, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    if COSMOS:
        with expect_error(HttpResponseError, 405, "MethodNotAllowed"):
            table.set_table_access_policy({"readers": TableAccessPolicy(permission=TableSasPermissions(read=True))})
        with expect_error(HttpResponseError, 405, "MethodNotAllowed"):
            table.get_table_access_policy()
        return
    start = now().replace(microsecond=0) - datetime.timedelta(minutes=5)
    expiry = start + datetime.timedelta(hours=2)
    table.set_table_access_policy({
        "readers": TableAccessPolicy(permission=TableSasPermissions(read=True), start=start, expiry=expiry),
        "open": TableAccessPolicy(expiry=expiry),  # the SAS supplies the permission
    })
    got = table.get_table_access_policy()
    assert set(got) == {"readers", "open"}
    assert got["readers"].permission == "r"
    assert got["readers"].start == start and got["readers"].expiry == expiry
    assert got["open"].permission is None and got["open"].start is None
    # A SAS naming the policy takes its permission and times from it.
    token = generate_table_sas(server.credential, table.table_name, policy_id="readers")
    assert "sp" not in parse_qs(token) and "se" not in parse_qs(token)
    with sas_table(server, table.table_name, token) as sc:
        assert sc.get_entity("p", "r")["RowKey"] == "r"
        with expect_error(HttpResponseError, 403, PERMISSION, decoded=False):
            sc.create_entity({"PartitionKey": "p", "RowKey": "new"})
    token2 = generate_table_sas(server.credential, table.table_name, policy_id="open", permission="ra")
    with sas_table(server, table.table_name, token2) as sc:
        sc.create_entity({"PartitionKey": "p", "RowKey": "new"})
    # A policy removed revokes every SAS that names it: 403 AuthenticationFailed.
    table.set_table_access_policy({"open": TableAccessPolicy(expiry=expiry)})
    with sas_table(server, table.table_name, token) as sc:
        with expect_error(ClientAuthenticationError, 403, "AuthenticationFailed"):
            sc.get_entity("p", "r")
    # Up to five policies; the SDK refuses a sixth itself, after the
    # service's 400 InvalidXmlDocument.
    five = {f"id{i}": TableAccessPolicy(permission="r", expiry=expiry) for i in range(5)}
    table.set_table_access_policy(five)
    assert set(table.get_table_access_policy()) == set(five)
    with pytest.raises(ValueError, match="Too many access policies"):
        table.set_table_access_policy({**five, "id5": TableAccessPolicy(permission="r", expiry=expiry)})
    table.set_table_access_policy({})
    assert table.get_table_access_policy() == {}


def test_bad_signatures(server, table):
    name = table.table_name
    hour = now() + datetime.timedelta(hours=1)
    wrong_key = AzureNamedKeyCredential(server.account, "d3Jvbmcga2V5" * 7 + "AA==")
    for token in [
        generate_table_sas(wrong_key, name, permission="r", expiry=hour),
        generate_table_sas(server.credential, name, permission="r", expiry=now() - datetime.timedelta(minutes=1)),
        generate_table_sas(server.credential, name, permission="r", start=hour, expiry=hour + datetime.timedelta(hours=1)),
    ]:
        with sas_table(server, name, token) as sc:
            with expect_error(ClientAuthenticationError, 403, "AuthenticationFailed"):
                list(sc.list_entities())
    # spr=https over plain HTTP.
    https = generate_table_sas(server.credential, name, permission="r", expiry=hour, protocol="https")
    with sas_table(server, name, https) as sc:
        with expect_error(HttpResponseError, 403, "AuthorizationProtocolMismatch"):
            list(sc.list_entities())
    # An IP range that excludes 127.0.0.1.
    ip = generate_table_sas(server.credential, name, permission="r", expiry=hour, ip_address_or_range="192.0.2.1-192.0.2.9")
    with sas_table(server, name, ip) as sc:
        with expect_error(HttpResponseError, 403, "AuthorizationSourceIPMismatch"):
            list(sc.list_entities())


def test_sas_field_given_twice(server, table):
    # sig or any signed field twice: 403 AuthenticationFailed, even with the
    # same value twice (docs/protocol.md 0.1).
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    token = generate_table_sas(server.credential, table.table_name, permission="r", expiry=now() + datetime.timedelta(hours=1))
    with sas_table(server, table.table_name, token) as sc:
        assert sc.get_entity("p", "r")["RowKey"] == "r"
    fields = token.split("&")
    sig = next(f for f in fields if f.startswith("sig="))
    for extra in [sig, "sig=AAAA", next(f for f in fields if f.startswith("sp=")), "sp=raud", "se=2099-01-01T00:00:00Z", "tn=" + table.table_name]:
        with sas_table(server, table.table_name, token + "&" + extra) as sc:
            with expect_error(ClientAuthenticationError, 403, "AuthenticationFailed"):
                sc.get_entity("p", "r")
