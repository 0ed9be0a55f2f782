"use strict";
// The test helper of the tableemu package (packaging/npm/tableemu/lib/index.js),
// through the installed package: packaging/npm/test.sh copies this file into the
// project where it installed tableemu and runs it with node --test.

const assert = require("node:assert/strict");
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { test } = require("node:test");
const tableemu = require("tableemu");

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tableemu-helper-"));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// gone resolves once no process has this pid (an orphan is reaped by
// init, so kill(pid, 0) answers ESRCH soon after it dies).
async function gone(pid) {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch (e) {
      if (e.code === "ESRCH") return true;
      throw e;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

test("start: in memory, on a free port, with what a client needs", async () => {
  const emu = await tableemu.start();
  try {
    assert.match(emu.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(emu.url, `http://127.0.0.1:${emu.port}`);
    assert.ok(emu.port > 0);
    assert.equal(emu.endpoint, `${emu.url}/devstoreaccount1`);
    assert.equal(emu.accountName, "devstoreaccount1");
    assert.equal(emu.accountKey.length, 88);
    assert.equal(
      emu.connectionString,
      `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${emu.accountKey};TableEndpoint=${emu.endpoint};`,
    );
    // Ready means accepting: an unsigned request gets the service's answer.
    const res = await fetch(`${emu.endpoint}/Tables`);
    assert.equal(res.status, 401);
    assert.equal(fs.readdirSync(process.cwd()).includes("tableemu.sqlite"), false);
  } finally {
    const exit = await emu.stop();
    assert.deepEqual(exit, { code: 0, signal: null });
  }
  assert.equal(await gone(emu.process.pid), true);
  // stop() again: the same answer, nothing sent.
  assert.deepEqual(await emu.stop(), { code: 0, signal: null });
});

test("start: location keeps the database there; args and env reach the server", async () => {
  const dir = path.join(tmp, "data");
  const emu = await tableemu.start({
    location: dir,
    args: ["--loose"],
    env: { AZURITE_ACCOUNTS: "acct1:a2V5MQ==" },
  });
  try {
    assert.equal(emu.accountName, "acct1");
    assert.equal(emu.accountKey, "a2V5MQ==");
    assert.equal(emu.endpoint, `${emu.url}/acct1`);
    assert.ok(fs.existsSync(path.join(dir, "tableemu.sqlite")));
  } finally {
    assert.equal((await emu.stop()).code, 0);
  }
});

test("start: rejects with the server's error line when it cannot start", async () => {
  const first = await tableemu.start();
  try {
    await assert.rejects(tableemu.start({ port: first.port }), (err) => {
      assert.match(err.message, /^tableemu exited before it was ready \(exit code 1\): error: port \d+ on 127\.0\.0\.1 is in use/);
      return true;
    });
  } finally {
    await first.stop();
  }
  await assert.rejects(tableemu.start({ args: ["--noSuchFlag"] }), /exit code 2\): tableemu: .*noSuchFlag/);
});

test("start: rejects after the timeout, and kills what it started", async () => {
  // A "server" that never says it is ready; $$ is still its pid after exec.
  const fake = path.join(tmp, "silent-server.sh");
  const pidFile = path.join(tmp, "silent-server.pid");
  fs.writeFileSync(fake, `#!/bin/sh\necho $$ >${pidFile}\necho starting\nexec sleep 60\n`, { mode: 0o755 });
  await assert.rejects(
    tableemu.start({ binary: fake, timeout: 500, onLine: () => {} }),
    /^TableemuStartError: tableemu did not print its readiness line within 500 ms/,
  );
  const pid = Number(fs.readFileSync(pidFile, "utf8"));
  assert.ok(pid > 0);
  assert.equal(await gone(pid), true);
});

test("start: rejects with one line when the binary cannot be run", async () => {
  await assert.rejects(tableemu.start({ binary: path.join(tmp, "nothing-here") }), /^TableemuStartError: tableemu: cannot run .*nothing-here: .*ENOENT.*; check the binary option/);
});

test("the access log never blocks the server: start() drains stdout", { timeout: 60000 }, async () => {
  let lines = 0;
  const emu = await tableemu.start({ silent: false, onLine: (_, stream) => stream === "stdout" && lines++ });
  try {
    // ~2000 log lines, far more than a pipe holds (64 KiB on Linux): were
    // nobody reading, the server would block writing them and the
    // requests below would stop being answered.
    for (let i = 0; i < 2000; i++) {
      const res = await fetch(`${emu.endpoint}/Tables`);
      await res.arrayBuffer();
      assert.equal(res.status, 401);
    }
    assert.ok(lines > 1000, `onLine got ${lines} access-log lines`);
  } finally {
    assert.equal((await emu.stop()).code, 0);
  }
});

test("setup/teardown: the connection string in the environment, restored after", async () => {
  assert.equal(process.env.TABLEEMU_TEST_CS, undefined);
  const stopOne = await tableemu.setup({ envName: "TABLEEMU_TEST_CS" });
  const cs = process.env.TABLEEMU_TEST_CS;
  assert.match(cs, /^DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;.*TableEndpoint=http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1;$/);
  await stopOne();
  assert.equal(process.env.TABLEEMU_TEST_CS, undefined);

  const before = process.env.AZURE_TABLES_CONNECTION_STRING;
  process.env.AZURE_TABLES_CONNECTION_STRING = "was here";
  await tableemu.setup();
  await tableemu.setup({ envName: "TABLEEMU_TEST_CS" });
  assert.match(process.env.AZURE_TABLES_CONNECTION_STRING, /TableEndpoint=http:\/\/127\.0\.0\.1:/);
  const endpoint = /TableEndpoint=([^;]+)/.exec(process.env.TABLEEMU_TEST_CS)[1];
  await tableemu.teardown();
  assert.equal(process.env.AZURE_TABLES_CONNECTION_STRING, "was here");
  assert.equal(process.env.TABLEEMU_TEST_CS, undefined);
  await assert.rejects(fetch(`${endpoint}/Tables`)); // stopped: nothing listens
  if (before === undefined) delete process.env.AZURE_TABLES_CONNECTION_STRING;
  else process.env.AZURE_TABLES_CONNECTION_STRING = before;
});

// docs/cosmos.md: under the cosmos profile the helper hands out what puts
// @azure/data-tables in its Cosmos mode (localhost, an account other than
// devstoreaccount1), which then merges with POST + X-HTTP-Method: MERGE.
test("profile cosmos: the server answers as Cosmos DB, the SDK is in its Cosmos mode", async () => {
  const { TableClient, TableServiceClient } = require("@azure/data-tables");
  const emu = await tableemu.start({ profile: "cosmos" });
  try {
    assert.equal(emu.profile, "cosmos");
    assert.notEqual(emu.port, 8902, "a free port, as without the profile");
    assert.equal(emu.accountName, "devcosmosaccount1");
    assert.equal(emu.endpoint, `http://localhost:${emu.port}/devcosmosaccount1`);
    assert.match(emu.connectionString, new RegExp(`;TableEndpoint=http://localhost:${emu.port}/devcosmosaccount1;$`));
    const sent = [];
    const seen = [];
    const opts = { allowInsecureConnection: true };
    const name = "cosmos" + process.pid;
    await TableServiceClient.fromConnectionString(emu.connectionString, opts).createTable(name);
    const client = TableClient.fromConnectionString(emu.connectionString, name, opts);
    client.pipeline.addPolicy({ name: "recorder", sendRequest: (req, next) => (sent.push([req.method, req.headers.get("X-HTTP-Method")]), next(req)) });
    await client.createEntity({ partitionKey: "p", rowKey: "r", A: 1 });
    await client.updateEntity({ partitionKey: "p", rowKey: "r", B: 2 }, "Merge", { onResponse: (r) => seen.push(r) });
    assert.deepEqual(sent.at(-1), ["POST", "MERGE"], "the SDK merges as it does with Cosmos DB");
    assert.equal(seen[0].headers.get("x-ms-version"), undefined, "Cosmos DB sends no x-ms-version");
    const e = await client.getEntity("p", "r");
    assert.deepEqual([e.A, e.B], [1, 2]);
    // Isolation works on that account too.
    assert.equal((await emu.reset()).tablesDeleted, 1);
  } finally {
    await emu.stop();
  }
});

test("profile: TABLEEMU_PROFILE passes through; the option wins; AZURITE_ACCOUNTS is kept", async () => {
  const viaEnv = await tableemu.start({ env: { TABLEEMU_PROFILE: "cosmos", AZURITE_ACCOUNTS: `mine:${Buffer.from("k").toString("base64")}` } });
  try {
    assert.equal(viaEnv.profile, "cosmos");
    assert.equal(viaEnv.endpoint, `http://localhost:${viaEnv.port}/mine`);
  } finally {
    await viaEnv.stop();
  }
  const storage = await tableemu.start({ profile: "storage", env: { TABLEEMU_PROFILE: "cosmos" } });
  try {
    assert.equal(storage.profile, "storage");
    assert.equal(storage.endpoint, `http://127.0.0.1:${storage.port}/devstoreaccount1`);
  } finally {
    await storage.stop();
  }
  await assert.rejects(tableemu.start({ profile: "table" }), /--profile "table": want storage/);
});

test("reset, snapshot, restore: on the server object and, for setup(), through the environment", async () => {
  const { TableClient, TableServiceClient } = require("@azure/data-tables");
  const emu = await tableemu.start();
  try {
    const opts = { allowInsecureConnection: true };
    const people = TableClient.fromConnectionString(emu.connectionString, "people", opts);
    const tables = async () => {
      const names = [];
      for await (const t of TableServiceClient.fromConnectionString(emu.connectionString, opts).listTables()) names.push(t.name);
      return names.sort();
    };
    await people.createTable();
    await people.upsertEntity({ partitionKey: "p", rowKey: "1", n: 1 });
    const saved = await emu.snapshot("fixtures");
    assert.deepEqual([saved.account, saved.name, saved.tables, saved.entities], ["devstoreaccount1", "fixtures", 1, 1]);
    assert.match(saved.created, /^\d{4}-\d\d-\d\dT/);
    const etag = (await people.getEntity("p", "1")).etag;

    await people.upsertEntity({ partitionKey: "p", rowKey: "1", n: 2 });
    await people.upsertEntity({ partitionKey: "p", rowKey: "2", n: 3 });
    await TableClient.fromConnectionString(emu.connectionString, "other", opts).createTable();
    assert.equal((await emu.restore("fixtures")).name, "fixtures");
    const back = await people.getEntity("p", "1");
    assert.equal(back.n, 1);
    assert.equal(back.etag, etag, "a restored entity keeps its ETag");
    await assert.rejects(people.getEntity("p", "2"), (e) => e.statusCode === 404);
    assert.deepEqual(await tables(), ["people"]);

    assert.deepEqual(await emu.reset(), { account: "devstoreaccount1", tablesDeleted: 1 });
    assert.deepEqual(await tables(), []);
    assert.deepEqual((await emu.snapshots()).map((x) => x.name), ["fixtures"]);

    // The module-level functions, as a test file under setup() calls them.
    process.env.TABLEEMU_ISO_CS = emu.connectionString;
    await tableemu.restore("fixtures", { envName: "TABLEEMU_ISO_CS" });
    assert.deepEqual(await tables(), ["people"]);
    await tableemu.reset({ connectionString: emu.connectionString });
    assert.deepEqual(await tables(), []);
    delete process.env.TABLEEMU_ISO_CS;

    await assert.rejects(emu.restore("nope"), (e) => {
      assert.equal(e.name, "TableemuError");
      assert.equal(e.status, 404);
      assert.equal(e.code, "SnapshotNotFound");
      assert.match(e.message, /^tableemu restore\("nope"\): 404 SnapshotNotFound: Account devstoreaccount1 has no snapshot named "nope"/);
      return true;
    });
    await assert.rejects(emu.snapshot("a/b"), /400 InvalidSnapshotName: .*1 to 64 characters/);
    await emu.deleteSnapshot("fixtures");
    assert.deepEqual(await emu.snapshots(), []);
    await assert.rejects(tableemu.reset({ envName: "TABLEEMU_NOT_SET" }), /^Error: tableemu reset\(\): no connection string: pass \{ connectionString \}, or call it where setup\(\) has set TABLEEMU_NOT_SET$/);
  } finally {
    await emu.stop();
  }
  await assert.rejects(emu.reset(), /^Error: tableemu reset\(\): no answer from http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): is the server running\?$/);
});

test("a server nobody stopped dies with the Node process that started it", async () => {
  const script = 'require("tableemu").start().then((e) => console.log(e.process.pid));';
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  // Node exits by itself once start() has resolved: the server does not
  // keep it alive.
  const code = await new Promise((r) => child.on("exit", r));
  assert.equal(code, 0);
  const pid = Number(out.trim());
  assert.ok(pid > 0, `printed ${JSON.stringify(out)}`);
  assert.equal(await gone(pid), true);
});

test("binaryPath: the installed platform package's binary, or TABLEEMU_BINARY", () => {
  const p = tableemu.binaryPath();
  assert.match(p, /node_modules[\\/]@tableemu[\\/][a-z0-9]+-[a-z0-9]+[\\/]bin[\\/]tableemu(\.exe)?$/);
  assert.ok(fs.statSync(p).mode & 0o111);
});

// Fixtures from files (lib/load.js): what `tableemu export` writes, loaded
// into another server by load(), is the account exported, value for
// value: exported again it is the same bytes (docs/transfer.md).
const { execFileSync } = require("node:child_process");

function exportTo(emu, dir) {
  execFileSync(tableemu.binaryPath(), ["export", "--tablePort", String(emu.port), dir], { stdio: ["ignore", "ignore", "inherit"] });
}

function readTree(dir) {
  return Object.fromEntries(fs.readdirSync(dir).sort().map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]));
}

test("load: an export (every EDM type, policies, service properties) into another server, as it was", { timeout: 60000 }, async () => {
  const { TableClient, TableServiceClient } = require("@azure/data-tables");
  const opts = { allowInsecureConnection: true };
  const from = await tableemu.start();
  const to = await tableemu.start();
  try {
    const svc = TableServiceClient.fromConnectionString(from.connectionString, opts);
    await svc.setProperties({
      cors: [{ allowedOrigins: "http://localhost:5173", allowedMethods: "GET,PUT", allowedHeaders: "*", exposedHeaders: "*", maxAgeInSeconds: 60 }],
    });
    const orders = TableClient.fromConnectionString(from.connectionString, "Orders", opts);
    await orders.createTable();
    await orders.setAccessPolicy([{ id: "readers", accessPolicy: { start: new Date("2026-01-01T00:00:00Z"), expiry: new Date("2027-01-01T00:00:00Z"), permission: "r" } }]);
    await orders.createEntity({
      partitionKey: "eu",
      rowKey: "0001",
      Name: "Zoë",
      Empty: "",
      Qty: 3,
      Price: 9.5,
      NaN: { value: "NaN", type: "Double" },
      Inf: { value: "-Infinity", type: "Double" },
      Total: { value: "9007199254740993", type: "Int64" },
      Due: { value: "2026-12-01T00:00:00.0000001Z", type: "DateTime" },
      Id: { value: "c9da6455-213d-42c9-9a79-3e9149a57833", type: "Guid" },
      Blob: new Uint8Array([0, 1, 2, 255]),
      Paid: true,
    });
    const people = TableClient.fromConnectionString(from.connectionString, "people", opts);
    await people.createTable();
    for (let i = 0; i < 30; i++) await people.createEntity({ partitionKey: "team", rowKey: String(i).padStart(3, "0"), n: i });
    const dir = path.join(tmp, "export");
    exportTo(from, dir);

    // Something of the same name on the target, which the default mode replaces.
    await TableClient.fromConnectionString(to.connectionString, "people", opts).createTable();
    await TableClient.fromConnectionString(to.connectionString, "people", opts).createEntity({ partitionKey: "old", rowKey: "x" });
    const got = await to.load(dir);
    assert.deepEqual(got, { tables: [{ table: "Orders", entities: 1 }, { table: "people", entities: 30 }], entities: 31 });

    const again = path.join(tmp, "export-again");
    exportTo(to, again);
    assert.deepEqual(readTree(again), readTree(dir));
    // And as the SDK reads it.
    const e = await TableClient.fromConnectionString(to.connectionString, "Orders", opts).getEntity("eu", "0001", { disableTypeConversion: true });
    assert.deepEqual([e.Name, e.Empty, e.Total, e.Due], [
      { value: "Zoë", type: "String" },
      { value: "", type: "String" },
      { value: "9007199254740993", type: "Int64" },
      { value: "2026-12-01T00:00:00.0000001Z", type: "DateTime" },
    ]);
    const acl = await TableClient.fromConnectionString(to.connectionString, "Orders", opts).getAccessPolicy();
    assert.deepEqual([...acl].map((s) => [s.id, s.accessPolicy?.permission]), [["readers", "r"]]);
    const props = await TableServiceClient.fromConnectionString(to.connectionString, opts).getProperties();
    assert.equal(props.cors?.[0]?.allowedOrigins, "http://localhost:5173");
  } finally {
    await Promise.all([from.stop(), to.stop()]);
  }
});

test("load: hand-written files through setup()'s environment; replace by default, merge and fail; one FILE.jsonl", async () => {
  const { TableClient } = require("@azure/data-tables");
  const dir = path.join(tmp, "fixtures");
  fs.mkdirSync(dir);
  // A byte order mark, a Windows line end and a blank line, as an editor may leave them.
  fs.writeFileSync(path.join(dir, "people.jsonl"), '\uFEFF{"PartitionKey":"team","RowKey":"1","name":"Ada"}\r\n\n{"PartitionKey":"team","RowKey":"2","name":"Grace","W@odata.type":"Edm.Double","W":2.0}\n');
  fs.writeFileSync(path.join(dir, "notes.txt"), "not a table");
  const stop = await tableemu.setup({ envName: "TABLEEMU_LOAD_CS" });
  try {
    const opts = { envName: "TABLEEMU_LOAD_CS" };
    const people = TableClient.fromConnectionString(process.env.TABLEEMU_LOAD_CS, "people", { allowInsecureConnection: true });
    const rows = async () => {
      const out = [];
      for await (const e of people.listEntities()) out.push(`${e.rowKey}:${e.name}`);
      return out;
    };
    assert.deepEqual(await tableemu.load(dir, opts), { tables: [{ table: "people", entities: 2 }], entities: 2 });
    // A whole Double stays a Double (the JavaScript SDK reads 2.0 back as
    // an Int32 2, so the export says it).
    const out = path.join(tmp, "fixtures-export");
    exportTo({ port: Number(new URL(/TableEndpoint=([^;]+)/.exec(process.env.TABLEEMU_LOAD_CS)[1]).port) }, out);
    assert.match(fs.readFileSync(path.join(out, "people.jsonl"), "utf8"), /,"W@odata\.type":"Edm\.Double","W":2\.0\}\n$/);
    await people.upsertEntity({ partitionKey: "team", rowKey: "3", name: "added by a test" });
    await people.upsertEntity({ partitionKey: "team", rowKey: "1", name: "changed" });
    await tableemu.load(dir, opts); // replace: as the files say, again
    assert.deepEqual(await rows(), ["1:Ada", "2:Grace"]);

    await people.upsertEntity({ partitionKey: "team", rowKey: "3", name: "kept" });
    await people.upsertEntity({ partitionKey: "team", rowKey: "1", name: "changed" });
    await tableemu.load(path.join(dir, "people.jsonl"), { ...opts, mode: "merge" });
    assert.deepEqual(await rows(), ["1:Ada", "2:Grace", "3:kept"]);

    await assert.rejects(tableemu.load(dir, { ...opts, mode: "fail" }), (err) => {
      assert.equal(err.name, "TableemuError");
      assert.equal(err.status, 409);
      assert.equal(err.code, "TableAlreadyExists");
      assert.match(err.message, /^tableemu load\(".*fixtures"\): 409 TableAlreadyExists: The table specified already exists\. tableemu: /);
      return true;
    });
    await assert.rejects(tableemu.load(dir, { ...opts, mode: "overwrite" }), /^Error: tableemu load\(.*\): mode "overwrite": .*"replace", the default/);
  } finally {
    await stop();
  }
});

test("load: a bad line is the server's code and names the file and line; nothing of that table is written", async () => {
  const { TableClient } = require("@azure/data-tables");
  const emu = await tableemu.start();
  try {
    const dir = path.join(tmp, "bad");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "first.jsonl"), '{"PartitionKey":"p","RowKey":"1"}\n');
    fs.writeFileSync(path.join(dir, "orders.jsonl"), '{"PartitionKey":"p","RowKey":"1"}\n\n{"PartitionKey":"p","RowKey":"2","N@odata.type":"Edm.Int64","N":"x"}\n');
    await assert.rejects(emu.load(dir), (err) => {
      assert.equal(err.name, "TableemuError");
      assert.equal(err.status, 400);
      assert.match(err.code, /^(InvalidInput|OutOfRangeInput)$/);
      assert.match(err.message, /^tableemu load\(".*bad"\): 400 \w+: .* tableemu: orders\.jsonl:3: .*Nothing of table orders was imported/);
      return true;
    });
    // first.jsonl, before it, is loaded; orders is not there at all.
    await TableClient.fromConnectionString(emu.connectionString, "first", { allowInsecureConnection: true }).getEntity("p", "1");
    await assert.rejects(
      TableClient.fromConnectionString(emu.connectionString, "orders", { allowInsecureConnection: true }).getEntity("p", "1"),
      (e) => e.statusCode === 404 && /"TableNotFound"/.test(e.message),
    );

    await assert.rejects(emu.load(path.join(tmp, "nothing-here")), /^Error: tableemu load\(.*\): .*nothing-here does not exist: give a directory of <table>\.jsonl files/);
    // A wrong key, with a file larger than the server reads of a body it
    // refuses before reading: the refusal, not a broken connection.
    const big = path.join(tmp, "big.jsonl");
    fs.writeFileSync(big, Array.from({ length: 4000 }, (_, i) => `{"PartitionKey":"p","RowKey":"${i}","s":"${"x".repeat(1000)}"}\n`).join(""));
    await assert.rejects(
      tableemu.load(big, { connectionString: emu.connectionString.replace(/AccountKey=[^;]+/, "AccountKey=a2V5") }),
      (err) => err.status === 403 && err.code === "AuthenticationFailed",
    );
    // Service properties the service refuses: its code and message, from its XML error.
    const props = path.join(tmp, "props");
    fs.mkdirSync(props);
    fs.writeFileSync(path.join(props, "tableemu.json"), JSON.stringify({ format: "tableemu-jsonl/1", serviceProperties: "<StorageServiceProperties><Cors><CorsRule>", tables: [] }));
    await assert.rejects(emu.load(props), (err) => {
      assert.equal(err.name, "TableemuError");
      assert.deepEqual([err.status, err.code], [400, "InvalidXmlDocument"]);
      assert.match(err.message, /^tableemu load\(".*props"\), the service properties of tableemu\.json: 400 InvalidXmlDocument: XML specified is not syntactically valid\.$/);
      return true;
    });
    fs.writeFileSync(path.join(dir, "tableemu.json"), '{"format":"something-else"}');
    await assert.rejects(emu.load(dir), /tableemu\.json: format "something-else", not "tableemu-jsonl\/1"/);
    await assert.rejects(emu.load(path.join(dir, "tableemu.json")), /is neither a directory nor a \.jsonl file/);
  } finally {
    await emu.stop();
  }
});
