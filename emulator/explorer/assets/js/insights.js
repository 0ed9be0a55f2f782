// The Insights view (tableemu --insights): per table of the current
// account, the query shapes with the entities they examined and returned,
// the table scans and their filters, the hottest partitions over time
// against the per-partition target, throttled requests, and entities near
// the service's limits. It reads GET /_tableemu/insights, the server's
// report, signed with the account key like every request of the page: the
// server answers with that account's tables only.

import { h, clear, fmt } from './ui.js';
import { SHAPES } from './grid.js';
import { partitionChart, COLORS } from './chart.js';

let timer = 0;
let app = null;
let windowSec = 120;
let auto = true;

export function initInsights(a) {
  app = a;
}

export function hideInsights() {
  clearInterval(timer);
  timer = 0;
}

export function showInsights() {
  const view = document.getElementById('insights-view');
  if (!app.insights) {
    clear(view,
      h('h1', { id: 'insights-title', text: 'Design insights' }),
      h('p', { class: 'prose', id: 'insights-off' }, 'tableemu was started without ', h('code', { text: '--insights' }), '. Start it with ',
        h('code', { text: 'tableemu --insights' }), ' (add ', h('code', { text: '--throttle' }),
        ' to have requests beyond the scalability targets refused) to see, per table, each query\'s shape and the entities it examined, the table scans, the hottest partitions over time and the requests Azure would throttle.'));
    return;
  }
  const body = h('div', { id: 'insights-body', class: 'cards' });
  clear(view,
    h('div', { class: 'pane-head' },
      h('h1', { id: 'insights-title', text: 'Design insights' }),
      h('div', { class: 'actions' },
        h('label', { for: 'insights-window', text: 'Window' }),
        h('select', { id: 'insights-window', value: String(windowSec), onchange: (e) => { windowSec = +e.target.value; refresh(); } },
          h('option', { value: '60', text: '1 minute' }), h('option', { value: '120', text: '2 minutes' }), h('option', { value: '300', text: '5 minutes' })),
        h('label', { class: 'check' },
          h('input', { type: 'checkbox', id: 'insights-auto', checked: auto, onchange: (e) => { auto = e.target.checked; schedule(); } }),
          ' Refresh every 2 s'),
        h('button', { type: 'button', id: 'insights-refresh', text: 'Refresh now', onclick: () => refresh() }))),
    h('p', { class: 'help' }, 'What Azure would make of this design, from the traffic tableemu has served since it started (account ',
      h('code', { text: app.client.account }), '). Query shapes and counts are the ones the ', h('code', { text: 'x-tableemu-*' }), ' response headers carry.'),
    body);
  refresh();
  schedule();
}

function schedule() {
  clearInterval(timer);
  timer = auto ? setInterval(refresh, 2000) : 0;
}

async function refresh() {
  const body = document.getElementById('insights-body');
  if (!body) return;
  let report;
  try {
    report = await app.client.insights();
  } catch (e) {
    clear(body, e.code === 'NeedsAccountKey'
      ? h('p', { class: 'empty', id: 'insights-needs-key' }, 'The insights report is read with the account key, and this connection has a SAS. ',
          h('button', { type: 'button', class: 'link', text: 'Connect with the account\'s connection string', onclick: () => document.getElementById('add-account').click() }), ' to see it.')
      : h('p', { class: 'error', id: 'insights-error', text: `Could not read the insights report: ${e.code ? e.code + ': ' : ''}${e.message}` }));
    return;
  }
  // The server sends only the signing account's tables; the filter below
  // keeps the view right whatever it sends.
  const acct = app.client.account;
  const tables = new Map();
  const get = (name) => {
    const k = name.toLowerCase();
    if (!tables.has(k)) tables.set(k, { name });
    return tables.get(k);
  };
  for (const t of report.tables || []) if (t.account === acct) get(t.table).totals = t;
  const tl = report.timeline || { tables: [] };
  for (const t of tl.tables || []) if (t.account === acct) get(t.table).timeline = t;
  const list = [...tables.values()].sort((a, b) => (a.name.toLowerCase() === (app.table || '').toLowerCase() ? -1 : b.name.toLowerCase() === (app.table || '').toLowerCase() ? 1 : a.name.localeCompare(b.name)));
  if (!list.length) {
    clear(body, h('p', { class: 'empty', text: 'No traffic yet: query or write some entities, then come back.' }));
    return;
  }
  const open = new Set([...body.querySelectorAll('details[open]')].map((d) => d.dataset.key));
  const scrolls = new Map([...body.querySelectorAll('.table-scroll')].map((d) => [d.dataset.key, d.scrollLeft]));
  chartWidth = chartWidthFor(body);
  clear(body, list.map((t) => card(t, tl, open)));
  for (const d of body.querySelectorAll('.table-scroll')) d.scrollLeft = scrolls.get(d.dataset.key) || 0;
}

// chartWidthFor is the width in CSS pixels the chart gets in a card: that
// of a chart's box already shown, else the card's inside (12 px padding
// each side on a narrow window, 16 px below 1100 px, where the card is one
// column), or its left 3 of 5 columns (16 px padding, an 18 px gap) on a
// wider one (style.css).
let chartWidth = 760;
function chartWidthFor(body) {
  const box = body.querySelector('.chart-box');
  if (box && box.clientWidth) return box.clientWidth;
  if (window.matchMedia('(max-width: 820px)').matches) return body.clientWidth - 2 * 12 - 2;
  if (window.matchMedia('(max-width: 1099px)').matches) return body.clientWidth - 2 * 16 - 2;
  return ((body.clientWidth - 2 * 16 - 2 - 18) * 3) / 5;
}

// A window resized while the view is open redraws it (the chart's size).
let resizeTimer = 0;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    const body = document.getElementById('insights-body');
    if (body && !document.getElementById('insights-view').hidden && Math.abs(chartWidthFor(body) - chartWidth) > 8) refresh();
  }, 200);
});

// scroller wraps a table that may be wider than a narrow card.
const scroller = (key, table) => h('div', { class: 'table-scroll', data: { key } }, table);

function card(t, tl, open) {
  const tot = t.totals || {};
  const timeline = t.timeline;
  const shapes = Object.entries(tot.queryShapes || {});
  const scans = tot.tableScans || [];
  const hot = tot.hottestPartitions || [];
  const near = tot.nearLimits || [];
  const target = tl.partitionTargetPerSecond || 2000;
  const series = (timeline?.partitions || []).map((p, i) => ({ label: p.partitionKey, values: p.perSecond, color: COLORS[i % COLORS.length] }));
  if (timeline?.otherPartitions) series.push({ label: '(other partitions)', values: timeline.otherPartitions, color: COLORS[6] });
  const id = `ins-${t.name.toLowerCase()}`;
  return h('article', { class: 'card', 'aria-labelledby': `${id}-title`, data: { table: t.name } },
    h('h2', { id: `${id}-title`, text: t.name }),
    h('div', { class: 'card-grid' },
      h('section', { class: 'chart-box' },
        h('h3', { text: 'Hottest partitions over time' }),
        partitionChart({ series, throttled: timeline?.throttledPerSecond || [], target, window: windowSec, title: `Entities written per second in ${t.name}, last ${windowSec} seconds`, width: chartWidth }),
        series.length
          ? h('ul', { class: 'legend' }, series.map((x) => h('li', {}, swatch(x.color), ` ${x.label} `, h('span', { class: 'help', text: `peak ${fmt(Math.max(...x.values.slice(-windowSec)))}/s` }))),
              h('li', {}, h('span', { class: 'swatch target' }), ` target ${fmt(target)}/s per partition`))
          : h('p', { class: 'help', text: 'No writes in this window.' })),
      h('section', {},
        h('h3', { text: 'Queries by shape' }),
        shapes.length
          ? scroller(`${id}-shapes`, h('table', { class: 'data shapes stacks' },
              // The ratio's heading is two short lines by design: wrapped
              // by the browser it broke after every word (style.css).
              h('thead', {}, h('tr', {},
                h('th', { scope: 'col', text: 'Shape' }),
                ['Queries', 'Examined', 'Returned'].map((c) => h('th', { scope: 'col', class: 'num', text: c })),
                h('th', { scope: 'col', class: 'num', title: 'Entities examined for each entity returned: 1.0 reads only what it returns' }, 'Examined', h('br'), 'per returned'))),
              h('tbody', {}, shapes.map(([shape, q]) => h('tr', { data: { shape } },
                h('th', { scope: 'row' }, h('span', { class: `shape ${shape}`, title: SHAPES[shape]?.[1] || '', text: SHAPES[shape]?.[0] || shape })),
                h('td', { class: 'num', data: { label: 'Queries' }, text: fmt(q.queries) }),
                h('td', { class: 'num', data: { label: 'Examined' }, text: fmt(q.entitiesScanned) }),
                h('td', { class: 'num', data: { label: 'Returned' }, text: fmt(q.entitiesReturned) }),
                h('td', { class: 'num', data: { label: 'Examined per returned' }, text: q.entitiesReturned ? (q.entitiesScanned / q.entitiesReturned).toFixed(1) : q.entitiesScanned ? '∞' : '–' }))))))
          : h('p', { class: 'help', text: 'No queries yet.' }),
        h('h3', { text: 'Throttled requests' }),
        timeline?.throttledRequests
          ? h('div', {},
              h('p', {}, h('strong', { id: `${id}-throttled`, text: fmt(timeline.throttledRequests) }), ' requests answered 503 ServerBusy by --throttle. Latest:'),
              h('ul', { class: 'compact' }, latest(timeline.throttledRecent).map((g) =>
                h('li', { text: `${g.text}${g.n > 1 ? ` (×${g.n})` : ''}` }))))
          // The page cannot tell whether --throttle is on: the sentence
          // holds either way.
          : h('p', { class: 'help', id: `${id}-no-throttled`, text: 'None. tableemu refuses requests beyond the scalability targets (503 ServerBusy, as Azure would) only when started with --throttle.' }))),
    // The report's tableScans holds every query that reads more than one
    // partition: table scans and partition range scans, the queries that
    // get slower as the table grows. Most entities examined first.
    scans.length
      ? h('section', {},
          h('h3', { id: `${id}-scans`, text: 'Scans across partitions and their filters' }),
          h('p', { class: 'help', text: 'Queries that read more than one partition (table scans and partition range scans), the ones that examined the most entities first.' }),
          h('table', { class: 'data scans stacks', 'aria-labelledby': `${id}-scans` },
            h('thead', {}, h('tr', {}, ['Filter', 'Shape', 'Queries', 'Examined', 'Returned'].map((c, i) => h('th', { scope: 'col', class: i > 1 ? 'num' : null, text: c })))),
            h('tbody', {}, scans.map((sc) => h('tr', { data: { shape: sc.shape } },
              h('td', {}, h('code', { text: sc.filter || '(no filter)' })),
              h('td', {}, h('span', { class: `shape ${sc.shape}`, title: SHAPES[sc.shape]?.[1] || '', text: SHAPES[sc.shape]?.[0] || sc.shape })),
              // data-label names the number where a narrow window stacks
              // the row (style.css).
              h('td', { class: 'num', data: { label: 'Queries' }, text: fmt(sc.queries) }),
              h('td', { class: 'num', data: { label: 'Examined' }, text: fmt(sc.entitiesScanned) }),
              h('td', { class: 'num', data: { label: 'Returned' }, text: fmt(sc.entitiesReturned) }))))))
      : null,
    hot.length
      ? h('details', { data: { key: `${id}-hot` }, open: open.has(`${id}-hot`) },
          h('summary', { text: `Partitions written hottest since start (${fmt(hot.length)})` }),
          scroller(`${id}-hot`, h('table', { class: 'data' },
            h('thead', {}, h('tr', {}, ['PartitionKey', 'Writes', 'Peak / s', 'RowKey order'].map((c, i) => h('th', { scope: 'col', class: i === 1 || i === 2 ? 'num' : null, text: c })))),
            h('tbody', {}, hot.map((p) => h('tr', {},
              h('td', {}, h('code', { text: p.partitionKey })),
              h('td', { class: 'num', text: fmt(p.writes) }),
              h('td', { class: p.peakWritesPerSecond > target ? 'num over' : 'num', text: fmt(p.peakWritesPerSecond) }),
              h('td', { text: order(p) })))))))
      : null,
    near.length
      ? h('details', { class: 'near', data: { key: `${id}-near` }, open: open.has(`${id}-near`) },
          h('summary', { text: `Entities near the size limits (${fmt(near.length)})` }),
          h('ul', { class: 'compact' }, near.map((n) => h('li', {}, h('code', { text: `${n.partitionKey} / ${n.rowKey}` }), ` · ${fmt(n.size)} bytes, ${fmt(n.properties)} properties · near the ${n.why} limit`))))
      : null,
    tot.crossPartitionBatches
      ? h('p', { class: 'warn' }, `${fmt(tot.crossPartitionBatches)} batch${tot.crossPartitionBatches === 1 ? '' : 'es'} refused because their entities span partitions`,
          tot.crossPartitionExample ? ` (e.g. ${tot.crossPartitionExample.join(', ')})` : '', '. A batch holds one partition.')
      : null);
}

// latest groups the most recent refusals, newest first, that share their
// second and partition: five lines say more than five identical ones.
function latest(recent) {
  const groups = [];
  for (const r of recent.slice().reverse()) {
    const text = `${new Date(r.time * 1000).toLocaleTimeString()} · ${r.allPartitions ? 'a query across partitions (account budget)' : `partition ${r.partitionKey}`}`;
    const last = groups[groups.length - 1];
    if (last && last.text === text) last.n++;
    else groups.push({ text, n: 1 });
  }
  return groups.slice(0, 5);
}

function swatch(color) {
  const el = h('span', { class: 'swatch' });
  el.style.background = color; // CSSOM, allowed by the style-src policy
  return el;
}

function order(p) {
  const n = p.rowKeysAscending + p.rowKeysDescending;
  if (n < 10) return '–';
  if (p.rowKeysAscending / n > 0.9) return 'ascending: append-only';
  if (p.rowKeysDescending / n > 0.9) return 'descending: prepend';
  return 'mixed';
}
