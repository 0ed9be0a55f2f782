'use strict';
// The data explorer in Chromium, against a real tableemu (--insights
// --throttle) on a free loopback port, with the Go SDK checking what the
// page wrote. The steps run in order on one server and one page, as a
// person would use it; each main view is saved as a screenshot.

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { startServer, launch, shot, lowContrast, gocheck, repoRoot } = require('../lib/harness.js');

let srv;
let ui;
let page;
const downloads = fs.mkdtempSync(path.join(os.tmpdir(), 'tableemu-explorer-dl-'));

before(async () => {
  srv = await startServer({ args: ['--insights', '--throttle'] });
  // 1,500 entities over 6 partitions, written by the Go SDK.
  await gocheck(srv.connectionString, ['seed', 'orders', '1500', '6']);
  ui = await launch();
  page = ui.page;
});

after(async () => {
  if (ui) await ui.close();
  if (srv) await srv.stop();
  fs.rmSync(downloads, { recursive: true, force: true });
});

// A test that failed with a dialog open does not take the next one down.
beforeEach(async () => {
  if (page && (await page.locator('dialog[open]').count())) {
    await page.keyboard.press('Escape');
    await page.waitForSelector('dialog', { state: 'hidden' });
  }
});

const rows = () => page.locator('#grid tbody tr');
const text = async (sel) => (await page.locator(sel).textContent()).trim();

async function openTable(name) {
  await page.click(`#table-list button[data-table="${name}"]`);
  await page.waitForFunction((n) => document.getElementById('table-title')?.textContent === n, name);
  await page.waitForSelector('#grid, .grid-wrap .empty');
}

async function runQuery(filter, top = '') {
  await page.fill('#q-filter', filter);
  await page.fill('#q-top', top);
  const before = await page.locator('#query-info').innerHTML();
  await page.click('#query-form button[type=submit]');
  await page.waitForFunction((b) => document.getElementById('query-info').innerHTML !== b || !document.getElementById('query-error').hidden, before);
}

async function addProperty(name, type, value) {
  await page.click('dialog button:text("Add property")');
  const row = page.locator('dialog table.props tbody tr').last();
  await row.locator('.p-name').fill(name);
  await row.locator('.p-type').selectOption(type);
  const v = row.locator('.p-value');
  if (type === 'Edm.Boolean') await v.selectOption(value);
  else await v.fill(value);
}

test('opens straight into the development account with its tables listed', async () => {
  await page.goto(`${srv.origin}/_tableemu/`);
  await page.waitForSelector('#table-list button[data-table="orders"]');
  assert.equal(await page.locator('#connect-view').isHidden(), true);
  assert.match(await page.locator('#account-select option:checked').textContent(), /devstoreaccount1/);
  await shot(page, '01-tables.png');
});

test('creates a table', async () => {
  await page.fill('#new-table', '1bad');
  await page.click('#create-form button[type=submit]');
  assert.match(await text('#create-error'), /letters and digits/);
  await page.fill('#new-table', 'people');
  await page.click('#create-form button[type=submit]');
  await page.waitForSelector('#table-list button[data-table="people"]');
  await page.waitForFunction(() => document.getElementById('table-title')?.textContent === 'people');
  // The Go SDK sees it: an empty table to list.
  assert.deepEqual(await gocheck(srv.connectionString, ['dump', 'people']), []);
  // An empty grid says what to do.
  await page.waitForSelector('#grid-empty');
  assert.match(await text('#grid-empty'), /^people has no entities yet\. Add entity .*Import…/);
});

test('adds an entity with every EDM type, validated first, and the Go SDK reads it back typed', async () => {
  await page.click('#add-entity');
  await page.fill('dialog [id^=ed-pk-]', 'k1');
  await page.fill('dialog [id^=ed-rk-]', 'r1');
  await addProperty('Name', 'Edm.String', 'It\'s "quoted" — ünïcode 😀');
  await addProperty('Age', 'Edm.Int32', '2147483648'); // one past Int32
  await addProperty('Big', 'Edm.Int64', '-9223372036854775808');
  await addProperty('Ratio', 'Edm.Double', '2.5');
  await addProperty('Active', 'Edm.Boolean', 'false');
  await addProperty('Born', 'Edm.DateTime', '1999-12-31T23:59:59.1234567Z');
  await addProperty('Id', 'Edm.Guid', '0F8FAD5B-D9CB-469F-A165-70867728950E');
  await addProperty('Blob', 'Edm.Binary', 'AAEC/w==');
  // The out-of-range Int32 is refused in the page, as the server would.
  await page.click('dialog button[type=submit]');
  await page.waitForSelector('dialog .error li');
  assert.match(await page.locator('dialog .error').textContent(), /Int32: outside the Int32 range/);
  assert.equal(await page.locator('dialog .p-value[aria-invalid="true"]').count(), 1);
  assert.deepEqual(await gocheck(srv.connectionString, ['dump', 'people']), [], 'nothing was sent');
  await page.locator('dialog table.props tbody tr').nth(1).locator('.p-value').fill('-42');
  assert.deepEqual(await lowContrast(page), [], 'editor: every text readable');
  await shot(page, '02-editor.png');
  await page.click('dialog button[type=submit]');
  await page.waitForSelector('dialog', { state: 'hidden' });
  await page.waitForSelector('#grid tbody tr');

  const got = await gocheck(srv.connectionString, ['get', 'people', 'k1', 'r1']);
  assert.deepEqual(got, {
    Name: { type: 'string', value: 'It\'s "quoted" — ünïcode 😀' },
    Age: { type: 'int32', value: -42 },
    Big: { type: 'aztables.EDMInt64', value: '-9223372036854775808' },
    Ratio: { type: 'float64', value: '2.5' },
    Active: { type: 'bool', value: false },
    Born: { type: 'aztables.EDMDateTime', value: '1999-12-31T23:59:59.1234567Z' },
    Id: { type: 'aztables.EDMGUID', value: '0f8fad5b-d9cb-469f-a165-70867728950e' },
    Blob: { type: 'aztables.EDMBinary', value: 'AAEC/w==' },
  });
  // Types on demand, per cell.
  await page.check('#show-types');
  const types = await page.locator('#grid tbody tr').first().locator('.type').allTextContents();
  for (const t of ['String', 'Int32', 'Int64', 'Double', 'Boolean', 'DateTime', 'Guid', 'Binary']) assert.ok(types.includes(t), `type ${t} shown: ${types}`);
  assert.deepEqual(await lowContrast(page), [], 'grid with types: every text readable');
  await shot(page, '03-entities-types.png');
  await page.uncheck('#show-types');
});

test('queries with a filter, shows its shape and counts, pages with continuation tokens', async () => {
  await openTable('orders');
  // The unfiltered first page: a table scan, 1,000 entities, more to come.
  assert.equal(await rows().count(), 1000);
  assert.equal(await text('#query-shape'), 'Table scan');
  assert.match(await text('#page-info'), /more available/);
  // Counting pages through the whole table on demand.
  await page.click('#count');
  await page.waitForFunction(() => /entities$/.test(document.getElementById('count-result').textContent));
  assert.equal(await text('#count-result'), '1,500 entities');

  await runQuery("PartitionKey eq 'p01' and Count ge 10", '25');
  assert.equal(await text('#query-shape'), 'Partition scan');
  assert.equal(await rows().count(), 25);
  assert.equal(await text('#query-returned'), '25');
  assert.ok(+(await text('#query-scanned')).replace(/,/g, '') >= 25);
  const firstPage = await rows().locator('td.key button').allTextContents();
  // The grid is wider than 1280 px: that is shown (a shadow, a button that
  // counts the columns out of sight) and the button scrolls to them.
  await page.waitForSelector('#grid-frame.more-right');
  assert.match(await text('#grid-scroll'), /^\d+ more columns? →$/);
  await shot(page, '04-query.png');
  await page.click('#grid-scroll');
  await page.waitForFunction(() => document.getElementById('grid-wrap').scrollLeft > 0 && document.getElementById('grid-frame').classList.contains('more-left'));
  await page.evaluate(() => document.getElementById('grid-wrap').scrollTo({ left: 1e6 }));
  await page.waitForFunction(() => !document.getElementById('grid-frame').classList.contains('more-right'));
  assert.equal(await text('#grid-scroll'), '← First columns');
  const lastHeader = await page.evaluate(() => {
    const wrap = document.getElementById('grid-wrap').getBoundingClientRect();
    const th = [...document.querySelectorAll('#grid thead th')].pop().getBoundingClientRect();
    return { wrapRight: wrap.right, thRight: th.right };
  });
  assert.ok(lastHeader.thRight <= lastHeader.wrapRight + 1, `the last column is reachable: ${JSON.stringify(lastHeader)}`);
  await shot(page, '04b-query-scrolled.png');
  await page.click('#grid-scroll');
  await page.waitForFunction(() => document.getElementById('grid-wrap').scrollLeft === 0);
  await page.click('#load-more');
  await page.waitForFunction(() => document.querySelectorAll('#grid tbody tr').length === 50);
  const keys = await rows().locator('td.key button').allTextContents();
  assert.deepEqual(keys.slice(0, 25), firstPage);
  assert.deepEqual([...keys].sort(), keys, 'the service order, RowKey ascending within the partition');
  assert.match(await text('#query-info'), /over 2 pages/);
  await page.click('#page-back');
  await page.waitForFunction(() => document.querySelectorAll('#grid tbody tr').length === 25);

  // A point query and a table scan with a filter.
  await runQuery("PartitionKey eq 'p01' and RowKey eq 'r00007'");
  assert.equal(await text('#query-shape'), 'Point query');
  assert.equal(await text('#query-scanned'), '1');
  await runQuery("Name eq 'item 7'");
  assert.equal(await text('#query-shape'), 'Table scan');
  assert.equal(await text('#query-returned'), '1');
  assert.ok(+(await text('#query-scanned')).replace(/,/g, '') >= 1500 - 1);

  // A syntax error: the server's code, message and position.
  await runQuery("PartitionKey eq 'p01' and Count gt");
  await page.waitForSelector('#query-error:not([hidden])');
  const err = await text('#query-error');
  assert.match(err, /InvalidInput/);
  assert.match(err, /position \d+/);
  assert.equal(await page.locator('#query-error mark').count(), 1);
  assert.equal(await page.getAttribute('#q-filter', 'aria-invalid'), 'true');
  assert.match(await text('.grid-wrap .empty'), /refused the query/);
  assert.equal(await text('#columns-summary'), 'Columns (0 of 0)');
  assert.deepEqual(await lowContrast(page), [], 'refused query: every text readable');
  await shot(page, '05-filter-error.png');
});

// propertyRow is the editor's row of the property called name: rows follow
// the entity's property order, which the service sorts by name once an
// entity has been updated or merged (docs/protocol.md 4.1).
async function propertyRow(name) {
  const i = await page.$$eval('dialog table.props tbody tr .p-name', (els, n) => els.findIndex((e) => e.value === n), name);
  assert.ok(i >= 0, `the editor shows no property ${name}`);
  return page.locator('dialog table.props tbody tr').nth(i);
}

test('an edit with a stale ETag is a conflict that offers a reload', async () => {
  await openTable('people');
  await page.click('#grid tbody tr td.key button');
  await page.waitForSelector('dialog[open]');
  // Someone else changes the entity meanwhile.
  await gocheck(srv.connectionString, ['touch', 'people', 'k1', 'r1']);
  await (await propertyRow('Name')).locator('.p-value').fill('edited in the explorer');
  await page.click('dialog button[type=submit]');
  await page.waitForSelector('dialog .conflict:not([hidden])');
  assert.match(await page.locator('dialog .conflict').textContent(), /Someone changed this entity/);
  await shot(page, '06-conflict.png');
  assert.equal((await gocheck(srv.connectionString, ['get', 'people', 'k1', 'r1'])).Name.value, 'It\'s "quoted" — ünïcode 😀', 'the stale write did not land');
  await page.click('dialog .conflict button');
  await page.waitForFunction(() => [...document.querySelectorAll('dialog .p-name')].some((i) => i.value === 'TouchedBy'));
  await (await propertyRow('Name')).locator('.p-value').fill('edited after reload');
  await page.check('dialog input[value=merge]');
  await page.click('dialog button[type=submit]');
  await page.waitForSelector('dialog', { state: 'hidden' });
  const got = await gocheck(srv.connectionString, ['get', 'people', 'k1', 'r1']);
  assert.equal(got.Name.value, 'edited after reload');
  assert.equal(got.TouchedBy.value, 'gocheck');
  assert.equal(got.Big.type, 'aztables.EDMInt64', 'a merge keeps the types');
});

test('deletes an entity, selected rows in batches per partition, and a table', async () => {
  // One entity, from its editor.
  await page.click('#grid tbody tr td.key button');
  await page.click('dialog button:text("Delete entity")');
  await page.click('dialog button:text-is("Delete")');
  await page.waitForSelector('.grid-wrap .empty');
  assert.equal(await gocheck(srv.connectionString, ['get', 'people', 'k1', 'r1'], { allowFail: true }), null);

  // Two rows of two partitions, selected in the grid.
  await openTable('orders');
  await runQuery("PartitionKey eq 'p01'", '1');
  await rows().nth(0).locator('input[type=checkbox]').check();
  assert.match(await text('#delete-selected'), /\(1\)/);
  // A new query starts a new selection.
  await runQuery("PartitionKey le 'p01' and RowKey le 'r00001'");
  assert.equal(await rows().count(), 2);
  assert.equal(await page.locator('#delete-selected').isDisabled(), true);
  await page.locator('#grid thead input[type=checkbox]').check();
  assert.match(await text('#delete-selected'), /\(2\)/);
  await page.click('#delete-selected');
  assert.match(await page.locator('dialog').textContent(), /2 partitions will be deleted in 2 batches/);
  await page.click('dialog button:text-is("Delete")');
  await page.waitForSelector('.grid-wrap .empty');
  assert.match(await text('#grid-empty'), /^No entity matches this \$filter\. Change it, or Reset/);
  for (const [pk, rk] of [['p00', 'r00000'], ['p01', 'r00001']]) {
    assert.equal(await gocheck(srv.connectionString, ['get', 'orders', pk, rk], { allowFail: true }), null, `${pk}/${rk} deleted`);
  }

  // A table, after typing its name.
  await openTable('people');
  await page.click('#delete-table');
  assert.equal(await page.locator('dialog button.danger').isDisabled(), true);
  await page.fill('#confirm-text', 'people');
  await page.click('dialog button.danger');
  await page.waitForSelector('#table-list button[data-table="people"]', { state: 'detached' });
  assert.equal(await gocheck(srv.connectionString, ['dump', 'people'], { allowFail: true }), null);
});

async function exportTable(table, format) {
  await openTable(table);
  await page.click('#export');
  await page.check(`dialog input[value=${format}]`);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('dialog button[type=submit]')]);
  const file = path.join(downloads, `${table}-${Date.now()}.${format}`);
  await dl.saveAs(file);
  await page.click('dialog .cancel');
  return file;
}

async function createTable(name) {
  await page.fill('#new-table', name);
  await page.click('#create-form button[type=submit]');
  await page.waitForFunction((n) => document.getElementById('table-title')?.textContent === n, name);
}

async function importFile(table, file, mode = 'insert') {
  await openTable(table);
  await page.click('#import');
  await page.setInputFiles('#import-file', file);
  await page.check(`dialog input[value=${mode}]`);
  await page.click('dialog button[type=submit]');
  await page.waitForFunction(() => /^Imported .* rows/.test(document.getElementById('import-note')?.textContent || ''), null, { timeout: 120000 });
  return text('#import-note');
}

test('exports a table and imports it back, exactly, in JSON Lines and in CSV', async () => {
  const original = await gocheck(srv.connectionString, ['dump', 'orders']);
  assert.equal(original.length, 1498);
  for (const format of ['jsonl', 'csv']) {
    const file = await exportTable('orders', format);
    const copy = `orders${format}`;
    await createTable(copy);
    const note = await importFile(copy, file);
    assert.match(note, /^Imported 1,498 of 1,498 rows\.$/);
    if (format === 'jsonl') await shot(page, '07-import.png');
    await page.click('dialog .cancel');
    assert.deepEqual(await gocheck(srv.connectionString, ['dump', copy]), original, `${format}: the Go SDK reads the same entities`);
    // And the copy exports to the same bytes.
    assert.equal(fs.readFileSync(await exportTable(copy, format), 'utf8'), fs.readFileSync(file, 'utf8'));
  }
});

test('an import reports each failing row and writes the rest', async () => {
  const file = path.join(downloads, 'mixed.jsonl');
  fs.writeFileSync(file, [
    '{"PartitionKey":"m","RowKey":"1","A@odata.type":"Edm.Int64","A":"5"}',
    '{"PartitionKey":"m","RowKey":"2","A":',
    '{"PartitionKey":"m","RowKey":"3","1bad":true}',
    '{"PartitionKey":"m","RowKey":"4","D@odata.type":"Edm.Double","D":"NaN"}',
    '{"PartitionKey":"m","RowKey":"1","A":"duplicate"}',
    '{"PartitionKey":"n#","RowKey":"5"}',
    '',
  ].join('\n'));
  const note = await importFile('ordersjsonl', file);
  assert.match(note, /^Imported 2 of 6 rows · 4 rows failed\.$/);
  const errs = await page.locator('#import-errors li').allTextContents();
  assert.equal(errs.length, 4);
  assert.match(errs[0], /^line 2: /);
  assert.match(errs[1], /^line 3: .*1bad/);
  assert.match(errs[2], /^line 5: EntityAlreadyExists/);
  assert.match(errs[3], /^line 6: PartitionKey may not contain/);
  await page.click('dialog .cancel');
  const m = await gocheck(srv.connectionString, ['get', 'ordersjsonl', 'm', '1']);
  assert.deepEqual(m.A, { type: 'aztables.EDMInt64', value: '5' });
});

// codeShownWhole: the snippet's box cuts nothing (no line runs out of it
// sideways, no end below it) and its copy button is in the window.
async function codeShownWhole(what) {
  const m = await page.evaluate(() => {
    const pre = document.querySelector('dialog pre.code');
    const btn = document.getElementById('copy-snippet').getBoundingClientRect();
    return {
      pre: [pre.scrollWidth, pre.clientWidth, pre.scrollHeight, pre.clientHeight],
      button: btn.top >= 0 && btn.bottom <= window.innerHeight && btn.left >= 0 && btn.right <= window.innerWidth,
    };
  });
  assert.ok(m.pre[0] <= m.pre[1] && m.pre[2] <= m.pre[3], `${what}: the code box cuts its content: ${JSON.stringify(m)}`);
  assert.ok(m.button, `${what}: the copy button is in view`);
}

test('copies the query as code; the Go snippet runs and finds what the grid shows', async () => {
  await openTable('orders');
  await runQuery("PartitionKey eq 'p02' and Count lt 40", '5');
  const shown = await rows().count();
  await page.click('#copy-code');
  for (const [tab, needle] of [['JavaScript', '@azure/data-tables'], ['Python', 'query_entities'], ['.NET', 'Query<TableEntity>'], ['Go', 'NewListEntitiesPager']]) {
    await page.click(`dialog [role=tab]:text-is("${tab}")`);
    const code = await page.locator('dialog pre.code').textContent();
    assert.ok(code.includes(needle) && code.includes("PartitionKey eq 'p02' and Count lt 40"), `${tab} snippet`);
    await codeShownWhole(tab);
  }
  assert.deepEqual(await lowContrast(page), [], 'code: every text readable');
  await shot(page, '08-copy-as-code.png');
  const goCode = await page.locator('dialog pre.code').textContent();
  await page.keyboard.press('Escape');
  await page.waitForSelector('dialog', { state: 'hidden' });

  // Build and run it with this repository's pinned aztables.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tableemu-snippet-'));
  fs.writeFileSync(path.join(dir, 'main.go'), goCode);
  const version = /github.com\/Azure\/azure-sdk-for-go\/sdk\/data\/aztables (v\S+)/.exec(fs.readFileSync(path.join(repoRoot, 'go.mod'), 'utf8'))[1];
  fs.writeFileSync(path.join(dir, 'go.mod'), `module snippet\n\ngo 1.22\n\nrequire github.com/Azure/azure-sdk-for-go/sdk/data/aztables ${version}\n`);
  fs.copyFileSync(path.join(repoRoot, 'go.sum'), path.join(dir, 'go.sum'));
  const out = await new Promise((resolve, reject) =>
    execFile('go', ['run', '-mod=mod', '.'], { cwd: dir, env: { ...process.env, AZURE_TABLES_CONNECTION_STRING: srv.connectionString, GOFLAGS: '-mod=mod' } }, (err, stdout, stderr) =>
      err ? reject(new Error(stderr || err.message)) : resolve(stdout)));
  fs.rmSync(dir, { recursive: true, force: true });
  const lines = out.trim().split('\n');
  assert.equal(lines.length, 7, 'p02 holds Count 2, 8, …, 38: 7 entities');
  assert.ok(shown <= 5);
  for (const l of lines) assert.match(JSON.parse(l).PartitionKey, /^p02$/);
});

test('the insights chart is drawn from real traffic, with the 2,000/s target and throttled requests', async () => {
  // A hot partition: 8,000 entities from four Go SDK writers, beyond the
  // per-partition target, so --throttle refuses some of them.
  const load = await gocheck(srv.connectionString, ['load', 'orders', 'hot', '8000', '4']);
  assert.ok(load.written > 0);
  // An entity near a limit: a String of 31,000 of the 32,768 UTF-16 units.
  await page.evaluate(() => window.tableemuExplorer.client.insertEntity('orders', JSON.stringify({ PartitionKey: 'big', RowKey: '1', Text: 'x'.repeat(31000) })));
  await page.click('#nav-insights');
  const card = page.locator('article.card[data-table="orders"]');
  await card.locator('svg.chart polyline[data-partition="hot"]').waitFor();
  assert.equal(await card.locator('svg.chart line.target').getAttribute('data-target'), '2000');
  const peak = +(await card.locator('svg.chart').getAttribute('data-peak'));
  assert.ok(peak > 2000, `peak ${peak}/s above the target`);
  const points = (await card.locator('polyline[data-partition="hot"]').getAttribute('points')).trim().split(' ');
  assert.equal(points.length, 120, 'one point a second over two minutes');
  assert.ok(+(await card.locator('[id$="-throttled"]').textContent()).replace(/,/g, '') > 0, 'throttled requests counted');
  assert.ok(await card.locator('svg.chart rect.throttled').count() > 0, 'throttled requests drawn');
  // Query shapes and the table scans with their filters.
  assert.equal(await card.locator('table.shapes tr[data-shape="table-scan"]').count(), 1);
  assert.ok((await card.locator('table.scans').textContent()).includes("Name eq 'item 7'"));
  assert.equal(await card.locator('table.scans tr[data-shape="partition-range-scan"]').count(), 1, 'partition range scans are listed with the table scans');
  assert.match(await card.locator('h3[id$="-scans"]').textContent(), /^Scans across partitions/);
  // The target's label is drawn over the series, inside the chart.
  const label = await card.evaluate((c) => {
    const svg = c.querySelector('svg.chart');
    const t = svg.querySelector('text.target-label').getBBox();
    return { right: t.x + t.width, width: svg.viewBox.baseVal.width, last: svg.lastElementChild === svg.querySelector('text.target-label') || [...svg.children].indexOf(svg.querySelector('text.target-label')) > [...svg.children].indexOf(svg.querySelector('polyline')) };
  });
  assert.ok(label.right < label.width - 8 && label.last, `target label inside the chart and over the series: ${JSON.stringify(label)}`);
  assert.match(await card.locator('details.near').textContent(), /big \/ 1 .*near the property Text size limit/);
  // The shapes table is never clipped and its headings take at most two
  // lines: at 1280 px beside the chart, at 1024 px below it.
  for (const width of [1280, 1024]) {
    await page.setViewportSize({ width, height: 800 });
    await page.waitForTimeout(400); // the chart's redraw after a resize
    // The redraw (insights.js: 200 ms after the last resize, then a fetch
    // from the server) rebuilds the card: on a busy machine it may still be
    // under way, the table not laid out (every size 0). Measure once it is.
    const measure = () => card.evaluate((c) => {
      const table = c.querySelector('table.shapes');
      const scroller = table.closest('.table-scroll');
      const line = parseFloat(getComputedStyle(table.querySelector('thead th')).lineHeight);
      return {
        scroller: scroller.clientWidth,
        table: table.scrollWidth,
        lines: [...table.querySelectorAll('thead th')].map((th) => Math.round((th.clientHeight - 8) / line)),
        clipped: [...table.querySelectorAll('th, td')].filter((x) => x.scrollWidth > x.clientWidth + 1).map((x) => x.textContent),
      };
    });
    let fit = await measure();
    for (const deadline = Date.now() + 15000; !(fit.scroller > 0 && fit.lines.every(Number.isFinite)) && Date.now() < deadline;) {
      await page.waitForTimeout(100);
      fit = await measure();
    }
    assert.ok(fit.table <= fit.scroller, `${width} px: the shapes table fits its column: ${JSON.stringify(fit)}`);
    assert.ok(Math.max(...fit.lines) <= 2, `${width} px: headings in at most two lines: ${JSON.stringify(fit)}`);
    assert.deepEqual(fit.clipped, [], `${width} px: no clipped cell`);
  }
  assert.deepEqual(await lowContrast(page), [], 'insights: every text readable');
  await shot(page, '09b-insights-1024.png');
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForTimeout(400);
  await shot(page, '09-insights.png');
  await page.click('#nav-data');
});

// queryBarOverflow lists the query bar's fields and buttons that reach
// out of its box.
const queryBarOverflow = () => page.evaluate(() => {
  const form = document.getElementById('query-form').getBoundingClientRect();
  return [...document.querySelectorAll('#query-form input, #query-form button')]
    .filter((el) => { const r = el.getBoundingClientRect(); return r.right > form.right + 1 || r.left < form.left - 1; })
    .map((el) => el.id || el.textContent);
});

test('is keyboard-usable and readable on a narrow window', async () => {
  // Tab from the prefix filter to the first table, Enter opens it.
  await page.focus('#prefix');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.table), 'orders');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('table-title')?.textContent === 'orders');
  // Dialogs take focus and close on Escape, returning it.
  await page.focus('#add-entity');
  await page.keyboard.press('Enter');
  await page.waitForSelector('dialog[open]');
  assert.ok(await page.evaluate(() => document.getElementById('dialog').contains(document.activeElement)));
  await page.keyboard.press('Escape');
  await page.waitForSelector('dialog', { state: 'hidden' });
  assert.equal(await page.evaluate(() => document.activeElement.id), 'add-entity');
  // Every form control has a label.
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea')].filter((el) => !el.hidden && el.type !== 'hidden' && !el.labels?.length && !el.getAttribute('aria-label')).map((el) => el.id || el.outerHTML.slice(0, 60)));
  assert.deepEqual(unlabelled, []);

  // Between the narrow layout and 1280 px the query bar keeps its
  // buttons inside.
  for (const width of [1280, 1024, 900, 821]) {
    await page.setViewportSize({ width, height: 800 });
    assert.deepEqual(await queryBarOverflow(), [], `${width} px: the query bar holds its fields and buttons`);
  }
  await page.setViewportSize({ width: 420, height: 860 });
  await page.waitForTimeout(100);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), 'no sideways scrolling of the page');
  assert.deepEqual(await queryBarOverflow(), [], '420 px: the query bar holds its fields and buttons');
  // The account's name is read whole in its select (a select clips its
  // text silently): the text's width against the room left of the arrow.
  const acct = await page.evaluate(() => {
    const sel = document.getElementById('account-select');
    const cs = getComputedStyle(sel);
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
    return { text: sel.selectedOptions[0].textContent, width: ctx.measureText(sel.selectedOptions[0].textContent).width, room: sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 20 };
  });
  assert.ok(acct.width <= acct.room, `the account select shows its name whole: ${JSON.stringify(acct)}`);
  assert.deepEqual(await lowContrast(page), [], 'narrow: every text readable');
  await shot(page, '10-narrow.png', { fullPage: true });
  await page.click('#copy-code');
  await page.click('dialog [role=tab]:text-is("Go")');
  await codeShownWhole('Go at 420 px');
  await shot(page, '10c-narrow-code.png');
  await page.keyboard.press('Escape');
  await page.waitForSelector('dialog', { state: 'hidden' });
  await page.click('#nav-insights');
  await page.locator('article.card[data-table="orders"] svg.chart').waitFor();
  await page.uncheck('#insights-auto'); // a still picture
  await shot(page, '10b-narrow-insights.png', { fullPage: true });
  const wide = await page.evaluate(() => [...document.querySelectorAll('#insights-view *')].filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1).map((el) => el.tagName + '.' + el.className).slice(0, 5));
  assert.deepEqual(wide, [], 'insights: nothing wider than the window');
  await page.check('#insights-auto');
  await page.click('#nav-data');
  await page.setViewportSize({ width: 1280, height: 800 });
  assert.deepEqual(ui.problems, [], 'no page errors and no Content-Security-Policy refusals');
});
