"""Connection strings and client construction: the forms users paste,
UseDevelopmentStorage=true on port 10002, SAS in a connection string,
from_table_url, wrong keys (docs/protocol.md 9)."""

import datetime

import pytest
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ResourceNotFoundError
from azure.cosmosdb.table.tableservice import TableService
from azure.data.tables import (
    AccountSasPermissions,
    ResourceTypes,
    TableClient,
    TableServiceClient,
    generate_account_sas,
    generate_table_sas,
)

from conftest import COSMOS, DEV_ACCOUNT, DEV_KEY, port_free, start_server, table_name
from helpers import expect_error


def roundtrip(svc: TableServiceClient):
    """Create a table, write and read an entity, delete the table."""
    name = table_name()
    t = svc.create_table(name)
    try:
        t.create_entity({"PartitionKey": "p", "RowKey": "r", "V": 1})
        assert t.get_entity("p", "r")["V"] == 1
        assert name in [x.name for x in svc.list_tables()]
    finally:
        svc.delete_table(name)


def test_connection_string_forms(server):
    ep = server.endpoint
    forms = [
        server.connection_string,
        server.connection_string.rstrip(";"),
        f"AccountName={server.account};AccountKey={server.key};TableEndpoint={ep}/",
        f"TableEndpoint={ep};AccountKey={server.key};AccountName={server.account};DefaultEndpointsProtocol=http",
        # Other services' endpoints, as Azurite's full string carries them.
        f"DefaultEndpointsProtocol=http;AccountName={server.account};AccountKey={server.key};"
        f"BlobEndpoint=http://127.0.0.1:10000/{server.account};QueueEndpoint=http://127.0.0.1:10001/{server.account};"
        f"TableEndpoint={ep};",
    ]
    for cs in forms:
        with TableServiceClient.from_connection_string(cs) as svc:
            roundtrip(svc)


def test_table_client_constructions(server, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    name = table.table_name
    with TableClient.from_connection_string(server.connection_string, name) as t:
        assert t.get_entity("p", "r")["RowKey"] == "r"
    with TableClient(server.endpoint, name, credential=server.credential) as t:
        assert t.get_entity("p", "r")["RowKey"] == "r"
    with TableClient.from_table_url(f"{server.endpoint}/{name}", credential=server.credential) as t:
        assert t.table_name == name and t.get_entity("p", "r")["RowKey"] == "r"
    # A SAS in the table URL.
    sas = generate_table_sas(server.credential, name, permission="r", expiry=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1))
    with TableClient.from_table_url(f"{server.endpoint}/{name}?{sas}") as t:
        assert t.get_entity("p", "r")["RowKey"] == "r"
    with TableServiceClient(server.endpoint, credential=server.credential) as svc:
        assert svc.get_table_client(name).get_entity("p", "r")["RowKey"] == "r"


def test_sas_in_connection_string(server):
    sas = generate_account_sas(server.credential, resource_types=ResourceTypes(service=True, container=True, object=True),
                               permission=AccountSasPermissions(read=True, write=True, delete=True, list=True, add=True, create=True, update=True),
                               expiry=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1))
    with TableServiceClient.from_connection_string(f"TableEndpoint={server.endpoint};SharedAccessSignature={sas}") as svc:
        roundtrip(svc)


def test_wrong_key_and_account(server):
    bad = server.connection_string.replace(server.key, "d3Jvbmcga2V5" * 7 + "AA==")
    with TableServiceClient.from_connection_string(bad) as svc:
        with expect_error(ClientAuthenticationError, 403, "AuthenticationFailed"):
            list(svc.list_tables())
    # The other account key works too? Only the one key is configured here;
    # a named credential for another account name is refused.
    if not server.own:
        pytest.skip("the account set of an external endpoint is unknown")
    other = TableServiceClient(server.endpoint.rsplit("/", 1)[0] + "/otheraccount",
                               credential=AzureNamedKeyCredential("otheraccount", DEV_KEY))
    with other:
        if COSMOS:
            # Under the profile, on host localhost, a first path segment
            # naming no account is a table of the Cosmos DB emulator's
            # account, localhost (docs/cosmos.md): signed for another
            # account, the request fails its signature.
            with expect_error(ClientAuthenticationError, 403, "AuthenticationFailed"):
                list(other.list_tables())
        else:
            with expect_error(ResourceNotFoundError, 404, "ResourceNotFound"):
                list(other.list_tables())


def test_use_development_storage_on_10002(server):
    """UseDevelopmentStorage=true means http://127.0.0.1:10002/devstoreaccount1
    with the well-known key: run against a tableemu on port 10002 when the
    port is free (the one test allowed to bind it)."""
    if not server.own:
        pytest.skip("UseDevelopmentStorage=true: TABLEEMU_TEST_CONNECTION_STRING is set, no tableemu started here")
    if not port_free(10002):
        pytest.skip("UseDevelopmentStorage=true: port 10002 is in use on 127.0.0.1, so the test did not run")
    try:
        srv = start_server(10002)
    except RuntimeError as e:
        if "port 10002 on 127.0.0.1 is in use" in str(e):
            pytest.skip("UseDevelopmentStorage=true: port 10002 was taken meanwhile, so the test did not run")
        raise
    try:
        assert srv.endpoint == f"http://127.0.0.1:10002/{DEV_ACCOUNT}"
        with TableServiceClient.from_connection_string("UseDevelopmentStorage=true") as svc:
            roundtrip(svc)
            name = table_name()
            svc.create_table(name)
            try:
                with TableClient.from_connection_string("UseDevelopmentStorage=true", name) as t:
                    t.upsert_entity({"PartitionKey": "p", "RowKey": "r", "V": 2})
                    assert [e["V"] for e in t.query_entities("V eq 2")] == [2]
                # On 10002, "localhost" is not taken for Cosmos DB either.
                with TableClient(f"http://localhost:10002/{DEV_ACCOUNT}", name, credential=AzureNamedKeyCredential(DEV_ACCOUNT, DEV_KEY)) as t:
                    assert t.get_entity("p", "r")["V"] == 2
                # The legacy SDK's emulator switch and its connection string.
                for legacy in (TableService(is_emulated=True), TableService(connection_string="UseDevelopmentStorage=true")):
                    assert legacy.get_entity(name, "p", "r").V.value == 2  # it wraps every Int32
                    assert legacy.exists(name)
            finally:
                svc.delete_table(name)
        print("UseDevelopmentStorage=true: ran against tableemu on 127.0.0.1:10002")
    finally:
        srv.stop()
