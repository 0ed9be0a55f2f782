"""The figures of docs/python.md ("Figures"): tableemu from its wheel beside
Azurite 3.37.0 from npm, on this machine, in one run. packaging/python/bench.sh
installs both and runs this with the virtualenv's Python:

    python bench.py VENV_BEFORE_BYTES VENV_AFTER_BYTES SITE_GROWTH PIP_SECONDS \
        NODE_MODULES_BYTES NPM_SECONDS AZURITE_DIR RUNS

For each server: the first start after its install, then RUNS more, each
timed from the spawn to its ready line (it says "successfully"), and RUNS
starts timed from the spawn to the first create_table that succeeds
(azure-data-tables, no SDK retries: this loop retries every 5 ms). Both
serve in memory on a free loopback port, with the access log off. Prints a
Markdown table.
"""

import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import uuid

from azure.core.exceptions import ServiceRequestError
from azure.data.tables import TableServiceClient

KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tableemu_cmd(port):
    return ["tableemu", "--inMemoryPersistence", "--silent", "--tablePort", str(port)], None


def azurite_cmd(azdir):
    def cmd(port):
        return ["npx", "azurite-table", "--inMemoryPersistence", "--silent", "--tablePort", str(port)], azdir

    return cmd


def stop(p):
    # The whole process group: npx runs azurite-table through `sh -c`, and
    # where sh does not exec it (dash), a signal to npx alone would leave
    # the server running.
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    except ProcessLookupError:
        p.wait()


def to_ready(make):
    """Seconds from the spawn to the ready line."""
    argv, cwd = make(free_port())
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        for line in p.stdout:
            if "successfully" in line:
                return time.perf_counter() - t0
        raise SystemExit(f"bench: {argv[0]} exited before its ready line")
    finally:
        stop(p)


def to_first_request(make):
    """Seconds from the spawn to the first create_table that succeeds."""
    port = free_port()
    argv, cwd = make(port)
    cs = (
        f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={KEY};"
        f"TableEndpoint=http://127.0.0.1:{port}/devstoreaccount1;"
    )
    service = TableServiceClient.from_connection_string(cs, retry_total=0)
    name = "t" + uuid.uuid4().hex
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while True:
            try:
                service.create_table(name)
                return time.perf_counter() - t0
            except ServiceRequestError:  # not listening yet
                if p.poll() is not None:
                    raise SystemExit(f"bench: {argv[0]} exited")
                if time.perf_counter() - t0 > 60:
                    raise SystemExit(f"bench: {argv[0]} did not answer within 60 s")
                time.sleep(0.005)
    finally:
        stop(p)
        service.close()


def ms(s):
    return f"{s * 1000:.0f} ms"


def main(argv):
    before, after, site, pip_s, nm, npm_s, azdir, runs = argv
    runs = int(runs)
    rows = []
    for label, make in (("tableemu (wheel)", tableemu_cmd), ("Azurite 3.37.0 (npm)", azurite_cmd(azdir))):
        first = to_ready(make)
        warm = [to_ready(make) for _ in range(runs)]
        req = [to_first_request(make) for _ in range(runs)]
        rows.append((label, first, statistics.median(warm), statistics.median(req)))
    mib = 1024 * 1024
    print("| | tableemu (wheel) | Azurite 3.37.0 (npm) |")
    print("|---|---|---|")
    growth = int(after) - int(before)
    print(
        f"| bytes installed | {growth / mib:.1f} MiB (venv growth; site-packages {int(site) / mib:.2f} MiB, "
        f"the rest the binary in bin/) | {int(nm) / mib:.1f} MiB (node_modules) |"
    )
    print(f"| install time (packages in the local cache) | {float(pip_s):.1f} s (pip install WHEEL) | {float(npm_s):.1f} s (npm i -D azurite@3.37.0) |")
    print(f"| spawn to ready line, first start after install | {ms(rows[0][1])} | {ms(rows[1][1])} |")
    print(
        f"| install, then first start to ready line | {float(pip_s) + rows[0][1]:.1f} s | "
        f"{float(npm_s) + rows[1][1]:.1f} s |"
    )
    print(f"| spawn to ready line, warm (median of {runs}) | {ms(rows[0][2])} | {ms(rows[1][2])} |")
    print(f"| spawn to first create_table answered (median of {runs}) | {ms(rows[0][3])} | {ms(rows[1][3])} |")


if __name__ == "__main__":
    main(sys.argv[1:])
