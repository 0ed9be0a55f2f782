"""Tables through TableServiceClient: create, create-if-not-exists, delete,
list with a filter and with results_per_page paging (docs/protocol.md 1.4, 2)."""

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableClient

from conftest import COSMOS, table_name
from helpers import TABLE_NOT_FOUND, expect_error, response_code


def names(tables):
    return [t.name for t in tables]


def test_create_list_delete(service):
    name = table_name()
    client = service.create_table(name)
    try:
        assert isinstance(client, TableClient)
        assert client.table_name == name
        assert name in names(service.list_tables())
        # The listing keeps the case the table was created with.
        assert names(service.query_tables("TableName eq @n", parameters={"n": name})) == [name]
    finally:
        service.delete_table(name)
    assert names(service.query_tables("TableName eq @n", parameters={"n": name})) == []


def test_create_existing_is_409(service):
    name = table_name()
    service.create_table(name)
    try:
        with expect_error(ResourceExistsError, 409, "TableAlreadyExists"):
            service.create_table(name)
        if COSMOS:
            # Cosmos DB's table names are case-sensitive (its FAQ): another
            # table, beside the first (docs/cosmos.md, "table names").
            service.create_table(name.upper())
            service.delete_table(name.upper())
        else:
            # Names are unique regardless of case.
            with expect_error(ResourceExistsError, 409, "TableAlreadyExists"):
                service.create_table(name.upper())
    finally:
        service.delete_table(name)


def test_create_table_if_not_exists(service):
    name = table_name()
    first = service.create_table_if_not_exists(name)
    try:
        first.create_entity({"PartitionKey": "p", "RowKey": "r"})
        # The second call finds the table (409 inside the SDK) and keeps it.
        second = service.create_table_if_not_exists(name)
        assert second.table_name == name
        assert second.get_entity("p", "r")["RowKey"] == "r"
    finally:
        service.delete_table(name)


def test_table_client_create_and_delete(server):
    name = table_name()
    client = TableClient.from_connection_string(server.connection_string, name)
    created = client.create_table()
    assert created.name == name
    with expect_error(ResourceExistsError, 409, "TableAlreadyExists"):
        client.create_table()
    client.delete_table()
    # TableClient.delete_table on a missing table succeeds: the SDK
    # swallows the service's 404 ResourceNotFound.
    client.delete_table()
    with expect_error(ResourceNotFoundError, 404, TABLE_NOT_FOUND, decoded=False):
        client.create_entity({"PartitionKey": "p", "RowKey": "r"})
    with expect_error(ResourceNotFoundError, 404, TABLE_NOT_FOUND):
        client.get_entity("p", "r")


def test_delete_missing_table_is_quiet(service):
    # TableServiceClient.delete_table swallows the 404 too.
    service.delete_table(table_name())


def test_list_with_filter_and_results_per_page(service):
    prefix = table_name("pg")[:12]
    created = [prefix + str(i) for i in range(5)]
    for n in created:
        service.create_table(n)
    try:
        flt = "TableName ge @lo and TableName lt @hi"
        params = {"lo": prefix, "hi": prefix + "z"}
        pages = service.query_tables(flt, parameters=params, results_per_page=2).by_page()
        sizes, seen = [], []
        for page in pages:
            items = names(page)
            sizes.append(len(items))
            seen += items
        assert sizes == [2, 2, 1]
        assert seen == sorted(created)
        # list_tables pages too.
        all_pages = [names(p) for p in service.list_tables(results_per_page=3).by_page()]
        assert all(len(p) <= 3 for p in all_pages)
        assert set(created) <= {n for p in all_pages for n in p}
        # A page of 2, then resume later from the saved token.
        first = service.query_tables(flt, parameters=params, results_per_page=2).by_page()
        assert names(next(first)) == sorted(created)[:2]
        token = first.continuation_token
        assert token
        resumed = service.query_tables(flt, parameters=params, results_per_page=2).by_page(continuation_token=token)
        assert names(next(resumed)) == sorted(created)[2:4]
        assert names(next(resumed)) == sorted(created)[4:]
        assert resumed.continuation_token is None
    finally:
        for n in created:
            service.delete_table(n)


def test_bad_table_names(service):
    # The SDK turns the service's 400 InvalidResourceName / OutOfRangeInput,
    # matched on their exact messages (the service's "specifed" included),
    # into a ValueError explaining the rules; the service's error is its
    # context. So this passes only if code and message are the service's.
    for bad, code in [("invalid_name", "InvalidResourceName"), ("1abc", "InvalidResourceName"),
                      ("ab", "OutOfRangeInput"), ("a" * 64, "OutOfRangeInput")]:
        with pytest.raises(ValueError, match="Storage table names must be alphanumeric") as info:
            service.create_table(bad)
        cause = info.value.__context__
        assert isinstance(cause, HttpResponseError) and cause.status_code == 400 and response_code(cause) == code, cause


def test_table_filter_errors(service):
    with expect_error(HttpResponseError, 400, "InvalidInput"):
        list(service.query_tables("TableName eq"))
