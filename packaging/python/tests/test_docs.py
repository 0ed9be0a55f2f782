"""Runs packaging/python/README.md's snippets as a reader would, so that the page on
PyPI and the package cannot drift apart:

- every ```python block whose first line is ``# NAME.py`` is saved as NAME.py;
  one that is not a test file is run with this Python, and a ``print(...)``
  with a trailing ``# VALUE`` comment must print VALUE;
- every ```sh line is run in that directory with this environment's
  scripts first on PATH (pip lines with no index, from the wheels packaging/python/test.sh
  built, TABLEEMU_TEST_WHEELHOUSE); a line commented "until Ctrl+C" is
  started with --tablePort 0, read to its ready line and interrupted;
  ``pytest FILE`` must pass every test in FILE;
- the ```text connection string is what that server printed, its port aside;
- a ```jsonl block right after a paragraph ending "`PATH`:" is written to
  PATH, a fixture file the test files load.
"""

import os
import re
import signal
import subprocess
import sys
import sysconfig

import pytest

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")


def blocks():
    """(language, text) of each fenced block."""
    with open(README, encoding="utf-8") as f:
        return re.findall(r"^```(\w*)\n(.*?)^```$", f.read(), flags=re.S | re.M)


def python_files():
    files = {}
    for lang, text in blocks():
        m = re.match(r"# (\w+\.py)\n", text)
        if lang == "python" and m:
            files[m.group(1)] = text
    return files


def env():
    e = dict(os.environ)
    e["PATH"] = sysconfig.get_path("scripts") + os.pathsep + e.get("PATH", "")
    wheels = os.environ.get("TABLEEMU_TEST_WHEELHOUSE")
    if wheels:
        e.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=wheels)
    e.pop("TABLEEMU_TEST_CONNECTION_STRING", None)
    return e


def fixture_files():
    """{path: text} of the README's fixture files."""
    with open(README, encoding="utf-8") as f:
        found = re.findall(r"`([\w./-]+\.jsonl)`:\n\n```jsonl\n(.*?)^```$", f.read(), flags=re.S | re.M)
    return dict(found)


def write_files(dir):
    for name, text in python_files().items():
        (dir / name).write_text(text)
    for path, text in fixture_files().items():
        (dir / path).parent.mkdir(parents=True, exist_ok=True)
        (dir / path).write_text(text)


def test_readme_has_the_snippets():
    langs = [lang for lang, _ in blocks()]
    assert langs.count("sh") >= 3 and langs.count("text") == 1
    assert {"start_server.py", "cosmos_server.py", "test_orders.py", "test_people.py"} <= set(python_files())
    assert list(fixture_files()) == ["fixtures/people.jsonl"]


@pytest.mark.parametrize("name", [n for n in python_files() if not n.startswith("test_")])
def test_readme_python_program(name, tmp_path):
    text = python_files()[name]
    write_files(tmp_path)
    want = re.findall(r"^\s*print\(.*\)\s+# (.+)$", text, flags=re.M)
    r = subprocess.run([sys.executable, name], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == want


def run_server_line(line, cwd):
    """Starts a server line of the README on a free port, returns what it
    printed up to its ready line, and interrupts it as Ctrl+C would."""
    cmd = line.split("#", 1)[0].split() + ["--tablePort", "0"]
    p = subprocess.Popen(cmd, cwd=cwd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        for out in p.stdout:
            lines.append(out.rstrip("\n"))
            if "successfully listening" in out:
                break
        assert lines and "successfully listening" in lines[-1], lines
    finally:
        p.send_signal(signal.SIGINT)
        rest = p.communicate(timeout=30)[0]
    assert p.returncode == 0, rest
    assert rest.rstrip().endswith(" stopped"), rest
    return lines


@pytest.mark.skipif(os.name == "nt", reason="the lines are run with bash")
def test_readme_shell_lines(tmp_path):
    write_files(tmp_path)
    printed = None
    ran = 0
    for lang, text in blocks():
        if lang != "sh":
            continue
        for line in text.splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            ran += 1
            if "until Ctrl+C" in line:
                printed = run_server_line(line, tmp_path)
                continue
            r = subprocess.run(
                ["bash", "-c", line], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=300
            )
            assert r.returncode == 0, f"{line}\n{r.stdout}\n{r.stderr}"
            m = re.fullmatch(r"pytest (\w+\.py)", line.strip())
            if m:
                n = len(re.findall(r"^def test_", python_files()[m.group(1)], flags=re.M))
                assert f" {n} passed" in r.stdout, r.stdout
            if line.strip() == "tableemu --version":
                assert r.stdout.startswith("tableemu v"), r.stdout
    assert ran >= 5 and printed is not None

    # The connection string the README shows is the one the server prints
    # (on its own port 10002).
    shown = [text.strip() for lang, text in blocks() if lang == "text"][0]
    got = [line.split(" connection string ", 1)[1] for line in printed if " connection string " in line]
    port = re.search(r"127\.0\.0\.1:(\d+)", got[0]).group(1)
    assert got == [shown.replace(":10002/", f":{port}/")]
