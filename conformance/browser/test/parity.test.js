'use strict';
// The page checks values, keys and property names before it sends them;
// here every case is also sent to the server, and the page's verdict must
// be the server's. And the page's own building blocks, run in the page:
// SHA-256/HMAC against Node's crypto, CSV and JSON Lines round trips.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { startServer, launch } = require('../lib/harness.js');

let srv;
let ui;
before(async () => {
  srv = await startServer();
  ui = await launch();
  await ui.page.goto(`${srv.origin}/_tableemu/`);
  await ui.page.waitForSelector('#data-view:not([hidden])');
});
after(async () => {
  if (ui) await ui.close();
  if (srv) await srv.stop();
});

const BIG = 'x'.repeat(1025);

test("the page's checks agree with the server's, case by case", async () => {
  const values = {
    'Edm.Int32': ['0', '-2147483648', '2147483647', '2147483648', '+5', '1.5', 'abc', '', ' 1'],
    'Edm.Int64': ['9223372036854775807', '-9223372036854775808', '9223372036854775808', '12a', '-0'],
    'Edm.Double': ['1.5', '-0', 'NaN', 'Infinity', '-Infinity', 'INF', '1e400', 'abc', '.5', '5.', '1e-400', 'inf', '0x10', '1_0'],
    'Edm.Boolean': ['true', 'false', 'TRUE', 'False', 'yes', '1'],
    'Edm.DateTime': ['2024-01-01T00:00:00Z', '2024-02-30T00:00:00Z', '1600-12-31T23:59:59Z', '1601-01-01T00:00:00Z', '2024-01-01',
      '2024-01-01T00:00', '2024-01-01T24:00:00Z', '2024-01-01T00:00:00+01:00', '9999-12-31T23:59:59.9999999Z',
      '9999-12-31T23:59:59-01:00', 'not a date', '2024-01-01T00:00:00.12345678Z', '2024-1-01T00:00:00Z', '2024-01-01T00:00:00.Z'],
    'Edm.Guid': ['0f8fad5b-d9cb-469f-a165-70867728950e', '0F8FAD5B-D9CB-469F-A165-70867728950E', '{0f8fad5b-d9cb-469f-a165-70867728950e}',
      '0f8fad5bd9cb469fa16570867728950e', '0f8fad5b-d9cb-469f-a165-70867728950g'],
    'Edm.Binary': ['AAEC/w==', 'AAEC/w=', 'AAE', '', '!!!!', 'AA==', 'AB=='],
  };
  const keys = ['plain', 'a/b', 'a\\b', 'a#b', 'a?b', 'tab\there', 'del\u007f', 'c1\u0085', 'é😀', '', BIG, 'x'.repeat(1024)];
  // (Not "Timestamp": in a body it is the system property, which the
  // server ignores; the page refuses it as a property name instead.)
  const names = ['_ok', 'Ünïcode', 'a1', '1bad', 'a-b', 'a b', 'n'.repeat(255), 'n'.repeat(256), 'ℕame', 'aͅb', 'a\u200db'];
  const disagreements = await ui.page.evaluate(async ({ values, keys, names }) => {
    const edm = await import(`${location.origin}/_tableemu/js/edm.js`);
    const client = window.tableemuExplorer.client;
    await client.createTable('parity').catch(() => {});
    let n = 0;
    // The server's verdict: insert a one-property entity whose value
    // travels as a string under the annotation.
    const server = async (json) => {
      try {
        await client.insertEntity('parity', json);
        return true;
      } catch (e) {
        if (e.status >= 500 || e.status === 0) throw e;
        return false;
      }
    };
    const out = [];
    for (const [type, list] of Object.entries(values)) {
      for (const text of list) {
        const page = !edm.checkValue(type, text).error;
        const json = `{"PartitionKey":"v","RowKey":"${n++}","P@odata.type":${JSON.stringify(type)},"P":${JSON.stringify(text)}}`;
        const srv = await server(json);
        if (page !== srv) out.push(`${type} ${JSON.stringify(text)}: page ${page}, server ${srv}`);
        // Accepted values also survive the page's own encoding.
        if (page) {
          const e = { PartitionKey: 'w', RowKey: String(n++), props: [{ name: 'P', type, value: text }] };
          edm.checkEntity(e);
          if (!(await server(edm.entityJSON(e)))) out.push(`${type} ${JSON.stringify(text)}: the page's encoding ${edm.entityJSON(e)} refused`);
        }
      }
    }
    for (const k of keys) {
      for (const which of ['PartitionKey', 'RowKey']) {
        const page = !edm.checkKey(which, k);
        const e = { PartitionKey: which === 'PartitionKey' ? k : 'k', RowKey: which === 'RowKey' ? k : String(n++), props: [] };
        const srv = await server(edm.entityJSON(e));
        if (page !== srv) out.push(`${which} ${JSON.stringify(k.slice(0, 20))} (${k.length}): page ${page}, server ${srv}`);
      }
    }
    for (const name of names) {
      const page = !edm.checkPropertyName(name);
      const srv = await server(`{"PartitionKey":"n","RowKey":"${n++}",${JSON.stringify(name)}:"v"}`);
      if (page !== srv) out.push(`name ${JSON.stringify(name.slice(0, 20))}: page ${page}, server ${srv}`);
    }
    return out;
  }, { values, keys, names });
  assert.deepEqual(disagreements, []);
});

test("the page's SHA-256 and HMAC agree with Node's crypto", async () => {
  const cases = [];
  for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 200, 1000]) {
    cases.push({ key: crypto.randomBytes(n % 100).toString('base64'), msg: crypto.randomBytes(n).toString('base64') });
  }
  const got = await ui.page.evaluate(async (cases) => {
    const c = await import(`${location.origin}/_tableemu/js/crypto.js`);
    const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    return cases.map(({ key, msg }) => {
      const k = c.base64ToBytes(key);
      const m = c.base64ToBytes(msg);
      return { sha: hex(c.sha256(m)), hmac: hex(c.hmacSHA256(k, m)) };
    });
  }, cases);
  got.forEach((g, i) => {
    const k = Buffer.from(cases[i].key, 'base64');
    const m = Buffer.from(cases[i].msg, 'base64');
    assert.equal(g.sha, crypto.createHash('sha256').update(m).digest('hex'));
    assert.equal(g.hmac, crypto.createHmac('sha256', k).update(m).digest('hex'));
  });
});

test('CSV and JSON Lines keep every value, absent properties and empty strings apart', async () => {
  const back = await ui.page.evaluate(async () => {
    const t = await import(`${location.origin}/_tableemu/js/transfer.js`);
    const edm = await import(`${location.origin}/_tableemu/js/edm.js`);
    const entities = [
      { PartitionKey: 'p,1', RowKey: 'r "1"', props: [
        { name: 'S', type: 'Edm.String', value: 'comma, "quote"\nnew line' },
        { name: 'E', type: 'Edm.String', value: '' },
        { name: 'Sp', type: 'Edm.String', value: ' padded ' },
        { name: 'D', type: 'Edm.Double', value: '5.0' },
        { name: 'N', type: 'Edm.Double', value: 'NaN' },
        { name: 'L', type: 'Edm.Int64', value: '-9223372036854775808' },
        { name: 'T', type: 'Edm.DateTime', value: '2024-01-01T00:00:00.1234567Z' },
      ] },
      { PartitionKey: 'p2', RowKey: '', props: [{ name: 'D', type: 'Edm.Int32', value: '5' }] },
    ];
    const csv = t.parseImport('x.csv', t.toCSV(entities));
    const jsonl = t.parseImport('x.jsonl', entities.map((e) => edm.entityJSON(e)).join('\n'));
    const strip = (r) => r.rows.map(({ entity: e }) => ({ PartitionKey: e.PartitionKey, RowKey: e.RowKey, props: e.props.map(({ name, type, value }) => ({ name, type, value })) }));
    return { entities, csv: strip(csv), jsonl: strip(jsonl), errors: [...csv.errors, ...jsonl.errors] };
  });
  assert.deepEqual(back.errors, []);
  assert.deepEqual(back.jsonl, back.entities);
  // CSV keeps one column per name and type; the order of a row's
  // properties follows the columns.
  const sortProps = (list) => list.map((e) => ({ ...e, props: [...e.props].sort((a, b) => (a.name + a.type).localeCompare(b.name + b.type)) }));
  assert.deepEqual(sortProps(back.csv), sortProps(back.entities));
});
