'use strict';
// The explorer's "Reset account…" (docs/isolation.md): behind a dialog that
// wants the account's name typed, it empties the account through
// POST /_tableemu/accounts/<account>/reset, signed in the page; the Go SDK
// then finds no table. A SAS connection is not offered it.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, launch, shot, gocheck } = require('../lib/harness.js');

let srv;
let ui;
let page;

before(async () => {
  srv = await startServer();
  await gocheck(srv.connectionString, ['seed', 'orders', '40', '2']);
  await gocheck(srv.connectionString, ['seed', 'people', '10', '1']);
  ui = await launch();
  page = ui.page;
});

after(async () => {
  if (ui) await ui.close();
  if (srv) await srv.stop();
});

test('resets the account after its name is typed', async () => {
  await page.goto(`${srv.origin}/_tableemu/`);
  await page.waitForSelector('#table-list button[data-table="orders"]');
  assert.equal(await page.locator('#reset-account').isVisible(), true);

  // Cancelled, nothing happens.
  await page.click('#reset-account');
  await page.waitForSelector('dialog[open]');
  assert.match(await page.locator('dialog').textContent(), /Every table of devstoreaccount1, with its entities .* Its snapshots stay/);
  assert.equal(await page.locator('dialog button.danger').isDisabled(), true);
  await page.fill('#confirm-text', 'devstoreaccount');
  assert.equal(await page.locator('dialog button.danger').isDisabled(), true);
  await shot(page, '10-reset-account.png');
  await page.click('dialog button:text-is("Cancel")');
  await page.waitForSelector('dialog', { state: 'hidden' });
  assert.equal((await gocheck(srv.connectionString, ['dump', 'people'])).length, 10);

  await page.click('#reset-account');
  await page.fill('#confirm-text', 'devstoreaccount1');
  await page.click('dialog button.danger');
  await page.waitForSelector('#table-list button[data-table="orders"]', { state: 'detached' });
  await page.waitForFunction(() => /^No tables yet/.test(document.getElementById('tables-note').textContent));
  assert.match(await page.locator('#status').textContent(), /^Reset devstoreaccount1: 2 tables deleted$/);
  assert.match(await page.locator('#table-pane').textContent(), /was reset: it has no tables/);
  for (const table of ['orders', 'people']) {
    assert.equal(await gocheck(srv.connectionString, ['dump', table], { allowFail: true }), null, `${table} is gone`);
  }
});

test('a SAS connection is not offered a reset', async () => {
  await gocheck(srv.connectionString, ['seed', 'orders', '5', '1']);
  const { url } = await gocheck(srv.connectionString, ['sas', 'orders']);
  await page.click('#add-account');
  await page.fill('#connect-text', url);
  await page.click('#connect-form button[type=submit]');
  await page.waitForFunction(() => /SAS/.test(document.querySelector('#account-select option:checked')?.textContent || ''));
  assert.equal(await page.locator('#reset-account').isVisible(), false);
});
