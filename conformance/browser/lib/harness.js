'use strict';
// What the explorer's browser tests share: a tableemu process of their own
// ($TABLEEMU_BIN) on a free port, Debian's chromium driven by
// playwright-core, the Go SDK checker (conformance/browser/gocheck), and
// screenshots into $TABLEEMU_SHOTS.

const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { chromium } = require('playwright-core');

const repoRoot = path.resolve(__dirname, '..', '..', '..');
const shots = process.env.TABLEEMU_SHOTS || path.join(os.tmpdir(), 'tableemu-explorer-shots');
fs.mkdirSync(shots, { recursive: true });

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (conformance/browser/run.sh sets it)`);
  return v;
}

// startServer runs tableemu on host (default 127.0.0.1) and a free port,
// in memory, and resolves to {origin, account, connectionString, stop}.
async function startServer({ host = '127.0.0.1', args = [], env = {} } = {}) {
  const child = spawn(need('TABLEEMU_BIN'), ['--tableHost', host, '--tablePort', '0', '--inMemoryPersistence', '--silent', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const found = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tableemu did not start in 30 s: ${stderr}`)), 30000);
    const f = {};
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      let m;
      if ((m = /^\S+ endpoint (\S+)/.exec(line)) && !f.endpoint) f.endpoint = m[1];
      if ((m = /^\S+ connection string (\S+)/.exec(line)) && !f.cs) {
        f.cs = m[1];
        clearTimeout(timer);
        resolve(f);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tableemu exited with ${code}: ${stderr}`));
    });
  });
  const onExit = () => child.kill('SIGKILL');
  process.on('exit', onExit);
  const u = new URL(found.endpoint);
  return {
    origin: u.origin,
    account: u.pathname.split('/')[1],
    connectionString: found.cs,
    stop: async () => {
      process.off('exit', onExit);
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

// launch starts chromium as the issue prescribes and returns {browser,
// page, problems}: problems collects uncaught page errors and
// Content-Security-Policy refusals, which no test expects.
async function launch({ width = 1280, height = 800 } = {}) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tableemu-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    viewport: { width, height },
    acceptDownloads: true,
  });
  const page = context.pages()[0] || (await context.newPage());
  const problems = [];
  const watch = (p) => {
    p.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    p.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
    });
  };
  watch(page);
  context.on('page', watch);
  return {
    context,
    page,
    problems,
    close: async () => {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

// shot saves a screenshot without the passing status message.
async function shot(page, name, opts = {}) {
  await page.evaluate(() => document.getElementById('status')?.classList.remove('show'));
  await page.waitForTimeout(250); // the message's fade
  await page.screenshot({ path: path.join(shots, name), ...opts });
}

// textContrast runs in the page: the visible text whose color against
// its effective background (the element's and its ancestors' background
// colors, blended) is below WCAG 2 AA, 4.5:1 or 3:1 for large text
// (https://www.w3.org/TR/WCAG21/#contrast-minimum, with the standard's
// relative luminance). Disabled controls and SVG text are left out (the
// standard exempts the first; the chart's text is checked by eye).
function textContrast(root) {
  const parse = (c) => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null; const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 }; };
  const lum = ({ r, g, b }) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const blend = (top, under) => ({ r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1 });
  function bg(el) {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e);
      const c = parse(cs.backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
      if (e.tagName === 'DIALOG' && e.open) break;
    }
    let out = { r: 255, g: 255, b: 255, a: 1 };
    for (const l of layers.reverse()) out = blend(l, out);
    return out;
  }
  const out = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  while (walker.nextNode()) {
    const t = walker.currentNode;
    if (!t.textContent.trim()) continue;
    const el = t.parentElement;
    if (!el || seen.has(el)) continue;
    seen.add(el);
    if (el.closest('svg, option, .sr-only, .offscreen, [hidden], :disabled')) continue;
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility !== 'visible' || +cs.opacity === 0) continue;
    let op = 1; for (let e = el; e; e = e.parentElement) op *= +getComputedStyle(e).opacity;
    if (op < 1) continue;
    const fg = parse(cs.color); const b = bg(el);
    const f = blend(fg, b);
    const L1 = lum(f), L2 = lum(b);
    const ratio = (Math.max(L1, L2) + 0.05) / (Math.min(L1, L2) + 0.05);
    const size = parseFloat(cs.fontSize); const bold = +cs.fontWeight >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < need) out.push(`${el.tagName.toLowerCase()}.${el.className} "${t.textContent.trim().slice(0, 30)}" ${ratio.toFixed(2)}`);
  }
  return out;
}

// lowContrast lists the text of the page below WCAG AA contrast.
async function lowContrast(page) {
  return page.evaluate(`(${textContrast.toString()})(document.body)`);
}

// gocheck runs the Go SDK checker (conformance/browser/gocheck) against cs
// and returns its JSON output; with allowFail a failure resolves to null.
function gocheck(cs, args, { allowFail = false } = {}) {
  return new Promise((resolve, reject) => {
    execFile(need('GOCHECK_BIN'), args, { env: { ...process.env, TABLEEMU_CS: cs }, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) {
        if (allowFail) resolve(null);
        else reject(new Error(`gocheck ${args.join(' ')}: ${stderr || err.message}`));
        return;
      }
      resolve(JSON.parse(stdout));
    });
  });
}

// nonLoopbackAddress is an IPv4 address of this machine that is not
// loopback, or '' when it has none.
function nonLoopbackAddress() {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list || []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '';
}

module.exports = { startServer, launch, shot, shots, lowContrast, gocheck, nonLoopbackAddress, repoRoot };
