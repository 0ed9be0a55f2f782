"""Connection.load: fixtures from files into a running tableemu, in one call
(docs/isolation.md, "Fixtures from files").

The path is what ``tableemu export`` writes and ``tableemu import`` reads
(docs/transfer.md, "Export and import: JSON Lines"): a directory of
``<table>.jsonl`` files with an optional manifest, ``tableemu.json``, or one
``FILE.jsonl`` (the table named after the file). It is read as ``tableemu
import`` reads it (emulator/transfer's OpenDir): the manifest's tables first,
each with its file and stored access policies, then every other ``*.jsonl``
file of the directory by name; the manifest's service properties last, after
the tables.

Each table is one POST /_tableemu/accounts/<account>/import/<table>
(docs/transfer.md, "Over HTTP") whose body is the file itself, sent from disk
in blocks: a table never sits whole in memory. The server writes each table
in one transaction, so a refused table is left as it was; the tables before it
stay loaded, as with ``tableemu import``.

The mode defaults to "replace", where ``tableemu import`` defaults to "fail":
fixtures are loaded again and again (each session, against a server started
with ``location=`` that still holds the last run's tables, or by two fixtures
that load the same files), and each time the tables must come out exactly as
the files say. "fail" would refuse every load after the first, and "merge"
would keep the rows a test added last time. "replace" recreates only the
tables the files name; the account's other tables stay.
"""

from __future__ import annotations

import http.client
import json
import os
import re
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple
from urllib.parse import quote, urlsplit

if TYPE_CHECKING:  # pragma: no cover
    from . import Connection

MANIFEST = "tableemu.json"
FORMAT = "tableemu-jsonl/1"
BOM = b"\xef\xbb\xbf"
MODES = ("replace", "merge", "fail")


class _Table:
    def __init__(self, table: str, file: str, name: str, acl: Optional[list] = None) -> None:
        self.table, self.file, self.name, self.acl = table, file, name, acl


def _table_of(name: str) -> str:
    return os.path.splitext(name)[0]


def _tables(path: str, what: str) -> Tuple[List[_Table], Optional[str]]:
    """The tables at path, and the manifest's service properties."""
    from . import TableemuError

    def bad(why: str) -> TableemuError:
        return TableemuError(f"tableemu {what}: {why}")

    if not os.path.exists(path):
        raise bad(f"{path} does not exist: give a directory of <table>.jsonl files (as tableemu export writes), or one <table>.jsonl")
    if not os.path.isdir(path):
        if os.path.splitext(path)[1].lower() != ".jsonl":
            raise bad(f"{path} is neither a directory nor a .jsonl file: give a directory of <table>.jsonl files (an export), or one <table>.jsonl")
        name = os.path.basename(path)
        return [_Table(_table_of(name), path, name)], None
    manifest: Optional[Dict[str, Any]] = None
    mpath = os.path.join(path, MANIFEST)
    if os.path.isfile(mpath):

        def why(s: str) -> TableemuError:
            return bad(f"{mpath}: {s}. The manifest is written by tableemu export; remove it to load the .jsonl files alone")

        try:
            with open(mpath, encoding="utf-8-sig") as f:
                manifest = json.load(f)
        except ValueError as e:
            raise why(f"not a manifest: {e}") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            got = manifest.get("format") if isinstance(manifest, dict) else None
            raise why(f"format {json.dumps(got)}, not {json.dumps(FORMAT)}")
        if not isinstance(manifest.get("tables") or [], list):
            raise why("tables is not a list")
    tables: List[_Table] = []
    named = set()
    for t in (manifest or {}).get("tables") or []:
        name = t.get("name")
        file = t.get("file") or f"{name}.jsonl"
        if not isinstance(name, str) or "/" in file or "\\" in file or file in (".", ".."):
            raise bad(f"{mpath}: table {json.dumps(name)}: file {json.dumps(file)} is not a file name in the directory")
        acl = t.get("acl")
        if acl is not None and not isinstance(acl, list):
            raise bad(f"{mpath}: table {name}: acl is not a list of policies")
        full = os.path.join(path, file)
        if not os.path.isfile(full):
            raise bad(f"{mpath}: table {name}: its file {file} does not exist")
        named.add(file)
        tables.append(_Table(name, full, file, acl))
    # Byte order, as Go's os.ReadDir sorts them: both load in the same order.
    for name in sorted(os.listdir(path), key=lambda n: n.encode("utf-8", "surrogateescape")):
        full = os.path.join(path, name)
        if os.path.splitext(name)[1].lower() == ".jsonl" and not os.path.isdir(full) and name not in named:
            tables.append(_Table(_table_of(name), full, name))
    if manifest is None and not tables:
        raise bad(f"{path} holds no <table>.jsonl file and no {MANIFEST}: nothing to load")
    return tables, (manifest or {}).get("serviceProperties") or None


def _ascii_json(v: Any) -> str:
    """v as JSON with non-ASCII characters escaped, for a header."""
    return json.dumps(v, separators=(",", ":"), ensure_ascii=True)


_LINE = re.compile(r"\bline (\d+)\b")


def _upload(conn: "Connection", path: str, what: str, headers: Dict[str, str], f: Any, ours: str) -> bytes:
    """POSTs the file f to path and returns the answer's body. Through
    http.client rather than urllib: a server that refuses the request
    before reading its body (a wrong key, an unknown account) answers and
    stops reading, and the rest of the file then fails to send (a broken
    pipe). urllib reports only that; here the answer, already received, is
    read and its refusal raised."""
    from . import TableemuError, _refusal

    cls = http.client.HTTPSConnection if conn.url.startswith("https:") else http.client.HTTPConnection
    c = cls(conn.host, conn.port, timeout=600)
    try:
        try:
            c.request("POST", path, body=f, headers={**headers, **conn._signed(path, what)})
        except (BrokenPipeError, ConnectionResetError):
            pass  # the answer, if any, says why
        resp = c.getresponse()
        body = resp.read()
    except OSError as e:
        raise TableemuError(f"tableemu {what}: no answer from {conn.url} ({e}): is the server running?") from None
    finally:
        c.close()
    if resp.status >= 300:
        raise _refusal(what, resp.status, resp.headers.get("x-ms-error-code", ""), body, conn.url, ours)
    return body


def load(conn: "Connection", path: str, mode: str) -> Dict[str, Any]:
    from . import TableemuError

    what = f"load({path!r})"
    if mode not in MODES:
        raise ValueError(
            f"tableemu {what}: mode {mode!r}: a table that exists is replaced ('replace', the default), "
            "merged into ('merge'), or refused ('fail')"
        )
    tables, properties = _tables(path, what)
    ours = "imports are"
    out: Dict[str, Any] = {"tables": [], "entities": 0}
    prefix = f"/_tableemu/accounts/{quote(conn.account_name, safe='')}/import/"
    for t in tables:
        headers = {"Content-Type": "application/x-ndjson"}
        if t.acl is not None:
            headers["Tableemu-Acl"] = _ascii_json(t.acl)
        with open(t.file, "rb") as f:
            # Without a leading byte order mark, which tableemu import
            # skips and the endpoint would read as part of line 1.
            start = 3 if f.read(3) == BOM else 0
            f.seek(start)
            headers["Content-Length"] = str(os.fstat(f.fileno()).st_size - start)
            try:
                body = _upload(conn, f"{prefix}{quote(t.table, safe='')}?mode={mode}", what, headers, f, ours)
            except TableemuError as e:
                # The body is the file, line for line: "line N" of the
                # server's refusal is the file's line N.
                e.args = (_LINE.sub(lambda m: f"{t.name}:{m.group(1)}", str(e)),)
                raise
        n = json.loads(body)["entities"]
        out["tables"].append({"table": t.table, "entities": n})
        out["entities"] += n
    if properties:
        # Set Table Service Properties, as any client sets them.
        base = urlsplit(conn.endpoint).path.rstrip("/")
        conn._send(
            "PUT",
            f"{base}/?restype=service&comp=properties",
            f"{what}, the service properties of {MANIFEST}",
            {"Content-Type": "application/xml"},
            properties.encode("utf-8"),
            comp="properties",
            ours=ours,
        )
    return out
