"""tableemu from Python: find the binary the wheel installed, and start it.

    import tableemu

    with tableemu.start() as server:        # in memory, on a free loopback port
        print(server.connection_string)

The wheel puts the tableemu binary in the environment's scripts directory
(``bin/`` or ``Scripts\\``), as a command on PATH; this module finds it
there and runs it as a child process, reading the lines it prints on start
(docs/python.md, "How the package starts the server").
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import os
import re
import subprocess
import sys
import sysconfig
import threading
import time
import weakref
from collections import deque
from importlib import metadata
from email.utils import formatdate
from typing import Any, Deque, Dict, List, Optional, Sequence, Union
from urllib import error as urlerror
from urllib import request as urlrequest
from urllib.parse import quote

__all__ = ["Connection", "Server", "TableemuError", "binary_path", "start", "__version__"]


def _version() -> str:
    try:
        return metadata.version("tableemu")
    except metadata.PackageNotFoundError:  # imported from a source checkout
        return "0+unknown"


__version__ = _version()

_EXE = "tableemu.exe" if os.name == "nt" else "tableemu"


class TableemuError(RuntimeError):
    """tableemu could not start (the message ends with the server's own
    line), or refused a reset, snapshot or load request: then ``status`` and
    ``code`` are the HTTP status and the error code; or load() found no
    files it can load (``status`` None)."""

    status: Optional[int] = None
    code: str = ""


def _candidates() -> List[str]:
    """Where the wheel's binary can be, most precise first."""
    found: List[str] = []
    # 1. The installed distribution's RECORD names the file pip wrote, relative
    # to site-packages: right for a venv, --user, --prefix and system installs.
    try:
        for f in metadata.distribution("tableemu").files or ():
            if f.name == _EXE:
                found.append(str(f.locate()))
    except metadata.PackageNotFoundError:
        pass
    # 2. This interpreter's scripts directories (what pip uses when RECORD is
    # missing or was rewritten by a repackager), then the user scheme's.
    found.append(os.path.join(sysconfig.get_path("scripts"), _EXE))
    user_scheme = "nt_user" if os.name == "nt" else "posix_user"
    if sys.platform == "darwin" and getattr(sys, "_framework", None):
        user_scheme = "osx_framework_user"
    try:
        found.append(os.path.join(sysconfig.get_path("scripts", user_scheme), _EXE))
    except KeyError:
        pass
    # 3. pip install --target DIR puts the package in DIR and scripts in DIR/bin.
    here = os.path.dirname(os.path.abspath(__file__))
    found.append(os.path.join(os.path.dirname(here), "bin", _EXE))
    return found


def binary_path() -> str:
    """The path of the tableemu binary: $TABLEEMU_BINARY if set, else the one
    the wheel installed into this environment. Raises FileNotFoundError with
    what to do when there is none."""
    override = os.environ.get("TABLEEMU_BINARY")
    if override:
        if not os.path.isfile(override):
            raise FileNotFoundError(
                f"TABLEEMU_BINARY={override} is not a file: point it at a tableemu binary, or unset it"
            )
        return override
    tried: List[str] = []
    for path in _candidates():
        path = os.path.normpath(path)
        if path in tried:
            continue
        if os.path.isfile(path):
            return path
        tried.append(path)
    raise FileNotFoundError(
        "no tableemu binary next to this Python (looked in " + ", ".join(tried) + "): "
        "reinstall with `pip install --force-reinstall tableemu`, or set TABLEEMU_BINARY to a tableemu binary"
    )


def _parse_connection_string(cs: str) -> Dict[str, str]:
    parts: Dict[str, str] = {}
    for item in cs.split(";"):
        if "=" in item:
            k, v = item.split("=", 1)
            parts[k.strip()] = v.strip()
    return parts


class Connection:
    """An account endpoint: a server's, or one given by a connection string
    (TABLEEMU_TEST_CONNECTION_STRING in the pytest plugin)."""

    connection_string: str
    endpoint: str  # http://127.0.0.1:PORT/devstoreaccount1
    url: str  # http://127.0.0.1:PORT
    account_name: str
    account_key: str
    host: str
    port: int

    def __init__(self, connection_string: str) -> None:
        self._set(connection_string)

    def _set(self, connection_string: str) -> None:
        parts = _parse_connection_string(connection_string)
        if "AccountName" not in parts or "TableEndpoint" not in parts:
            raise ValueError(
                "want a connection string with AccountName=…;AccountKey=…;TableEndpoint=…; got " + connection_string
            )
        from urllib.parse import urlsplit

        ep = urlsplit(parts["TableEndpoint"])
        self.connection_string = connection_string
        self.endpoint = parts["TableEndpoint"].rstrip("/")
        self.url = f"{ep.scheme}://{ep.netloc}"
        self.account_name = parts["AccountName"]
        self.account_key = parts.get("AccountKey", "")
        self.host = ep.hostname or ""
        self.port = ep.port or (443 if ep.scheme == "https" else 80)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.endpoint}>"

    # -- test isolation (docs/isolation.md) ---------------------------------

    def reset(self) -> Dict[str, Any]:
        """Returns the account to the state of a freshly started server: no
        tables, entities or stored access policies, the default service
        properties. Its snapshots stay. One transaction: a request running
        meanwhile sees the account before or after, never in between."""
        return self._isolation("POST", "/reset", "reset()")

    def snapshot(self, name: str) -> Dict[str, Any]:
        """Saves the account's state (tables, entities with their
        Timestamps, policies, service properties) as ``name``, replacing a
        snapshot of that name; returns its description."""
        return self._isolation("PUT", "/snapshots/" + quote(name, safe=""), f"snapshot({name!r})")

    def restore(self, name: str) -> Dict[str, Any]:
        """Puts the account back as snapshot ``name`` saved it, in one
        transaction; it rewrites what changed since, not the whole
        snapshot."""
        return self._isolation("POST", "/snapshots/" + quote(name, safe="") + "/restore", f"restore({name!r})")

    def delete_snapshot(self, name: str) -> None:
        self._isolation("DELETE", "/snapshots/" + quote(name, safe=""), f"delete_snapshot({name!r})")

    def snapshots(self) -> List[Dict[str, Any]]:
        """The account's snapshots, by name."""
        return self._isolation("GET", "/snapshots", "snapshots()")["snapshots"]

    def load(self, path: "Union[str, os.PathLike[str]]", mode: str = "replace") -> Dict[str, Any]:
        """Loads fixtures from files into the account: ``path`` is a
        directory of ``<table>.jsonl`` files, one entity a line as
        ``tableemu export`` writes them, with the optional manifest
        ``tableemu.json`` (its tables' stored access policies and the
        account's service properties are applied too), or one
        ``FILE.jsonl`` (the table named after the file). ``mode`` is what
        happens to a table that exists: ``"replace"`` (the default: the
        tables come out exactly as the files say, however often the
        fixtures are loaded), ``"merge"`` or ``"fail"``. Each table is one
        request, its file streamed from disk, and is written whole or not
        at all. Returns ``{"tables": [{"table": …, "entities": …}, …],
        "entities": …}``; a refusal raises :class:`TableemuError` naming
        the file and line of a bad entity (docs/isolation.md)."""
        from ._load import load

        return load(self, os.fspath(path), mode)

    def _isolation(self, method: str, suffix: str, what: str) -> Any:
        """One request to tableemu's isolation endpoints."""
        path = f"/_tableemu/accounts/{quote(self.account_name, safe='')}{suffix}"
        body = self._send(method, path, what)
        return json.loads(body) if body else None

    def _signed(self, path: str, what: str, comp: str = "") -> Dict[str, str]:
        """The headers that sign a request for path (with its query)."""
        if not self.account_key:
            raise TableemuError(f"tableemu {what}: the connection string has no AccountKey, which signs the request")
        date = formatdate(usegmt=True)
        key = base64.b64decode(self.account_key)
        resource = f"/{self.account_name}{path.split('?', 1)[0]}" + (f"?comp={comp}" if comp else "")
        sig = base64.b64encode(hmac.new(key, f"{date}\n{resource}".encode(), hashlib.sha256).digest())
        return {
            "x-ms-date": date,
            "x-ms-version": "2019-02-02",
            "Authorization": f"SharedKeyLite {self.account_name}:{sig.decode()}",
        }

    def _send(
        self,
        method: str,
        path: str,
        what: str,
        headers: Optional[Dict[str, str]] = None,
        data: Any = None,
        comp: str = "",
        ours: str = "reset and snapshots are",
    ) -> bytes:
        """One request to the server, ``path`` (with its query) on its
        address, signed with Shared Key Lite: the date and the resource
        /<account><path as sent>, with ``?comp=`` when the URL has it. The
        Authorization header is also what tableemu's cross-origin check
        asks of a request that changes something (docs/security.md)."""
        if data is None and method in ("POST", "PUT"):
            data = b""
        req = urlrequest.Request(self.url + path, method=method, data=data)
        for k, v in {**(headers or {}), **self._signed(path, what, comp)}.items():
            req.add_header(k, v)
        # Never through a proxy from the environment: the server is ours.
        opener = urlrequest.build_opener(urlrequest.ProxyHandler({}))
        try:
            with opener.open(req, timeout=600) as resp:
                return resp.read()
        except urlerror.HTTPError as e:
            raise _refusal(what, e.code, e.headers.get("x-ms-error-code", ""), e.read(), self.url, ours, bool(comp)) from None
        except OSError as e:
            raise TableemuError(f"tableemu {what}: no answer from {self.url} ({e}): is the server running?") from None


def _refusal(
    what: str, status: int, code: str, body: bytes, url: str, ours: str = "reset and snapshots are", table_api: bool = False
) -> TableemuError:
    """The server's refusal as a TableemuError, in one line."""
    try:
        e = json.loads(body)["odata.error"]
        code = e["code"]
        # The service's text and tableemu's hint line, joined into one.
        message = e["message"]["value"].split("\nRequestId:")[0].replace("\n", " ")
    except (ValueError, KeyError, TypeError):
        # The Table API's XML errors (Set Table Service Properties): OData's
        # <m:error><m:code/><m:message/></m:error>.
        m = re.search(rb"<(?:\w+:)?message[^>]*>(.*?)</(?:\w+:)?message>", body or b"", flags=re.S | re.I) if table_api else None
        if code and m:
            message = html.unescape(m.group(1).decode("utf-8", "replace")).split("\nRequestId:")[0].replace("\n", " ")
        else:
            message = f"{url} may not be tableemu: {ours} tableemu's own"
    err = TableemuError(f"tableemu {what}: {status} {code}: {message}")
    err.status, err.code = status, code
    return err


# A line tableemu prints: an RFC 3339 UTC time, a space, the message.
_LINE = re.compile(r"^\d{4}-\d\d-\d\dT[\d:.]+Z (.*)$")
_READY = "Azurite Table service is successfully listening at "
# The first line says which service it answers as (cmd/tableemu: "tableemu
# serves Azure Cosmos DB for Table (--profile cosmos) from ...").
_SERVES_COSMOS = "tableemu serves Azure Cosmos DB for Table "
# The loopback address tableemu prints in an endpoint.
_LOOPBACK = re.compile(r"://(?:127\.0\.0\.1|\[::1\]):")


def _stop_process(proc: "subprocess.Popen[bytes]", grace: float) -> Optional[int]:
    """SIGTERM (TerminateProcess on Windows), then a kill after grace seconds."""
    if proc.poll() is None:
        try:
            proc.terminate()
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        except OSError:
            pass
    return proc.returncode


class Server(Connection):
    """A tableemu child process. Start it with :func:`start` (or
    ``Server(...).start()``); use it as a context manager, or call
    :meth:`stop`. Until it stops, two threads read its stdout and stderr so
    that it never blocks on a full pipe; the last lines are kept in
    :attr:`output` for error messages.

    :attr:`profile` is the service it answers as, from the first line it
    prints: ``"storage"`` or ``"cosmos"`` (``--profile cosmos``, or
    TABLEEMU_PROFILE=cosmos in its environment; docs/cosmos.md). Under
    ``"cosmos"`` the connection strings and endpoint name ``localhost``
    where tableemu prints 127.0.0.1: azure-data-tables takes ``localhost`` on
    any port but 10002 for Cosmos DB (its ``_is_cosmos_endpoint``) and then
    sends requests as it does to Cosmos DB."""

    process: "Optional[subprocess.Popen[bytes]]"
    profile: str

    def __init__(
        self,
        *args: str,
        location: Optional[str] = None,
        host: str = "127.0.0.1",
        port: int = 0,
        access_log: bool = False,
        binary: Optional[str] = None,
        env: Optional[Dict[str, str]] = None,
        timeout: float = 30.0,
        profile: Optional[str] = None,
    ) -> None:
        self.binary = binary or binary_path()
        cmd = [self.binary, "--tableHost", host, "--tablePort", str(port)]
        # In memory unless a directory is given: every test session starts
        # from nothing and leaves nothing behind.
        cmd += ["--location", location] if location else ["--inMemoryPersistence"]
        if not access_log:
            cmd.append("--silent")
        # None: the environment's TABLEEMU_PROFILE, if any, reaches the server.
        if profile is not None:
            cmd += ["--profile", profile]
        cmd += list(args)
        self.args = cmd
        self.env = env
        self.timeout = timeout
        self.process = None
        self.profile = "storage"
        self.output: Deque[str] = deque(maxlen=200)
        self.connection_strings: List[str] = []
        self._errors: Deque[str] = deque(maxlen=20)
        self._ready = threading.Event()
        self._ended = threading.Event()
        self._threads: List[threading.Thread] = []
        self._finalizer: Optional[weakref.finalize] = None

    # -- starting ---------------------------------------------------------

    def start(self) -> "Server":
        if self.process is not None:
            raise TableemuError("this Server was already started: make a new one")
        # Windows: its own process group, so that a Ctrl+C in the console
        # reaches the test runner, which then stops the server itself.
        flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) if os.name == "nt" else 0
        self.process = subprocess.Popen(
            self.args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            creationflags=flags,
        )
        # A server the caller forgets to stop is stopped when the
        # interpreter exits (the reader threads keep this object alive).
        self._finalizer = weakref.finalize(self, _stop_process, self.process, 5.0)
        for stream, is_err in ((self.process.stdout, False), (self.process.stderr, True)):
            t = threading.Thread(target=self._read, args=(stream, is_err), daemon=True, name="tableemu-reader")
            t.start()
            self._threads.append(t)
        deadline = time.monotonic() + self.timeout
        while not self._ready.wait(0.05):
            if self._ended.is_set() or self.process.poll() is not None:
                # Its stdout ended: it exited, or is about to (else stop it).
                code = _stop_process(self.process, 2.0)
                self._join(1.0)
                raise TableemuError(
                    f"tableemu exited with code {code} before it was ready: {self._last_error()}"
                )
            if time.monotonic() > deadline:
                self.stop(grace=2.0)
                raise TableemuError(
                    f"tableemu printed no ready line within {self.timeout:g} s "
                    f"(stopped it); its last line: {self._last_error()}; "
                    "if the machine is only slow, pass a larger timeout"
                )
        return self

    def _read(self, stream, is_err: bool) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.output.append(line)
            m = _LINE.match(line)
            msg = m.group(1) if m else line
            if is_err:
                self._errors.append(line)
                continue
            if self._ready.is_set():
                continue  # the access log: read only so that the pipe never fills
            if msg.startswith(_SERVES_COSMOS):
                self.profile = "cosmos"
            elif msg.startswith("connection string "):
                cs = msg[len("connection string ") :]
                if self.profile == "cosmos":
                    cs = _LOOPBACK.sub("://localhost:", cs)
                self.connection_strings.append(cs)
            elif msg.startswith(_READY):
                if not self.connection_strings:
                    self._errors.append("no connection string line before the ready line")
                    break
                # The first account's (AZURITE_ACCOUNTS can name several);
                # url comes from its endpoint, which is connectable even
                # when the server listens on 0.0.0.0.
                self._set(self.connection_strings[0])
                self._ready.set()
        stream.close()
        if not is_err:
            self._ended.set()

    def _join(self, timeout: float) -> None:
        for t in self._threads:
            t.join(timeout)

    def _last_error(self) -> str:
        """The line that says why: the last error or usage line on stderr,
        else the last line printed at all."""
        for line in reversed(self._errors):
            if "error" in line or line.startswith("tableemu:"):
                return line
        if self._errors:
            return self._errors[-1]
        return self.output[-1] if self.output else "(it printed nothing)"

    # -- stopping ---------------------------------------------------------

    def stop(self, grace: float = 10.0) -> Optional[int]:
        """Stop gracefully (SIGTERM; on Windows the process is terminated),
        kill after grace seconds; returns the exit code (0 after a graceful
        stop). Safe to call twice."""
        if self.process is None:
            return None
        code = _stop_process(self.process, grace)
        self._join(grace)
        if self._finalizer is not None:
            self._finalizer.detach()
        return code

    @property
    def pid(self) -> Optional[int]:
        return self.process.pid if self.process else None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def __enter__(self) -> "Server":
        if self.process is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = getattr(self, "endpoint", None) or "not started"
        return f"<tableemu.Server {where} pid={self.pid}>"


def start(
    *args: str,
    location: Optional[str] = None,
    host: str = "127.0.0.1",
    port: int = 0,
    access_log: bool = False,
    binary: Optional[str] = None,
    env: Optional[Dict[str, str]] = None,
    timeout: float = 30.0,
    profile: Optional[str] = None,
) -> Server:
    """Start tableemu and return once it accepts connections.

    By default the data is in memory (``location=DIR`` keeps it in
    DIR/tableemu.sqlite) and the port is a free one on 127.0.0.1; ``args``
    are more tableemu flags (``"--loose"``, ``"--skipApiVersionCheck"``).
    ``profile="cosmos"`` answers as Azure Cosmos DB for Table (docs/cosmos.md),
    with the connection string on ``localhost`` (see :class:`Server`); by
    default TABLEEMU_PROFILE in the environment chooses, else storage.
    Raises :class:`TableemuError` with the server's error line when it
    exits before it is ready or is not ready within ``timeout`` seconds."""
    return Server(
        *args,
        location=location,
        host=host,
        port=port,
        access_log=access_log,
        binary=binary,
        env=env,
        timeout=timeout,
        profile=profile,
    ).start()


def _run_binary(argv: Sequence[str]) -> int:
    """python -m tableemu ARGS: the binary with ARGS, in this process where
    the OS allows (its exit code, its signals), else as a child."""
    try:
        path = binary_path()
    except FileNotFoundError as e:
        print(f"tableemu: {e}", file=sys.stderr)
        return 1
    if os.name == "nt":
        child = subprocess.Popen([path, *argv])
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:
                continue  # the console sent Ctrl+C to the child too; wait for it
    os.execv(path, [path, *argv])
    return 1  # not reached
