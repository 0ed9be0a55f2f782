"""The pytest plugin's fixtures as a user's tests use them, through
azure-data-tables: the wheel's pytest11 entry point loads the plugin (there
is no conftest.py here). Runs in file order: the last test checks what the
first two saw."""

import sysconfig

import pytest
from azure.data.tables import TableServiceClient, UpdateMode

import tableemu as tableemu_pkg

servers = []  # (id, pid) of the tableemu fixture each test got
tables = []  # the table each test got


def test_create_upsert_get(tableemu, tableemu_table):
    servers.append((id(tableemu), tableemu.pid))
    tables.append(tableemu_table.table_name)
    tableemu_table.create_entity({"PartitionKey": "p", "RowKey": "r", "n": 1, "s": "a"})
    tableemu_table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "n": 2}, mode=UpdateMode.MERGE)
    e = tableemu_table.get_entity("p", "r")
    assert (e["n"], e["s"]) == (2, "a")


def test_query_in_a_fresh_table(tableemu, tableemu_table):
    servers.append((id(tableemu), tableemu.pid))
    tables.append(tableemu_table.table_name)
    # Nothing from the test before: this table is new.
    assert list(tableemu_table.list_entities()) == []
    for i in range(5):
        tableemu_table.create_entity({"PartitionKey": "q", "RowKey": f"{i:02}", "n": i})
    got = tableemu_table.query_entities("PartitionKey eq 'q' and n ge @low", parameters={"low": 3})
    assert [e["RowKey"] for e in got] == ["03", "04"]


def test_one_server_and_a_table_per_test(tableemu):
    if len(tables) < 2:
        pytest.skip("checks the two tests above: run the whole file")
    # One server for the session, the same object for every test.
    assert len(set(servers)) == 1, servers
    assert isinstance(tableemu, tableemu_pkg.Server) and tableemu.running
    assert (id(tableemu), tableemu.pid) == servers[0]
    # Two tables, different names, both deleted after their test.
    assert len({t.lower() for t in tables}) == 2, tables
    with TableServiceClient.from_connection_string(tableemu.connection_string) as service:
        left = {t.name.lower() for t in service.list_tables()}
    assert not left & {t.lower() for t in tables}, left


def test_the_wheel_is_what_runs(tableemu):
    # The package and the binary come from this environment's install of
    # the wheel, not from the source tree.
    site = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    assert any(tableemu_pkg.__file__.startswith(p) for p in site), tableemu_pkg.__file__
    assert tableemu.binary.startswith(sysconfig.get_path("scripts")), tableemu.binary
