'use strict';
// No data without credentials. Where the page may not assume the public
// development key — a listener that is not loopback, or a server whose
// accounts are not the development account — it shows no table and no
// entity and sends no request to the Table API until a connection string
// is pasted; a wrong key gets the server's refusal and still nothing.
// With the right connection string it works, also where the page is not a
// secure context (no WebCrypto): the signature is computed in plain JS.
// The insights report (--insights) follows the same rule: unsigned it is
// refused, and signed it holds the connected account's tables only.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, launch, shot, lowContrast, gocheck, nonLoopbackAddress } = require('../lib/harness.js');

let ui;
before(async () => {
  ui = await launch();
});
after(async () => {
  if (ui) await ui.close();
});

const OTHER_KEY = Buffer.from('a key that is not the public development key').toString('base64');
const RIVAL_KEY = Buffer.from('the key of a second account on the same server').toString('base64');

// shows nothing until connected, then connects with cs; apiPrefix is the
// path the Table API requests of the account start with.
async function nothingWithoutCredentials(t, origin, account, cs, { wrongCS, shotName }) {
  const page = await ui.context.newPage();
  const apiRequests = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin !== origin) apiRequests.push(`another origin: ${r.url()}`);
    else if (!u.pathname.startsWith('/_tableemu/')) apiRequests.push(r.url());
  });
  await page.goto(`${origin}/_tableemu/`);
  await page.waitForSelector('#connect-view:not([hidden])');
  await page.waitForTimeout(300);
  assert.equal(await page.locator('#data-view').isHidden(), true);
  assert.equal(await page.locator('#table-list button').count(), 0);
  assert.equal(await page.locator('#grid').count(), 0);
  assert.deepEqual(apiRequests, [], 'no request reached the Table API before a credential was given');
  assert.equal(await page.locator('#nav-insights').isVisible(), false, 'no Insights view before a credential was given');
  // Nor does the insights report answer the page unsigned.
  const unsigned = await page.evaluate(async () => {
    const r = await fetch('/_tableemu/insights', { cache: 'no-store' });
    return { status: r.status, code: r.headers.get('x-ms-error-code'), body: await r.text() };
  });
  assert.equal(unsigned.status, 401, `unsigned insights: ${unsigned.status} ${unsigned.body}`);
  assert.equal(unsigned.code, 'NoAuthenticationInformation');
  assert.match(unsigned.body, /tableemu: .*Shared Key/);
  assert.ok(!unsigned.body.includes('secret'), 'the refusal names no table');
  assert.deepEqual(await lowContrast(page), [], 'connect: every text readable');
  if (shotName) await shot(page, shotName);

  // A wrong credential: the server's refusal, and still no data.
  await page.fill('#connect-text', wrongCS);
  await page.click('#connect-form button[type=submit]');
  await page.waitForFunction(() => document.getElementById('connect-error').textContent !== '');
  assert.match(await page.locator('#connect-error').textContent(), /AuthenticationFailed|ResourceNotFound|AuthorizationFailure/);
  assert.equal(await page.locator('#data-view').isHidden(), true);
  assert.equal(await page.locator('#table-list button').count(), 0);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('tableemu.explorer.connections')), null, 'a refused credential is not kept');

  // The right one.
  await page.fill('#connect-text', cs);
  await page.click('#connect-form button[type=submit]');
  await page.waitForSelector('#table-list button[data-table="secret"]');
  await page.click('#table-list button[data-table="secret"]');
  await page.waitForSelector('#grid tbody tr');
  assert.equal(await page.locator('#grid tbody tr').count(), 5);
  const kept = await page.evaluate(() => sessionStorage.getItem('tableemu.explorer.connections'));
  assert.ok(kept.includes(account), 'the connection string is kept in sessionStorage');
  assert.equal(await page.evaluate(() => localStorage.length), 0, 'and nowhere else');

  // Signed, the insights report holds this account's tables, and only
  // them: the server filters (the raw report), and the view shows them.
  const report = await page.evaluate(() => window.tableemuExplorer.client.insights());
  const named = [...report.tables, ...report.timeline.tables].map((t) => `${t.account}/${t.table}`);
  assert.ok(named.length > 0 && named.every((n) => n === `${account}/secret`), `the signed report names ${named}`);
  await page.click('#nav-insights');
  await page.waitForSelector('article.card[data-table="secret"]');
  assert.deepEqual(await page.locator('article.card').evaluateAll((els) => els.map((e) => e.dataset.table)), ['secret']);
  if (shotName) await shot(page, '12-insights-signed.png');
  await page.click('#nav-data');
  const secure = await page.evaluate(() => window.isSecureContext);
  await page.close();
  return secure;
}

test('a listener that is not loopback shows no entity without credentials', async (t) => {
  const ip = nonLoopbackAddress();
  if (!ip) {
    t.skip('this machine has no non-loopback IPv4 address');
    return;
  }
  const srv = await startServer({ host: ip, args: ['--insights'] });
  try {
    await gocheck(srv.connectionString, ['seed', 'secret', '5', '1']);
    const secure = await nothingWithoutCredentials(t, srv.origin, srv.account, srv.connectionString, {
      wrongCS: srv.connectionString.replace(/AccountKey=[^;]+/, `AccountKey=${OTHER_KEY}`),
      shotName: '11-connect.png',
    });
    assert.equal(secure, false, `http://${ip} is not a secure context: the plain-JS HMAC signed the requests`);
  } finally {
    await srv.stop();
  }
});

test('a server without the development account shows no entity without credentials, on loopback too', async (t) => {
  const srv = await startServer({ args: ['--insights'], env: { AZURITE_ACCOUNTS: `acme:${OTHER_KEY};rival:${RIVAL_KEY}` } });
  try {
    assert.equal(srv.account, 'acme');
    await gocheck(srv.connectionString, ['seed', 'secret', '5', '1']);
    // Another account's table, which acme's insights must not show.
    const rival = srv.connectionString.replace('AccountName=acme', 'AccountName=rival').replace(/AccountKey=[^;]+/, `AccountKey=${RIVAL_KEY}`).replace('/acme;', '/rival;');
    await gocheck(rival, ['seed', 'rivaltable', '3', '1']);
    await nothingWithoutCredentials(t, srv.origin, 'acme', srv.connectionString, { wrongCS: 'UseDevelopmentStorage=true' });
  } finally {
    await srv.stop();
  }
});

test('a pasted table SAS reaches its table and nothing else', async () => {
  const srv = await startServer({ args: ['--insights'], env: { AZURITE_ACCOUNTS: `acme:${OTHER_KEY}` } });
  try {
    await gocheck(srv.connectionString, ['seed', 'secret', '5', '1']);
    await gocheck(srv.connectionString, ['seed', 'other', '3', '1']);
    const { url } = await gocheck(srv.connectionString, ['sas', 'secret']);
    const page = await ui.context.newPage();
    await page.goto(`${srv.origin}/_tableemu/`);
    await page.fill('#connect-text', url);
    await page.click('#connect-form button[type=submit]');
    await page.waitForSelector('#grid tbody tr');
    assert.equal(await page.locator('#grid tbody tr').count(), 5);
    assert.match(await page.locator('#tables-note').textContent(), /cannot list tables/);
    await page.fill('#open-table', 'other');
    await page.click('#open-form button[type=submit]');
    await page.waitForSelector('#query-error:not([hidden])');
    assert.match(await page.locator('#query-error').textContent(), /AuthorizationFailure|AuthenticationFailed/);
    assert.equal(await page.locator('#grid').count(), 0);
    // The insights report is read with the account key, not a SAS.
    await page.click('#nav-insights');
    await page.waitForSelector('#insights-needs-key');
    assert.equal(await page.locator('article.card').count(), 0);
    await page.close();
  } finally {
    await srv.stop();
  }
});
