"use strict";
// Writes the code blocks of a Markdown file out as files, so that
// packaging/npm/test.sh runs the package README's snippets as they are written.
//
//   node packaging/npm/test/snippets.js README.md DIR
//
// A block is taken when the line before its opening fence is
// `<!-- packaging/npm/test.sh: GROUP -->`. A js block goes to DIR/GROUP/FILE, FILE
// being its first line's comment (`// vitest.config.mjs`); any other block
// to DIR/GROUP.txt, or to DIR/GROUP/FILE when the marker names the file
// (`<!-- packaging/npm/test.sh: GROUP fixtures/people.jsonl -->`: a fixture
// file, which has no comment to name it). Prints "GROUP/FILE" for each;
// fails if it finds none.

const fs = require("node:fs");
const path = require("node:path");

const [readme, dir] = process.argv.slice(2);
const lines = fs.readFileSync(readme, "utf8").split("\n");
const marker = /^<!-- packaging\/npm\/test\.sh: ([a-z]+)(?: ([\w./-]+))? -->$/;
let n = 0;
for (let i = 0; i < lines.length; i++) {
  const m = marker.exec(lines[i]);
  if (!m) continue;
  const fence = /^```(\w*)$/.exec(lines[i + 1] ?? "");
  if (!fence) throw new Error(`${readme}:${i + 1}: the marker is not followed by a code fence`);
  const end = lines.indexOf("```", i + 2);
  if (end < 0) throw new Error(`${readme}:${i + 2}: the code block does not end`);
  const body = lines.slice(i + 2, end);
  const group = m[1];
  let file;
  if (m[2]) {
    if (m[2].split("/").some((p) => p === ".." || p === "")) throw new Error(`${readme}:${i + 1}: ${m[2]} is not a path inside the group`);
    file = path.join(group, m[2]);
  } else if (fence[1] === "js") {
    const name = /^\/\/ (\S+)$/.exec(body[0]);
    if (!name) throw new Error(`${readme}:${i + 3}: a js block starts with "// FILE"`);
    file = path.join(group, name[1]);
  } else {
    file = `${group}.txt`;
  }
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), body.join("\n") + "\n");
  console.log(file);
  n++;
  i = end;
}
if (n === 0) throw new Error(`${readme}: no <!-- packaging/npm/test.sh: GROUP --> blocks`);
