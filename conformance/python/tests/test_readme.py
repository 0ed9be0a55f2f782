"""README.md's Python snippet ("Connect"), run as a user runs it: a script
run by this virtualenv's interpreter with AZURE_TABLES_CONNECTION_STRING set
to this session's server, twice (the second run finds the table there). It
must print what the README says every snippet prints, and the README must
name the SDK version this suite installs."""

import os
import re
import subprocess
import sys
from importlib.metadata import version

from conftest import REPO


def connect_section() -> str:
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    start = readme.index("\n## Connect\n") + 1
    end = readme.find("\n## ", start + 4)
    return readme[start:] if end < 0 else readme[start:end]


def test_readme_python_snippet(server, tmp_path):
    sec = connect_section()
    blocks = re.findall(r"^```python\n(.*?)^```$", sec, re.M | re.S)
    assert len(blocks) == 1, "want one ```python block"
    prints = re.search(r"prints `([^`]+)`", sec)
    assert prints, "the section does not say what the snippets print"
    pinned = re.search(r"`pip install azure-data-tables==([0-9.]+)`", sec)
    assert pinned and pinned.group(1) == version("azure-data-tables")

    script = tmp_path / "orders.py"
    script.write_text(blocks[0], encoding="utf-8")
    env = dict(os.environ, AZURE_TABLES_CONNECTION_STRING=server.connection_string)
    for run in (1, 2):
        out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, f"run {run}: {out.stderr}"
        assert out.stdout == prints.group(1) + "\n", f"run {run}"
