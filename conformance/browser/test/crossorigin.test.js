'use strict';
// A web page on another site cannot change tableemu's state (issue 37,
// docs/security.md). An attacker's page, served by a small HTTP server of
// this test on other origins — http://127.0.0.2:<port> (another site) and
// http://127.0.0.1:<another port> (the same site, another origin) — tries
// a reset, a restore of the docs' "fixtures", a snapshot save and a
// snapshot delete, against tableemu at http://127.0.0.1:<port> and
// through http://localhost:<port>: by form post in all three enctypes,
// fetch (no-cors, and cors with methods and headers that need a
// preflight), navigator.sendBeacon, and img and script tags. None has any
// effect: the account's tables and snapshots, read back through signed
// clients (the Go SDK, tableemu snapshot list), are what they were, and
// every request that reached tableemu under /_tableemu/accounts/ and was
// not a read was refused with 403 AuthorizationFailure (its --debug log
// says which, with the Origin and Sec-Fetch-Site Chromium sent). With a
// SAS it makes from the public key, the page then tries the same ways on
// the Table API — Create Table, Insert Entity, a $batch delete: each
// reaches tableemu and is refused for its Content-Type (400 InvalidInput
// for none, 415 MediaTypeNotSupported for the form types and text/plain;
// a $batch without multipart/mixed is 400 InvalidInput), and nothing is
// planted. The explorer served by tableemu still resets the account.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { startServer, launch, shot, gocheck } = require('../lib/harness.js');

const DEV_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

let srv;
let ui;
let debugLog;
const attackers = [];

// cli runs the tableemu binary's reset/snapshot commands against srv: a
// first-party client that signs its requests.
function cli(...args) {
  const port = new URL(srv.origin).port;
  return new Promise((resolve, reject) => {
    execFile(process.env.TABLEEMU_BIN, [...args, '--tablePort', port], (err, stdout, stderr) => {
      if (err) reject(new Error(`tableemu ${args.join(' ')}: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

// snapshotList is `tableemu snapshot list`, one line per snapshot.
async function snapshotList() {
  return (await cli('snapshot', 'list')).trim().split('\n').sort();
}

// tablesNow is what the Go SDK reads from each table ('missing' when it
// does not exist).
async function tablesNow(names) {
  const out = {};
  for (const t of names) out[t] = (await gocheck(srv.connectionString, ['dump', t], { allowFail: true })) ?? 'missing';
  return out;
}

// accountSAS is an account SAS for devstoreaccount1, as any page can make
// it from the public key (version 2019-02-02's string to sign).
function accountSAS() {
  const f = { sv: '2019-02-02', ss: 't', srt: 'sco', sp: 'rwdlacu', se: '2099-01-01' };
  const sts = ['devstoreaccount1', f.sp, f.ss, f.srt, '', f.se, '', '', f.sv, ''].join('\n');
  const sig = crypto.createHmac('sha256', Buffer.from(DEV_KEY, 'base64')).update(sts).digest('base64');
  return new URLSearchParams({ ...f, sig }).toString();
}

// The attacker's page: every way a page can send a request without the
// target's consent, run against each target, each outcome listed.
function attackPage(targets) {
  return `<!doctype html><meta charset="utf-8"><title>attacking</title>
<style>body{font:13px sans-serif;margin:12px}td,th{border:1px solid #bbb;padding:2px 6px;text-align:left}
table{border-collapse:collapse;margin-bottom:12px}iframe,form,img{display:none}</style>
<h1>Another site, trying to change tableemu</h1><p id="where"></p>
<table id="sum"><tr><th>what the page saw</th><th>attempts</th></tr></table>
<table id="out"><tr><th>target</th><th>how</th><th>endpoint</th><th>what the page saw</th></tr></table>
<script>
const targets = ${JSON.stringify(targets)};
const acct = '/_tableemu/accounts/devstoreaccount1';
const endpoints = [
  ['reset', 'POST', acct + '/reset'],
  ['restore fixtures', 'POST', acct + '/snapshots/fixtures/restore'],
  ['save planted', 'PUT', acct + '/snapshots/planted'],
  ['delete keep', 'DELETE', acct + '/snapshots/keep'],
];
const results = [];
function note(target, how, ep, outcome) {
  results.push({ target, how, ep, outcome });
  const tr = document.createElement('tr');
  for (const v of [target, how, ep, outcome]) { const td = document.createElement('td'); td.textContent = v; tr.appendChild(td); }
  document.getElementById('out').appendChild(tr);
}
let frames = 0;
function formPost(url, enctype) {
  return new Promise((resolve) => {
    const f = document.createElement('iframe');
    f.name = 'f' + frames++;
    document.body.appendChild(f);
    const form = document.createElement('form');
    form.method = 'POST'; form.action = url; form.enctype = enctype; form.target = f.name;
    const i = document.createElement('input');
    i.name = '{"TableName":"planted","x":"'; i.value = '"}';
    form.appendChild(i);
    document.body.appendChild(form);
    const timer = setTimeout(() => resolve('no load event in 5 s'), 5000);
    f.addEventListener('load', () => { clearTimeout(timer); resolve('submitted; the frame loaded (cross-origin: unreadable)'); });
    form.submit();
  });
}
async function tryFetch(url, init) {
  try {
    const r = await fetch(url, init);
    return r.type === 'opaque' ? 'sent; opaque answer (no-cors)' : 'read the answer: ' + r.status;
  } catch (e) { return 'refused by the browser: ' + e.name + ': ' + e.message; }
}
function tag(kind, url) {
  return new Promise((resolve) => {
    const el = document.createElement(kind);
    const timer = setTimeout(() => resolve('no event in 5 s'), 5000);
    el.onload = () => { clearTimeout(timer); resolve('loaded'); };
    el.onerror = () => { clearTimeout(timer); resolve('error event'); };
    el.src = url;
    document.body.appendChild(el);
  });
}
function beacon(url, body) {
  try { return navigator.sendBeacon(url, body) ? 'queued' : 'not queued'; } catch (e) { return 'threw ' + e.name + ': ' + e.message; }
}
async function run() {
  document.getElementById('where').textContent = 'This page: ' + location.origin + '; targets: ' + targets.join(', ');
  for (const t of targets) {
    for (const [name, method, p] of endpoints) {
      const url = t + p;
      for (const enc of ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']) {
        note(t, 'form POST ' + enc, name, await formPost(url, enc));
      }
      const form = new FormData(); form.append('a', 'b');
      const bodies = [['text/plain', 'x'], ['URLSearchParams', new URLSearchParams('a=b')], ['FormData', form],
        ['Blob application/json', new Blob(['{}'], { type: 'application/json' })]];
      for (const [label, body] of bodies) {
        note(t, 'fetch no-cors ' + method + ' ' + label, name, await tryFetch(url, { method, mode: 'no-cors', body: method === 'DELETE' ? undefined : body }));
      }
      note(t, 'fetch no-cors POST (no body)', name, await tryFetch(url, { method: 'POST', mode: 'no-cors' }));
      note(t, 'fetch cors ' + method + ' (needs a preflight)', name, await tryFetch(url, { method }));
      note(t, 'fetch cors POST Tableemu-Request (needs a preflight)', name, await tryFetch(url, { method: 'POST', headers: { 'Tableemu-Request': '1' } }));
      note(t, 'fetch cors POST application/json (needs a preflight)', name, await tryFetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }));
      note(t, 'fetch cors POST text/plain (simple)', name, await tryFetch(url, { method: 'POST', body: 'x' }));
      note(t, 'fetch no-cors keepalive POST', name, await tryFetch(url, { method: 'POST', mode: 'no-cors', keepalive: true, body: 'x' }));
      for (const [label, body] of [['string', 'x'], ['URLSearchParams', new URLSearchParams('a=b')], ['FormData', form],
        ['Blob text/plain', new Blob(['x'], { type: 'text/plain' })], ['Blob application/json', new Blob(['{}'], { type: 'application/json' })]]) {
        note(t, 'sendBeacon ' + label, name, beacon(url, body));
      }
      note(t, 'img', name, await tag('img', url));
      note(t, 'script', name, await tag('script', url));
    }
  }
  await new Promise((r) => setTimeout(r, 1000)); // beacons leave after the page's tasks
  const count = {};
  for (const r of results) { const k = r.outcome.replace(/(TypeError: ).*/, '$1…'); count[k] = (count[k] || 0) + 1; }
  for (const [k, n] of Object.entries(count)) {
    const tr = document.createElement('tr');
    for (const v of [k, n]) { const td = document.createElement('td'); td.textContent = v; tr.appendChild(td); }
    document.getElementById('sum').appendChild(tr);
  }
  window.attackResults = results;
  document.title = 'done';
}
run();
</script>`;
}

// The Table API with a SAS made from the public key (docs/security.md):
// every write a page can send without a preflight — form posts in the
// three encodings, fetch no-cors with a text, form, Blob or ArrayBuffer
// body (a Blob of another type and an ArrayBuffer go with no Content-Type
// at all), sendBeacon — against Create Table, Insert Entity into an
// existing table, and a $batch deleting an entity; then the same with
// application/json, which needs a preflight, and a Delete Table.
function tableApiPage(target, sas) {
  return `<!doctype html><meta charset="utf-8"><title>table api</title>
<style>body{font:13px sans-serif;margin:12px}td,th{border:1px solid #bbb;padding:2px 6px;text-align:left}
table{border-collapse:collapse;margin-bottom:12px}iframe,form{display:none}</style>
<h1>Another site, writing to tableemu's Table API with a SAS made from the public key</h1>
<table id="out"><tr><th>write</th><th>how</th><th>what the page saw</th></tr></table>
<script>
const base = ${JSON.stringify(target)} + '/devstoreaccount1';
const sas = ${JSON.stringify(sas)};
const results = [];
function note(what, how, outcome) {
  results.push({ what, how, outcome });
  const tr = document.createElement('tr');
  for (const v of [what, how, outcome]) { const td = document.createElement('td'); td.textContent = v; tr.appendChild(td); }
  document.getElementById('out').appendChild(tr);
}
let frames = 0;
// formPost sends one field named name with value "=" + value's rest: as
// text/plain that is the body name=value, here a JSON document.
function formPost(url, enctype, name, value) {
  return new Promise((resolve) => {
    const f = document.createElement('iframe');
    f.name = 'f' + frames++;
    document.body.appendChild(f);
    const form = document.createElement('form');
    form.method = 'POST'; form.action = url; form.enctype = enctype; form.target = f.name;
    const i = document.createElement('input');
    i.name = name; i.value = value;
    form.appendChild(i);
    document.body.appendChild(form);
    const timer = setTimeout(() => resolve('no load event in 5 s'), 5000);
    f.addEventListener('load', () => { clearTimeout(timer); resolve('submitted; the frame loaded (cross-origin: unreadable)'); });
    form.submit();
  });
}
async function tryFetch(url, init) {
  try {
    const r = await fetch(url, init);
    return r.type === 'opaque' ? 'sent; opaque answer (no-cors)' : 'read the answer: ' + r.status;
  } catch (e) { return 'refused by the browser: ' + e.name + ': ' + e.message; }
}
function beacon(url, body) {
  try { return navigator.sendBeacon(url, body) ? 'queued' : 'not queued'; } catch (e) { return 'threw ' + e.name + ': ' + e.message; }
}
const batch = '--batch_p\\r\\nContent-Type: multipart/mixed; boundary=changeset_p\\r\\n\\r\\n--changeset_p\\r\\n' +
  'Content-Type: application/http\\r\\nContent-Transfer-Encoding: binary\\r\\n\\r\\n' +
  'DELETE ' + base + "/orders(PartitionKey='p00',RowKey='r00000') HTTP/1.1\\r\\nIf-Match: *\\r\\n\\r\\n" +
  '--changeset_p--\\r\\n--batch_p--\\r\\n';
const writes = [
  // what, path, JSON body, the body as a form field (name, value)
  ['create table', '/Tables', '{"TableName":"plantedbypage"}', ['{"TableName":"plantedbypage","x":"', '"}']],
  ['insert entity', '/people', '{"PartitionKey":"planted","RowKey":"r","By":"a page"}', ['{"PartitionKey":"planted","RowKey":"r","By":"', '"}']],
  ['$batch delete', '/$batch', batch, ['batch', batch]],
];
async function run() {
  for (const [what, p, json, [name, value]] of writes) {
    const url = base + p + '?' + sas;
    for (const enc of ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']) {
      note(what, 'form POST ' + enc, await formPost(url, enc, name, value));
    }
    const form = new FormData(); form.append(name, value);
    const bodies = [['string (text/plain)', json], ['URLSearchParams', new URLSearchParams([[name, value]])], ['FormData', form],
      ['Blob without a type', new Blob([json])], ['Blob application/json', new Blob([json], { type: 'application/json' })],
      ['Blob multipart/mixed', new Blob([json], { type: 'multipart/mixed; boundary=batch_p' })],
      ['ArrayBuffer', new TextEncoder().encode(json).buffer]];
    for (const [label, body] of bodies) {
      note(what, 'fetch no-cors ' + label, await tryFetch(url, { method: 'POST', mode: 'no-cors', body }));
    }
    note(what, 'fetch no-cors keepalive string', await tryFetch(url, { method: 'POST', mode: 'no-cors', keepalive: true, body: json }));
    for (const [label, body] of [['string', json], ['Blob without a type', new Blob([json])],
      ['ArrayBuffer', new TextEncoder().encode(json).buffer], ['URLSearchParams', new URLSearchParams([[name, value]])],
      ['FormData', form], ['Blob application/json', new Blob([json], { type: 'application/json' })]]) {
      note(what, 'sendBeacon ' + label, beacon(url, body));
    }
    note(what, 'fetch cors application/json (needs a preflight)',
      await tryFetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: json }));
  }
  note('delete table', 'fetch cors DELETE (needs a preflight)',
    await tryFetch(base + "/Tables('orders')?" + sas, { method: 'DELETE' }));
  await new Promise((r) => setTimeout(r, 1000)); // beacons leave after the page's tasks
  window.apiResults = results;
  document.title = 'done';
}
run();
</script>`;
}

// serveAttacker serves the pages on host and a free port.
function serveAttacker(host, pages) {
  return new Promise((resolve, reject) => {
    const s = http.createServer((req, res) => {
      const body = pages[new URL(req.url, 'http://x').pathname];
      if (!body) { res.writeHead(404); res.end(); return; }
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(body);
    });
    s.once('error', reject);
    s.listen(0, host, () => resolve({ origin: `http://${host}:${s.address().port}`, close: () => new Promise((r) => s.close(r)) }));
  });
}

// debugRequests parses tableemu's --debug log: one entry per request with
// its method, path, status, error code and the headers that say where it
// came from.
function debugRequests() {
  const out = [];
  for (const line of fs.readFileSync(debugLog, 'utf8').split('\n')) {
    const m = /^\S+ (GET|HEAD|POST|PUT|DELETE|OPTIONS|PATCH|MERGE) (\S+) (\d{3}) \S+ (\S+) .* headers=map\[(.*)\]$/.exec(line);
    if (!m) continue;
    const hdr = (name) => (new RegExp(`(?:^| )${name}:\\[([^\\]]*)\\]`).exec(m[5]) || [])[1] || '';
    out.push({ method: m[1], path: m[2], status: +m[3], code: m[4], origin: hdr('Origin'), site: hdr('Sec-Fetch-Site'), ct: hdr('Content-Type') });
  }
  return out;
}

before(async () => {
  debugLog = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tableemu-crossorigin-')), 'debug.log');
  srv = await startServer({ args: ['--debug', debugLog] });
  await gocheck(srv.connectionString, ['seed', 'orders', '20', '2']);
  await gocheck(srv.connectionString, ['seed', 'people', '5', '1']);
  await cli('snapshot', 'save', 'fixtures');
  await cli('snapshot', 'save', 'keep');
  // Written after the snapshots: a restore of "fixtures" would remove it.
  await gocheck(srv.connectionString, ['seed', 'after', '3', '1']);
  ui = await launch();
});

after(async () => {
  if (ui) await ui.close();
  for (const a of attackers) await a.close();
  if (srv) await srv.stop();
});

test('a page on another origin cannot reset, restore, save or delete snapshots', async () => {
  const port = new URL(srv.origin).port;
  const targets = [srv.origin, `http://localhost:${port}`];
  const tables = await tablesNow(['orders', 'people', 'after']);
  const snaps = await snapshotList();
  assert.equal(tables.after.length, 3);
  assert.equal(snaps.length, 2);

  const pages = { '/attack.html': attackPage(targets) };
  const crossSite = await serveAttacker('127.0.0.2', pages); // another site
  const sameSite = await serveAttacker('127.0.0.1', pages); // same site, another port
  attackers.push(crossSite, sameSite);
  const results = [];
  for (const a of [crossSite, sameSite]) {
    const page = await ui.context.newPage();
    await page.goto(`${a.origin}/attack.html`);
    await page.waitForFunction(() => document.title === 'done', null, { timeout: 300000 });
    const r = await page.evaluate(() => window.attackResults);
    results.push(...r.map((x) => ({ ...x, from: a.origin })));
    if (a === crossSite) await shot(page, '14-crossorigin-attacker.png');
    await page.close();
  }
  // Each way was tried: forms and beacons were sent (the browser needs no
  // permission for them), and what needs a preflight was stopped by it.
  const per = (how) => results.filter((x) => x.how.startsWith(how));
  assert.equal(per('form POST').length, 2 * 2 * 4 * 3);
  assert.ok(per('form POST').every((x) => x.outcome.startsWith('submitted')), JSON.stringify(per('form POST').filter((x) => !x.outcome.startsWith('submitted'))));
  assert.ok(per('sendBeacon string').every((x) => x.outcome === 'queued'));
  assert.ok(per('fetch cors PUT').concat(per('fetch cors DELETE'), per('fetch cors POST Tableemu-Request'))
    .every((x) => x.outcome.startsWith('refused by the browser')), 'a preflight (405) stops them');

  // Give beacons time to land, then read tableemu's log.
  let seen = -1;
  for (let i = 0; i < 50; i++) {
    const n = debugRequests().length;
    if (n === seen) break;
    seen = n;
    await new Promise((r) => setTimeout(r, 200));
  }
  const reqs = debugRequests().filter((r) => r.path.startsWith('/_tableemu/accounts/') && (r.origin || r.site));
  const writes = reqs.filter((r) => !['GET', 'HEAD', 'OPTIONS'].includes(r.method));
  const summary = {};
  for (const r of reqs) {
    const k = `${r.method} ${r.status} ${r.code} Sec-Fetch-Site=${r.site || '-'}`;
    summary[k] = (summary[k] || 0) + 1;
  }
  console.log('requests from the attacker pages that reached tableemu:', summary);
  // Forms (24 per page) and beacons at least, from both pages.
  assert.ok(writes.length >= 2 * (24 + 2 * 4 * 5), `only ${writes.length} writes reached tableemu`);
  const accepted = writes.filter((r) => r.status !== 403 || r.code !== 'AuthorizationFailure');
  assert.deepEqual(accepted, [], 'every write from a page on another origin is 403 AuthorizationFailure');
  assert.ok(writes.some((r) => r.site === 'cross-site') && writes.some((r) => r.site === 'same-site'), 'both kinds of origin were tried');
  assert.ok(writes.some((r) => r.origin.startsWith('http://127.0.0.2:')), 'the cross-site page sent its Origin');
  for (const r of reqs.filter((x) => x.method === 'OPTIONS')) assert.equal(r.status, 405, 'preflights are 405');
  assert.ok(reqs.every((r) => r.status < 200 || r.status >= 300 || r.method === 'GET'), 'nothing but reads succeeded');

  // Nothing changed, read back through signed clients.
  assert.deepEqual(await tablesNow(['orders', 'people', 'after']), tables, 'the tables are unchanged');
  assert.deepEqual(await snapshotList(), snaps, 'the snapshots are unchanged (no "planted", "keep" still there)');
});

test('the Table API with a SAS made from the public key: a page can create, insert or delete nothing (docs/security.md)', async () => {
  const before = await tablesNow(['orders', 'people']);
  const logged = debugRequests().length;
  const pages = { '/api.html': tableApiPage(srv.origin, accountSAS()) };
  const a = await serveAttacker('127.0.0.2', pages);
  attackers.push(a);
  const page = await ui.context.newPage();
  await page.goto(`${a.origin}/api.html`);
  await page.waitForFunction(() => document.title === 'done', null, { timeout: 120000 });
  const out = await page.evaluate(() => window.apiResults);
  await shot(page, '14b-crossorigin-table-api.png', { fullPage: true });
  await page.close();
  const how = (w, h) => out.filter((x) => x.what === w && x.how.startsWith(h));
  for (const w of ['create table', 'insert entity', '$batch delete']) {
    assert.equal(how(w, 'form POST').length, 3);
    assert.ok(how(w, 'form POST').every((x) => x.outcome.startsWith('submitted')), JSON.stringify(how(w, 'form POST')));
    assert.ok(how(w, 'fetch no-cors').every((x) => x.outcome.startsWith('sent')), JSON.stringify(how(w, 'fetch no-cors')));
    assert.equal(how(w, 'sendBeacon string')[0].outcome, 'queued');
    assert.match(how(w, 'fetch cors application/json')[0].outcome, /refused by the browser/, 'application/json needs a preflight, which no CORS rule allows');
  }
  assert.match(how('delete table', 'fetch cors DELETE')[0].outcome, /refused by the browser/);

  // What reached tableemu from the page, by its --debug log.
  let seen = -1;
  for (let i = 0; i < 50; i++) {
    const n = debugRequests().length;
    if (n === seen) break;
    seen = n;
    await new Promise((r) => setTimeout(r, 200));
  }
  const reqs = debugRequests().slice(logged).filter((r) => r.path.startsWith('/devstoreaccount1/') && r.origin === a.origin);
  const summary = {};
  for (const r of reqs) {
    const k = `${r.method} ${r.path.split('?')[0]} ${r.status} ${r.code} Content-Type=${r.ct.replace(/boundary=\S+/, 'boundary=…') || '(none)'}`;
    summary[k] = (summary[k] || 0) + 1;
  }
  console.log('Table API requests from the page that reached tableemu:', summary);
  const posts = reqs.filter((r) => r.method === 'POST');
  // 3 forms, 8 fetches and at least the string, Blob and ArrayBuffer
  // beacons, for each of the three writes.
  assert.ok(posts.length >= 3 * (3 + 8 + 3), `only ${posts.length} POSTs reached tableemu`);
  assert.ok(reqs.every((r) => r.status >= 400), `a request from the page succeeded: ${JSON.stringify(reqs.filter((r) => r.status < 400))}`);
  for (const r of posts) {
    const want = r.path.startsWith('/devstoreaccount1/$batch') || !r.ct ? [400, 'InvalidInput'] : [415, 'MediaTypeNotSupported'];
    assert.deepEqual([r.status, r.code], want, `${r.method} ${r.path} Content-Type ${r.ct || '(none)'}`);
  }
  // Every kind of body was tried on Create Table and Insert Entity.
  for (const p of ['/devstoreaccount1/Tables', '/devstoreaccount1/people']) {
    const cts = posts.filter((r) => r.path.split('?')[0] === p).map((r) => r.ct.split(';')[0]);
    for (const ct of ['', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']) {
      assert.ok(cts.includes(ct), `${p}: no POST with Content-Type ${ct || '(none)'} reached tableemu: ${cts}`);
    }
  }
  for (const r of reqs.filter((x) => x.method === 'OPTIONS')) assert.deepEqual([r.status, r.code], [403, 'CorsPreflightFailure']);

  // Nothing was planted, read back through the Go SDK.
  assert.equal(await gocheck(srv.connectionString, ['dump', 'plantedbypage'], { allowFail: true }), null, 'no table plantedbypage');
  assert.deepEqual(await tablesNow(['orders', 'people']), before, 'orders and people are unchanged');
});

test('the explorer served by tableemu still resets the account', async () => {
  const page = ui.page;
  await page.goto(`${srv.origin}/_tableemu/`);
  await page.waitForSelector('#table-list button[data-table="orders"]');
  // What the attacks left: the tables of before, and nothing of the pages'.
  for (const t of ['after', 'people']) await page.waitForSelector(`#table-list button[data-table="${t}"]`);
  assert.equal(await page.locator('#table-list button[data-table="plantedbypage"]').count(), 0);
  await shot(page, '15a-crossorigin-tables-after-attacks.png');
  await page.click('#reset-account');
  await page.waitForSelector('dialog[open]');
  await page.fill('#confirm-text', 'devstoreaccount1');
  await page.click('dialog button.danger');
  await page.waitForSelector('#table-list button[data-table="orders"]', { state: 'detached' });
  await page.waitForFunction(() => /^No tables yet/.test(document.getElementById('tables-note').textContent));
  assert.match(await page.locator('#status').textContent(), /^Reset devstoreaccount1: 3 tables deleted$/);
  await shot(page, '15b-crossorigin-explorer-reset.png');
  for (const t of ['orders', 'people', 'after']) {
    assert.equal(await gocheck(srv.connectionString, ['dump', t], { allowFail: true }), null, `${t} is gone`);
  }
  // The explorer's reset is signed and same-origin, as tableemu logged it.
  const reset = debugRequests().filter((r) => r.path.endsWith('/reset') && r.status === 200);
  assert.equal(reset.length, 1);
  assert.equal(reset[0].site, 'same-origin');
  assert.equal(reset[0].origin, srv.origin);
  // Snapshots stay after a reset.
  assert.equal((await snapshotList()).length, 2);
});
