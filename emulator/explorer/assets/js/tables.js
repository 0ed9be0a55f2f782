// The table list: filter by prefix (server side, as a TableName range),
// more pages through NextTableName, create, delete with confirmation,
// counting a table's entities on demand, and resetting the whole account.

import { h, clear, status, confirmDialog, fmt } from './ui.js';

const $ = (id) => document.getElementById(id);
let next = '';
let prefixTimer = 0;

export function initTables(app) {
  $('prefix-form').addEventListener('submit', (e) => {
    e.preventDefault();
    loadTables(app);
  });
  $('prefix').addEventListener('input', () => {
    clearTimeout(prefixTimer);
    prefixTimer = setTimeout(() => loadTables(app), 250);
  });
  $('more-tables').addEventListener('click', () => loadTables(app, true));
  $('create-form').addEventListener('submit', (e) => {
    e.preventDefault();
    createTable(app);
  });
  $('reset-account').addEventListener('click', () => resetAccount(app));
  $('open-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const name = $('open-table').value.trim();
    if (name) app.openTable(name);
  });
}

// loadTables lists the account's tables (more: the next page).
export async function loadTables(app, more = false) {
  const list = $('table-list');
  const note = $('tables-note');
  if (!more) {
    next = '';
    clear(list);
  }
  note.textContent = 'Loading…';
  $('open-form').hidden = true;
  try {
    const r = await app.client.listTables($('prefix').value, next);
    next = r.next;
    for (const name of r.names) {
      list.append(
        h('li', {},
          h('button', {
            type: 'button',
            class: 'table-link',
            title: name, // the whole name where the list cuts it
            data: { table: name },
            'aria-current': name === app.table ? 'true' : 'false',
            text: name,
            onclick: () => app.openTable(name),
          })),
      );
    }
    $('more-tables').hidden = !next;
    const n = list.children.length;
    note.textContent = n ? `${fmt(n)} table${n === 1 ? '' : 's'}${next ? ' so far' : ''}` : $('prefix').value ? 'No table starts with this prefix. Clear the filter to see every table.' : 'No tables yet: create one below.';
  } catch (e) {
    note.textContent = `${e.code}: ${e.message}`;
    if (app.client.conn.sas) {
      // A SAS for one table cannot list tables.
      note.textContent = 'This SAS cannot list tables.';
      $('open-form').hidden = false;
    }
  }
}

async function createTable(app) {
  const input = $('new-table');
  const err = $('create-error');
  const name = input.value.trim();
  err.textContent = '';
  input.removeAttribute('aria-invalid');
  // The service's rule (docs/protocol.md 1.5); the server checks it too.
  if (!/^[A-Za-z][A-Za-z0-9]{2,62}$/.test(name)) {
    err.textContent = 'A table name is 3–63 letters and digits and starts with a letter.';
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    return;
  }
  try {
    await app.client.createTable(name);
  } catch (e) {
    err.textContent = `${e.code}: ${e.message}`;
    input.setAttribute('aria-invalid', 'true');
    return;
  }
  input.value = '';
  status(`Created table ${name}`);
  await loadTables(app);
  app.openTable(name);
}

// deleteTable asks for the table's name to be typed, then deletes it.
export async function deleteTable(app, name) {
  const ok = await confirmDialog({
    title: `Delete table ${name}?`,
    message: `The table ${name} and every entity in it will be deleted. This cannot be undone.`,
    confirm: 'Delete table',
    danger: true,
    typeToConfirm: name,
  });
  if (!ok) return;
  try {
    await app.client.deleteTable(name);
  } catch (e) {
    status(`${e.code}: ${e.message}`, 'error');
    return;
  }
  status(`Deleted table ${name}`);
  app.table = '';
  clear($('table-pane'), h('p', { class: 'empty', text: `Table ${name} was deleted. Choose another table from the list, or create one.` }));
  loadTables(app);
}

// resetAccount asks for the account's name to be typed, then resets it:
// every table goes, and the service properties return to the defaults.
async function resetAccount(app) {
  const acct = app.client.account;
  const ok = await confirmDialog({
    title: `Reset account ${acct}?`,
    message:
      `Every table of ${acct}, with its entities and stored access policies, will be deleted, and its service ` +
      'properties (CORS rules included) set back to the defaults, as on a new server. Its snapshots stay. ' +
      'This cannot be undone.',
    confirm: 'Reset account',
    danger: true,
    typeToConfirm: acct,
  });
  if (!ok) return;
  let r;
  try {
    r = await app.client.resetAccount();
  } catch (e) {
    status(`${e.code}: ${e.message}`, 'error');
    return;
  }
  status(`Reset ${acct}: ${fmt(r.tablesDeleted)} table${r.tablesDeleted === 1 ? '' : 's'} deleted`);
  app.table = '';
  clear($('table-pane'), h('p', { class: 'empty', text: `Account ${acct} was reset: it has no tables. Create one, or import data into a new table.` }));
  loadTables(app);
}

// countEntities pages through the whole table with $select=RowKey (the
// smallest page) and reports progress through onProgress(n). The Table
// API has no count; this is what a client has to do.
export async function countEntities(app, name, onProgress, signal) {
  let n = 0;
  let token = null;
  do {
    if (signal?.aborted) return null;
    const r = await app.client.queryEntities(name, { select: 'RowKey', next: token });
    n += r.entities.length;
    token = r.next;
    onProgress(n, !!token);
  } while (token);
  return n;
}
