"""The endpoint under test and the fixtures every test file shares.

By default the session starts one tableemu on a free loopback port with a
fresh --location (the binary is $TABLEEMU_BIN, or built here with
`go build`). Tests that change account-wide settings or need a server of
their own start another one through `start_server`.

TABLEEMU_TEST_CONNECTION_STRING points the suite at any other endpoint
(Azurite, a real storage account); tests that need their own server then
skip themselves.

TABLEEMU_PROFILE=cosmos runs the suite against `tableemu --profile cosmos`
(docs/cosmos.md) with azure-data-tables in its Cosmos mode: the servers get
the variable from this process's environment, and their endpoint names
`localhost`, which the SDK's _is_cosmos_endpoint takes for Cosmos DB on any
port but 10002. COSMOS tells the tests which answers to expect.

Async tests are plain `async def` functions: the hook at the bottom runs
each in its own event loop (asyncio.run), so no pytest plugin is needed.
"""

import asyncio
import inspect
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import List, Optional
from urllib.parse import urlparse

import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.data.tables import TableServiceClient

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

COSMOS = os.environ.get("TABLEEMU_PROFILE") == "cosmos"


@dataclass
class Server:
    """An endpoint: ours (proc set) or an external one."""

    endpoint: str  # http://127.0.0.1:PORT/devstoreaccount1, no trailing slash
    account: str
    key: str
    proc: Optional[subprocess.Popen] = None
    location: Optional[str] = None
    output: List[str] = field(default_factory=list)

    @property
    def connection_string(self) -> str:
        scheme = urlparse(self.endpoint).scheme
        return (
            f"DefaultEndpointsProtocol={scheme};AccountName={self.account};"
            f"AccountKey={self.key};TableEndpoint={self.endpoint};"
        )

    @property
    def port(self) -> int:
        return urlparse(self.endpoint).port

    @property
    def credential(self) -> AzureNamedKeyCredential:
        return AzureNamedKeyCredential(self.account, self.key)

    @property
    def own(self) -> bool:
        return self.proc is not None

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.location:
            shutil.rmtree(self.location, ignore_errors=True)


def parse_connection_string(cs: str) -> Server:
    kv = {}
    for part in cs.split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            kv[k.strip()] = v.strip()
    endpoint = kv.get("TableEndpoint")
    if not endpoint and kv.get("EndpointSuffix"):
        endpoint = f"{kv.get('DefaultEndpointsProtocol', 'https')}://{kv['AccountName']}.table.{kv['EndpointSuffix']}"
    if not (kv.get("AccountName") and kv.get("AccountKey") and endpoint):
        raise ValueError("connection string needs AccountName, AccountKey and TableEndpoint or EndpointSuffix")
    return Server(endpoint=endpoint.rstrip("/"), account=kv["AccountName"], key=kv["AccountKey"])


_built = {}


def binary() -> str:
    """$TABLEEMU_BIN, or tableemu built once from this repository."""
    if os.environ.get("TABLEEMU_BIN"):
        return os.environ["TABLEEMU_BIN"]
    if "path" not in _built:
        d = tempfile.mkdtemp(prefix="tableemu-bin-")
        out = os.path.join(d, "tableemu")
        subprocess.run(["go", "build", "-o", out, "./cmd/tableemu"], cwd=REPO, check=True)
        _built["path"], _built["dir"] = out, d
    return _built["path"]


def start_server(port: int = 0, *args: str) -> Server:
    """Runs tableemu and returns once it has printed its connection string."""
    location = tempfile.mkdtemp(prefix="tableemu-py-")
    proc = subprocess.Popen(
        [binary(), "--tablePort", str(port), "--location", location, "--silent", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    srv = Server(endpoint="", account=DEV_ACCOUNT, key=DEV_KEY, proc=proc, location=location)
    found = threading.Event()

    def read():
        for line in proc.stdout:
            srv.output.append(line.rstrip("\n"))
            # Every line is "<time> <message>" (docs/command-line.md, "Start, log and exit status").
            m = re.match(r"^\S+ endpoint (\S+)", line)
            if m and not srv.endpoint:
                srv.endpoint = m.group(1).rstrip("/")
                # Under the profile the SDK is in its Cosmos mode: localhost,
                # as docs/cosmos.md says (on 10002 it would not be).
                if COSMOS and ":10002/" not in srv.endpoint:
                    srv.endpoint = srv.endpoint.replace("://127.0.0.1:", "://localhost:")
            if re.match(r"^\S+ connection string ", line):
                found.set()

    threading.Thread(target=read, daemon=True).start()
    deadline = time.time() + 30
    while not found.wait(0.05):
        if proc.poll() is not None or time.time() > deadline:
            srv.stop()
            raise RuntimeError("tableemu did not start: " + "\n".join(srv.output))
    return srv


def port_free(port: int) -> bool:
    """Whether a listener could bind 127.0.0.1:port now. SO_REUSEADDR as Go's
    net.Listen sets it: connections in TIME_WAIT do not hold the port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def table_name(prefix: str = "py") -> str:
    """A random table name: letters and digits, starting with a letter."""
    return prefix + uuid.uuid4().hex[:16]


@pytest.fixture(scope="session")
def server():
    cs = os.environ.get("TABLEEMU_TEST_CONNECTION_STRING")
    if cs:
        yield parse_connection_string(cs)
        return
    srv = start_server()
    yield srv
    srv.stop()
    if "dir" in _built:
        shutil.rmtree(_built["dir"], ignore_errors=True)


@pytest.fixture
def own_server(server):
    """A fresh tableemu of this test's own, for account-wide settings."""
    if not server.own:
        pytest.skip("needs a tableemu of its own (TABLEEMU_TEST_CONNECTION_STRING is set)")
    srv = start_server()
    yield srv
    srv.stop()


@pytest.fixture
def service(server):
    with TableServiceClient.from_connection_string(server.connection_string) as svc:
        yield svc


@pytest.fixture
def table(service):
    """A new table with a random name, deleted afterwards."""
    name = table_name()
    client = service.create_table(name)
    yield client
    service.delete_table(name)
    client.close()


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Runs `async def` tests in a new event loop each."""
    fn = pyfuncitem.obj
    if not inspect.iscoroutinefunction(fn):
        return None
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(fn(**args))
    return True
