"""pytest fixtures for tableemu, loaded through the wheel's ``pytest11``
entry point as soon as the package is installed:

``tableemu`` (session)
    One server for the whole session (in memory, free loopback port),
    stopped at the end: a :class:`tableemu.Server`, with
    ``connection_string``, ``endpoint``, ``account_name``, ``account_key``,
    ``url`` and ``port``. With TABLEEMU_TEST_CONNECTION_STRING set, no
    server starts and the fixture is a :class:`tableemu.Connection` to that
    endpoint (Azurite, a storage account).

``tableemu_table`` (function)
    An ``azure.data.tables.TableClient`` for a table made for this test
    alone: created before, deleted after. Skips the test, saying what to
    install, when azure-data-tables is missing.

``tableemu_clean`` (function)
    Resets the account before the test (``tableemu.reset()``): no tables,
    default service properties. ``--tableemu-clean`` on the command line,
    or ``tableemu_clean = true`` in the ini file, does it before every
    test. The server object also has ``snapshot(name)``, ``restore(name)``,
    ``delete_snapshot(name)`` and ``snapshots()`` (docs/isolation.md), and
    ``load(path)``, which loads fixtures from files in one line:
    ``tableemu.load("fixtures/")`` in a session fixture, then
    ``snapshot``, and ``restore`` before each test.

``--tableemu-profile cosmos`` on the command line, ``tableemu_profile =
cosmos`` in the ini file, or TABLEEMU_PROFILE=cosmos in the environment
(which the server inherits) starts the session's server under the cosmos
profile: it answers as Azure Cosmos DB for Table, and its connection string
names ``localhost``, which puts azure-data-tables in its Cosmos mode
(docs/cosmos.md). The option wins over the ini file, which wins over the
environment.

The plugin needs only the standard library; azure-data-tables is imported
by ``tableemu_table`` alone, when a test asks for it. Under pytest-xdist
each worker is a session of its own, so each starts its own server.
"""

from __future__ import annotations

import os
import re
import uuid
from typing import Iterator, Optional, Union

import pytest

# Under another name: the session fixture below is called tableemu.
import tableemu as _tableemu

ENV_CONNECTION_STRING = "TABLEEMU_TEST_CONNECTION_STRING"


@pytest.fixture(scope="session")
def tableemu(pytestconfig) -> Iterator[Union[_tableemu.Server, _tableemu.Connection]]:
    given = os.environ.get(ENV_CONNECTION_STRING)
    if given:
        try:
            conn = _tableemu.Connection(given)
        except ValueError as e:
            pytest.fail(f"{ENV_CONNECTION_STRING}: {e}", pytrace=False)
        yield conn
        return
    try:
        server = _tableemu.start(profile=_profile(pytestconfig))
    except (FileNotFoundError, _tableemu.TableemuError) as e:
        pytest.fail(f"the tableemu fixture could not start tableemu: {e}", pytrace=False)
    try:
        yield server
    finally:
        server.stop()


def _table_name(test_name: str) -> str:
    """A table name of this test's, unique in the account: letters and
    digits, a letter first, at most 63 characters (the service's rule)."""
    stem = re.sub(r"[^A-Za-z0-9]", "", test_name)[:40]
    return "t" + stem + uuid.uuid4().hex[:16]


def pytest_addoption(parser):
    parser.addoption(
        "--tableemu-clean",
        action="store_true",
        default=None,
        help="reset the tableemu account before every test (the tableemu_clean fixture for all)",
    )
    parser.addini("tableemu_clean", "reset the tableemu account before every test", type="bool", default=False)
    parser.addoption(
        "--tableemu-profile",
        choices=("storage", "cosmos"),
        default=None,
        help="the service the tableemu fixture's server answers as: storage (Azure Table storage) or "
        "cosmos (Azure Cosmos DB for Table); default: the ini's tableemu_profile, else TABLEEMU_PROFILE, else storage",
    )
    parser.addini("tableemu_profile", "the service the tableemu fixture's server answers as: storage or cosmos", default="")


def _profile(config) -> Optional[str]:
    """The profile to pass as --profile, or None: then TABLEEMU_PROFILE in
    the environment, which the server inherits, chooses."""
    opt = config.getoption("--tableemu-profile")
    if opt:
        return opt
    ini = str(config.getini("tableemu_profile")).strip()
    if ini and ini not in ("storage", "cosmos"):
        raise pytest.UsageError(f"tableemu_profile = {ini}: want storage or cosmos")
    return ini or None


def _clean_all(config) -> bool:
    opt = config.getoption("--tableemu-clean")
    return bool(opt) if opt is not None else bool(config.getini("tableemu_clean"))


@pytest.fixture
def tableemu_clean(tableemu):
    """Resets the account before the test; yields the tableemu fixture."""
    try:
        tableemu.reset()
    except _tableemu.TableemuError as e:
        pytest.fail(f"tableemu_clean: {e}", pytrace=False)
    yield tableemu


@pytest.fixture(autouse=True)
def _tableemu_clean_every_test(request):
    # Autouse, but it asks for the server only when the option is on:
    # without it a session that never uses tableemu starts none.
    if _clean_all(request.config):
        request.getfixturevalue("tableemu_clean")


@pytest.fixture
def tableemu_table(tableemu, request):
    try:
        from azure.data.tables import TableServiceClient
    except ImportError:
        pytest.skip("tableemu_table needs the Azure Tables SDK: pip install azure-data-tables")

    # Every test gets a table that no other test has seen; the rest of the
    # account is shared by the session, unless tableemu_clean (or
    # --tableemu-clean, which runs first: it is autouse) resets it.
    name = _table_name(request.node.name)
    with TableServiceClient.from_connection_string(tableemu.connection_string) as service:
        table = service.create_table(name)
        try:
            yield table
        finally:
            table.close()
            # Gone already if the test reset or restored the account:
            # delete_table takes a missing table as deleted.
            service.delete_table(name)


def pytest_report_header(config) -> str:
    """Says which server the fixtures use, at the top of the run."""
    given = os.environ.get(ENV_CONNECTION_STRING)
    if given:
        try:
            where = _tableemu.Connection(given).endpoint
        except ValueError as e:
            where = f"nothing ({e})"
        return f"tableemu: {ENV_CONNECTION_STRING} is set; the fixtures use {where}"
    try:
        where = _tableemu.binary_path()
    except FileNotFoundError as e:
        where = f"no binary ({e})"
    profile = _profile(config) or os.environ.get("TABLEEMU_PROFILE", "").strip()
    return f"tableemu {_tableemu.__version__}: {where}" + (f" (--profile {profile})" if profile else "")
