"use strict";
// A package registry on 127.0.0.1 that serves only the tarballs in one
// directory, for packaging/npm/test.sh: `npm i tableemu --registry URL` then goes
// through npm's real optionalDependencies path (fetch every platform
// package's metadata, install the one whose os/cpu fit, skip the rest)
// without publishing anything and without the public registry answering
// for the @tableemu names.
//
//   node packaging/npm/test/registry.js DIR LOG   prints its URL on stdout, appends
//                                       "GET path status" lines to LOG
//
// It answers GET /NAME (the packument: every version in DIR, dist-tag
// latest the highest one) and GET /NAME/-/FILE.tgz (the tarball), 404 for
// anything else. Stops on SIGTERM.

const crypto = require("node:crypto");
const fs = require("node:fs");
const http = require("node:http");
const path = require("node:path");
const { execFileSync } = require("node:child_process");

const [dir, log] = process.argv.slice(2);
if (!dir || !log) {
  console.error("usage: node packaging/npm/test/registry.js DIR LOG");
  process.exit(2);
}

// name → { versions: { v: manifest }, files: { file: path } }
const packages = {};
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".tgz"))) {
  const full = path.join(dir, file);
  const manifest = JSON.parse(execFileSync("tar", ["-xzOf", full, "package/package.json"], { encoding: "utf8" }));
  const bytes = fs.readFileSync(full);
  const p = (packages[manifest.name] ??= { versions: {}, files: {} });
  p.files[file] = full;
  p.versions[manifest.version] = {
    ...manifest,
    dist: {
      integrity: "sha512-" + crypto.createHash("sha512").update(bytes).digest("base64"),
      shasum: crypto.createHash("sha1").update(bytes).digest("hex"),
      file, // replaced by the full tarball URL below, once the port is known
    },
  };
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://x");
  const parts = decodeURIComponent(url.pathname).slice(1).split("/-/");
  const p = packages[parts[0]];
  let status = 404;
  if (req.method === "GET" && p && parts.length === 1) {
    status = 200;
    const base = `http://127.0.0.1:${server.address().port}/${parts[0]}/-/`;
    const versions = {};
    for (const [v, m] of Object.entries(p.versions)) {
      versions[v] = { ...m, dist: { integrity: m.dist.integrity, shasum: m.dist.shasum, tarball: base + m.dist.file } };
    }
    // Insertion order is not version order; npm needs a "latest" tag.
    const latest = Object.keys(versions).sort((a, b) => a.localeCompare(b, "en", { numeric: true })).pop();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ name: parts[0], "dist-tags": { latest }, versions }));
  } else if (req.method === "GET" && p && parts.length === 2 && p.files[parts[1]]) {
    status = 200;
    res.writeHead(200, { "content-type": "application/octet-stream" });
    fs.createReadStream(p.files[parts[1]]).pipe(res);
  } else {
    res.writeHead(404, { "content-type": "application/json" });
    res.end('{"error":"not found"}');
  }
  fs.appendFileSync(log, `${req.method} ${decodeURIComponent(url.pathname)} ${status}\n`);
});
server.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${server.address().port}/`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
