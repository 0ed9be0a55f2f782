"""The cosmos profile through the package and the pytest plugin
(docs/cosmos.md): start(profile=...), TABLEEMU_PROFILE passed through, and
--tableemu-profile / tableemu_profile; the connection string they give puts
azure-data-tables in its Cosmos mode (pytester runs an inner pytest session;
packaging/python/test.sh passes -p pytester)."""

import os
import textwrap

from azure.data.tables import TableServiceClient, UpdateMode

import tableemu


def test_profile_cosmos_puts_the_sdk_in_its_cosmos_mode():
    with tableemu.start(profile="cosmos") as s:
        assert s.profile == "cosmos"
        # A free port, as without the profile; localhost, which the SDK
        # takes for Cosmos DB on any port but 10002.
        assert s.port not in (8902, 10002)
        assert s.endpoint == f"http://localhost:{s.port}/devstoreaccount1"
        # The first account's; the Cosmos DB emulator's account, printed
        # in its documented form, follows (docs/cosmos.md).
        assert s.connection_strings == [
            s.connection_string,
            "DefaultEndpointsProtocol=http;AccountName=localhost;"
            "AccountKey=C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==;"
            f"TableEndpoint=http://localhost:{s.port}/;",
        ]
        assert s.connection_string.endswith(f";TableEndpoint=http://localhost:{s.port}/devstoreaccount1;")
        sent, got = [], []
        with TableServiceClient.from_connection_string(s.connection_string) as svc:
            t = svc.create_table("cosmosprofile")
            t.create_entity({"PartitionKey": "p", "RowKey": "r", "A": 1})
            # The SDK's Cosmos mode merges with POST + X-HTTP-Method: MERGE;
            # the profile answers without x-ms-version, as Cosmos DB does.
            t.update_entity(
                {"PartitionKey": "p", "RowKey": "r", "B": 2},
                mode=UpdateMode.MERGE,
                raw_request_hook=lambda r: sent.append((r.http_request.method, r.http_request.headers.get("X-HTTP-Method"))),
                raw_response_hook=lambda r: got.append(r.http_response.headers.get("x-ms-version")),
            )
            assert sent == [("POST", "MERGE")] and got == [None]
            e = t.get_entity("p", "r")
            assert (e["A"], e["B"]) == (1, 2)
        # Isolation works there too.
        assert s.reset()["tablesDeleted"] == 1


def test_profile_from_the_environment_and_the_argument_wins():
    env = {**os.environ, "TABLEEMU_PROFILE": "cosmos"}
    with tableemu.start(env=env) as s:
        assert s.profile == "cosmos" and s.url == f"http://localhost:{s.port}"
    with tableemu.start(env=env, profile="storage") as s:
        assert s.profile == "storage" and s.endpoint == f"http://127.0.0.1:{s.port}/devstoreaccount1"
    with tableemu.start() as s:
        assert s.profile == "storage"


def test_a_bad_profile_raises_with_the_servers_line():
    try:
        tableemu.start(profile="table")
    except tableemu.TableemuError as e:
        assert '--profile "table": want storage' in str(e), e
    else:
        raise AssertionError("start(profile='table') did not raise")


INNER = textwrap.dedent(
    """
    from azure.data.tables import TableClient

    def test_profile(tableemu, tableemu_table):
        assert tableemu.profile == {want!r}
        assert tableemu.endpoint.startswith({prefix!r})
        tableemu_table.create_entity({{"PartitionKey": "a", "RowKey": "b"}})
        with TableClient.from_connection_string(tableemu.connection_string, tableemu_table.table_name) as t:
            assert t._cosmos_endpoint == ({want!r} == "cosmos")
    """
)


def test_plugin_takes_the_profile_from_the_option_the_ini_and_the_environment(pytester, monkeypatch):
    monkeypatch.delenv("TABLEEMU_PROFILE", raising=False)
    cosmos = INNER.format(want="cosmos", prefix="http://localhost:")
    storage = INNER.format(want="storage", prefix="http://127.0.0.1:")
    pytester.makepyfile(storage)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    pytester.makepyfile(cosmos)
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--tableemu-profile", "cosmos")
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines(["tableemu *(--profile cosmos)"])
    pytester.makeini("[pytest]\ntableemu_profile = cosmos\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    # The option wins over the ini file.
    pytester.makepyfile(storage)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--tableemu-profile=storage").assert_outcomes(passed=1)
    # Neither: TABLEEMU_PROFILE, which the server inherits.
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(cosmos)
    monkeypatch.setenv("TABLEEMU_PROFILE", "cosmos")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
