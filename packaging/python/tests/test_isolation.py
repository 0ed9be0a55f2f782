"""Test isolation from Python (docs/isolation.md): reset, snapshot and
restore on the server object, the tableemu_clean fixture and the
--tableemu-clean option (through pytester, an inner pytest session), and
docs/isolation.md's Python test file, run as it is written with the fixture
file it loads."""

import os
import re
import textwrap

import pytest
from azure.data.tables import TableServiceClient

import tableemu as pkg

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs", "isolation.md")


def tables(server):
    with TableServiceClient.from_connection_string(server.connection_string) as svc:
        return sorted(t.name for t in svc.list_tables())


def test_snapshot_restore_reset():
    with pkg.start() as server, TableServiceClient.from_connection_string(server.connection_string) as svc:
        people = svc.create_table("people")
        people.create_entity({"PartitionKey": "p", "RowKey": "1", "n": 1})
        saved = server.snapshot("fixtures")
        assert (saved["account"], saved["name"], saved["tables"], saved["entities"]) == ("devstoreaccount1", "fixtures", 1, 1)
        etag = people.get_entity("p", "1").metadata["etag"]

        people.upsert_entity({"PartitionKey": "p", "RowKey": "1", "n": 2})
        people.create_entity({"PartitionKey": "p", "RowKey": "2"})
        svc.create_table("other")
        assert server.restore("fixtures")["name"] == "fixtures"
        back = people.get_entity("p", "1")
        assert back["n"] == 1 and back.metadata["etag"] == etag  # the same version, the same ETag
        assert [e["RowKey"] for e in people.list_entities()] == ["1"]
        assert tables(server) == ["people"]

        assert server.reset() == {"account": "devstoreaccount1", "tablesDeleted": 1}
        assert tables(server) == []
        assert [s["name"] for s in server.snapshots()] == ["fixtures"]

        with pytest.raises(pkg.TableemuError) as e:
            server.restore("nope")
        assert (e.value.status, e.value.code) == (404, "SnapshotNotFound")
        assert str(e.value).startswith("tableemu restore('nope'): 404 SnapshotNotFound: Account devstoreaccount1 has no snapshot")
        with pytest.raises(pkg.TableemuError, match=r"400 InvalidSnapshotName: .*1 to 64 characters"):
            server.snapshot("a/b")
        server.delete_snapshot("fixtures")
        assert server.snapshots() == []
    with pytest.raises(pkg.TableemuError, match=r"^tableemu reset\(\): no answer from http://127\.0\.0\.1:\d+ .*: is the server running\?$"):
        server.reset()


def test_connection_has_them_too():
    with pkg.start() as server:
        conn = pkg.Connection(server.connection_string)
        conn.snapshot("s")
        assert [s["name"] for s in server.snapshots()] == ["s"]


INNER = """
from azure.data.tables import TableServiceClient

def names(tableemu):
    with TableServiceClient.from_connection_string(tableemu.connection_string) as svc:
        return [t.name for t in svc.list_tables()]

def test_one(tableemu):
    with TableServiceClient.from_connection_string(tableemu.connection_string) as svc:
        svc.create_table("leftover")

def test_two(tableemu):
    assert names(tableemu) == []
"""


def test_clean_option(pytester):
    # Without the option the second test sees the first one's table.
    pytester.makepyfile(INNER)
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    r.assert_outcomes(passed=1, failed=1)
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--tableemu-clean")
    r.assert_outcomes(passed=2)
    pytester.makeini("[pytest]\ntableemu_clean = true\n")
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    r.assert_outcomes(passed=2)


def test_clean_fixture(pytester):
    # Only the test that asks for tableemu_clean starts from an empty account.
    pytester.makepyfile(INNER + "\n\ndef test_three(tableemu_clean):\n    assert names(tableemu_clean) == []\n")
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    r.assert_outcomes(passed=2, failed=1)
    r.stdout.fnmatch_lines(["*test_two*"])


def test_clean_against_another_endpoint_says_so(pytester, monkeypatch):
    # An endpoint that is not tableemu (here: one nothing listens on)
    # fails the test with one line.
    monkeypatch.setenv(
        "TABLEEMU_TEST_CONNECTION_STRING",
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:9/devstoreaccount1;",
    )
    pytester.makepyfile("def test_x(tableemu_clean):\n    pass\n")
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    r.assert_outcomes(errors=1)
    r.stdout.fnmatch_lines(["*tableemu_clean: tableemu reset(): no answer from http://127.0.0.1:9 *"])


def doc_python():
    with open(DOC, encoding="utf-8") as f:
        blocks = re.findall(r"^```python\n(.*?)^```$", f.read(), flags=re.S | re.M)
    return blocks


def doc_fixtures():
    """{path: text} of docs/isolation.md's fixture files: the ```jsonl
    blocks whose marker for packaging/npm/test.sh names the file."""
    with open(DOC, encoding="utf-8") as f:
        found = re.findall(r"^<!-- packaging/npm/test\.sh: \w+ ([\w./-]+) -->\n```jsonl\n(.*?)^```$", f.read(), flags=re.S | re.M)
    return dict(found)


def test_doc_python_file(pytester):
    blocks = doc_python()
    assert len(blocks) == 1, "docs/isolation.md has one Python test file"
    text = blocks[0]
    m = re.match(r"# (test_\w+\.py)\n", text)
    assert m, "its first line names the file"
    pytester.makepyfile(**{m.group(1)[:-3]: textwrap.dedent(text)})
    # The fixture files it loads, as the doc gives them.
    fixtures = doc_fixtures()
    assert list(fixtures) == ["fixtures/people.jsonl"]
    for path, body in fixtures.items():
        (pytester.path / path).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / path).write_text(body, encoding="utf-8")
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    n = len(re.findall(r"^def test_", text, flags=re.M))
    r.assert_outcomes(passed=n)
