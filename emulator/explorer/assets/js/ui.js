// Small DOM helpers: an element builder, the status line, and modal
// dialogs on <dialog> (focus moves in, Escape closes, focus returns).

// h builds an element. props: class, text, on<Event> handlers, dataset
// (as data), and any attribute (false/null/undefined leave it out).
export function h(tag, props = {}, ...children) {
  const el = tag === 'svg' || props.svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  let value;
  for (const [k, v] of Object.entries(props)) {
    if (v === false || v == null || k === 'svg') continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (k === 'data') Object.assign(el.dataset, v);
    else if (k === 'value' && 'value' in el) value = v;
    else if (k === 'checked' || k === 'selected' || k === 'disabled' || k === 'hidden') el[k] = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  if (value !== undefined) el.value = value; // after a select's options
  return el;
}

// s builds an SVG element.
export const s = (tag, props = {}, ...children) => h(tag, { ...props, svg: true }, ...children);

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const fmt = (n) => (n == null || Number.isNaN(n) ? '–' : new Intl.NumberFormat('en-US').format(n));

let statusTimer = 0;
// status shows a short message in the live region at the bottom.
export function status(msg, kind = 'info') {
  const el = document.getElementById('status');
  el.textContent = msg;
  el.className = `status show ${kind}`;
  clearTimeout(statusTimer);
  statusTimer = setTimeout(() => el.classList.remove('show'), kind === 'error' ? 8000 : 3000);
}

// openDialog shows a modal dialog. build(close) returns the body; the
// returned promise settles with what close() is given (undefined when the
// user presses Escape or Cancel).
export function openDialog(title, build, { wide = false } = {}) {
  const dlg = document.getElementById('dialog');
  const opener = document.activeElement;
  return new Promise((resolve) => {
    let done = false;
    const close = (value) => {
      if (done) return;
      done = true;
      dlg.close();
      dlg.replaceChildren();
      dlg.classList.remove('wide');
      if (opener && opener.isConnected) opener.focus();
      resolve(value);
    };
    dlg.classList.toggle('wide', wide);
    clear(
      dlg,
      h('div', { class: 'dialog-head' },
        h('h2', { id: 'dialog-title', text: title }),
        h('button', { type: 'button', class: 'icon', 'aria-label': 'Close', onclick: () => close(undefined) }, '×')),
      build(close),
    );
    dlg.oncancel = (ev) => {
      ev.preventDefault();
      close(undefined);
    };
    dlg.showModal();
    const first = dlg.querySelector('[autofocus]') || dlg.querySelector('input, select, textarea, button:not(.icon)');
    if (first) first.focus();
  });
}

// confirmDialog asks a yes/no question; with typeToConfirm the confirm
// button works only once that text is typed.
export function confirmDialog({ title, message, confirm = 'OK', danger = false, typeToConfirm = '' }) {
  return openDialog(title, (close) => {
    const ok = h('button', { type: 'submit', class: danger ? 'danger' : 'primary', disabled: !!typeToConfirm, text: confirm });
    const input = typeToConfirm
      ? h('input', {
          id: 'confirm-text',
          autocomplete: 'off',
          spellcheck: 'false',
          autofocus: true,
          oninput: (e) => {
            ok.disabled = e.target.value !== typeToConfirm;
          },
        })
      : null;
    return h('form', {
      class: 'stack',
      onsubmit: (e) => {
        e.preventDefault();
        if (!ok.disabled) close(true);
      },
    },
    h('p', {}, message),
    input && h('label', { for: 'confirm-text' }, 'Type ', h('code', { text: typeToConfirm }), ' to confirm'),
    input,
    h('div', { class: 'row end' },
      h('button', { type: 'button', text: 'Cancel', onclick: () => close(false) }),
      ok));
  });
}

// download saves text as a file through a link to a Blob (same-origin, so
// the Content-Security-Policy has nothing to allow).
export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// copyText puts text on the clipboard: the Clipboard API in a secure
// context, otherwise the selection and execCommand.
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      /* fall through */
    }
  }
  const ta = h('textarea', { class: 'offscreen', 'aria-hidden': 'true' });
  ta.value = text;
  document.body.append(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  ta.remove();
  return ok;
}
