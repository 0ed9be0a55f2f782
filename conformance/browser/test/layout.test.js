'use strict';
// Long names in the explorer's layout: a table name of the full 63
// characters, long keys and a long value, at 1280 px and at 420 px. Nothing
// may push the page wider than the window or out of its box; what is cut
// is cut with an ellipsis and its whole text is one hover away.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, launch, shot } = require('../lib/harness.js');

const NAME = 'Averylongtablenamethatgoesonandonandonforsixtythreecharacters12';
let srv;
let ui;
let page;

before(async () => {
  srv = await startServer({ args: ['--insights'] });
  ui = await launch();
  page = ui.page;
});

after(async () => {
  if (ui) await ui.close();
  if (srv) await srv.stop();
});

// wider lists the elements of sel whose right edge is beyond the window.
const wider = (sel) => page.evaluate((s) =>
  [...document.querySelectorAll(s)].filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1).map((el) => `${el.tagName}.${el.className}`).slice(0, 5), sel);

test('a 63-character table name and long keys stay inside the window', async () => {
  assert.equal(NAME.length, 63);
  await page.goto(`${srv.origin}/_tableemu/`);
  await page.waitForFunction(() => /table/.test(document.getElementById('tables-note').textContent));
  await page.fill('#new-table', NAME);
  await page.click('#create-form button[type=submit]');
  await page.waitForSelector('#query-form');
  await page.evaluate((n) => window.tableemuExplorer.client.insertEntity(n, JSON.stringify({
    PartitionKey: 'a-rather-long-partition-key-value-that-goes-on-and-on',
    RowKey: 'a-row-key-also-long-enough-to-be-cut-0001',
    Text: 'x'.repeat(300),
  })), NAME);
  await page.click('#query-form button[type=submit]');
  await page.waitForSelector('#grid tbody tr');

  for (const width of [1280, 420]) {
    await page.setViewportSize({ width, height: 800 });
    await page.waitForTimeout(300);
    await page.click('#nav-data');
    await page.waitForSelector('#grid tbody tr');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `${width} px: no sideways scrolling of the page`);
    assert.deepEqual(await wider('.sidebar *, .pane-head *, .status'), [], `${width} px: nothing wider than the window`);
    const link = await page.evaluate(() => {
      const b = document.querySelector('#table-list .table-link');
      const side = document.querySelector('.sidebar').getBoundingClientRect();
      return { title: b.title, inside: b.getBoundingClientRect().right <= side.right + 1 };
    });
    assert.deepEqual(link, { title: NAME, inside: true }, `${width} px: the table's button is inside the list and names the table whole`);
    // The RowKey reads on one line, like the other cells.
    const rk = await page.evaluate(() => {
      const td = document.querySelector('#grid tbody td.key button');
      return td.getBoundingClientRect().height / parseFloat(getComputedStyle(td).lineHeight);
    });
    assert.ok(rk < 1.5, `${width} px: the RowKey on one line (${rk} lines)`);
    if (width === 420) await shot(page, '13-long-names-narrow.png');

    await page.click('#nav-insights');
    await page.locator(`article.card[data-table="${NAME}"] svg.chart`).waitFor();
    assert.deepEqual(await wider('#insights-view *'), [], `${width} px: insights, nothing wider than the window`);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `${width} px: insights, no sideways scrolling`);
  }
  await page.click('#nav-data');
  await page.setViewportSize({ width: 1280, height: 800 });
  assert.deepEqual(ui.problems, [], 'no page errors and no Content-Security-Policy refusals');
});
