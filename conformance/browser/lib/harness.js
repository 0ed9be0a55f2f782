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

module.exports = { startServer, launch, shot, shots, gocheck, nonLoopbackAddress, repoRoot };
