"""What the live service answers where tableemu once answered otherwise,
as azure-data-tables' own live tests assert it (docs/protocol.md 0.1):
entity operations on invalid table names, a table's URL given as the
endpoint, the read-only secondary, and keys the SDK's encoder annotates."""

import uuid
from datetime import datetime, timezone

import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.data.tables import TableAnalyticsLogging, TableClient, TableServiceClient, UpdateMode
from azure.data.tables._models import LocationMode  # not exported by 12.7.0

from conftest import COSMOS, table_name
from helpers import expect_error


# A table URL given where the account's goes makes Create Table an entity
# operation on a missing table: on Cosmos DB not in the evidence; the profile
# answers as to every entity operation on a missing table, 404
# ResourceNotFound "The specified resource does not exist." (docs/cosmos.md).
MISSING_TABLE = "specified resource does not exist" if COSMOS else "table specified does not exist"


def credential(server):
    return AzureNamedKeyCredential(server.account, server.key)


@pytest.mark.parametrize("name", ["1table", "a" * 2, "a" * 64, "a//", "my_table"])
def test_table_name_errors(server, name):
    # The SDK turns the service's InvalidResourceName / OutOfRangeInput
    # into its table-name ValueError (test_table_name_errors upstream).
    with TableClient(server.endpoint, name, credential=credential(server)) as client:
        calls = [
            client.create_table,
            lambda: client.create_entity({"PartitionKey": "foo", "RowKey": "bar"}),
            lambda: client.upsert_entity({"PartitionKey": "foo", "RowKey": "foo"}),
            lambda: client.delete_entity("PK", "RK"),
            # Table ACLs: 405 MethodNotAllowed on Cosmos DB, whatever the
            # name (docs/cosmos.md), so not this case there.
            *([] if COSMOS else [client.get_table_access_policy]),
            lambda: client.submit_transaction([("upsert", {"PartitionKey": "A", "RowKey": "B"})]),
        ]
        for call in calls:
            with pytest.raises(ValueError) as error:
                call()
            assert "Storage table names must be alphanumeric" in str(error.value)


def test_client_with_url_ends_with_table_name(server):
    # A table's URL given where the account endpoint goes
    # (test_client_with_url_ends_with_table_name upstream).
    name = table_name()
    invalid_url = server.endpoint + "/" + name
    with TableClient(invalid_url, name, credential=credential(server)) as tc:
        with pytest.raises(ResourceNotFoundError) as exc:
            tc.create_table()
        assert MISSING_TABLE in str(exc.value)
        with TableClient(server.endpoint, name, credential=credential(server)) as valid:
            valid.create_table()
            try:
                with pytest.raises(HttpResponseError) as exc:
                    tc.create_table()
                # Cosmos DB: "PartitionKey/RowKey cannot be empty"
                # (test_insert_entity_missing_pk; docs/cosmos.md).
                assert ("PartitionKey/RowKey cannot be empty" if COSMOS else "values are not specified") in str(exc.value)
                with pytest.raises(HttpResponseError) as exc:
                    tc.delete_table()
                # Cosmos DB: not in the evidence; the profile gives its
                # sentence for a refused input (docs/cosmos.md).
                want = "One of the input values is invalid." if COSMOS else "URI does not match number of key properties for the resource"
                assert want in str(exc.value)
            finally:
                valid.delete_table()


def test_service_client_with_url_ends_with_table_name(server):
    # A table's URL given to a TableServiceClient: its service properties
    # go to /<account>/<table>/?restype=service&comp=properties, which the
    # service refuses with 400 InvalidQueryParameterValue (the Get and Set
    # of test_client_with_url_ends_with_table_name in
    # test_table_service_properties.py upstream, recorded live at
    # x-ms-version 2025-07-05).
    name = table_name()
    invalid_url = server.endpoint + "/" + name
    sentence = "Value for one of the query parameters specified in the request URI is invalid."
    with TableServiceClient(invalid_url, credential=credential(server)) as tsc:
        with pytest.raises(ResourceNotFoundError) as exc:
            tsc.create_table(name)
        assert MISSING_TABLE in str(exc.value)
        with expect_error(HttpResponseError, 400, "InvalidQueryParameterValue") as exc:
            tsc.set_service_properties(analytics_logging=TableAnalyticsLogging(write=True))
        assert sentence in str(exc.value)
        with expect_error(HttpResponseError, 400, "InvalidQueryParameterValue") as exc:
            tsc.get_service_properties()
        assert sentence in str(exc.value)


def test_secondary_is_read_only(server):
    # location_mode=SECONDARY sends every request to <account>-secondary
    # (test_table_client_location_mode upstream).
    name = table_name()
    entity = {"PartitionKey": "foo", "RowKey": "bar"}
    with TableClient(server.endpoint, name, credential=credential(server), location_mode=LocationMode.SECONDARY) as client:
        with pytest.raises(HttpResponseError) as ex:
            client.create_table()
        assert "Write operations are not allowed." in str(ex.value)
    with TableClient(server.endpoint, name, credential=credential(server)) as primary:
        primary.create_table()
        try:
            with TableClient(server.endpoint, name, credential=credential(server), location_mode=LocationMode.SECONDARY) as client:
                with pytest.raises(HttpResponseError) as ex:
                    client.create_entity(entity)
                assert ex.value.status_code == 403
                with pytest.raises(HttpResponseError) as ex:
                    client.upsert_entity(entity)
                assert "Write operations are not allowed." in str(ex.value)
                with pytest.raises(ResourceNotFoundError) as ex:
                    client.get_entity("foo", "bar")
                assert "The specified resource does not exist." in str(ex.value)
                assert list(client.list_entities()) == []
                with pytest.raises(HttpResponseError) as ex:
                    client.delete_entity(entity)
                assert "Write operations are not allowed." in str(ex.value)
                with pytest.raises(HttpResponseError) as ex:
                    client.delete_table()
                assert "Write operations are not allowed." in str(ex.value)
        finally:
            primary.delete_table()


def test_encoder_complex_keys(table):
    # The encoder annotates keys that are not strings. Live refuses such
    # keys on insert (400 InvalidInput, "One of the request inputs is not
    # valid.", test_encoder_create_entity_complex_keys) and an upsert stores
    # them as the strings sent, read back as strings
    # (test_encoder_upsert_entity_complex_keys). Cosmos DB refuses the
    # upsert too, 400 InvalidInput (python-cosmos
    # test_encoder_upsert_entity_complex_keys; docs/cosmos.md).
    pk = datetime(2020, 1, 1, 1, 2, 3, tzinfo=timezone.utc)
    rk = uuid.UUID("c9da6455-213d-42c9-9a79-3e9149a57833")
    with pytest.raises(HttpResponseError) as ex:
        table.create_entity({"PartitionKey": pk, "RowKey": rk, "Value": 1})
    assert ex.value.status_code == 400
    assert ex.value.response.headers["x-ms-error-code"] == "InvalidInput"
    # Cosmos DB's sentence: "One of the input values is invalid." (the same
    # recording; docs/cosmos.md, "Error bodies").
    assert ("One of the input values is invalid." if COSMOS else "One of the request inputs is not valid.") in str(ex.value)
    assert list(table.list_entities()) == []
    if COSMOS:
        for mode in (UpdateMode.MERGE, UpdateMode.REPLACE):
            with pytest.raises(HttpResponseError) as ex:
                table.upsert_entity({"PartitionKey": pk, "RowKey": rk, "Value": 1}, mode=mode)
            assert ex.value.status_code == 400
            assert ex.value.response.headers["x-ms-error-code"] == "InvalidInput"
            assert "One of the input values is invalid." in str(ex.value)
        assert list(table.list_entities()) == []
        return
    table.upsert_entity({"PartitionKey": pk, "RowKey": rk, "Value": 1})
    (got,) = list(table.list_entities())
    assert isinstance(got["PartitionKey"], str) and isinstance(got["RowKey"], str)
    assert got["RowKey"] == str(rk)
    assert got["PartitionKey"].startswith("2020-01-01T01:02:03")
    assert table.get_entity(got["PartitionKey"], got["RowKey"])["Value"] == 1
