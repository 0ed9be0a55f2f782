"""Transactions through TableClient.submit_transaction: every operation kind,
failures with the failing operation's index and code and nothing written,
the service's limits (docs/protocol.md 0.1, 7)."""

import pytest
from azure.core import MatchConditions
from azure.data.tables import RequestTooLargeError, TableTransactionError, UpdateMode

from conftest import COSMOS, table_name
from helpers import TABLE_NOT_FOUND


def state(table):
    return {e["RowKey"]: {k: v for k, v in e.items() if k not in ("PartitionKey", "RowKey")} for e in table.list_entities()}


def expect_failure(table, ops, index, status, code):
    before = state(table)
    with pytest.raises(TableTransactionError) as info:
        table.submit_transaction(ops)
    err = info.value
    assert (err.index, err.status_code, err.error_code) == (index, status, code), err
    assert err.message.startswith(f"{index}:"), err.message  # docs/protocol.md 7.4
    assert state(table) == before, "a failed transaction wrote something"
    return err


def test_every_operation_kind(table):
    for rk in ["um", "ur", "uu", "dm", "du", "sm", "sr"]:
        table.create_entity({"PartitionKey": "p", "RowKey": rk, "Old": 1, "V": 0})
    etag = {rk: table.get_entity("p", rk).metadata["etag"] for rk in ["um", "ur", "dm"]}
    ops = [
        ("create", {"PartitionKey": "p", "RowKey": "new", "V": 1}),
        ("upsert", {"PartitionKey": "p", "RowKey": "sm", "V": 1}, {"mode": UpdateMode.MERGE}),
        ("upsert", {"PartitionKey": "p", "RowKey": "sr", "V": 1}, {"mode": "replace"}),
        ("upsert", {"PartitionKey": "p", "RowKey": "fresh", "V": 1}),  # merge upsert inserting
        ("update", {"PartitionKey": "p", "RowKey": "um", "V": 1},
         {"mode": UpdateMode.MERGE, "etag": etag["um"], "match_condition": MatchConditions.IfNotModified}),
        ("update", {"PartitionKey": "p", "RowKey": "ur", "V": 1},
         {"mode": UpdateMode.REPLACE, "etag": etag["ur"], "match_condition": MatchConditions.IfNotModified}),
        ("update", {"PartitionKey": "p", "RowKey": "uu", "V": 1}, {"mode": "replace"}),  # If-Match: *
        ("delete", {"PartitionKey": "p", "RowKey": "dm"}, {"etag": etag["dm"], "match_condition": MatchConditions.IfNotModified}),
        ("delete", {"PartitionKey": "p", "RowKey": "du"}),
    ]
    results = table.submit_transaction(ops)
    assert len(results) == len(ops)
    for i, r in enumerate(results[:7]):
        assert r["etag"].startswith("W/\"datetime'"), (i, r)
    assert state(table) == {
        "new": {"V": 1},
        "sm": {"Old": 1, "V": 1},
        "sr": {"V": 1},
        "fresh": {"V": 1},
        "um": {"Old": 1, "V": 1},
        "ur": {"V": 1},
        "uu": {"V": 1},
    }
    # Each returned ETag is the entity's.
    assert results[0]["etag"] == table.get_entity("p", "new").metadata["etag"]
    # The transaction as a TableBatchOperations-free list of tuples also
    # accepts TableEntity values read back, with their metadata.
    e = table.get_entity("p", "new")
    e["V"] = 2
    table.submit_transaction([("update", e, {"etag": e.metadata["etag"], "match_condition": MatchConditions.IfNotModified})])
    assert table.get_entity("p", "new")["V"] == 2


def test_failing_operation_writes_nothing(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "exists", "V": 0})
    stale = table.get_entity("p", "exists").metadata["etag"]
    table.update_entity({"PartitionKey": "p", "RowKey": "exists", "V": 1})
    ok = [("create", {"PartitionKey": "p", "RowKey": "a"}), ("upsert", {"PartitionKey": "p", "RowKey": "b"})]
    expect_failure(table, ok + [("create", {"PartitionKey": "p", "RowKey": "exists"})], 2, 409, "EntityAlreadyExists")
    expect_failure(table, ok + [("update", {"PartitionKey": "p", "RowKey": "exists", "V": 9},
                                 {"etag": stale, "match_condition": MatchConditions.IfNotModified})], 2, 412, "UpdateConditionNotSatisfied")
    expect_failure(table, ok + [("delete", {"PartitionKey": "p", "RowKey": "exists"},
                                 {"etag": stale, "match_condition": MatchConditions.IfNotModified})], 2, 412, "UpdateConditionNotSatisfied")
    expect_failure(table, ok + [("update", {"PartitionKey": "p", "RowKey": "missing"})], 2, 404, "ResourceNotFound")
    expect_failure(table, ok + [("delete", {"PartitionKey": "p", "RowKey": "missing"})], 2, 404, "ResourceNotFound")
    expect_failure(table, [("create", {"PartitionKey": "p", "RowKey": "bad/key"})], 0, 400, "OutOfRangeInput")
    expect_failure(table, [ok[0], ("create", {"PartitionKey": "p", "RowKey": "big", "S": "x" * 40000})], 1, 400, "PropertyValueTooLarge")


def test_batch_rules(table):
    # The same entity twice: 400 InvalidDuplicateRow at the repeat.
    expect_failure(table, [("create", {"PartitionKey": "p", "RowKey": "a"}), ("upsert", {"PartitionKey": "p", "RowKey": "a"})],
                   1, 400, "InvalidDuplicateRow")
    # More than 100 operations: the SDK sends them; the service refuses,
    # naming operation 99, the last a change set may hold (its recordings
    # test_batch_too_many_ops, docs/protocol.md 7.4).
    expect_failure(table, [("create", {"PartitionKey": "p", "RowKey": f"{i:03d}"}) for i in range(101)], 99, 400, "InvalidInput")
    # 100 is fine.
    assert len(table.submit_transaction([("create", {"PartitionKey": "p", "RowKey": f"{i:03d}"}) for i in range(100)])) == 100
    # Two partitions never reach the service: the SDK refuses them itself.
    with pytest.raises(ValueError, match="Partition Keys in the batch must all be the same"):
        table.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "x"}), ("create", {"PartitionKey": "q", "RowKey": "y"})])
    # An empty transaction returns an empty list.
    assert table.submit_transaction([]) == []


def test_transaction_over_the_size_limit(table):
    # 100 entities of two 21,000-character strings: about 8.4 MB of JSON,
    # over the 4 MiB a request body may hold (docs/protocol.md 0.1). Cosmos
    # DB's batches hold 2 MB (its FAQ), 2 MiB in tableemu (docs/cosmos.md,
    # "the size of a batch"): two 10,500-character strings are over it.
    over, under = (10500, 9500) if COSMOS else (21000, 20000)
    ops = [("create", {"PartitionKey": "p", "RowKey": f"{i:03d}", "A": "a" * over, "B": "b" * over}) for i in range(100)]
    with pytest.raises(RequestTooLargeError) as info:
        table.submit_transaction(ops)
    assert info.value.status_code == 413 and info.value.error_code == "RequestBodyTooLarge"
    assert list(table.list_entities()) == []
    # Just under the limit passes: 100 entities of 2 × 20,000 ASCII
    # characters (2 × 9,500 on Cosmos DB).
    ops = [("create", {"PartitionKey": "p", "RowKey": f"{i:03d}", "A": "a" * under, "B": "b" * under}) for i in range(100)]
    assert len(table.submit_transaction(ops)) == 100


def test_lone_operation_failure_names_no_index(table):
    # One operation that fails against the stored entity: the service's
    # message has no index, and the SDK reports index 0 (its default); live
    # recordings test_batch_single_op_if_doesnt_match and
    # test_new_delete_nonexistent_entity, docs/protocol.md 7.4. Cosmos DB's
    # message names index 0 (the same recordings; docs/cosmos.md, "a failed
    # part").
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    stale = "W/\"datetime'2012-06-15T22%3A51%3A44.9662825Z'\""
    for ops, status, code, text in [
        ([("update", {"PartitionKey": "p", "RowKey": "r", "V": 1}, {"etag": stale, "match_condition": MatchConditions.IfNotModified})],
         412, "UpdateConditionNotSatisfied", "The update condition specified in the request was not satisfied."),
        ([("delete", {"PartitionKey": "p", "RowKey": "none"})], 404, "ResourceNotFound", "The specified resource does not exist."),
        ([("create", {"PartitionKey": "p", "RowKey": "r"})], 409, "EntityAlreadyExists", "The specified entity already exists."),
    ]:
        with pytest.raises(TableTransactionError) as info:
            table.submit_transaction(ops)
        err = info.value
        assert (err.index, err.status_code, err.error_code) == (0, status, code), err
        assert err.message.startswith(("0:" if COSMOS else "") + text), err.message


# Cosmos DB names the missing table ResourceNotFound, for the whole batch
# (test_new_non_existent_table; docs/cosmos.md, "Entity group transactions").
def test_transaction_on_missing_table(service):
    t = service.get_table_client(table_name())
    with pytest.raises(TableTransactionError) as info:
        t.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "r"})])
    assert (info.value.index, info.value.status_code, info.value.error_code) == (0, 404, TABLE_NOT_FOUND)
