"""python docker/compat/snippet.py DOC LOG

Runs the Python code of DOC (docs/containers.md, the python block under
"### Python") against a tableemu that docker/test-compat.sh has started as
the code's DockerContainer would start it, logging to LOG. Testcontainers
cannot run containers here, so its two classes the code uses are stood in
for by ones that do what testcontainers-python's do, for this container:
DockerContainer("tableemu") is the running server, its exposed ports are
mapped to themselves on 127.0.0.1, and LogMessageWaitStrategy searches the
log for its regular expression (re.MULTILINE), as the library's does. The
rest — the connection string the code builds, the SDK call — runs as
written, through the Python SDK of conformance/python's virtualenv.
"""
import re
import sys
import time
import types

IMAGE = "tableemu"


def python_block(doc: str) -> str:
    text = open(doc, encoding="utf-8").read()
    section = text.split("\n### Python\n", 1)[1].split("\n### ", 1)[0]
    m = re.search(r"^```python\n(.*?)^```$", section, re.S | re.M)
    if not m:
        raise SystemExit(f"{doc}: no python block under ### Python")
    return m.group(1)


class LogMessageWaitStrategy:
    def __init__(self, message):
        self._message = message if isinstance(message, re.Pattern) else re.compile(message, re.MULTILINE)

    def wait_until_ready(self, container):
        deadline = time.monotonic() + 30  # a guard against hanging, not a measure
        while not self._message.search(container.get_logs()[0].decode()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {self._message.pattern!r} in the log")
            time.sleep(0.05)


class DockerContainer:
    log = None  # the server's log file

    def __init__(self, image, **kwargs):
        if image != IMAGE:
            raise SystemExit(f"the code starts {image!r}; the test started {IMAGE!r}")
        self._ports, self._wait = [], None

    def with_exposed_ports(self, *ports):
        self._ports.extend(ports)
        return self

    def waiting_for(self, strategy):
        self._wait = strategy
        return self

    def __enter__(self):
        if self._wait is not None:
            self._wait.wait_until_ready(self)
        return self

    def __exit__(self, *exc):
        return False

    def get_logs(self):
        with open(DockerContainer.log, "rb") as f:
            return f.read(), b""

    def get_container_host_ip(self):
        return "127.0.0.1"

    def get_exposed_port(self, port):
        if port not in self._ports:
            raise ValueError(f"port {port} is not exposed")
        return str(port)  # the library returns it as text too


def main() -> None:
    doc, DockerContainer.log = sys.argv[1], sys.argv[2]
    for name, attrs in {
        "testcontainers": {},
        "testcontainers.core": {},
        "testcontainers.core.container": {"DockerContainer": DockerContainer},
        "testcontainers.core.wait_strategies": {"LogMessageWaitStrategy": LogMessageWaitStrategy},
    }.items():
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod
    code = python_block(doc)
    scope = {"__name__": "docs_containers_md"}
    exec(compile(code, f"{doc} (### Python)", "exec"), scope)
    tests = [f for n, f in scope.items() if n.startswith("test_") and callable(f)]
    if not tests:
        raise SystemExit(f"{doc}: the python block defines no test_ function")
    for t in tests:
        t()
        print(f"python-doc: {t.__name__} from {doc} ran against the server")


if __name__ == "__main__":
    main()
