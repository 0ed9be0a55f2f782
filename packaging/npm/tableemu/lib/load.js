"use strict";
// load(path): fixtures from files into a running tableemu, in one call
// (docs/isolation.md, "Fixtures from files"). path is what `tableemu
// export` writes and `tableemu import` reads (docs/transfer.md, "Export and
// import: JSON Lines"): a directory of <table>.jsonl files with an optional
// manifest, tableemu.json, or one FILE.jsonl (the table named after the
// file). It reads them as `tableemu import` does (emulator/transfer's
// OpenDir): the manifest's tables first, each with its file and stored
// access policies, then every other *.jsonl file of the directory by name;
// the manifest's service properties last, after the tables.
//
// Each table is one POST /_tableemu/accounts/<account>/import/<table>
// (docs/transfer.md, "Over HTTP"), its body the file itself, streamed from
// disk: a table never sits whole in this process's memory. The server
// writes each table in one transaction, so a refused table is left as it
// was; the tables before it stay loaded, as with `tableemu import`.
//
// The mode defaults to "replace", where `tableemu import` defaults to
// "fail": a fixture loader is run again and again — the same suite in
// watch mode, against a server started with --location that still holds
// the last run's tables, or by two test files that load the same fixtures
// — and each run must leave the tables exactly as the files say. "fail"
// would refuse every run after the first, and "merge" would keep the rows
// a test added last time. "replace" recreates only the tables the files
// name; the account's other tables stay.

const fs = require("node:fs");
const path = require("node:path");
const { connectionOf, send, toolURL } = require("./request.js");

const MANIFEST = "tableemu.json";
const FORMAT = "tableemu-jsonl/1";
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

// tablesOf lists the tables at p: [{ table, file, acl }] and the service
// properties, as OpenDir reads them.
function tablesOf(p, what) {
  const bad = (why) => new Error(`tableemu ${what}: ${why}`);
  let st;
  try {
    st = fs.statSync(p);
  } catch (err) {
    throw bad(`${err.code === "ENOENT" ? `${p} does not exist` : err.message}: give a directory of <table>.jsonl files (as tableemu export writes), or one <table>.jsonl`);
  }
  if (!st.isDirectory()) {
    if (path.extname(p).toLowerCase() !== ".jsonl") {
      throw bad(`${p} is neither a directory nor a .jsonl file: give a directory of <table>.jsonl files (an export), or one <table>.jsonl`);
    }
    return { tables: [{ table: tableOfFile(path.basename(p)), file: p, name: path.basename(p) }] };
  }
  let manifest;
  const mpath = path.join(p, MANIFEST);
  if (fs.existsSync(mpath)) {
    const why = (s) => bad(`${mpath}: ${s}. The manifest is written by tableemu export; remove it to load the .jsonl files alone`);
    try {
      manifest = JSON.parse(fs.readFileSync(mpath, "utf8").replace(/^\uFEFF/, ""));
    } catch (err) {
      throw why(`not a manifest: ${err.message}`);
    }
    if (manifest?.format !== FORMAT) throw why(`format ${JSON.stringify(manifest?.format)}, not "${FORMAT}"`);
    if (manifest.tables != null && !Array.isArray(manifest.tables)) throw why("tables is not a list");
  }
  const tables = [];
  const named = new Set();
  for (const t of manifest?.tables ?? []) {
    const file = t.file || `${t.name}.jsonl`;
    if (typeof t.name !== "string" || /[/\\]/.test(file) || file === "." || file === "..") {
      throw bad(`${mpath}: table ${JSON.stringify(t.name)}: file ${JSON.stringify(file)} is not a file name in the directory`);
    }
    if (t.acl != null && !Array.isArray(t.acl)) throw bad(`${mpath}: table ${t.name}: acl is not a list of policies`);
    const full = path.join(p, file);
    if (!fs.existsSync(full)) throw bad(`${mpath}: table ${t.name}: its file ${file} does not exist`);
    named.add(file);
    tables.push({ table: t.name, file: full, name: file, acl: t.acl ?? undefined });
  }
  // Byte order, as Go's os.ReadDir sorts them, so that both load in the
  // same order.
  const names = fs.readdirSync(p, { withFileTypes: true }).filter((e) => !e.isDirectory() && path.extname(e.name).toLowerCase() === ".jsonl");
  for (const name of names.map((e) => e.name).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))) {
    if (!named.has(name)) tables.push({ table: tableOfFile(name), file: path.join(p, name), name });
  }
  if (!manifest && tables.length === 0) throw bad(`${p} holds no <table>.jsonl file and no ${MANIFEST}: nothing to load`);
  return { tables, properties: manifest?.serviceProperties || undefined };
}

function tableOfFile(name) {
  return name.slice(0, name.length - path.extname(name).length);
}

// asciiJSON is v as JSON with every non-ASCII character escaped: a header
// value is bytes, and the server reads the policies' JSON from it.
function asciiJSON(v) {
  return JSON.stringify(v).replace(/[\u0080-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

// body streams file from disk, without a leading byte order mark (which
// `tableemu import` skips, and the endpoint would read as part of line 1).
function body(file) {
  const fd = fs.openSync(file, "r");
  const head = Buffer.alloc(3);
  const n = fs.readSync(fd, head, 0, 3, 0);
  return fs.createReadStream(file, { fd, start: n === 3 && head.equals(BOM) ? 3 : 0 });
}

// placed is the server's refusal with each "line N" of the request body
// written as the file's place, "orders.jsonl:N": the body is the file, line
// for line.
function placed(err, name) {
  err.message = err.message.replace(/\bline (\d+)\b/g, `${name}:$1`);
  return err;
}

async function load(p, options = {}) {
  const what = `load(${JSON.stringify(String(p))})`;
  const kv = connectionOf(options, what);
  const mode = options.mode ?? "replace";
  if (!["replace", "merge", "fail"].includes(mode)) {
    throw new Error(`tableemu ${what}: mode ${JSON.stringify(mode)}: a table that exists is replaced ("replace", the default), merged into ("merge"), or refused ("fail")`);
  }
  const { tables, properties } = tablesOf(String(p), what);
  const ours = "imports";
  const out = { tables: [], entities: 0 };
  for (const t of tables) {
    const url = toolURL(kv, `/import/${encodeURIComponent(t.table)}`);
    url.searchParams.set("mode", mode);
    const headers = { "Content-Type": "application/x-ndjson" };
    if (t.acl) headers["Tableemu-Acl"] = asciiJSON(t.acl);
    const stream = body(t.file);
    let text;
    try {
      text = await send(kv, "POST", url, { headers, body: stream, ours }, what);
    } catch (err) {
      throw err.name === "TableemuError" ? placed(err, t.name) : err;
    } finally {
      stream.destroy(); // closes the file, also when the server answered before reading it all
    }
    const entities = JSON.parse(text).entities;
    out.tables.push({ table: t.table, entities });
    out.entities += entities;
  }
  if (properties) {
    // Set Table Service Properties, as any client sets them (the service
    // properties are not one of tableemu's own endpoints).
    const url = new URL(kv.TableEndpoint.replace(/\/?$/, "/"));
    url.search = "?restype=service&comp=properties";
    const headers = { "Content-Type": "application/xml" };
    await send(kv, "PUT", url, { headers, body: properties, comp: "properties", ours }, `${what}, the service properties of ${MANIFEST}`);
  }
  return out;
}

module.exports = { load };
