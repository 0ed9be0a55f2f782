"""Writes the tableemu wheels: one per release binary, standard library only.

    python3 packaging/python/build_wheels.py DIST OUT VERSION

DIST is packaging/release/build.sh's output (the binaries and SHA256SUMS), VERSION
the tag it was built with (v1.2.3). packaging/python/build.sh is the usual way in.

A wheel is a zip (https://packaging.python.org/specifications/binary-distribution-format/,
first PEP 427): the pure-Python package tableemu/, the binary under
tableemu-<ver>.data/scripts/ so that the installer puts it in the
environment's scripts directory, on PATH (the layout maturin uses for
binaries, and so ruff's wheels), and tableemu-<ver>.dist-info/ with
METADATA (core metadata 2.1, https://packaging.python.org/specifications/core-metadata/),
WHEEL (one Tag line per tag of the file name's compressed tag set),
entry_points.txt (the pytest11 plugin) and RECORD (every file's sha256,
urlsafe base64 without padding, and size; RECORD itself unhashed).

The same inputs give the same bytes: entries in a fixed order with a fixed
time, Unix modes (0755 for the binary, 0644 for the rest) and one
compression level.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import struct
import sys
import zipfile
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "tableemu"
# zip times are local date-times from 1980 on; a fixed one for every entry.
EPOCH = (1980, 1, 1, 0, 0, 0)
SUMMARY = "Azure Table storage emulator (Azurite-compatible) in one static binary, with pytest fixtures"


def pep440(tag: str) -> str:
    """The PEP 440 version of a release tag: v1.2.3 -> 1.2.3,
    v1.2.3-rc.1 -> 1.2.3rc1, v1.2.3-beta.2 -> 1.2.3b2, v1.2.3-alpha.1 ->
    1.2.3a1, v0.0.0-dev -> 0.0.0.dev0 (https://peps.python.org/pep-0440/)."""
    m = re.fullmatch(r"v(\d+\.\d+\.\d+)(?:-([0-9A-Za-z.-]+))?", tag)
    if not m:
        raise ValueError(f"VERSION={tag}: want a tag like v1.2.3 or v1.2.3-rc.1")
    release, pre = m.group(1), m.group(2)
    if pre is None:
        return release
    p = re.fullmatch(r"(alpha|a|beta|b|rc|dev)(?:\.?(\d+))?", pre)
    if not p:
        raise ValueError(
            f"VERSION={tag}: PEP 440 has no form for the pre-release {pre!r}; "
            "use -alpha.N, -beta.N, -rc.N or -dev"
        )
    kind = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "rc": "rc", "dev": ".dev"}[p.group(1)]
    return f"{release}{kind}{int(p.group(2) or 0)}"


def macos_min(binary: bytes) -> Tuple[int, int]:
    """The minimum macOS a Mach-O binary declares (LC_BUILD_VERSION minos;
    Go 1.26's linker writes 12.0, https://go.dev/doc/go1.25#darwin), for
    the macosx_X_Y tag: pip installs the wheel only where it can run."""
    magic, _cpu, _sub, _ftype, ncmds, _size, _flags, _res = struct.unpack_from("<8I", binary, 0)
    if magic != 0xFEEDFACF:
        raise ValueError("not a 64-bit little-endian Mach-O file")
    off = 32
    for _ in range(ncmds):
        cmd, cmdsize = struct.unpack_from("<2I", binary, off)
        if cmd == 0x32:  # LC_BUILD_VERSION: platform, minos, sdk, ntools
            minos = struct.unpack_from("<I", binary, off + 12)[0]
            return minos >> 16, (minos >> 8) & 0xFF
        off += cmdsize
    raise ValueError("no LC_BUILD_VERSION load command")


def platform_tags(goos: str, goarch: str, binary: bytes) -> List[str]:
    """The wheel's platform tags (https://packaging.python.org/specifications/platform-compatibility-tags/)."""
    if goos == "linux":
        arch = {"amd64": "x86_64", "arm64": "aarch64"}[goarch]
        # The binary is static (CGO_ENABLED=0): it needs no libc at all, so
        # one file serves glibc (manylinux, PEP 600; manylinux2014 is the
        # PEP 599 name that pip before 20.3 knows) and musl (musllinux,
        # PEP 656). 2.17 is the oldest glibc pip accepts for aarch64, and
        # CentOS 7's kernel (3.10) is above Go's minimum (3.2).
        return [f"manylinux_2_17_{arch}", f"manylinux2014_{arch}", f"musllinux_1_1_{arch}"]
    if goos == "darwin":
        arch = {"amd64": "x86_64", "arm64": "arm64"}[goarch]
        major, minor = macos_min(binary)
        return [f"macosx_{major}_{minor}_{arch}"]
    if goos == "windows" and goarch == "amd64":
        return ["win_amd64"]
    raise ValueError(f"no wheel platform tag for {goos}/{goarch}")


def record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def metadata(version: str, readme: str) -> str:
    headers = [
        ("Metadata-Version", "2.1"),
        ("Name", NAME),
        ("Version", version),
        ("Summary", SUMMARY),
        ("Keywords", "azure,table-storage,azurite,emulator,pytest"),
        ("Requires-Python", ">=3.8"),
        ("Classifier", "Development Status :: 4 - Beta"),
        ("Classifier", "Framework :: Pytest"),
        ("Classifier", "Intended Audience :: Developers"),
        ("Classifier", "Programming Language :: Go"),
        ("Classifier", "Programming Language :: Python :: 3"),
        ("Classifier", "Topic :: Software Development :: Testing"),
        ("Description-Content-Type", "text/markdown; charset=UTF-8"),
    ]
    head = "".join(f"{k}: {v}\n" for k, v in headers)
    # The long description is the message body, after one blank line.
    return head + "\n" + readme


def build_wheel(binary_path: str, goos: str, goarch: str, version: str, out: str) -> str:
    with open(binary_path, "rb") as f:
        binary = f.read()
    tags = platform_tags(goos, goarch, binary)
    dist_info = f"{NAME}-{version}.dist-info"
    exe = NAME + (".exe" if goos == "windows" else "")

    files: List[Tuple[str, bytes, int]] = []  # (name, data, mode), in archive order
    pkg = os.path.join(HERE, NAME)
    for fn in sorted(os.listdir(pkg)):
        if fn.endswith(".py") or fn == "py.typed":
            with open(os.path.join(pkg, fn), "rb") as f:
                files.append((f"{NAME}/{fn}", f.read(), 0o644))
    files.append((f"{NAME}-{version}.data/scripts/{exe}", binary, 0o755))
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    files.append((f"{dist_info}/METADATA", metadata(version, readme).encode(), 0o644))
    wheel = "Wheel-Version: 1.0\nGenerator: tableemu packaging/python/build_wheels.py\nRoot-Is-Purelib: false\n"
    wheel += "".join(f"Tag: py3-none-{t}\n" for t in tags)
    files.append((f"{dist_info}/WHEEL", wheel.encode(), 0o644))
    files.append((f"{dist_info}/entry_points.txt", b"[pytest11]\ntableemu = tableemu.pytest_plugin\n", 0o644))

    record = io.StringIO()
    w = csv.writer(record, lineterminator="\n")
    for name, data, _ in files:
        w.writerow([name, record_hash(data), len(data)])
    w.writerow([f"{dist_info}/RECORD", "", ""])
    # .dist-info last, RECORD last of all, as the spec recommends.
    files.append((f"{dist_info}/RECORD", record.getvalue().encode(), 0o644))

    filename = f"{NAME}-{version}-py3-none-{'.'.join(tags)}.whl"
    path = os.path.join(out, filename)
    with zipfile.ZipFile(path, "w") as z:
        for name, data, mode in files:
            info = zipfile.ZipInfo(name, date_time=EPOCH)
            info.create_system = 3  # Unix, so that the mode below is read
            info.external_attr = (0o100000 | mode) << 16  # a regular file
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data, compresslevel=6)
    return path


def read_sums(dist: str) -> Dict[str, str]:
    sums: Dict[str, str] = {}
    try:
        with open(os.path.join(dist, "SHA256SUMS"), encoding="utf-8") as f:
            for line in f:
                digest, name = line.split()
                sums[name.lstrip("*")] = digest
    except FileNotFoundError:
        raise SystemExit(f"build_wheels: {dist}/SHA256SUMS is missing: run packaging/release/build.sh {dist} first")
    return sums


def main(argv: List[str]) -> int:
    if len(argv) != 3:
        print("usage: python3 packaging/python/build_wheels.py DIST OUT VERSION", file=sys.stderr)
        return 2
    dist, out, tag = argv
    try:
        version = pep440(tag)
    except ValueError as e:
        print(f"build_wheels: {e}", file=sys.stderr)
        return 2
    sums = read_sums(dist)
    os.makedirs(out, exist_ok=True)
    built = 0
    for name in sorted(sums):
        m = re.fullmatch(r"tableemu-([a-z]+)-([a-z0-9]+)(\.exe)?", name)
        if not m:
            continue
        path = os.path.join(dist, name)
        with open(path, "rb") as f:
            data = f.read()
        # The wheel must hold the very bytes packaging/release/build.sh wrote and
        # stamped with this version.
        if hashlib.sha256(data).hexdigest() != sums[name]:
            print(f"build_wheels: {path} does not match SHA256SUMS: run packaging/release/build.sh {dist} again", file=sys.stderr)
            return 1
        if tag.encode() not in data:
            print(
                f"build_wheels: {path} was not built with VERSION={tag}: "
                f"run VERSION={tag} packaging/release/build.sh {dist} first",
                file=sys.stderr,
            )
            return 1
        print(os.path.basename(build_wheel(path, m.group(1), m.group(2), version, out)))
        built += 1
    if not built:
        print(f"build_wheels: no tableemu binaries in {dist}/SHA256SUMS", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
