// Export a table (or the current filter's result) to JSON Lines or CSV,
// and import either back in entity group transactions with progress and
// an error per row.
//
// JSON Lines: one entity per line in the Table API's own JSON, every
// property that is not a String annotated with its @odata.type, so types
// survive exactly (Int32 vs Double, Int64 beyond 2^53, DateTime to 100 ns).
// CSV: a header row of property names, then a row of EDM type names, then
// one row per entity. An empty unquoted cell is an absent property; an
// empty String is written "" (quoted). Timestamps are not exported: the
// service sets them on import.

import { h, clear, openDialog, download, fmt } from './ui.js';
import { TYPES, entityJSON, checkEntity } from './edm.js';
import { parseJSON } from './json.js';
import { entityFromWire } from './edm.js';

const MAX_BATCH_BYTES = 3.5 * 1024 * 1024; // under the 4 MiB $batch limit, with framing

export function openExport(app, table, query) {
  return openDialog(`Export ${table}`, (close) => {
    const prog = h('progress', { max: '1', value: '0', 'aria-label': 'Export progress', hidden: true });
    const note = h('p', { class: 'help', 'aria-live': 'polite' });
    const filtered = !!query.filter;
    const form = h('form', { class: 'stack', onsubmit: async (e) => {
      e.preventDefault();
      const fmtSel = form.querySelector('input[name=fmt]:checked').value;
      const onlyFilter = filtered && form.querySelector('input[name=scope]:checked').value === 'filter';
      form.querySelector('button[type=submit]').disabled = true;
      prog.hidden = false;
      prog.removeAttribute('value');
      const all = [];
      let token = null;
      try {
        do {
          const r = await app.client.queryEntities(table, { filter: onlyFilter ? query.filter : '', next: token });
          all.push(...r.entities);
          token = r.next;
          note.textContent = `Read ${fmt(all.length)} entities${token ? '…' : ''}`;
        } while (token);
      } catch (err) {
        note.textContent = `${err.code}: ${err.message}`;
        form.querySelector('button[type=submit]').disabled = false;
        return;
      }
      prog.value = 1;
      if (fmtSel === 'jsonl') download(`${table}.jsonl`, all.map((e) => entityJSON(e) + '\n').join(''), 'application/x-ndjson');
      else download(`${table}.csv`, toCSV(all), 'text/csv');
      note.textContent = `Exported ${fmt(all.length)} entities.`;
      form.querySelector('button[type=submit]').disabled = false;
      form.querySelector('.cancel').textContent = 'Close';
    } },
    h('fieldset', {},
      h('legend', { text: 'Format' }),
      h('label', { class: 'check' }, h('input', { type: 'radio', name: 'fmt', value: 'jsonl', checked: true }), ' JSON Lines ', h('span', { class: 'help', text: '(types kept exactly)' })),
      h('label', { class: 'check' }, h('input', { type: 'radio', name: 'fmt', value: 'csv' }), ' CSV ', h('span', { class: 'help', text: '(the second row holds the EDM types)' }))),
    filtered
      ? h('fieldset', {},
          h('legend', { text: 'Entities' }),
          h('label', { class: 'check' }, h('input', { type: 'radio', name: 'scope', value: 'all', checked: true }), ' The whole table'),
          h('label', { class: 'check' }, h('input', { type: 'radio', name: 'scope', value: 'filter' }), ' Those matching ', h('code', { text: query.filter })))
      : null,
    prog,
    note,
    h('div', { class: 'row end' },
      h('button', { type: 'button', class: 'cancel', text: 'Cancel', onclick: () => close() }),
      h('button', { type: 'submit', class: 'primary', text: 'Export' })));
    return form;
  });
}

// csvField quotes a value when it must be; absent is an empty cell.
function csvField(v) {
  if (v === undefined) return '';
  if (v === '' || /[",\r\n]|^\s|\s$/.test(v)) return `"${v.replace(/"/g, '""')}"`;
  return v;
}

export function toCSV(entities) {
  const cols = [];
  const idx = new Map();
  for (const e of entities) {
    for (const p of e.props) {
      const k = `${p.name}\u0000${p.type}`;
      if (!idx.has(k)) {
        idx.set(k, cols.length);
        cols.push(p);
      }
    }
  }
  const lines = [
    ['PartitionKey', 'RowKey', ...cols.map((c) => c.name)].map(csvField).join(','),
    ['Edm.String', 'Edm.String', ...cols.map((c) => c.type)].join(','),
  ];
  for (const e of entities) {
    const row = new Array(cols.length);
    for (const p of e.props) row[idx.get(`${p.name}\u0000${p.type}`)] = p.value;
    lines.push([csvField(e.PartitionKey), csvField(e.RowKey), ...Array.from(row, csvField)].join(','));
  }
  return lines.join('\r\n') + '\r\n';
}

// parseCSV reads RFC 4180 CSV into rows of cells {text, quoted}.
export function parseCSV(text) {
  const rows = [];
  let row = [];
  let i = 0;
  const n = text.length;
  if (text.charCodeAt(0) === 0xfeff) i = 1;
  while (i < n) {
    let cell = '';
    let quoted = false;
    if (text[i] === '"') {
      quoted = true;
      i++;
      for (;;) {
        if (i >= n) throw new Error(`unterminated quoted field on line ${rows.length + 1}`);
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            cell += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        cell += text[i++];
      }
    } else {
      const start = i;
      while (i < n && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') i++;
      cell = text.slice(start, i);
    }
    row.push({ text: cell, quoted });
    if (text[i] === ',') {
      i++;
      if (i >= n) row.push({ text: '', quoted: false });
      continue;
    }
    if (text[i] === '\r') i++;
    if (text[i] === '\n') i++;
    rows.push(row);
    row = [];
  }
  if (row.length) rows.push(row);
  return rows;
}

// parseImport turns a file's text into [{line, entity}] and [{line, message}].
export function parseImport(name, text) {
  const rows = [];
  const errors = [];
  const isCSV = /\.csv$/i.test(name) || (!/\.(jsonl|ndjson|json)$/i.test(name) && !text.trimStart().startsWith('{'));
  if (!isCSV) {
    text.split(/\r?\n/).forEach((line, i) => {
      if (!line.trim()) return;
      try {
        const obj = parseJSON(line);
        if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new Error('not a JSON object');
        if (typeof obj.PartitionKey !== 'string' || typeof obj.RowKey !== 'string') throw new Error('PartitionKey and RowKey must be strings');
        rows.push({ line: i + 1, entity: entityFromWire(obj) });
      } catch (e) {
        errors.push({ line: i + 1, message: e.message });
      }
    });
    return { rows, errors };
  }
  const csv = parseCSV(text);
  if (csv.length < 2) return { rows, errors: [{ line: 1, message: 'a CSV file needs a header row and a row of EDM types' }] };
  const names = csv[0].map((c) => c.text);
  const types = csv[1].map((c) => c.text);
  const ipk = names.indexOf('PartitionKey');
  const irk = names.indexOf('RowKey');
  if (ipk < 0 || irk < 0) return { rows, errors: [{ line: 1, message: 'the header row needs PartitionKey and RowKey columns' }] };
  for (let c = 0; c < names.length; c++) {
    if (c !== ipk && c !== irk && !TYPES.includes(types[c])) {
      return { rows, errors: [{ line: 2, message: `column ${c + 1} (${names[c]}): "${types[c] ?? ''}" is not an EDM type (${TYPES.join(', ')})` }] };
    }
  }
  for (let r = 2; r < csv.length; r++) {
    const cells = csv[r];
    if (cells.length === 1 && cells[0].text === '' && !cells[0].quoted) continue; // blank line
    if (cells.length !== names.length) {
      errors.push({ line: r + 1, message: `${cells.length} cells; the header has ${names.length}` });
      continue;
    }
    const e = { PartitionKey: cells[ipk].text, RowKey: cells[irk].text, props: [] };
    cells.forEach((cell, c) => {
      if (c === ipk || c === irk || (cell.text === '' && !cell.quoted)) return;
      e.props.push({ name: names[c], type: types[c], value: cell.text });
    });
    rows.push({ line: r + 1, entity: e });
  }
  return { rows, errors };
}

// importRows writes rows in batches: one partition each, at most 100
// operations and 3.5 MiB. A batch that fails is written again one entity
// at a time, so every row gets its own result. onProgress(done, total,
// errors) follows along.
export async function importRows(client, table, rows, { upsert, onProgress }) {
  const errors = [];
  const valid = [];
  for (const r of rows) {
    const errs = checkEntity(r.entity);
    // Key messages name their key already; property messages get the name.
    if (errs.length) errors.push({ line: r.line, message: errs.map((x) => (typeof x.field === 'number' ? `${r.entity.props[x.field].name}: ` : '') + x.message).join('; ') });
    else valid.push({ ...r, json: entityJSON(r.entity) });
  }
  const byPK = new Map();
  for (const r of valid) {
    if (!byPK.has(r.entity.PartitionKey)) byPK.set(r.entity.PartitionKey, []);
    byPK.get(r.entity.PartitionKey).push(r);
  }
  const chunks = [];
  for (const list of byPK.values()) {
    let cur = [];
    let bytes = 0;
    for (const r of list) {
      const size = new TextEncoder().encode(r.json).length + 400;
      if (cur.length && (cur.length === 100 || bytes + size > MAX_BATCH_BYTES)) {
        chunks.push(cur);
        cur = [];
        bytes = 0;
      }
      cur.push(r);
      bytes += size;
    }
    if (cur.length) chunks.push(cur);
  }
  let done = rows.length - valid.length;
  let written = 0;
  onProgress(done, rows.length, errors, written);
  const one = async (r) => {
    const e = r.entity;
    try {
      if (upsert) await client.upsertEntity(table, e.PartitionKey, e.RowKey, r.json);
      else await client.insertEntity(table, r.json);
      written++;
    } catch (err) {
      errors.push({ line: r.line, message: `${err.code}: ${err.message}` });
    }
  };
  for (const chunk of chunks) {
    let res;
    try {
      res = chunk.length === 1 ? null : await client.batch(table, chunk.map((r) => ({ method: upsert ? 'PUT' : 'POST', pk: r.entity.PartitionKey, rk: r.entity.RowKey, json: r.json })));
    } catch {
      res = { ok: false };
    }
    if (res && res.ok) written += chunk.length;
    else for (const r of chunk) await one(r);
    done += chunk.length;
    onProgress(done, rows.length, errors, written);
  }
  errors.sort((a, b) => a.line - b.line);
  return { written, errors };
}

export function openImport(app, table, onDone) {
  return openDialog(`Import into ${table}`, (close) => {
    const file = h('input', { type: 'file', id: 'import-file', accept: '.jsonl,.ndjson,.json,.csv,text/csv,application/x-ndjson' });
    const prog = h('progress', { max: '1', value: '0', id: 'import-progress', 'aria-label': 'Import progress', hidden: true });
    const note = h('p', { class: 'help', id: 'import-note', 'aria-live': 'polite' });
    const errList = h('ol', { class: 'row-errors', id: 'import-errors' });
    const form = h('form', { class: 'stack', onsubmit: async (e) => {
      e.preventDefault();
      const f = file.files[0];
      if (!f) {
        note.textContent = 'Choose a file first.';
        file.focus();
        return;
      }
      const submit = form.querySelector('button[type=submit]');
      submit.disabled = true;
      clear(errList);
      const { rows, errors: parseErrors } = parseImport(f.name, await f.text());
      prog.hidden = false;
      const upsert = form.querySelector('input[name=mode]:checked').value === 'upsert';
      const { written, errors } = await importRows(app.client, table, rows, {
        upsert,
        onProgress: (done, total, errs, w) => {
          prog.max = Math.max(1, total);
          prog.value = done;
          note.textContent = `Imported ${fmt(w)} of ${fmt(total)} entities${errs.length ? ` · ${fmt(errs.length)} errors` : ''}…`;
        },
      });
      const all = [...parseErrors, ...errors].sort((a, b) => a.line - b.line);
      note.textContent = `Imported ${fmt(written)} of ${fmt(rows.length + parseErrors.length)} rows${all.length ? ` · ${fmt(all.length)} row${all.length === 1 ? '' : 's'} failed` : ''}.`;
      clear(errList, all.slice(0, 200).map((x) => h('li', { text: `line ${x.line}: ${x.message}` })),
        all.length > 200 ? h('li', { text: `… and ${fmt(all.length - 200)} more` }) : null);
      submit.disabled = false;
      form.querySelector('.cancel').textContent = 'Close';
    } },
    h('div', { class: 'field' }, h('label', { for: 'import-file', text: 'File (JSON Lines or CSV with a type row)' }), file),
    h('fieldset', {},
      h('legend', { text: 'Existing keys' }),
      h('label', { class: 'check' }, h('input', { type: 'radio', name: 'mode', value: 'insert', checked: true }), ' Insert ', h('span', { class: 'help', text: '(a row whose keys exist fails)' })),
      h('label', { class: 'check' }, h('input', { type: 'radio', name: 'mode', value: 'upsert' }), ' Insert or replace')),
    prog,
    note,
    errList,
    h('div', { class: 'row end' },
      h('button', { type: 'button', class: 'cancel', text: 'Cancel', onclick: () => close() }),
      h('button', { type: 'submit', class: 'primary', text: 'Import' })));
    return form;
  }).then(() => {
    onDone && onDone();
  });
}
