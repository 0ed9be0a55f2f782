"use strict";
// One measurement for packaging/npm/bench.sh: starts a server command, times the
// readiness line and the first successful createTable through
// @azure/data-tables, stops it.
//
//   node bench.js DIR CMD ARGS...    (run from a directory whose
//                                     node_modules has @azure/data-tables)
//
// Runs CMD in DIR with a free port appended (--tablePort P), and prints one
// line: "READY_MS REQUEST_MS", both from the spawn: when stdout said it
// was ready, and when createTable, sent right after that, succeeded. The
// readiness line: azurite-table's "Azurite Table service successfully
// started on HOST:PORT", or "... is successfully listening at URL", which
// the `azurite` command prints, and tableemu too. Then SIGTERM to
// its process group, and wait for CMD's exit (SIGKILL after 10 s).

const { spawn } = require("node:child_process");
const net = require("node:net");
const { TableServiceClient, AzureNamedKeyCredential } = require("@azure/data-tables");

const [dir, cmd, ...args] = process.argv.slice(2);
// Azurite's well-known development account, which both servers have.
const account = "devstoreaccount1";
const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

let child;
async function main() {
  // A port chosen here, not --tablePort 0: Azurite's readiness line says
  // the port it was given.
  const port = await freePort();
  const t0 = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
  // A process group of its own, stopped whole: npx runs the bin through
  // `sh -c`, and a SIGTERM to npx alone would leave Azurite running.
  child = spawn(cmd, [...args, "--tablePort", String(port)], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  const exited = new Promise((r) => child.on("exit", r));
  const ready = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no readiness line in 60 s: ${out}`)), 60000);
    const onData = (d) => {
      out += d;
      if (/Azurite Table service (is successfully listening at|successfully started on) /.test(out)) {
        clearTimeout(timer);
        resolve(ms());
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (d) => (out += d));
    child.on("exit", (code) => reject(new Error(`exited ${code} before ready: ${out}`)));
  });
  child.stdout.resume();
  const client = new TableServiceClient(`http://127.0.0.1:${port}/${account}`, new AzureNamedKeyCredential(account, key), {
    allowInsecureConnection: true,
    retryOptions: { maxRetries: 0 },
  });
  await client.createTable("bench" + port);
  const request = ms();
  process.kill(-child.pid, "SIGTERM");
  const kill = setTimeout(() => process.kill(-child.pid, "SIGKILL"), 10000);
  await exited;
  clearTimeout(kill);
  console.log(`${ready.toFixed(0)} ${request.toFixed(0)}`);
}

main().catch((err) => {
  console.error("bench.js:", err.message);
  if (child) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  process.exit(1);
});
