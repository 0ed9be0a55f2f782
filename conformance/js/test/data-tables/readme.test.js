"use strict";
// README.md's JavaScript snippet ("Connect"), run as a user runs it: an ES
// module next to this suite's node_modules, `node orders.mjs`, with
// AZURE_TABLES_CONNECTION_STRING set to this file's server, twice (the
// second run finds the table there). It must print what the README says
// every snippet prints, and take the SDK version the README names.

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const h = require("../../lib/harness");

let tg;
before(async () => (tg = await h.target()));
after(() => tg && tg.stop());

// connect returns README.md's "## Connect" section.
function connect() {
  const readme = fs.readFileSync(path.join(h.repoRoot, "README.md"), "utf8");
  const start = readme.indexOf("\n## Connect\n");
  assert.ok(start >= 0, "README.md has no Connect section");
  const rest = readme.slice(start + 1);
  const end = rest.indexOf("\n## ", 4);
  return end < 0 ? rest : rest.slice(0, end);
}

describe("README", () => {
  it("the JavaScript snippet prints what the README says, twice", { skip: h.ownServerOnly() }, () => {
    const sec = connect();
    const blocks = [...sec.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
    assert.equal(blocks.length, 1, "want one ```js block");
    const prints = /prints `([^`]+)`/.exec(sec);
    assert.ok(prints, "the section does not say what the snippets print");
    const version = /`npm i @azure\/data-tables@([0-9.]+)`/.exec(sec);
    assert.ok(version, "the section does not name the SDK version");
    assert.equal(require("@azure/data-tables/package.json").version, version[1]);

    // Beside node_modules, so the import resolves as in a user's project.
    const file = path.join(__dirname, "..", "..", `readme-${process.pid}.mjs`);
    fs.writeFileSync(file, blocks[0]);
    try {
      for (let run = 1; run <= 2; run++) {
        const out = execFileSync(process.execPath, [file], {
          env: { ...process.env, AZURE_TABLES_CONNECTION_STRING: tg.connectionString },
          encoding: "utf8",
        });
        assert.equal(out, prints[1] + "\n", `run ${run}`);
      }
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});
