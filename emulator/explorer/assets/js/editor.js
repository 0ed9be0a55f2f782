// The entity editor: keys and typed properties (every EDM type), checked
// as the server checks them before anything is sent; insert, replace or
// merge with the ETag the entity was loaded with, so that a change made
// meanwhile by someone else is a 412 conflict that is shown, with a reload.

import { h, clear, openDialog, confirmDialog, status, fmt } from './ui.js';
import { TYPES, LIMITS, shortType, checkEntity, checkValue, checkPropertyName, entityJSON, entitySize } from './edm.js';
import { randomGuid } from './crypto.js';

const PLACEHOLDER = {
  'Edm.String': 'text',
  'Edm.Int32': '-2147483648 to 2147483647',
  'Edm.Int64': '64-bit integer',
  'Edm.Double': '3.14, 1e-9, NaN, Infinity',
  'Edm.DateTime': '2024-05-01T12:00:00Z',
  'Edm.Guid': 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx',
  'Edm.Binary': 'base64',
};

let seq = 0;

// invalid marks a control for assistive technology (aria-invalid="true").
function invalid(el, bad) {
  if (bad) el.setAttribute('aria-invalid', 'true');
  else el.removeAttribute('aria-invalid');
}

// openEditor edits entity (null: a new one) of table; done() runs after a
// successful change.
export function openEditor(app, table, entity, done) {
  const isNew = !entity;
  let etag = entity ? entity.etag : '';
  const id = ++seq;
  return openDialog(isNew ? `Add an entity to ${table}` : `Entity ${entity.PartitionKey} / ${entity.RowKey}`, (close) => {
    const pk = h('input', { id: `ed-pk-${id}`, name: 'PartitionKey', autocomplete: 'off', spellcheck: 'false', readonly: !isNew, value: entity ? entity.PartitionKey : '' });
    const rk = h('input', { id: `ed-rk-${id}`, name: 'RowKey', autocomplete: 'off', spellcheck: 'false', readonly: !isNew, value: entity ? entity.RowKey : '' });
    const rows = h('tbody', {});
    const size = h('p', { class: 'help', id: `ed-size-${id}` });
    const errors = h('div', { class: 'error', role: 'alert' });
    const conflict = h('div', { class: 'conflict', role: 'alert', hidden: true });
    const mode = isNew
      ? null
      : h('fieldset', { class: 'mode' },
          h('legend', { text: 'Save as' }),
          h('label', { class: 'check' }, h('input', { type: 'radio', name: `mode-${id}`, value: 'replace', checked: true }),
            ' Replace ', h('span', { class: 'help', text: '(PUT: properties not in the form are removed)' })),
          h('label', { class: 'check' }, h('input', { type: 'radio', name: `mode-${id}`, value: 'merge' }),
            ' Merge ', h('span', { class: 'help', text: '(MERGE: properties not in the form are kept)' })));

    const addRow = (p = { name: '', type: 'Edm.String', value: '' }) => {
      const n = rows.children.length;
      const rid = `ed-${id}-${seq++}`;
      const msg = h('span', { class: 'field-error', id: `${rid}-msg` });
      const name = h('input', { class: 'p-name', id: `${rid}-name`, 'aria-label': `Property ${n + 1} name`, autocomplete: 'off', spellcheck: 'false', value: p.name, 'aria-describedby': msg.id });
      const type = h('select', { class: 'p-type', 'aria-label': `Property ${n + 1} type`, value: p.type },
        TYPES.map((t) => h('option', { value: t, text: shortType(t) })));
      const valueCell = h('td', { class: 'p-value-cell' });
      const tr = h('tr', {},
        h('td', {}, name),
        h('td', {}, type),
        valueCell,
        h('td', {}, h('button', { type: 'button', class: 'icon', 'aria-label': `Remove property ${n + 1}`, title: 'Remove property', onclick: () => { tr.remove(); refresh(); } }, '×')));
      const renderValue = (text) => {
        const t = type.value;
        const common = { class: 'p-value mono', 'aria-label': `Property ${n + 1} value (${shortType(t)})`, 'aria-describedby': msg.id, autocomplete: 'off', spellcheck: 'false' };
        let input;
        if (t === 'Edm.Boolean') {
          input = h('select', { ...common, value: /^false$/i.test(text) ? 'false' : 'true' }, h('option', { value: 'true', text: 'true' }), h('option', { value: 'false', text: 'false' }));
        } else if (t === 'Edm.String') {
          input = h('textarea', { ...common, rows: String(Math.min(6, Math.max(1, text.split('\n').length))), value: text });
        } else {
          input = h('input', { ...common, placeholder: PLACEHOLDER[t], value: text });
        }
        const extra = t === 'Edm.Guid'
          ? h('button', { type: 'button', class: 'small', text: 'New', title: 'A new random GUID', onclick: () => { input.value = randomGuid(); check(); } })
          : t === 'Edm.DateTime'
            ? h('button', { type: 'button', class: 'small', text: 'Now', title: 'The current time', onclick: () => { input.value = new Date().toISOString(); check(); } })
            : null;
        input.addEventListener('input', check);
        input.addEventListener('change', check);
        clear(valueCell, h('div', { class: 'row tight' }, input, extra), msg);
      };
      const valueOf = () => valueCell.querySelector('.p-value').value;
      const check = () => {
        const problems = [];
        const nm = name.value;
        const nErr = nm ? checkPropertyName(nm) : '';
        invalid(name, !!nErr);
        if (nErr) problems.push(nErr);
        const v = checkValue(type.value, valueOf());
        invalid(valueCell.querySelector('.p-value'), !!v.error);
        if (v.error) problems.push(v.error);
        msg.textContent = problems.join('; ');
        refresh();
      };
      type.addEventListener('change', () => {
        renderValue(valueOf());
        check();
      });
      name.addEventListener('input', check);
      tr.check = check;
      tr.read = () => ({ name: name.value, type: type.value, value: valueOf() });
      tr.focusName = () => name.focus();
      rows.append(tr);
      renderValue(p.value);
      return tr;
    };

    const read = () => ({ PartitionKey: pk.value, RowKey: rk.value, props: [...rows.children].map((tr) => tr.read()) });
    const refresh = () => {
      const e = read();
      const valid = e.props.every((p) => !checkValue(p.type, p.value).error);
      size.textContent = valid
        ? `${fmt(e.props.length)} of ${LIMITS.properties} properties · ${fmt(entitySize(e))} of ${fmt(LIMITS.entity)} bytes by the service's size estimate`
        : `${fmt(e.props.length)} of ${LIMITS.properties} properties`;
    };
    const meta = h('p', { class: 'help' });
    const showMeta = (ent) => {
      if (ent) clear(meta, 'Timestamp ', h('code', { text: ent.Timestamp }), ' · ETag ', h('code', { class: 'etag', text: etag }));
    };
    const fill = (ent) => {
      showMeta(ent);
      clear(rows);
      for (const p of ent ? ent.props : []) addRow({ ...p });
      refresh();
    };
    fill(entity);

    const showConflict = () => {
      clear(conflict,
        h('p', {}, h('strong', { text: 'Someone changed this entity since you loaded it. ' }),
          'Your change was not saved (412, the ETag no longer matches). Reload it to see the current version; your edits in this form are replaced.'),
        h('button', {
          type: 'button',
          class: 'primary',
          id: `ed-reload-${id}`,
          text: 'Reload entity',
          onclick: async () => {
            try {
              const fresh = await app.client.getEntity(table, pk.value, rk.value);
              etag = fresh.etag;
              entity = fresh;
              fill(fresh);
              conflict.hidden = true;
              status('Reloaded the current version');
            } catch (e) {
              clear(conflict, h('p', { text: e.status === 404 ? 'The entity no longer exists: it was deleted meanwhile.' : `${e.code}: ${e.message}` }));
            }
          },
        }));
      conflict.hidden = false;
      conflict.querySelector('button')?.focus();
    };

    const save = async (ev) => {
      ev.preventDefault();
      conflict.hidden = true;
      const e = read();
      const errs = checkEntity(e);
      for (const tr of rows.children) tr.check();
      if (errs.length) {
        clear(errors, h('p', { text: 'Not saved: ' }), h('ul', {}, errs.map((x) =>
          h('li', { text: typeof x.field === 'number' ? `property ${x.field + 1}${e.props[x.field].name ? ' (' + e.props[x.field].name + ')' : ''}: ${x.message}` : `${x.field ? x.field + ': ' : ''}${x.message}` }))));
        const bad = form.querySelector('[aria-invalid]');
        (bad || (errs[0].field === 'PartitionKey' ? pk : rk)).focus();
        return;
      }
      clear(errors);
      const json = entityJSON(e);
      try {
        if (isNew) await app.client.insertEntity(table, json);
        else {
          const merge = form.querySelector(`input[name="mode-${id}"]:checked`).value === 'merge';
          etag = await app.client.updateEntity(table, e.PartitionKey, e.RowKey, json, etag, merge);
        }
      } catch (err) {
        if (err.status === 412) return showConflict();
        clear(errors, h('p', {}, h('strong', { text: err.code || `HTTP ${err.status}` }), ' ', err.status === 404 && !isNew ? 'The entity no longer exists: it was deleted meanwhile.' : err.message));
        return;
      }
      status(isNew ? `Added ${e.PartitionKey} / ${e.RowKey}` : `Saved ${e.PartitionKey} / ${e.RowKey}`);
      close(true);
      done && done();
    };

    const remove = async () => {
      const ok = await confirmDialog({ title: 'Delete this entity?', message: `${entity.PartitionKey} / ${entity.RowKey} will be deleted.`, confirm: 'Delete', danger: true });
      if (!ok) return;
      try {
        await app.client.deleteEntity(table, entity.PartitionKey, entity.RowKey, etag);
      } catch (err) {
        status(err.status === 412 ? 'Not deleted: someone changed this entity since you loaded it. Reload and try again.' : `${err.code}: ${err.message}`, 'error');
        done && done();
        return;
      }
      status(`Deleted ${entity.PartitionKey} / ${entity.RowKey}`);
      done && done();
    };

    const form = h('form', { class: 'editor stack', novalidate: true, onsubmit: save },
      h('div', { class: 'keys' },
        h('div', { class: 'field' }, h('label', { for: pk.id, text: 'PartitionKey' }), pk),
        h('div', { class: 'field' }, h('label', { for: rk.id, text: 'RowKey' }), rk)),
      isNew ? null : meta,
      h('table', { class: 'props' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'Property' }), h('th', { scope: 'col', text: 'Type' }), h('th', { scope: 'col', text: 'Value' }), h('th', {}, h('span', { class: 'sr-only', text: 'Remove' })))),
        rows),
      h('div', { class: 'row' },
        h('button', { type: 'button', id: `ed-add-${id}`, text: 'Add property', onclick: () => addRow().focusName() }),
        size),
      mode,
      conflict,
      errors,
      h('div', { class: 'row end' },
        isNew ? null : h('button', { type: 'button', class: 'danger left', text: 'Delete entity', onclick: async () => { close(false); await remove(); } }),
        h('button', { type: 'button', text: 'Cancel', onclick: () => close(false) }),
        h('button', { type: 'submit', class: 'primary', text: isNew ? 'Insert' : 'Save' })));
    return form;
  }, { wide: true });
}
