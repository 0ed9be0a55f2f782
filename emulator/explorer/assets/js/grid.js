// A table's pane: the query bar ($filter, $select, $top), what the query
// cost (its shape and the entities examined and returned, from the
// server's x-tableemu-* headers), the entity grid in the service's order
// with "Load more" and "Back" through continuation tokens, columns chosen
// from the properties seen, EDM types on demand, and the actions on rows.

import { h, clear, status, confirmDialog, fmt } from './ui.js';
import { shortType } from './edm.js';
import { countEntities, deleteTable } from './tables.js';
import { openEditor } from './editor.js';
import { openExport, openImport } from './transfer.js';
import { openSnippets } from './snippets.js';

export const SHAPES = {
  'point-query': ['Point query', 'One entity by PartitionKey and RowKey: the cheapest read.'],
  'range-query': ['Range query', 'One partition, a RowKey range: reads only the range.'],
  'partition-scan': ['Partition scan', 'One partition, filtered on other properties: reads the whole partition.'],
  'partition-range-scan': ['Partition range scan', 'A range of partitions: reads every entity in the range.'],
  'table-scan': ['Table scan', 'No PartitionKey: on Azure this reads every partition of the table.'],
};

const AUTO_COLUMNS = 12;
let st = null; // the pane's state; one table is shown at a time
const keyOf = (e) => `${e.PartitionKey}\u0000${e.RowKey}`;

export function showTable(app, table) {
  st = {
    app,
    table,
    query: { filter: '', select: '', top: '' },
    pages: [], // {entities, next, insight, ms}
    seen: new Map(), // property name → Set of types
    columns: [],
    auto: true,
    showTypes: false,
    selected: new Set(),
    countAbort: null,
  };
  const pane = document.getElementById('table-pane');
  clear(pane,
    h('div', { class: 'pane-head' },
      h('h1', { id: 'table-title', text: table }),
      h('div', { class: 'actions' },
        h('button', { type: 'button', id: 'count', text: 'Count entities', onclick: count }),
        h('output', { id: 'count-result', for: 'count', 'aria-live': 'polite' }),
        h('button', { type: 'button', id: 'export', text: 'Export…', onclick: () => openExport(app, table, st.query) }),
        h('button', { type: 'button', id: 'import', text: 'Import…', onclick: () => openImport(app, table, () => runQuery()) }),
        h('button', { type: 'button', id: 'copy-code', text: 'Copy as code…', onclick: () => openSnippets(app, table, readQuery()) }),
        h('button', { type: 'button', id: 'delete-table', class: 'danger', text: 'Delete table', onclick: () => deleteTable(app, table) }))),
    h('form', { id: 'query-form', class: 'query', onsubmit: (e) => { e.preventDefault(); runQuery(); } },
      h('div', { class: 'field filter' },
        h('label', { for: 'q-filter' }, h('code', { text: '$filter' })),
        h('input', { id: 'q-filter', class: 'mono', autocomplete: 'off', spellcheck: 'false', placeholder: "PartitionKey eq 'p1' and Price gt 10.0", 'aria-describedby': 'query-error' })),
      h('div', { class: 'field select' },
        h('label', { for: 'q-select' }, h('code', { text: '$select' })),
        h('input', { id: 'q-select', class: 'mono', autocomplete: 'off', spellcheck: 'false', placeholder: 'all properties' })),
      h('div', { class: 'field top' },
        h('label', { for: 'q-top' }, h('code', { text: '$top' })),
        h('input', { id: 'q-top', type: 'number', min: '1', max: '1000', inputmode: 'numeric', placeholder: '1000' })),
      h('div', { class: 'field buttons' },
        h('button', { type: 'submit', class: 'primary', text: 'Run query' }),
        h('button', { type: 'button', text: 'Reset', onclick: () => { for (const id of ['q-filter', 'q-select', 'q-top']) document.getElementById(id).value = ''; runQuery(); } }))),
    h('div', { id: 'query-error', class: 'error-box', role: 'alert', hidden: true }),
    h('div', { id: 'query-info', class: 'query-info' }),
    h('div', { class: 'toolbar' },
      h('button', { type: 'button', id: 'add-entity', text: 'Add entity', onclick: () => openEditor(app, table, null, afterEdit) }),
      h('button', { type: 'button', id: 'delete-selected', class: 'danger', text: 'Delete selected', disabled: true, onclick: deleteSelected }),
      h('details', { class: 'menu', id: 'columns-menu' },
        h('summary', { id: 'columns-summary', text: 'Columns' }),
        h('fieldset', { id: 'columns', class: 'menu-body' })),
      h('label', { class: 'check' },
        h('input', { type: 'checkbox', id: 'show-types', onchange: (e) => { st.showTypes = e.target.checked; renderGrid(); } }),
        ' Show EDM types'),
      h('button', { type: 'button', id: 'grid-scroll', class: 'small scroll-hint', hidden: true, 'aria-controls': 'grid-wrap', onclick: scrollSideways }),
      h('span', { class: 'order', title: 'The order the service returns entities in', text: 'Sorted by PartitionKey, then RowKey' })),
    h('div', { class: 'grid-frame', id: 'grid-frame' },
      h('div', { class: 'grid-wrap', id: 'grid-wrap', tabindex: '0', role: 'region', 'aria-label': `Entities of ${table}`, onscroll: renderScrollCues })),
    h('div', { class: 'pager' },
      h('button', { type: 'button', id: 'page-back', text: '← Back', disabled: true, onclick: back }),
      h('span', { id: 'page-info' }),
      h('button', { type: 'button', id: 'load-more', text: 'Load more →', disabled: true, onclick: loadMore })),
  );
  if (!resizeWatch) resizeWatch = new ResizeObserver(() => renderScrollCues());
  resizeWatch.disconnect();
  resizeWatch.observe(document.getElementById('grid-wrap'));
  runQuery();
}

let resizeWatch = null;

// renderScrollCues makes a grid wider than its box evident: a shadow on
// each side that has more columns, and a button that says how many columns
// are out of sight to the right and scrolls to them (or back to the
// first). Scrollbars alone are easy to miss, or hidden, as on macOS.
function renderScrollCues() {
  const wrap = document.getElementById('grid-wrap');
  const frame = document.getElementById('grid-frame');
  const btn = document.getElementById('grid-scroll');
  if (!wrap || !frame || !btn) return;
  const left = wrap.scrollLeft > 1;
  const right = wrap.scrollLeft + wrap.clientWidth < wrap.scrollWidth - 1;
  pinKeys(wrap, left || right);
  frame.classList.toggle('more-left', left);
  frame.classList.toggle('more-right', right);
  if (right) {
    const edge = wrap.getBoundingClientRect().left + wrap.clientWidth;
    const hidden = [...wrap.querySelectorAll('thead th')].filter((th) => th.getBoundingClientRect().right > edge + 1).length;
    btn.textContent = `${fmt(hidden)} more column${hidden === 1 ? '' : 's'} →`;
    btn.title = 'The grid is wider than the window: scroll sideways (Shift + mouse wheel, or the arrow keys in the grid)';
  } else if (left) {
    btn.textContent = '← First columns';
    btn.title = 'Scroll back to PartitionKey and RowKey';
  }
  btn.hidden = !left && !right;
  btn.dataset.dir = right ? 'right' : 'left';
}

// pinKeys keeps the selection box, PartitionKey and RowKey in view while a
// wide grid scrolls sideways (sticky cells, style.css), when they take at
// most half of its width: which row a value belongs to stays readable.
function pinKeys(wrap, wide) {
  const grid = document.getElementById('grid');
  if (!grid) return;
  const ths = grid.querySelectorAll('thead th');
  if (ths.length < 3) return;
  const w = [ths[0].offsetWidth, ths[1].offsetWidth, ths[2].offsetWidth];
  const pin = wide && w[0] + w[1] + w[2] <= wrap.clientWidth / 2;
  grid.classList.toggle('pinned', pin);
  wrap.parentElement.classList.toggle('pinned', pin);
  if (pin) {
    grid.style.setProperty('--pin1', `${w[0]}px`); // CSSOM: allowed by the style-src policy
    grid.style.setProperty('--pin2', `${w[0] + w[1]}px`);
  }
}

function scrollSideways() {
  const wrap = document.getElementById('grid-wrap');
  const btn = document.getElementById('grid-scroll');
  if (btn.dataset.dir === 'right') wrap.scrollBy({ left: Math.max(120, wrap.clientWidth * 0.75) });
  else wrap.scrollTo({ left: 0 });
}

function readQuery() {
  return {
    filter: document.getElementById('q-filter').value.trim(),
    select: document.getElementById('q-select').value.replace(/\s+/g, ''),
    top: document.getElementById('q-top').value.trim(),
  };
}

// runQuery starts the query in the bar over: its first page.
export async function runQuery() {
  if (!st) return;
  st.query = readQuery();
  st.pages = [];
  st.selected.clear();
  // Columns come from the properties this query returns; a choice the
  // user made is kept.
  st.seen = new Map();
  await fetchPage(null);
}

async function fetchPage(token) {
  const { app, table } = st;
  const errBox = document.getElementById('query-error');
  const busy = document.getElementById('grid-wrap');
  busy.setAttribute('aria-busy', 'true');
  let r;
  try {
    r = await app.client.queryEntities(table, { ...st.query, next: token });
  } catch (e) {
    busy.removeAttribute('aria-busy');
    showError(e);
    st.failed = !token; // a first page that failed: nothing to show
    renderAll(); // a new query that failed shows no stale results
    return;
  }
  st.failed = false;
  busy.removeAttribute('aria-busy');
  errBox.hidden = true;
  document.getElementById('q-filter').removeAttribute('aria-invalid');
  st.pages.push(r);
  for (const e of r.entities) {
    for (const p of e.props) {
      if (!st.seen.has(p.name)) st.seen.set(p.name, new Set());
      st.seen.get(p.name).add(p.type);
    }
  }
  if (st.auto) st.columns = [...st.seen.keys()].slice(0, AUTO_COLUMNS);
  renderAll();
}

function loadMore() {
  const last = st.pages[st.pages.length - 1];
  if (last && last.next) fetchPage(last.next);
}

function back() {
  if (st.pages.length > 1) {
    const dropped = st.pages.pop();
    for (const e of dropped.entities) st.selected.delete(keyOf(e));
    renderAll();
    document.getElementById('load-more').focus();
  }
}

// showError shows the server's error; for a $filter the server names the
// position of the fault, which is marked under the filter.
function showError(e) {
  const box = document.getElementById('query-error');
  const filter = st.query.filter;
  const m = /position (\d+)|at '(\d+)' in/.exec(e.message);
  const parts = [h('p', {}, h('strong', { text: e.code || `HTTP ${e.status}` }), ' ', e.message)];
  if (m && filter) {
    // The position is an offset into the filter (0 is its first
    // character); at its length it points just past the end.
    const pos = Math.min(+(m[1] ?? m[2]), filter.length);
    parts.push(
      h('pre', { class: 'mono caret', 'aria-label': `The server reports position ${pos} in the filter` },
        filter.slice(0, pos), h('mark', { text: filter.slice(pos, pos + 1) || ' ' }), filter.slice(pos + 1), '\n',
        ' '.repeat(pos) + '^ position ' + pos),
    );
    document.getElementById('q-filter').setAttribute('aria-invalid', 'true');
  }
  clear(box, parts);
  box.hidden = false;
}

function renderAll() {
  renderInfo();
  renderColumns();
  renderGrid();
  renderPager();
}

function renderInfo() {
  const info = document.getElementById('query-info');
  const last = st.pages[st.pages.length - 1];
  if (!last) {
    clear(info);
    return;
  }
  if (!last.insight) {
    clear(info,
      h('span', { text: `${fmt(last.entities.length)} entities in ${Math.round(last.ms)} ms. ` }),
      h('span', { class: 'help', text: 'Start tableemu with --insights to see each query\'s shape and the entities it examines, as Azure would count them.' }));
    return;
  }
  const ins = last.insight;
  const [label, why] = SHAPES[ins.shape] || [ins.shape, ''];
  let scanned = 0;
  let returned = 0;
  for (const p of st.pages) {
    scanned += Math.max(0, p.insight?.scanned ?? 0);
    returned += p.insight?.returned ?? 0;
  }
  clear(info,
    h('span', { class: `shape ${ins.shape}`, id: 'query-shape', title: why, text: label }),
    h('span', { id: 'query-counts' },
      'examined ', h('strong', { id: 'query-scanned', text: ins.scanned < 0 ? '?' : fmt(ins.scanned) }),
      ', returned ', h('strong', { id: 'query-returned', text: fmt(ins.returned) }),
      ` in ${Math.round(last.ms)} ms`),
    st.pages.length > 1 ? h('span', { class: 'help', text: `· this query so far: examined ${fmt(scanned)}, returned ${fmt(returned)} over ${st.pages.length} pages` }) : null,
    ins.index ? h('span', { class: 'help', text: `· served from tableemu's automatic index on ${ins.index} (Azure would scan)` }) : null,
    h('span', { class: 'help why', text: why }));
}

function renderColumns() {
  const fs = document.getElementById('columns');
  const names = [...st.seen.keys()];
  const summary = () => `Columns (${st.columns.filter((c) => st.seen.has(c)).length} of ${names.length})`;
  document.getElementById('columns-summary').textContent = summary();
  const toggle = (name, on) => {
    st.auto = false;
    const set = new Set(st.columns);
    if (on) set.add(name);
    else set.delete(name);
    st.columns = names.filter((n) => set.has(n));
    document.getElementById('columns-summary').textContent = summary();
    renderGrid();
  };
  clear(fs,
    h('legend', { text: 'Properties seen' }),
    h('div', { class: 'row' },
      h('button', { type: 'button', text: 'All', onclick: () => { st.auto = false; st.columns = names; renderAll(); } }),
      h('button', { type: 'button', text: 'None', onclick: () => { st.auto = false; st.columns = []; renderAll(); } })),
    names.length ? null : h('p', { class: 'help', text: 'No properties yet.' }),
    names.map((n, i) =>
      h('label', { class: 'check' },
        h('input', { type: 'checkbox', id: `col-${i}`, checked: st.columns.includes(n), onchange: (e) => toggle(n, e.target.checked) }),
        ` ${n} `, h('span', { class: 'type', text: [...st.seen.get(n)].map(shortType).join(', ') }))));
}

function cell(p) {
  if (!p) return h('td', { class: 'absent', title: 'This entity has no such property' });
  let text = p.value;
  if (p.type === 'Edm.Binary') text = `${p.value.slice(0, 24)}${p.value.length > 24 ? '…' : ''}`;
  else if (text.length > 120) text = text.slice(0, 120) + '…';
  return h('td', { class: `v ${shortType(p.type).toLowerCase()}`, title: `${p.type}: ${p.value.slice(0, 500)}` },
    st.showTypes ? h('span', { class: 'type', text: shortType(p.type) }) : null,
    h('span', { text }));
}

function renderGrid() {
  const wrap = document.getElementById('grid-wrap');
  const rows = st.pages.flatMap((p) => p.entities);
  if (!rows.length) {
    // Each empty grid says why it is empty and what to do next.
    const more = st.pages.length && st.pages[st.pages.length - 1].next;
    const q = st.query;
    clear(wrap, h('p', { class: 'empty', id: 'grid-empty', text: more
      ? 'No entities on this page, but the service returned a continuation: the query stopped at its scan limit. Load more to go on.'
      : !st.pages.length ? (st.failed ? 'The server refused the query (above): no entities to show. Correct the query and run it again.' : '')
      : q.filter ? 'No entity matches this $filter. Change it, or Reset to see every entity.'
      : `${st.table} has no entities yet. Add entity writes one; Import… loads a JSON Lines or CSV file.` }));
    renderScrollCues();
    return;
  }
  const all = h('input', {
    type: 'checkbox',
    'aria-label': 'Select all loaded entities',
    checked: rows.length > 0 && rows.every((e) => st.selected.has(keyOf(e))),
    onchange: (e) => {
      for (const r of rows) e.target.checked ? st.selected.add(keyOf(r)) : st.selected.delete(keyOf(r));
      renderGrid();
    },
  });
  const cols = st.columns;
  const body = rows.map((e, i) => {
    const byName = new Map(e.props.map((p) => [p.name, p]));
    const sel = st.selected.has(keyOf(e));
    return h('tr', { class: sel ? 'selected' : '', data: { row: String(i) } },
      h('td', { class: 'sel' },
        h('input', {
          type: 'checkbox',
          checked: sel,
          'aria-label': `Select ${e.PartitionKey} / ${e.RowKey}`,
          onchange: (ev) => {
            ev.target.checked ? st.selected.add(keyOf(e)) : st.selected.delete(keyOf(e));
            ev.target.closest('tr').classList.toggle('selected', ev.target.checked);
            renderSelection();
          },
        })),
      h('td', { class: 'key', title: `Edm.String: ${e.PartitionKey}` }, st.showTypes ? h('span', { class: 'type', text: 'String' }) : null, e.PartitionKey),
      h('td', { class: 'key' },
        h('button', {
          type: 'button',
          class: 'link',
          title: 'Open this entity',
          text: e.RowKey === '' ? '(empty)' : e.RowKey,
          onclick: () => openEditor(st.app, st.table, e, afterEdit),
        })),
      h('td', { class: 'ts', title: `Edm.DateTime: ${e.Timestamp}` }, st.showTypes ? h('span', { class: 'type', text: 'DateTime' }) : null, e.Timestamp.replace('T', ' ').replace(/\.\d+Z$/, 'Z')),
      cols.map((c) => cell(byName.get(c))));
  });
  clear(wrap,
    h('table', { class: 'grid', id: 'grid' },
      h('caption', { class: 'sr-only', text: `Entities of ${st.table}` }),
      h('thead', {},
        h('tr', {},
          h('th', { scope: 'col', class: 'sel' }, all),
          h('th', { scope: 'col', text: 'PartitionKey' }),
          h('th', { scope: 'col', text: 'RowKey' }),
          h('th', { scope: 'col', text: 'Timestamp' }),
          cols.map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, body)));
  renderSelection();
  renderScrollCues();
}

function renderSelection() {
  const b = document.getElementById('delete-selected');
  const n = st.selected.size;
  b.disabled = n === 0;
  b.textContent = n ? `Delete selected (${fmt(n)})` : 'Delete selected';
}

function renderPager() {
  const last = st.pages[st.pages.length - 1];
  const n = st.pages.reduce((a, p) => a + p.entities.length, 0);
  document.getElementById('page-back').disabled = st.pages.length < 2;
  document.getElementById('load-more').disabled = !(last && last.next);
  document.getElementById('page-info').textContent = last
    ? `${fmt(n)} entit${n === 1 ? 'y' : 'ies'} in ${st.pages.length} page${st.pages.length === 1 ? '' : 's'}${last.next ? ' · more available' : ' · end of results'}`
    : '';
}

// afterEdit refreshes the grid after an entity was added, saved or
// deleted: the loaded pages are read again from the first.
async function afterEdit() {
  if (!st) return;
  const pages = Math.max(1, st.pages.length);
  st.pages = [];
  await fetchPage(null);
  while (st.pages.length < pages && st.pages[st.pages.length - 1]?.next) await fetchPage(st.pages[st.pages.length - 1].next);
}

async function count() {
  const out = document.getElementById('count-result');
  const btn = document.getElementById('count');
  btn.disabled = true;
  out.textContent = 'Counting…';
  try {
    const n = await countEntities(st.app, st.table, (k, more) => {
      out.textContent = `${fmt(k)}${more ? '…' : ''}`;
    });
    out.textContent = `${fmt(n)} entit${n === 1 ? 'y' : 'ies'}`;
  } catch (e) {
    out.textContent = `${e.code}: ${e.message}`;
  } finally {
    btn.disabled = false;
  }
}

// deleteSelected deletes the selected rows in entity group transactions:
// one partition per batch, at most 100 operations, each with the row's
// ETag so that a row changed since it was loaded is not deleted.
async function deleteSelected() {
  const rows = st.pages.flatMap((p) => p.entities).filter((e) => st.selected.has(keyOf(e)));
  const byPK = new Map();
  for (const e of rows) {
    if (!byPK.has(e.PartitionKey)) byPK.set(e.PartitionKey, []);
    byPK.get(e.PartitionKey).push(e);
  }
  const batches = [];
  for (const list of byPK.values()) for (let i = 0; i < list.length; i += 100) batches.push(list.slice(i, i + 100));
  const ok = await confirmDialog({
    title: `Delete ${fmt(rows.length)} entit${rows.length === 1 ? 'y' : 'ies'}?`,
    message: `${fmt(rows.length)} selected entit${rows.length === 1 ? 'y' : 'ies'} in ${fmt(byPK.size)} partition${byPK.size === 1 ? '' : 's'} will be deleted in ${fmt(batches.length)} batch${batches.length === 1 ? '' : 'es'} (one partition and at most 100 entities each).`,
    confirm: 'Delete',
    danger: true,
  });
  if (!ok) return;
  let deleted = 0;
  const failures = [];
  for (const b of batches) {
    status(`Deleting… ${fmt(deleted)} of ${fmt(rows.length)}`);
    try {
      const r = await st.app.client.batch(st.table, b.map((e) => ({ method: 'DELETE', pk: e.PartitionKey, rk: e.RowKey, etag: e.etag })));
      if (r.ok) deleted += b.length;
      else failures.push(`${b[r.index].PartitionKey} / ${b[r.index].RowKey}: ${r.code} ${r.message} (its batch of ${b.length} was not applied)`);
    } catch (e) {
      failures.push(`${e.code}: ${e.message}`);
    }
  }
  st.selected.clear();
  if (failures.length) status(`Deleted ${fmt(deleted)}; ${failures.length} batch${failures.length === 1 ? '' : 'es'} failed: ${failures.join('; ')}`, 'error');
  else status(`Deleted ${fmt(deleted)} entit${deleted === 1 ? 'y' : 'ies'}`);
  await afterEdit();
}
