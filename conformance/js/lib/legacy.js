"use strict";
// Helpers for the legacy azure-storage suite. Its API takes callbacks
// (error, result, response); `call` turns one call into a promise.

const assert = require("node:assert/strict");
const azure = require("azure-storage");
const h = require("./harness");

const entGen = azure.TableUtilities.entityGenerator;

// service is a TableService signed with the account key (Shared Key,
// docs/protocol.md 9.2), from the connection string as most apps make it.
function service(tg) {
  return azure.createTableService(tg.connectionString);
}

// sasService is a TableService authorised only by a SAS token.
function sasService(tg, sas) {
  return azure.createTableServiceWithSas(tg.endpoint, sas);
}

// call invokes svc[method](...args, callback) and resolves with
// { result, response }, or rejects with the StorageError.
function call(svc, method, ...args) {
  return new Promise((resolve, reject) => {
    svc[method](...args, (error, a, b) => {
      if (error) {
        reject(error);
        return;
      }
      // Deletes and Sets answer (error, response); the rest (error, result, response).
      if (b === undefined && a && typeof a === "object" && "isSuccessful" in a && "statusCode" in a) resolve({ result: undefined, response: a });
      else resolve({ result: a, response: b });
    });
  });
}

// rejects asserts the call failed with status and the Azure error code
// (StorageError.statusCode and .code).
async function rejects(p, status, code) {
  let err;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `want ${status} ${code}, but the call succeeded`);
  if (err.statusCode === undefined) throw err;
  assert.deepEqual({ status: err.statusCode, code: err.code }, { status, code }, `error: ${err.message}`);
  return err;
}

// newTable creates a table with a fresh name; t.after deletes it.
async function newTable(t, tg, prefix) {
  const svc = service(tg);
  const name = h.tableName(prefix);
  await call(svc, "createTable", name);
  t.after(() => call(service(tg), "deleteTableIfExists", name).catch(() => {}));
  return { name, svc };
}

// ent is an entity whose keys are EDM objects, as TableBatch requires.
function ent(pk, rk, props = {}) {
  return { PartitionKey: entGen.String(pk), RowKey: entGen.String(rk), ...props };
}

// plain turns an entity as the SDK returns it ({Prop: {_: value, $: type}})
// into {Prop: value}, dropping .metadata and Timestamp.
function plain(e) {
  const out = {};
  for (const [k, v] of Object.entries(e)) {
    if (k === ".metadata" || k === "Timestamp") continue;
    out[k] = v && typeof v === "object" && "_" in v ? v._ : v;
  }
  return out;
}

// userProps is plain without the keys.
function userProps(e) {
  const { PartitionKey, RowKey, ...rest } = plain(e);
  return rest;
}

// queryAll follows continuation tokens to the end; returns the entities
// and the page sizes.
async function queryAll(svc, table, query, options = {}) {
  const rows = [];
  const pages = [];
  let token = null;
  do {
    const { result } = await call(svc, "queryEntities", table, query, token, options);
    pages.push(result.entries.length);
    rows.push(...result.entries);
    token = result.continuationToken;
  } while (token);
  return { rows, pages };
}

// seed inserts entities in batches of up to 100 per partition.
async function seed(svc, table, entities) {
  const byPk = new Map();
  for (const e of entities) {
    const pk = typeof e.PartitionKey === "string" ? e.PartitionKey : e.PartitionKey._;
    if (!byPk.has(pk)) byPk.set(pk, []);
    byPk.get(pk).push(e);
  }
  const batches = [];
  for (const list of byPk.values()) {
    for (let i = 0; i < list.length; i += 100) {
      const b = new azure.TableBatch();
      for (const e of list.slice(i, i + 100)) b.insertEntity(e);
      batches.push(b);
    }
  }
  for (let i = 0; i < batches.length; i += 4) {
    await Promise.all(batches.slice(i, i + 4).map((b) => call(svc, "executeBatch", table, b)));
  }
}

module.exports = { azure, entGen, ent, service, sasService, call, rejects, newTable, plain, userProps, queryAll, seed };
