"""packaging/python/build_wheels.py: versions, tags, and the wheels packaging/python/test.sh
built (TABLEEMU_TEST_DIST: packaging/release/build.sh's output; TABLEEMU_TEST_WHEELHOUSE:
the wheels), read back with the zipfile module and checked with
packaging (pytest's own dependency) against the specs."""

import base64
import csv
import hashlib
import io
import os
import sys
import zipfile

import pytest
from packaging.metadata import Metadata
from packaging.tags import parse_tag
from packaging.utils import parse_wheel_filename

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import build_wheels  # noqa: E402  (packaging/python/build_wheels.py)

DIST = os.environ.get("TABLEEMU_TEST_DIST", "")
WHEELS = os.environ.get("TABLEEMU_TEST_WHEELHOUSE", "")
TAG = os.environ.get("TABLEEMU_TEST_TAG", "")
needs_build = pytest.mark.skipif(not (DIST and WHEELS and TAG), reason="packaging/python/test.sh builds the wheels first")


@pytest.mark.parametrize(
    "tag,want",
    [
        ("v1.2.3", "1.2.3"),
        ("v0.0.0-dev", "0.0.0.dev0"),
        ("v1.2.3-rc.1", "1.2.3rc1"),
        ("v2.0.0-beta.2", "2.0.0b2"),
        ("v1.0.0-alpha.1", "1.0.0a1"),
        ("v10.20.30-rc2", "10.20.30rc2"),
    ],
)
def test_pep440(tag, want):
    assert build_wheels.pep440(tag) == want


@pytest.mark.parametrize("tag", ["1.2.3", "v1.2", "v1.2.3-foo.1", "v1.2.3-rc.x"])
def test_pep440_refuses(tag):
    with pytest.raises(ValueError, match=f"VERSION={tag}"):
        build_wheels.pep440(tag)


def wheels():
    return sorted(f for f in os.listdir(WHEELS) if f.endswith(".whl"))


@needs_build
def test_one_wheel_per_platform_with_these_tags():
    v = build_wheels.pep440(TAG)
    assert wheels() == sorted(
        f"tableemu-{v}-py3-none-{p}.whl"
        for p in [
            "macosx_12_0_arm64",
            "macosx_12_0_x86_64",
            "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64",
            "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64",
            "win_amd64",
        ]
    )


@needs_build
@pytest.mark.parametrize("index", range(5))
def test_wheel_contents(index):
    name = wheels()[index]
    dist_name, version, _build, tags = parse_wheel_filename(name)
    assert (dist_name, str(version)) == ("tableemu", build_wheels.pep440(TAG))
    with zipfile.ZipFile(os.path.join(WHEELS, name)) as z:
        infos = z.infolist()
        names = [i.filename for i in infos]
        di = f"tableemu-{version}.dist-info/"
        # .dist-info last, RECORD last of all.
        assert names[-4:] == [di + "METADATA", di + "WHEEL", di + "entry_points.txt", di + "RECORD"]
        assert len(names) == len(set(names))

        # RECORD: every other file, with its sha256 and size.
        rows = list(csv.reader(io.StringIO(z.read(di + "RECORD").decode())))
        assert [r[0] for r in rows] == names
        assert rows[-1] == [di + "RECORD", "", ""]
        for path, digest, size in rows[:-1]:
            data = z.read(path)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == ("sha256=" + want, len(data)), path

        # WHEEL: one Tag line per tag of the file name.
        wheel = z.read(di + "WHEEL").decode().splitlines()
        assert "Wheel-Version: 1.0" in wheel and "Root-Is-Purelib: false" in wheel
        lines = [line[5:] for line in wheel if line.startswith("Tag: ")]
        assert len(lines) == len(tags) and {t for line in lines for t in parse_tag(line)} == set(tags)

        # METADATA parses and validates as core metadata, README as the body.
        md = Metadata.from_email(z.read(di + "METADATA"), validate=True)
        assert (md.metadata_version, md.name, str(md.version)) == ("2.1", "tableemu", str(version))
        with open(os.path.join(HERE, "..", "README.md"), encoding="utf-8") as f:
            assert md.description == f.read()
        assert z.read(di + "entry_points.txt") == b"[pytest11]\ntableemu = tableemu.pytest_plugin\n"

        # The binary: packaging/release/build.sh's bytes, executable; the rest 0644.
        exe = "tableemu.exe" if "win_amd64" in name else "tableemu"
        binaries = [n for n in names if n.startswith(f"tableemu-{version}.data/")]
        assert binaries == [f"tableemu-{version}.data/scripts/{exe}"]
        goname = {
            "macosx_12_0_arm64": "darwin-arm64",
            "macosx_12_0_x86_64": "darwin-amd64",
            "manylinux_2_17_aarch64": "linux-arm64",
            "manylinux_2_17_x86_64": "linux-amd64",
            "win_amd64": "windows-amd64.exe",
        }[name.split("-py3-none-")[1].split(".")[0]]
        with open(os.path.join(DIST, "tableemu-" + goname), "rb") as f:
            assert z.read(binaries[0]) == f.read()
        for i in infos:
            mode = (i.external_attr >> 16) & 0o7777
            assert mode == (0o755 if i.filename == binaries[0] else 0o644), i.filename
            assert i.date_time == build_wheels.EPOCH


@needs_build
def test_two_builds_give_the_same_bytes(tmp_path):
    assert build_wheels.main([DIST, str(tmp_path), TAG]) == 0
    for name in wheels():
        with open(os.path.join(WHEELS, name), "rb") as a, open(tmp_path / name, "rb") as b:
            assert a.read() == b.read(), name


@needs_build
def test_a_binary_of_another_version_is_refused(tmp_path, capsys):
    assert build_wheels.main([DIST, str(tmp_path), "v9.9.9"]) == 1
    assert "was not built with VERSION=v9.9.9" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []
