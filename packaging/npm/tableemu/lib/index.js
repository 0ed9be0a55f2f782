"use strict";
// The test helper: start tableemu from a test (or a test runner's global
// setup), get its connection string, stop it. index.d.ts documents the
// API; README.md shows it with vitest, jest and mocha.
//
// start() runs the binary with --tableHost 127.0.0.1 --tablePort 0 (a free
// port), reads the lines tableemu prints on stdout — "endpoint URL",
// "connection string CS", then Azurite's readiness line "Azurite Table
// service is successfully listening at URL", printed only once the port
// accepts connections — and resolves after the readiness line. It keeps
// reading both pipes after that, so the server never blocks on a full
// pipe, however much it logs.
//
// Under the cosmos profile (the profile option, or TABLEEMU_PROFILE in the
// server's environment; docs/cosmos.md) the endpoint and connection string
// it resolves with put @azure/data-tables in its Cosmos mode: its
// isCosmosEndpoint takes a URL on host `localhost` for Cosmos DB, unless the
// path starts with /devstoreaccount1 or the host contains the first account
// of AZURITE_ACCOUNTS. So they name `localhost` where tableemu prints
// 127.0.0.1, and, unless AZURITE_ACCOUNTS is given, the server gets the
// account COSMOS_ACCOUNT (with the development account's key) instead of
// devstoreaccount1.

const { spawn } = require("node:child_process");
const readline = require("node:readline");
const { binaryPath, BinaryNotFoundError } = require("./binary.js");
const { load } = require("./load.js");
const { DEFAULT_ENV, connectionOf, parseConnectionString, send, toolURL } = require("./request.js");

const READY = "Azurite Table service is successfully listening at ";
// The first line tableemu prints says which service it answers as
// (cmd/tableemu: "tableemu serves Azure Cosmos DB for Table (--profile
// cosmos) from ...").
const SERVES_COSMOS = "tableemu serves Azure Cosmos DB for Table ";
// The account under the cosmos profile (see above), and the development
// account's well-known key, which it shares.
const COSMOS_ACCOUNT = "devcosmosaccount1";
const DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
// tableemu's log lines start with an RFC 3339 UTC time; usage errors
// ("tableemu: ...") do not.
const STAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z /;

// Every server started and not yet exited, killed when Node exits so that a
// test run that forgets stop() leaves nothing listening. One listener for
// all of them (not one per server: Node warns past ten).
const live = new Set();
let exitHook = false;
function track(child) {
  live.add(child);
  child.once("exit", () => live.delete(child));
  if (!exitHook) {
    exitHook = true;
    process.on("exit", () => {
      for (const c of live) c.kill("SIGKILL");
    });
  }
}

function argsFor(o) {
  const args = ["--tableHost", o.host ?? "127.0.0.1", "--tablePort", String(o.port ?? 0)];
  if (o.location !== undefined) args.push("--location", o.location);
  // In memory unless a location is given; both given, the server says
  // which wins (memory) in a warning.
  if (o.inMemory ?? o.location === undefined) args.push("--inMemoryPersistence");
  if (o.silent !== false) args.push("--silent");
  if (o.profile !== undefined) args.push("--profile", o.profile);
  return args.concat(o.args ?? []);
}

// serverEnv is the server's environment: this process's, options.env over
// it, and under the cosmos profile an account the SDK's Cosmos mode accepts
// (see the top of this file).
function serverEnv(options) {
  const env = { ...process.env, ...options.env };
  const profile = options.profile ?? env.TABLEEMU_PROFILE?.trim();
  if (profile === "cosmos" && !env.AZURITE_ACCOUNTS) env.AZURITE_ACCOUNTS = `${COSMOS_ACCOUNT}:${DEV_KEY}`;
  return env;
}

// forCosmos names localhost where tableemu printed a loopback address, in
// an endpoint or a connection string.
function forCosmos(s) {
  return s?.replace(/:\/\/(?:127\.0\.0\.1|\[::1\]):/g, "://localhost:");
}

function start(options = {}) {
  const timeout = options.timeout ?? 30000;
  const onLine =
    options.onLine ??
    ((line, stream) => {
      // Warnings and errors reach the test output; the rest (the start
      // lines, the access log) only an onLine the caller gives.
      if (stream === "stderr") process.stderr.write(line + "\n");
    });
  let bin;
  try {
    bin = options.binary ?? binaryPath();
  } catch (err) {
    return Promise.reject(err);
  }
  const child = spawn(bin, argsFor(options), {
    stdio: ["ignore", "pipe", "pipe"],
    env: serverEnv(options),
    windowsHide: true,
  });
  track(child);
  // The server never keeps Node alive: a test process that is done exits,
  // and the exit hook above kills the server.
  child.unref();

  const exited = new Promise((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    // spawn failed (ENOENT, EACCES): there is no "exit" after this.
    child.once("error", (err) => resolve({ code: null, signal: null, error: err }));
  });

  return new Promise((resolve, reject) => {
    let ready = false;
    let lastError = "";
    const found = { endpoint: undefined, connectionString: undefined, cosmos: false };

    const fail = (message) => {
      clearTimeout(timer);
      const err = new Error(message);
      err.name = "TableemuStartError";
      reject(err);
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(
        `tableemu did not print its readiness line within ${timeout} ms` +
          (lastError ? `; it said: ${lastError}` : "") +
          ` (raise the timeout option if this machine is slow)`,
      );
    }, timeout);

    const read = (stream, name) => {
      const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
      rl.on("line", (line) => {
        if (ready) return onLine(line, name);
        const text = line.replace(STAMP, "");
        if (name === "stderr") {
          lastError = text;
          return onLine(line, name);
        }
        if (text.startsWith(SERVES_COSMOS)) {
          found.cosmos = true;
        } else if (text.startsWith("endpoint ") && !found.endpoint) {
          found.endpoint = text.slice("endpoint ".length);
        } else if (text.startsWith("connection string ") && !found.connectionString) {
          found.connectionString = text.slice("connection string ".length);
        } else if (text.startsWith(READY)) {
          ready = true;
          clearTimeout(timer);
          resolve(handle(child, exited, found, text.slice(READY.length)));
        }
      });
    };
    read(child.stdout, "stdout");
    read(child.stderr, "stderr");
    // The pipes unref'd too (see child.unref above); readline keeps
    // draining them while Node runs.
    child.stdout.unref?.();
    child.stderr.unref?.();

    exited.then(({ code, signal, error }) => {
      if (ready) return;
      if (error) {
        const hint = options.binary || process.env.TABLEEMU_BINARY ? "check the binary option or TABLEEMU_BINARY" : "reinstall tableemu";
        return fail(`tableemu: cannot run ${bin}: ${error.message}; ${hint}`);
      }
      // Let readline hand over the last lines before saying why.
      setImmediate(() =>
        fail(
          `tableemu exited before it was ready (${signal ? "signal " + signal : "exit code " + code})` +
            (lastError ? `: ${lastError}` : ""),
        ),
      );
    });
  });
}

// handle builds what start() resolves to.
function handle(child, exited, found, listening) {
  const cs = (found.cosmos ? forCosmos(found.connectionString) : found.connectionString) ?? "";
  const kv = parseConnectionString(cs);
  const url = listening.split(" ")[0];
  const port = Number(new URL(url).port);
  let stopping;
  return {
    url,
    endpoint: found.cosmos ? forCosmos(found.endpoint) : found.endpoint,
    connectionString: cs,
    profile: found.cosmos ? "cosmos" : "storage",
    accountName: kv.AccountName,
    accountKey: kv.AccountKey,
    port,
    process: child,
    // stop sends SIGTERM (tableemu finishes in-flight requests, closes the
    // database and exits 0) and resolves with the exit once it happened;
    // SIGKILL after `grace` ms. Calling it again returns the same promise.
    stop(grace = 10000) {
      if (stopping) return stopping;
      stopping = (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGTERM");
          const timer = setTimeout(() => child.kill("SIGKILL"), grace);
          const result = await exited;
          clearTimeout(timer);
          return result;
        }
        return exited;
      })();
      return stopping;
    },
    // Test isolation (docs/isolation.md), for this server's first account.
    reset: () => reset({ connectionString: cs }),
    snapshot: (name) => snapshot(name, { connectionString: cs }),
    restore: (name) => restore(name, { connectionString: cs }),
    deleteSnapshot: (name) => deleteSnapshot(name, { connectionString: cs }),
    snapshots: () => snapshots({ connectionString: cs }),
    // Fixtures from files (load.js, docs/isolation.md).
    load: (path, options = {}) => load(path, { ...options, connectionString: cs }),
  };
}

// Test isolation: tableemu's endpoints under /_tableemu/accounts/ (see
// docs/isolation.md), signed with the account key of the connection string
// (request.js). Each resolves once the server has committed the change.

// isolation sends one request; suffix follows /_tableemu/accounts/<account>.
async function isolation(method, suffix, options, what) {
  const kv = connectionOf(options, what);
  const text = await send(kv, method, toolURL(kv, suffix), {}, what);
  return text ? JSON.parse(text) : undefined;
}

const snap = (name) => `/snapshots/${encodeURIComponent(name)}`;

function reset(options = {}) {
  return isolation("POST", "/reset", options, "reset()");
}

function snapshot(name, options = {}) {
  return isolation("PUT", snap(name), options, `snapshot(${JSON.stringify(name)})`);
}

function restore(name, options = {}) {
  return isolation("POST", `${snap(name)}/restore`, options, `restore(${JSON.stringify(name)})`);
}

function deleteSnapshot(name, options = {}) {
  return isolation("DELETE", snap(name), options, `deleteSnapshot(${JSON.stringify(name)})`);
}

async function snapshots(options = {}) {
  return (await isolation("GET", "/snapshots", options, "snapshots()")).snapshots;
}

// The servers setup() started, kept on globalThis so that a runner that
// loads this module twice (an ESM and a CJS copy, or separate module
// registries for globalSetup and globalTeardown) still finds them.
const REGISTRY = Symbol.for("tableemu.setup");
function registry() {
  globalThis[REGISTRY] ??= [];
  return globalThis[REGISTRY];
}

// setup starts a server for a whole test run and puts its connection string
// in process.env[options.envName ?? "AZURE_TABLES_CONNECTION_STRING"],
// which test workers started after it inherit. It resolves to a teardown
// function (what vitest's globalSetup wants); teardown() stops every server
// setup() started (what jest's globalTeardown and mocha's
// mochaGlobalTeardown call).
async function setup(options = {}) {
  const name = options.envName ?? DEFAULT_ENV;
  const before = process.env[name];
  const emu = await start(options);
  process.env[name] = emu.connectionString;
  const entry = {
    emu,
    restore() {
      if (before === undefined) delete process.env[name];
      else process.env[name] = before;
    },
  };
  registry().push(entry);
  return async () => {
    const list = registry();
    const i = list.indexOf(entry);
    if (i >= 0) list.splice(i, 1);
    entry.restore();
    await emu.stop();
  };
}

async function teardown() {
  const list = registry().splice(0);
  for (const e of list.reverse()) e.restore();
  await Promise.all(list.map((e) => e.emu.stop()));
}

module.exports = {
  start,
  setup,
  teardown,
  reset,
  snapshot,
  restore,
  deleteSnapshot,
  snapshots,
  load,
  binaryPath: () => binaryPath(),
  BinaryNotFoundError,
};
