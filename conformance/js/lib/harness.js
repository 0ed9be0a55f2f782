"use strict";
// The endpoint under test, for every test file of both SDK suites.
//
// By default each test file (node --test runs each in its own process)
// starts its own tableemu on a free loopback port with a fresh --location,
// so files cannot see each other's tables or account settings. The binary
// is $TABLEEMU_BIN, or built here from the repository with `go build`.
//
// TABLEEMU_TEST_CONNECTION_STRING points the suite at any other endpoint
// (Azurite, a real account), as the Go suite does; tests that change
// account-wide settings then skip themselves (see `ownServerOnly`).
//
// TABLEEMU_PROFILE=cosmos runs the suite against `tableemu --profile
// cosmos` (docs/cosmos.md) with @azure/data-tables in its Cosmos mode: the
// servers get the variable from this process's environment, and the
// endpoint handed to the tests names `localhost` and an account other than
// devstoreaccount1, since the SDK's isCosmosEndpoint takes `localhost` for
// Cosmos DB unless the path starts with /devstoreaccount1. `cosmos` tells
// the tests which answers to expect.

const { spawn, execFileSync } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const readline = require("node:readline");

const repoRoot = path.resolve(__dirname, "..", "..", "..");

const cosmos = process.env.TABLEEMU_PROFILE === "cosmos";
// The account of the Cosmos runs (the development account's key): any name
// but devstoreaccount1 puts the SDK in its Cosmos mode on localhost.
const COSMOS_ACCOUNT = "devcosmosaccount1";
const DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

function parseConnectionString(cs) {
  const kv = {};
  for (const part of cs.split(";")) {
    const i = part.indexOf("=");
    if (i > 0) kv[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  let endpoint = kv.TableEndpoint;
  if (!endpoint && kv.EndpointSuffix) {
    endpoint = `${kv.DefaultEndpointsProtocol || "https"}://${kv.AccountName}.table.${kv.EndpointSuffix}`;
  }
  if (!kv.AccountName || !kv.AccountKey || !endpoint) {
    throw new Error("connection string needs AccountName, AccountKey and TableEndpoint or EndpointSuffix");
  }
  endpoint = endpoint.replace(/\/+$/, "");
  return {
    account: kv.AccountName,
    key: kv.AccountKey,
    endpoint,
    // Azure SDKs want exactly this shape; normalise what we were given.
    connectionString:
      `DefaultEndpointsProtocol=${new URL(endpoint).protocol.replace(":", "")};AccountName=${kv.AccountName};` +
      `AccountKey=${kv.AccountKey};TableEndpoint=${endpoint};`,
  };
}

let builtBinary;

// binary returns the tableemu binary: $TABLEEMU_BIN, or one built now into
// a temporary directory of this process (so parallel test files never
// write the same file).
function binary() {
  if (process.env.TABLEEMU_BIN) return process.env.TABLEEMU_BIN;
  if (builtBinary) return builtBinary;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tableemu-bin-"));
  const out = path.join(dir, "tableemu");
  execFileSync("go", ["build", "-o", out, "./cmd/tableemu"], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  builtBinary = out;
  return out;
}

// startServer runs tableemu and resolves once it has printed its
// connection string.
async function startServer(extraArgs = [], env = {}) {
  if (cosmos && env.AZURITE_ACCOUNTS === undefined) env = { ...env, AZURITE_ACCOUNTS: `${COSMOS_ACCOUNT}:${DEV_KEY}` };
  const location = fs.mkdtempSync(path.join(os.tmpdir(), "tableemu-js-"));
  const child = spawn(binary(), ["--tablePort", "0", "--location", location, "--silent", ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const cleanup = () => fs.rmSync(location, { recursive: true, force: true });

  const started = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tableemu did not start in 30s: ${stderr}`)), 30000);
    const found = {};
    const rl = readline.createInterface({ input: child.stdout });
    rl.on("line", (line) => {
      let m;
      if ((m = /^\S+ endpoint (\S+)/.exec(line)) && !found.endpoint) found.endpoint = m[1];
      if ((m = /^\S+ connection string (\S+)/.exec(line)) && !found.connectionString) {
        found.connectionString = m[1];
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`tableemu exited with ${code} before serving: ${stderr}`));
    });
  }).catch((e) => {
    child.kill("SIGKILL");
    cleanup();
    throw e;
  });

  // A server that dies under the tests says why, instead of leaving only
  // connection errors.
  let stopping = false;
  child.once("exit", (code, signal) => {
    if (!stopping) console.error(`tableemu exited unexpectedly (${code ?? signal}): ${stderr}`);
  });

  // Never outlive this test process, even when it ends without `after`.
  const onExit = () => {
    stopping = true;
    child.kill("SIGKILL");
    cleanup();
  };
  process.on("exit", onExit);

  const port = Number(new URL(started.endpoint).port);
  const stop = async () => {
    stopping = true;
    process.off("exit", onExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 10000);
      await exited;
      clearTimeout(t);
    }
    cleanup();
  };
  // The Go SDK takes localhost + 8902 for a Cosmos endpoint (docs/protocol.md
  // 13.x), and the others take localhost:10002 for Azurite; stay clear of
  // both, however unlikely the draw.
  if (port === 8902 || port === 10002) {
    await stop();
    return startServer(extraArgs, env);
  }
  let cs = started.connectionString;
  // Under the profile the SDK is in its Cosmos mode: localhost, as
  // docs/cosmos.md says.
  if (cosmos) cs = cs.replace("://127.0.0.1:", "://localhost:");
  return { ...parseConnectionString(cs), port, external: false, stop, location };
}

// target is the endpoint this test file runs against.
async function target() {
  const cs = process.env.TABLEEMU_TEST_CONNECTION_STRING;
  if (cs) {
    return { ...parseConnectionString(cs), external: true, stop: async () => {} };
  }
  return startServer();
}

// ownServerOnly is the `skip` option of tests that change account-wide
// settings or need their own server (as needInProcess in the Go suite).
function ownServerOnly() {
  return process.env.TABLEEMU_TEST_CONNECTION_STRING ? "needs its own tableemu (changes account-wide settings)" : false;
}

// tableName is a fresh, valid table name.
function tableName(prefix = "js") {
  return prefix + crypto.randomBytes(6).toString("hex");
}

// sign is base64(HMAC-SHA256(base64-decoded key, s)) (docs/protocol.md 9.1).
function sign(key, s) {
  return crypto.createHmac("sha256", Buffer.from(key, "base64")).update(s, "utf8").digest("base64");
}

// rawRequest sends one request signed with Shared Key Lite (docs/protocol.md
// 9.4), computed here independently of both SDKs and of tableemu. Used
// only where neither SDK can express what is checked.
async function rawRequest(tg, method, pathAndQuery, { headers = {}, body, sign: doSign = true } = {}) {
  const url = new URL(tg.endpoint + pathAndQuery);
  const h = {
    "x-ms-version": "2019-02-02",
    Accept: "application/json;odata=minimalmetadata",
    DataServiceVersion: "3.0",
    "x-ms-date": new Date().toUTCString(),
    ...headers,
  };
  if (body !== undefined && !Object.keys(h).some((k) => k.toLowerCase() === "content-type")) {
    h["Content-Type"] = "application/json";
  }
  if (doSign) {
    let resource = "/" + tg.account + url.pathname;
    const comp = url.searchParams.get("comp");
    if (comp) resource += "?comp=" + comp;
    h.Authorization = `SharedKeyLite ${tg.account}:${sign(tg.key, h["x-ms-date"] + "\n" + resource)}`;
  }
  const res = await fetch(url, { method, headers: h, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

module.exports = {
  cosmos,
  parseConnectionString,
  startServer,
  target,
  ownServerOnly,
  tableName,
  sign,
  rawRequest,
  repoRoot,
};
