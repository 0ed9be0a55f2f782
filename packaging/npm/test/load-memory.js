"use strict";
// The memory load() takes for a large table: writes N ~1 KiB entities to
// one .jsonl file, loads it into a server start() runs (on disk, in a
// temporary directory), and prints the time and this process's peak
// memory, sampled every 20 ms. A body read whole into memory would show
// here as a peak near the file's size; docs/javascript.md records the
// figures.
//
//   node packaging/npm/test/load-memory.js [N]     (from a project where tableemu is installed, or with NODE_PATH)
//   TABLEEMU_BINARY=./tableemu node packaging/npm/test/load-memory.js 300000

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const tableemu = require("tableemu");

async function main() {
  const n = Number(process.argv[2] ?? 300000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tableemu-load-memory-"));
  try {
    const file = path.join(dir, "Big.jsonl");
    const out = fs.createWriteStream(file);
    const pad = "x".repeat(900);
    for (let i = 0; i < n; i++) {
      const line = `{"PartitionKey":"p${String(i % 100).padStart(3, "0")}","RowKey":"${String(i).padStart(8, "0")}","n":${i},"s":"${pad}"}\n`;
      if (!out.write(line)) await new Promise((r) => out.once("drain", r));
    }
    await new Promise((r) => out.end(r));
    const size = fs.statSync(file).size;
    const emu = await tableemu.start({ location: path.join(dir, "data") });
    try {
      const before = process.memoryUsage();
      const peak = { rss: before.rss, arrayBuffers: before.arrayBuffers };
      const timer = setInterval(() => {
        const m = process.memoryUsage();
        peak.rss = Math.max(peak.rss, m.rss);
        peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers);
      }, 20);
      const t0 = process.hrtime.bigint();
      const got = await emu.load(file);
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      clearInterval(timer);
      const mib = (b) => `${(b / 1048576).toFixed(0)} MiB`;
      console.log(
        `load of ${got.entities} entities (${mib(size)} file): ${secs.toFixed(1)} s; ` +
          `peak RSS ${mib(peak.rss)} (${mib(before.rss)} before), peak arrayBuffers ${mib(peak.arrayBuffers)}`,
      );
    } finally {
      await emu.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
