// The explorer's entry point: accounts (connections), the views and the
// navigation between them.
//
// No data without credentials: the page holds none of its own. On a
// loopback connection, when the server says devstoreaccount1 has its
// public key, it opens that account by itself; otherwise it asks for a
// connection string, which stays in this tab's sessionStorage only.

import { Client, DEV_ACCOUNT, DEV_KEY, parseConnection } from './client.js';
import { h, clear, status } from './ui.js';
import { initTables, loadTables } from './tables.js';
import { showTable } from './grid.js';
import { initInsights, showInsights, hideInsights } from './insights.js';

const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.content || '';
const STORE = 'tableemu.explorer.connections';

const app = {
  devAccount: meta('tableemu-dev-account'),
  insights: meta('tableemu-insights') === 'true',
  conns: [], // {text, conn, label}
  current: -1,
  client: null,
  table: '',
  view: '',
  openTable,
  showView,
};
window.tableemuExplorer = app; // for the browser tests' and users' console

const $ = (id) => document.getElementById(id);

function saved() {
  try {
    return JSON.parse(sessionStorage.getItem(STORE) || '{"texts":[],"current":0}');
  } catch {
    return { texts: [], current: 0 };
  }
}

function save() {
  const texts = app.conns.filter((c) => !c.dev).map((c) => c.text);
  const cur = app.conns[app.current];
  sessionStorage.setItem(STORE, JSON.stringify({ texts, current: cur ? cur.label : '' }));
}

function labelOf(conn, dev) {
  // Short enough to be read whole in the select of a 420 px window.
  if (dev) return `${conn.account} (development)`;
  if (conn.sas) return `${conn.account} (SAS${conn.table ? ': ' + conn.table : ''})`;
  return conn.account;
}

function addConn(text, conn, dev = false) {
  const label = labelOf(conn, dev);
  const i = app.conns.findIndex((c) => c.label === label);
  if (i >= 0) {
    app.conns[i] = { text, conn, label, dev };
    return i;
  }
  app.conns.push({ text, conn, label, dev });
  return app.conns.length - 1;
}

function renderAccounts() {
  const sel = $('account-select');
  clear(sel, app.conns.map((c, i) => h('option', { value: String(i), selected: i === app.current, text: c.label })));
  document.querySelector('.account').hidden = !app.conns.length;
  $('disconnect').hidden = !app.conns[app.current] || app.conns[app.current].dev;
  // A reset is signed with the account key: a SAS connection cannot.
  $('reset-box').hidden = !app.conns[app.current]?.conn.key;
}

function useAccount(i) {
  app.current = i;
  const c = app.conns[i];
  app.client = new Client(c.conn);
  app.table = '';
  save();
  renderAccounts();
  document.querySelector('.views').hidden = false;
  $('nav-insights').hidden = false;
  showView('data');
  clear($('table-pane'), h('div', { class: 'empty' },
    h('p', { text: `Account ${c.conn.account}: choose a table from the list, or create one.` })));
  loadTables(app).then(() => {
    if (c.conn.table) openTable(c.conn.table);
  });
}

function showView(name) {
  app.view = name;
  $('connect-view').hidden = name !== 'connect';
  $('data-view').hidden = name !== 'data';
  $('insights-view').hidden = name !== 'insights';
  $('nav-data').setAttribute('aria-current', name === 'data' ? 'page' : 'false');
  $('nav-insights').setAttribute('aria-current', name === 'insights' ? 'page' : 'false');
  if (name === 'insights') showInsights(app);
  else hideInsights();
}

function showConnect(why) {
  $('connect-why').textContent = why;
  $('connect-error').textContent = '';
  $('connect-cancel').hidden = !app.conns.length;
  showView('connect');
  $('connect-text').focus();
}

function openTable(name) {
  app.table = name;
  for (const b of document.querySelectorAll('#table-list button')) {
    b.setAttribute('aria-current', b.dataset.table === name ? 'true' : 'false');
  }
  if (app.view !== 'data') showView('data');
  showTable(app, name);
}

async function connect(ev) {
  ev.preventDefault();
  const text = $('connect-text').value;
  const err = $('connect-error');
  err.textContent = '';
  let conn;
  try {
    conn = parseConnection(text);
  } catch (e) {
    err.textContent = e.message;
    return;
  }
  // Try the credential before keeping it: one request to the API.
  const client = new Client(conn);
  try {
    if (conn.sas && conn.table) await client.queryEntities(conn.table, { top: '1' });
    else await client.listTables('', '');
  } catch (e) {
    // A table SAS cannot list tables; it is still good for its table.
    if (!(conn.sas && e.code === 'AuthorizationFailure' && !conn.table)) {
      err.textContent = `${e.code ? e.code + ': ' : ''}${e.message}`;
      return;
    }
  }
  $('connect-text').value = '';
  useAccount(addConn(text.trim(), conn));
  status(`Connected to ${conn.account}`);
}

function start() {
  $('connect-form').addEventListener('submit', connect);
  $('connect-cancel').addEventListener('click', () => showView('data'));
  $('add-account').addEventListener('click', () => showConnect('Add another account, or the same one with other credentials.'));
  $('account-select').addEventListener('change', (e) => useAccount(+e.target.value));
  $('disconnect').addEventListener('click', () => {
    app.conns.splice(app.current, 1);
    save();
    app.client = null;
    clear($('table-pane'));
    if (app.conns.length) useAccount(0);
    else {
      renderAccounts();
      document.querySelector('.views').hidden = true;
      showConnect('Disconnected: the connection string was removed from this tab.');
    }
  });
  $('nav-data').addEventListener('click', () => showView('data'));
  $('nav-insights').addEventListener('click', () => showView('insights'));
  initTables(app);
  initInsights(app);

  if (app.devAccount === DEV_ACCOUNT) addConn('UseDevelopmentStorage=true', { account: DEV_ACCOUNT, key: parseConnection(`AccountName=${DEV_ACCOUNT};AccountKey=${DEV_KEY}`).key }, true);
  const st = saved();
  for (const text of st.texts) {
    try {
      addConn(text, parseConnection(text));
    } catch {
      /* a string that no longer parses is dropped */
    }
  }
  if (!app.conns.length) {
    showConnect(
      'This page has no credentials for any account. It opens the development account by itself only on a loopback ' +
        'address (127.0.0.1, localhost) when the server has devstoreaccount1 with its public key.',
    );
    return;
  }
  const i = Math.max(0, app.conns.findIndex((c) => c.label === st.current));
  useAccount(i);
}

start();
