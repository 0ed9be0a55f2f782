"""tableemu.start / Server / binary_path / python -m tableemu, and the
plugin's edge cases (pytester runs an inner pytest session; packaging/python/test.sh
passes -p pytester)."""

import http.client
import os
import socket
import subprocess
import sys
import sysconfig
import textwrap

import pytest
from azure.data.tables import TableServiceClient

import tableemu

KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
posix_only = pytest.mark.skipif(os.name == "nt", reason="the fake servers are shell scripts")


def refused(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_start_reads_the_lines_and_stop_is_graceful():
    with tableemu.start() as s:
        assert s.port > 0 and s.running
        assert s.url == f"http://127.0.0.1:{s.port}"
        assert s.endpoint == s.url + "/devstoreaccount1"
        assert (s.account_name, s.account_key) == ("devstoreaccount1", KEY)
        assert f"AccountKey={KEY};TableEndpoint={s.endpoint}" in s.connection_string
        assert "from memory" in s.output[0]
        hc = subprocess.run([tableemu.binary_path(), "healthcheck", "--tablePort", str(s.port)])
        assert hc.returncode == 0
    assert not s.running
    assert s.process.returncode == 0
    assert s.output[-1].endswith(" stopped"), list(s.output)[-3:]
    assert refused(s.port)
    assert s.stop() == 0  # a second stop is harmless


def test_location_keeps_the_data(tmp_path):
    with tableemu.start(location=str(tmp_path)) as s:
        TableServiceClient.from_connection_string(s.connection_string).create_table("kept")
    assert (tmp_path / "tableemu.sqlite").is_file()
    with tableemu.start(location=str(tmp_path)) as s:
        names = [t.name for t in TableServiceClient.from_connection_string(s.connection_string).list_tables()]
    assert names == ["kept"]


def test_a_bad_flag_raises_with_the_servers_line():
    with pytest.raises(tableemu.TableemuError) as e:
        tableemu.start("--noSuchFlag")
    msg = str(e.value)
    assert "exited with code 2 before it was ready" in msg
    assert msg.endswith("tableemu: unknown flag --noSuchFlag (tableemu --help lists the flags)"), msg


def test_a_busy_port_raises_with_the_servers_line():
    with tableemu.start() as first:
        with pytest.raises(tableemu.TableemuError) as e:
            tableemu.start(port=first.port)
    assert f"error: port {first.port} on 127.0.0.1 is in use" in str(e.value)


@posix_only
def test_no_ready_line_times_out_and_kills(tmp_path):
    fake = tmp_path / "fake"
    fake.write_text("#!/bin/sh\necho starting\nexec sleep 60\n")
    fake.chmod(0o755)
    s = tableemu.Server(binary=str(fake), timeout=1)
    with pytest.raises(tableemu.TableemuError) as e:
        s.start()
    assert "printed no ready line within 1 s (stopped it); its last line: starting" in str(e.value)
    assert s.process.poll() is not None


@posix_only
def test_an_early_exit_names_the_last_error_line(tmp_path):
    fake = tmp_path / "fake"
    fake.write_text("#!/bin/sh\necho 'warning: first' >&2\necho 'error: the real reason' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(tableemu.TableemuError) as e:
        tableemu.start(binary=str(fake))
    assert str(e.value) == "tableemu exited with code 3 before it was ready: error: the real reason"


def test_the_access_log_is_drained():
    # Far more log than a pipe holds (64 KiB on Linux): the server would
    # block on its next write if nobody read it.
    with tableemu.start(access_log=True) as s:
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
        for _ in range(2000):
            conn.request("GET", "/devstoreaccount1/Tables?pad=" + "x" * 100)
            conn.getresponse().read()
        conn.close()
        svc = TableServiceClient.from_connection_string(s.connection_string)
        svc.create_table("afterlog")
    assert sum("GET /devstoreaccount1/Tables" in line for line in s.output) > 100


def test_binary_path_is_the_wheels(monkeypatch):
    monkeypatch.delenv("TABLEEMU_BINARY", raising=False)
    exe = "tableemu.exe" if os.name == "nt" else "tableemu"
    assert tableemu.binary_path() == os.path.join(sysconfig.get_path("scripts"), exe)
    assert os.access(tableemu.binary_path(), os.X_OK)


def test_binary_path_honours_TABLEEMU_BINARY(monkeypatch, tmp_path):
    monkeypatch.setenv("TABLEEMU_BINARY", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="TABLEEMU_BINARY=.*missing is not a file"):
        tableemu.binary_path()
    other = tmp_path / "tableemu"
    other.write_text("")
    monkeypatch.setenv("TABLEEMU_BINARY", str(other))
    assert tableemu.binary_path() == str(other)


def test_python_m_tableemu_passes_args_and_exit_code():
    r = subprocess.run([sys.executable, "-m", "tableemu", "--tablePort", "x"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "tableemu:" in r.stderr and "--tablePort" in r.stderr


@pytest.mark.skipif(not os.environ.get("TABLEEMU_TEST_VERSION"), reason="packaging/python/test.sh sets TABLEEMU_TEST_VERSION")
def test_version_is_the_wheels():
    assert tableemu.__version__ == os.environ["TABLEEMU_TEST_VERSION"]


# -- the plugin, in an inner pytest session ---------------------------------


def test_plugin_skips_tableemu_table_without_the_sdk(pytester):
    pytester.makeconftest("import sys\nsys.modules['azure.data.tables'] = None  # as if not installed\n")
    pytester.makepyfile("def test_x(tableemu_table):\n    pass\n")
    r = pytester.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
    r.assert_outcomes(skipped=1)
    r.stdout.fnmatch_lines(["*tableemu_table needs the Azure Tables SDK: pip install azure-data-tables*"])


def test_plugin_uses_TABLEEMU_TEST_CONNECTION_STRING(pytester, monkeypatch):
    with tableemu.start() as outer:
        monkeypatch.setenv("TABLEEMU_TEST_CONNECTION_STRING", outer.connection_string)
        pytester.makepyfile(
            textwrap.dedent(
                f"""
                import tableemu as pkg

                def test_given(tableemu):
                    assert not isinstance(tableemu, pkg.Server)
                    assert tableemu.endpoint == {outer.endpoint!r}

                def test_table(tableemu_table):
                    tableemu_table.create_entity({{"PartitionKey": "a", "RowKey": "b"}})
                """
            )
        )
        r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
        r.assert_outcomes(passed=2)
        r.stdout.fnmatch_lines([f"tableemu: TABLEEMU_TEST_CONNECTION_STRING is set; the fixtures use {outer.endpoint}"])
        # The inner session's table was made on the outer server, and deleted.
        assert list(TableServiceClient.from_connection_string(outer.connection_string).list_tables()) == []


def test_plugin_says_what_to_do_when_the_server_cannot_start(pytester, monkeypatch):
    monkeypatch.setenv("TABLEEMU_BINARY", "/nonexistent/tableemu")
    pytester.makepyfile("def test_x(tableemu):\n    pass\n")
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    r.assert_outcomes(errors=1)
    r.stdout.fnmatch_lines(
        ["*the tableemu fixture could not start tableemu: TABLEEMU_BINARY=/nonexistent/tableemu is not a file*"]
    )


def test_plugin_says_what_is_wrong_with_TABLEEMU_TEST_CONNECTION_STRING(pytester, monkeypatch):
    monkeypatch.setenv("TABLEEMU_TEST_CONNECTION_STRING", "UseDevelopmentStorage=yes")
    pytester.makepyfile("def test_x(tableemu):\n    pass\n")
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    r.assert_outcomes(errors=1)
    r.stdout.fnmatch_lines(
        [
            "tableemu: TABLEEMU_TEST_CONNECTION_STRING is set; the fixtures use nothing (want a connection string*",
            "*TABLEEMU_TEST_CONNECTION_STRING: want a connection string with AccountName=*;AccountKey=*;TableEndpoint=*; got UseDevelopmentStorage=yes*",
        ]
    )
