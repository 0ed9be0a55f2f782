"""Queries through TableClient: query_entities with parameters and select,
paging with by_page() and continuation tokens saved and resumed later, and
the boolean literals true/false in filters (docs/protocol.md 0.1, 6)."""

import json

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from conftest import COSMOS, table_name
from helpers import TABLE_NOT_FOUND, expect_error


def fill(table, partitions, per_partition, **extra):
    """Inserts entities with batches of 100 (one partition each)."""
    for p in partitions:
        ops = []
        for i in range(per_partition):
            ops.append(("create", {"PartitionKey": p, "RowKey": f"{i:05d}", "N": i, "Even": i % 2 == 0, **extra}))
            if len(ops) == 100:
                table.submit_transaction(ops)
                ops = []
        if ops:
            table.submit_transaction(ops)


def keys(entities):
    return [(e["PartitionKey"], e["RowKey"]) for e in entities]


def test_parameters_and_select(table):
    fill(table, ["a", "b"], 10)
    rows = list(table.query_entities("PartitionKey eq @pk and N ge @lo and N lt @hi",
                                     parameters={"pk": "b", "lo": 3, "hi": 6}, select=["N", "RowKey"]))
    assert [dict(e) for e in rows] == [{"RowKey": "00003", "N": 3}, {"RowKey": "00004", "N": 4}, {"RowKey": "00005", "N": 5}]
    # A parameter holding a quote is escaped by the SDK ('' in the literal).
    table.create_entity({"PartitionKey": "q", "RowKey": "1", "Name": "O'Brien"})
    assert keys(table.query_entities("Name eq @n", parameters={"n": "O'Brien"})) == [("q", "1")]
    # select as a comma-separated string, with a missing property (null).
    rows = list(table.query_entities("PartitionKey eq 'q'", select="Name,Nope"))
    assert [dict(e) for e in rows] == [{"Name": "O'Brien", "Nope": None}]
    # Ordered by PartitionKey then RowKey.
    all_keys = keys(table.list_entities())
    assert all_keys == sorted(all_keys) and len(all_keys) == 21


def test_by_page_and_tokens_resumed_later(table):
    fill(table, ["p1", "p2", "p3"], 7)
    flt = "N ge @n"
    params = {"n": 2}  # 5 of each partition: 15 entities
    pager = table.query_entities(flt, parameters=params, results_per_page=4).by_page()
    first = list(next(pager))
    assert len(first) == 4
    token = pager.continuation_token
    assert token and set(token) == {"PartitionKey", "RowKey"}
    rest = [e for page in pager for e in page]
    # Later, a new query resumes from the saved token: the same pages again.
    again = table.query_entities(flt, parameters=params, results_per_page=4).by_page(continuation_token=token)
    sizes, resumed = [], []
    for page in again:
        items = list(page)
        sizes.append(len(items))
        resumed += items
    assert sizes == [4, 4, 3]
    assert keys(resumed) == keys(rest)
    assert keys(first + rest) == sorted(keys(first + rest)) and len(first + rest) == 15
    assert again.continuation_token is None
    # The same token resumed twice gives the same page (docs/protocol.md 0.1).
    one = list(next(table.query_entities(flt, parameters=params, results_per_page=4).by_page(continuation_token=token)))
    assert keys(one) == keys(resumed[:4])


def test_list_entities_pages_of_1000(table):
    fill(table, ["x", "y", "z"], 834)  # 2,502 entities
    pager = table.list_entities().by_page()
    sizes = [len(list(page)) for page in pager]
    assert sizes == [1000, 1000, 502]
    # results_per_page with select on list_entities.
    pager = table.list_entities(results_per_page=1000, select=["N"]).by_page()
    page = list(next(pager))
    assert len(page) == 1000 and all(set(e) == {"N"} for e in page)
    # Tokens are opaque, in the service's form (1!<length>!<base64>); Cosmos
    # DB's: NextPartitionKey {"token":…,"range":{…}}, NextRowKey NA
    # (test_query_entities_with_top_and_next; docs/cosmos.md).
    token = pager.continuation_token
    if COSMOS:
        assert token["RowKey"] == "NA" and json.loads(token["PartitionKey"]).keys() == {"token", "range"}, token
    else:
        assert all(v.startswith("1!") for v in token.values()), token
    resumed = next(table.list_entities(results_per_page=1000).by_page(continuation_token=token))
    assert keys(resumed)[0] == ("y", "00166")


def test_true_and_false_filters(table):
    # true and false are conditions of their own (docs/protocol.md 0.1).
    fill(table, ["p"], 4)
    assert len(list(table.query_entities("true"))) == 4
    assert list(table.query_entities("false")) == []
    assert keys(table.query_entities("(true and RowKey eq '00001')")) == [("p", "00001")]
    assert keys(table.query_entities("false or N eq 2")) == [("p", "00002")]
    assert len(list(table.query_entities("not false and Even"))) == 2
    # True, capitalised, is a property name: missing, so nothing matches.
    assert list(table.query_entities("True")) == []
    table.create_entity({"PartitionKey": "p", "RowKey": "t", "True": True})
    assert keys(table.query_entities("True")) == [("p", "t")]
    # A parameter holding a Python bool is written true/false by the SDK.
    assert len(list(table.query_entities("Even eq @b", parameters={"b": True}))) == 2


def test_unsupported_and_bad_filters(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "A": 1, "B": 2})
    for flt in ["1 eq 2", "A eq B", "true eq false"]:
        with expect_error(HttpResponseError, 501, "NotImplemented"):
            list(table.query_entities(flt))
    for flt in ["A eq", "A eq 'x", "A EQ 1", "(A eq 1", "A eq null", "A eq 99999999999"]:
        with expect_error(HttpResponseError, 400, "InvalidInput"):
            list(table.query_entities(flt))


def test_query_missing_table(service):
    t = service.get_table_client(table_name())
    with expect_error(ResourceNotFoundError, 404, TABLE_NOT_FOUND):
        list(t.list_entities())
    with expect_error(ResourceNotFoundError, 404, TABLE_NOT_FOUND):
        list(t.query_entities("PartitionKey eq 'p'"))


def test_tables_filter_true_false(service, table):
    assert table.table_name in [t.name for t in service.query_tables("true")]
    assert list(service.query_tables("false")) == []
