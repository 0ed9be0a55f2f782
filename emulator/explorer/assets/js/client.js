// The explorer's Table API client. It is an ordinary client: every request
// goes to this page's own origin (the tableemu that served it) and carries
// a Shared Key signature made here with the account key, or the SAS the
// user pasted. Nothing else authorizes it.

import { hmacSHA256, bytesToBase64, randomGuid } from './crypto.js';
import { parseJSON } from './json.js';
import { entityFromWire } from './edm.js';

// The development account and its key are public: every Azure SDK and
// Azurite know them (docs/protocol.md 9.1).
export const DEV_ACCOUNT = 'devstoreaccount1';
export const DEV_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
export const API_VERSION = '2019-02-02';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code || '';
  }
}

// decodeKey decodes an account key leniently (missing padding, URL-safe
// letters), as the SDKs and the server accept them.
function decodeKey(text) {
  let t = text.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  t += '='.repeat((4 - (t.length % 4)) % 4);
  try {
    const bin = atob(t);
    if (!bin.length) return null;
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

// parseConnection reads a connection string (AccountName/AccountKey,
// TableEndpoint/SharedAccessSignature, UseDevelopmentStorage=true) or a
// SAS URL, and returns {account, key?, sas?, table?} or throws an Error
// saying what is missing. Only the account name and the credential are
// used: requests always go to this page's origin.
export function parseConnection(text) {
  text = text.trim();
  if (/^https?:\/\//i.test(text)) {
    let u;
    try {
      u = new URL(text);
    } catch {
      throw new Error('That is not a URL.');
    }
    const segs = u.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const sas = u.search.replace(/^\?/, '');
    if (!/(^|&)sig=/.test(sas)) throw new Error('The URL carries no SAS (no sig= parameter).');
    if (!segs.length) throw new Error('The URL names no account (http://host:port/<account>/<table>?<sas>).');
    const table = segs[1] ? segs[1].replace(/\(\)$/, '') : new URLSearchParams(sas).get('tn') || '';
    return { account: segs[0], sas, table };
  }
  const kv = {};
  for (const part of text.split(';')) {
    const i = part.indexOf('=');
    if (i > 0) kv[part.slice(0, i).trim().toLowerCase()] = part.slice(i + 1).trim();
  }
  if ((kv.usedevelopmentstorage || '').toLowerCase() === 'true') {
    return { account: DEV_ACCOUNT, key: decodeKey(DEV_KEY) };
  }
  let account = kv.accountname || '';
  if (!account && kv.tableendpoint) {
    try {
      const u = new URL(kv.tableendpoint);
      account = u.pathname.split('/').filter(Boolean)[0] || u.hostname.split('.')[0];
    } catch {
      /* reported below */
    }
  }
  if (!account) throw new Error('The connection string names no account (AccountName=… or TableEndpoint=…/<account>).');
  if (kv.sharedaccesssignature) {
    const sas = kv.sharedaccesssignature.replace(/^\?/, '');
    return { account, sas, table: new URLSearchParams(sas).get('tn') || '' };
  }
  if (!kv.accountkey) throw new Error('The connection string has no AccountKey and no SharedAccessSignature.');
  const key = decodeKey(kv.accountkey);
  if (!key) throw new Error('AccountKey is not base64.');
  return { account, key };
}

const quoteKey = (s) => encodeURIComponent(s.replace(/'/g, "''"));

export class Client {
  // conn is parseConnection's result; origin defaults to the page's.
  constructor(conn, origin = location.origin) {
    this.conn = conn;
    this.account = conn.account;
    this.origin = origin;
    this.base = '/' + encodeURIComponent(conn.account);
  }

  entityPath(table, pk, rk) {
    return `${this.base}/${encodeURIComponent(table)}(PartitionKey='${quoteKey(pk)}',RowKey='${quoteKey(rk)}')`;
  }

  // request sends one signed request. path is the escaped path, query a
  // list of [name, value]. It resolves to {status, headers, text, ms} or
  // rejects with an ApiError for a non-2xx answer.
  async request(method, path, { query = [], headers = {}, body = null, contentType = '' } = {}) {
    let qs = query.filter(([, v]) => v !== '' && v != null).map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
    if (this.conn.sas) qs.push(this.conn.sas);
    const url = this.origin + path + (qs.length ? '?' + qs.join('&') : '');
    const date = new Date().toUTCString();
    const h = {
      'x-ms-version': API_VERSION,
      'x-ms-date': date,
      'x-ms-client-request-id': randomGuid(),
      DataServiceVersion: '3.0',
      MaxDataServiceVersion: '3.0;NetFx',
      Accept: 'application/json;odata=minimalmetadata',
      ...headers,
    };
    if (contentType) h['Content-Type'] = contentType;
    if (this.conn.key) {
      // Shared Key for the Table service (docs/protocol.md 9.3): verb,
      // Content-MD5, Content-Type, date, canonicalized resource (the
      // account, then the path as sent, then ?comp= when present).
      const comp = query.find(([k]) => k === 'comp');
      const toSign = [method, '', contentType, date, `/${this.account}${path}${comp ? '?comp=' + comp[1] : ''}`].join('\n');
      h.Authorization = `SharedKey ${this.account}:${bytesToBase64(hmacSHA256(this.conn.key, toSign))}`;
    }
    const t0 = performance.now();
    let res;
    try {
      res = await fetch(url, { method, headers: h, body, cache: 'no-store', credentials: 'omit', redirect: 'error' });
    } catch (e) {
      throw new ApiError(0, 'NetworkError', `The request did not reach tableemu: ${e.message}`);
    }
    const text = await res.text();
    const ms = performance.now() - t0;
    if (!res.ok) throw errorFrom(res.status, res.headers, text);
    return { status: res.status, headers: res.headers, text, ms };
  }

  async listTables(prefix = '', next = '') {
    const query = [];
    if (prefix) {
      const last = prefix.charCodeAt(prefix.length - 1);
      const upper = prefix.slice(0, -1) + String.fromCharCode(last + 1);
      query.push(['$filter', `TableName ge '${prefix.replace(/'/g, "''")}' and TableName lt '${upper.replace(/'/g, "''")}'`]);
    }
    if (next) query.push(['NextTableName', next]);
    const r = await this.request('GET', `${this.base}/Tables`, { query });
    const doc = JSON.parse(r.text);
    return { names: doc.value.map((t) => t.TableName), next: r.headers.get('x-ms-continuation-NextTableName') || '' };
  }

  createTable(name) {
    return this.request('POST', `${this.base}/Tables`, {
      body: JSON.stringify({ TableName: name }),
      contentType: 'application/json',
      headers: { Prefer: 'return-no-content' },
    });
  }

  deleteTable(name) {
    return this.request('DELETE', `${this.base}/Tables('${quoteKey(name)}')`);
  }

  // queryEntities reads one page. next is the continuation {pk, rk} of the
  // previous page. The result's insight is the server's x-tableemu-*
  // headers (present with --insights): the query's shape and the entities
  // examined and returned as Azure would count them.
  async queryEntities(table, { filter = '', select = '', top = '', next = null } = {}) {
    const query = [['$filter', filter], ['$select', select], ['$top', top]];
    if (next) query.push(['NextPartitionKey', next.pk], ['NextRowKey', next.rk]);
    const r = await this.request('GET', `${this.base}/${encodeURIComponent(table)}()`, { query });
    const doc = parseJSON(r.text);
    const npk = r.headers.get('x-ms-continuation-NextPartitionKey');
    const shape = r.headers.get('x-tableemu-query-shape');
    return {
      entities: doc.value.map(entityFromWire),
      next: npk ? { pk: npk, rk: r.headers.get('x-ms-continuation-NextRowKey') || '' } : null,
      insight: shape
        ? {
            shape,
            scanned: +r.headers.get('x-tableemu-entities-scanned'),
            returned: +r.headers.get('x-tableemu-entities-returned'),
            index: r.headers.get('x-tableemu-index') || '',
          }
        : null,
      ms: r.ms,
    };
  }

  // insights reads tableemu's design report (GET /_tableemu/insights,
  // --insights) for this account. Like any request it is signed with the
  // account key: the server answers only the signing account's tables,
  // and a SAS cannot read it.
  async insights() {
    if (!this.conn.key) throw new ApiError(0, 'NeedsAccountKey', 'The insights report is read with the account key; a SAS does not reach it.');
    const r = await this.request('GET', '/_tableemu/insights', { headers: { Accept: 'application/json' } });
    return JSON.parse(r.text);
  }

  // resetAccount returns the account to the state of a new server (POST
  // /_tableemu/accounts/<account>/reset, docs/isolation.md): signed with
  // the account key like any request, so a SAS connection cannot.
  async resetAccount() {
    if (!this.conn.key) throw new ApiError(0, 'NeedsAccountKey', 'A reset is signed with the account key; a SAS does not reach it.');
    const r = await this.request('POST', `/_tableemu/accounts/${encodeURIComponent(this.account)}/reset`, {
      headers: { Accept: 'application/json' },
    });
    return JSON.parse(r.text);
  }

  async getEntity(table, pk, rk) {
    const r = await this.request('GET', this.entityPath(table, pk, rk));
    const e = entityFromWire(parseJSON(r.text));
    e.etag = r.headers.get('ETag') || e.etag;
    return e;
  }

  // insertEntity inserts; it fails with 409 EntityAlreadyExists when the
  // keys are taken. Resolves to the new ETag.
  async insertEntity(table, json) {
    const r = await this.request('POST', `${this.base}/${encodeURIComponent(table)}`, {
      body: json,
      contentType: 'application/json',
      headers: { Prefer: 'return-no-content' },
    });
    return r.headers.get('ETag') || '';
  }

  // updateEntity replaces (PUT) or merges (MERGE) the entity whose ETag is
  // etag; 412 UpdateConditionNotSatisfied when it changed meanwhile.
  async updateEntity(table, pk, rk, json, etag, merge) {
    const r = await this.request(merge ? 'MERGE' : 'PUT', this.entityPath(table, pk, rk), {
      body: json,
      contentType: 'application/json',
      headers: { 'If-Match': etag },
    });
    return r.headers.get('ETag') || '';
  }

  // upsertEntity inserts or replaces (PUT without If-Match).
  upsertEntity(table, pk, rk, json) {
    return this.request('PUT', this.entityPath(table, pk, rk), { body: json, contentType: 'application/json' });
  }

  deleteEntity(table, pk, rk, etag) {
    return this.request('DELETE', this.entityPath(table, pk, rk), { headers: { 'If-Match': etag } });
  }

  // batch runs ops — {method, pk, rk, json?, etag?}, all of one partition,
  // at most 100 — as one entity group transaction (docs/protocol.md 7).
  // It resolves to {ok: true} or {ok: false, index, status, code, message}
  // for the operation that failed (nothing was written then).
  async batch(table, ops) {
    const b = 'batch_' + randomGuid();
    const cs = 'changeset_' + randomGuid();
    let body = `--${b}\r\nContent-Type: multipart/mixed; boundary=${cs}\r\n\r\n`;
    ops.forEach((op, i) => {
      const path = op.method === 'POST' ? `${this.base}/${encodeURIComponent(table)}` : this.entityPath(table, op.pk, op.rk);
      body += `--${cs}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n`;
      body += `${op.method} ${this.origin}${path} HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\n`;
      body += `DataServiceVersion: 3.0\r\nContent-ID: ${i + 1}\r\n`;
      if (op.etag) body += `If-Match: ${op.etag}\r\n`;
      body += op.json != null ? `Content-Type: application/json\r\nPrefer: return-no-content\r\n\r\n${op.json}\r\n` : '\r\n';
    });
    body += `--${cs}--\r\n--${b}--\r\n`;
    const r = await this.request('POST', `${this.base}/$batch`, { body, contentType: `multipart/mixed; boundary=${b}` });
    const statuses = [...r.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => +m[1]);
    const bad = statuses.findIndex((s) => s >= 400);
    if (bad < 0) return { ok: true };
    const json = r.text.slice(r.text.indexOf('{'), r.text.lastIndexOf('}') + 1);
    let code = '';
    let message = '';
    let index = 0;
    try {
      const err = JSON.parse(json)['odata.error'];
      code = err.code;
      message = firstLines(err.message.value);
      const m = /^(\d+):/.exec(message);
      if (m) {
        index = +m[1];
        message = message.slice(m[0].length);
      }
    } catch {
      message = 'The batch failed.';
    }
    return { ok: false, index, status: statuses[bad], code, message };
  }
}

// firstLines drops the RequestId and Time lines the service appends.
function firstLines(msg) {
  return msg.split('\nRequestId:')[0];
}

function errorFrom(status, headers, text) {
  let code = headers.get('x-ms-error-code') || '';
  let message = '';
  try {
    const err = JSON.parse(text)['odata.error'];
    code = code || err.code;
    message = firstLines(err.message.value);
  } catch {
    const m = /<m:message[^>]*>([\s\S]*?)<\/m:message>/.exec(text) || /<Message>([\s\S]*?)<\/Message>/.exec(text);
    if (m) message = firstLines(m[1].replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&'));
  }
  return new ApiError(status, code, message || `HTTP ${status}`);
}
