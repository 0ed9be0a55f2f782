"use strict";
// Signed requests to a running tableemu: its own endpoints under
// /_tableemu/accounts/<account> (reset and snapshots, docs/isolation.md;
// import, docs/transfer.md "Over HTTP") and the one Table API call load()
// makes (Set Table Service Properties). Each is signed with Shared Key Lite
// and the account key of a connection string — the one start() returns, or
// the one setup() put in the environment for the test workers. The
// Authorization header is also what tableemu's cross-origin check asks of a
// request that changes something (docs/security.md).

const crypto = require("node:crypto");

const DEFAULT_ENV = "AZURE_TABLES_CONNECTION_STRING";

function parseConnectionString(cs) {
  const kv = {};
  for (const part of cs.split(";")) {
    const i = part.indexOf("=");
    if (i > 0) kv[part.slice(0, i)] = part.slice(i + 1);
  }
  return kv;
}

// connectionOf finds the connection string a call is for.
function connectionOf(options, what) {
  const envName = options.envName ?? DEFAULT_ENV;
  const cs = options.connectionString ?? process.env[envName];
  if (!cs) {
    throw new Error(
      `tableemu ${what}: no connection string: pass { connectionString }, or call it where setup() has set ${envName}`,
    );
  }
  const kv = parseConnectionString(cs);
  if (!kv.AccountName || !kv.AccountKey || !kv.TableEndpoint) {
    throw new Error(`tableemu ${what}: the connection string needs AccountName, AccountKey and TableEndpoint`);
  }
  return kv;
}

// send makes one signed request to url (a URL on the connection's
// endpoint) and resolves to the answer's text, or rejects with a
// TableemuError carrying the server's status, code and message.
// init.comp is the URL's comp= parameter, which Shared Key Lite signs
// (https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key#shared-key-lite-and-table-service-format-for-2009-09-19-and-later);
// init.ours says what the request is, for an endpoint that is not
// tableemu's.
async function send(kv, method, url, init, what) {
  const account = kv.AccountName;
  const date = new Date().toUTCString();
  const resource = `/${account}${url.pathname}` + (init.comp ? `?comp=${init.comp}` : "");
  const sig = crypto.createHmac("sha256", Buffer.from(kv.AccountKey, "base64")).update(`${date}\n${resource}`).digest("base64");
  const headers = {
    ...init.headers,
    "x-ms-date": date,
    "x-ms-version": "2019-02-02",
    Authorization: `SharedKeyLite ${account}:${sig}`,
  };
  let res;
  try {
    // duplex "half": fetch's requirement for a streamed body. redirect
    // "error": with "follow" (the default) fetch keeps a clone of the
    // request for a redirect to come, and a streamed body's clone is a tee
    // whose unread branch holds every chunk sent: the whole file in memory
    // (the Fetch standard's "HTTP-network-or-cache fetch" clones the
    // request unless its redirect mode is "error",
    // https://fetch.spec.whatwg.org/#concept-http-network-or-cache-fetch;
    // packaging/npm/test/load-memory.js: 287 MiB of buffers for a 275 MiB
    // file with it, 33 MiB without). tableemu never redirects.
    res = await fetch(url, { method, headers, body: init.body, redirect: "error", ...(init.body ? { duplex: "half" } : {}) });
  } catch (err) {
    throw new Error(`tableemu ${what}: no answer from ${url.origin} (${err.cause?.code ?? err.message}): is the server running?`);
  }
  const text = await res.text();
  if (!res.ok) throw refusal(res, text, url, what, init.ours, Boolean(init.comp));
  return text;
}

// refusal is the server's error as one line: the service's code and
// message, then tableemu's hint, as tableemu writes them.
function refusal(res, text, url, what, ours, tableAPI) {
  let code = res.headers.get("x-ms-error-code") ?? "";
  let message;
  try {
    const e = JSON.parse(text)["odata.error"];
    code = e.code;
    // The service's text and tableemu's hint line, joined into one.
    message = e.message.value.split("\nRequestId:")[0].replaceAll("\n", " ");
  } catch {
    // The Table API's XML errors (Set Table Service Properties): OData's
    // <m:error><m:code/><m:message/></m:error>.
    const m = tableAPI && /<(?:\w+:)?message[^>]*>([\s\S]*?)<\/(?:\w+:)?message>/i.exec(text);
    if (code && m) {
      const xml = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };
      message = m[1].split("\nRequestId:")[0].replaceAll("\n", " ").replace(/&(lt|gt|amp|quot|apos);/g, (_, e) => xml[e]);
    } else {
      // Not tableemu (Azurite answers 400 with no such endpoint).
      message = `${res.status} from ${url.origin}, which may not be tableemu: ${ours ?? "reset and snapshots"} are tableemu's own`;
    }
  }
  const err = new Error(`tableemu ${what}: ${res.status} ${code}: ${message}`);
  err.name = "TableemuError";
  err.status = res.status;
  err.code = code;
  return err;
}

// toolURL is the URL of one of tableemu's own endpoints of the account;
// suffix follows /_tableemu/accounts/<account>.
function toolURL(kv, suffix) {
  return new URL(`/_tableemu/accounts/${encodeURIComponent(kv.AccountName)}${suffix}`, kv.TableEndpoint);
}

module.exports = { DEFAULT_ENV, parseConnectionString, connectionOf, send, toolURL };
