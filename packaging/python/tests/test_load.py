"""Fixtures from files (tableemu/_load.py): what ``tableemu export`` writes,
loaded into another server by ``load()``, is the account exported, value for
value (exported again, the same bytes: docs/transfer.md); hand-written files
with the default mode "replace", "merge" and "fail"; and the refusals, with
the server's code and the file and line."""

import math
import os
import subprocess
import uuid
from datetime import datetime, timezone

import pytest
from azure.data.tables import (
    EdmType,
    EntityProperty,
    TableAccessPolicy,
    TableClient,
    TableCorsRule,
    TableServiceClient,
)

import tableemu as pkg


def export(server, path):
    subprocess.run([pkg.binary_path(), "export", "--tablePort", str(server.port), str(path)], check=True, stdout=subprocess.DEVNULL)


def tree(path):
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def test_load_an_export_into_another_server(tmp_path):
    with pkg.start() as src, pkg.start() as dst:
        with TableServiceClient.from_connection_string(src.connection_string) as svc:
            svc.set_service_properties(cors=[TableCorsRule(["http://localhost:5173"], ["GET", "PUT"])])
            orders = svc.create_table("Orders")
            orders.set_table_access_policy(
                {"readers": TableAccessPolicy(start=datetime(2026, 1, 1, tzinfo=timezone.utc), expiry=datetime(2027, 1, 1, tzinfo=timezone.utc), permission="r")}
            )
            orders.create_entity(
                {
                    "PartitionKey": "eu",
                    "RowKey": "0001",
                    "Name": "Zoë",
                    "Empty": "",
                    "Qty": 3,
                    "Whole": 2.0,
                    "NaN": float("nan"),
                    "Inf": float("-inf"),
                    "Total": EntityProperty(9007199254740993, EdmType.INT64),
                    "Id": uuid.UUID("c9da6455-213d-42c9-9a79-3e9149a57833"),
                    "Blob": b"\x00\x01\x02\xff",
                    "Due": datetime(2026, 12, 1, 0, 0, 0, 1, tzinfo=timezone.utc),
                    "Paid": True,
                }
            )
            people = svc.create_table("people")
            for i in range(30):
                people.create_entity({"PartitionKey": "team", "RowKey": f"{i:03}", "n": i})
        export(src, tmp_path / "export")

        # A table of the same name on the target, which the default mode replaces.
        with TableClient.from_connection_string(dst.connection_string, "people") as t:
            t.create_table()
            t.create_entity({"PartitionKey": "old", "RowKey": "x"})
        got = dst.load(tmp_path / "export")
        assert got == {"tables": [{"table": "Orders", "entities": 1}, {"table": "people", "entities": 30}], "entities": 31}

        export(dst, tmp_path / "again")
        assert tree(tmp_path / "again") == tree(tmp_path / "export")
        with TableServiceClient.from_connection_string(dst.connection_string) as svc:
            e = svc.get_table_client("Orders").get_entity("eu", "0001")
            assert (e["Name"], e["Empty"], e["Total"].value, e["Whole"], e["Blob"]) == ("Zoë", "", 9007199254740993, 2.0, b"\x00\x01\x02\xff")
            assert isinstance(e["Whole"], float) and math.isnan(e["NaN"]) and e["Inf"] == float("-inf")
            assert list(svc.get_table_client("Orders").get_table_access_policy()) == ["readers"]
            assert svc.get_service_properties()["cors"][0].allowed_origins == ["http://localhost:5173"]


PEOPLE = '\ufeff{"PartitionKey":"team","RowKey":"1","name":"Ada"}\r\n\n{"PartitionKey":"team","RowKey":"2","name":"Grace"}\n'


def test_load_modes_and_one_file(tmp_path):
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    # A byte order mark, a Windows line end and a blank line, as an editor may leave them.
    (fixtures / "people.jsonl").write_text(PEOPLE, encoding="utf-8", newline="")
    (fixtures / "notes.txt").write_text("not a table")
    with pkg.start() as server, TableClient.from_connection_string(server.connection_string, "people") as people:

        def rows():
            return [f'{e["RowKey"]}:{e["name"]}' for e in people.list_entities()]

        assert server.load(str(fixtures)) == {"tables": [{"table": "people", "entities": 2}], "entities": 2}
        people.upsert_entity({"PartitionKey": "team", "RowKey": "3", "name": "added by a test"})
        people.upsert_entity({"PartitionKey": "team", "RowKey": "1", "name": "changed"})
        server.load(fixtures)  # replace: as the files say, again
        assert rows() == ["1:Ada", "2:Grace"]

        people.upsert_entity({"PartitionKey": "team", "RowKey": "3", "name": "kept"})
        people.upsert_entity({"PartitionKey": "team", "RowKey": "1", "name": "changed"})
        pkg.Connection(server.connection_string).load(fixtures / "people.jsonl", mode="merge")
        assert rows() == ["1:Ada", "2:Grace", "3:kept"]

        with pytest.raises(pkg.TableemuError) as e:
            server.load(fixtures, mode="fail")
        assert (e.value.status, e.value.code) == (409, "TableAlreadyExists")
        assert str(e.value).startswith(f"tableemu load({str(fixtures)!r}): 409 TableAlreadyExists: The table specified already exists. tableemu: ")
        with pytest.raises(ValueError, match=r"mode 'overwrite': .*'replace', the default"):
            server.load(fixtures, mode="overwrite")


def test_load_refusals(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "first.jsonl").write_text('{"PartitionKey":"p","RowKey":"1"}\n')
    (bad / "orders.jsonl").write_text('{"PartitionKey":"p","RowKey":"1"}\n\n{"PartitionKey":"p","RowKey":"2","N@odata.type":"Edm.Int64","N":"x"}\n')
    with pkg.start() as server:
        with pytest.raises(pkg.TableemuError) as e:
            server.load(bad)
        assert e.value.status == 400 and e.value.code in ("InvalidInput", "OutOfRangeInput")
        assert " tableemu: orders.jsonl:3: " in str(e.value) and "Nothing of table orders was imported" in str(e.value)
        # first.jsonl, before it, is loaded; orders is not there at all.
        with TableServiceClient.from_connection_string(server.connection_string) as svc:
            assert sorted(t.name for t in svc.list_tables()) == ["first"]

        with pytest.raises(pkg.TableemuError, match=r"nothing-here does not exist: give a directory of <table>\.jsonl files"):
            server.load(tmp_path / "nothing-here")
        # A wrong key, with a file larger than the server reads of a body
        # it refuses before reading: the refusal, not the broken pipe.
        big = tmp_path / "big.jsonl"
        big.write_text("".join(f'{{"PartitionKey":"p","RowKey":"{i:06}","s":"{"x" * 1000}"}}\n' for i in range(4000)))
        wrong = server.connection_string.replace(server.account_key, "a2V5")
        with pytest.raises(pkg.TableemuError) as e:
            pkg.Connection(wrong).load(big)
        assert (e.value.status, e.value.code) == (403, "AuthenticationFailed")
        # Service properties the service refuses: its code and message, from its XML error.
        props = tmp_path / "props"
        props.mkdir()
        (props / "tableemu.json").write_text('{"format":"tableemu-jsonl/1","serviceProperties":"<StorageServiceProperties><Cors><CorsRule>","tables":[]}')
        with pytest.raises(pkg.TableemuError) as e:
            server.load(props)
        assert (e.value.status, e.value.code) == (400, "InvalidXmlDocument")
        assert str(e.value).endswith("props'), the service properties of tableemu.json: 400 InvalidXmlDocument: XML specified is not syntactically valid.")
        (bad / "tableemu.json").write_text('{"format":"something-else"}')
        with pytest.raises(pkg.TableemuError, match=r'tableemu\.json: format "something-else", not "tableemu-jsonl/1"'):
            server.load(bad)
        with pytest.raises(pkg.TableemuError, match=r"is neither a directory nor a \.jsonl file"):
            server.load(bad / "tableemu.json")


def test_fixture_loads_in_one_line(pytester):
    # The tableemu fixture's load(), from a session fixture, as
    # docs/isolation.md shows it.
    pytester.mkdir("fixtures")
    (pytester.path / "fixtures" / "people.jsonl").write_text(PEOPLE, encoding="utf-8", newline="")
    pytester.makepyfile(
        """
        import os
        import pytest
        from azure.data.tables import TableClient

        @pytest.fixture(scope="session", autouse=True)
        def fixtures(tableemu):
            assert tableemu.load("fixtures/")["entities"] == 2

        def test_loaded(tableemu):
            with TableClient.from_connection_string(tableemu.connection_string, "people") as t:
                assert t.get_entity("team", "2")["name"] == "Grace"
        """
    )
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    r.assert_outcomes(passed=1)
