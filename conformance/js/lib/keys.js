"use strict";
// Keys both suites round-trip: every character class the service allows
// that a client must escape somewhere (URL path, OData literal, JSON,
// multipart body), and the ones it forbids (docs/protocol.md 1.3, 1.5).

const awkward = [
  "",
  "'",
  "''",
  "a'b",
  "it's a 'key'",
  "a b",
  " leading and trailing ",
  "%",
  "%25",
  "%2F",
  "+",
  "a+b=c&d",
  ":@$,;=",
  "(",
  ")",
  "(PartitionKey='x',RowKey='y')",
  "!*~",
  '"',
  "<>[]{}|^`",
  "é",
  "日本語",
  "😀",
  "\u00a0",
  "\ufeff",
  ".",
  "..",
  "x".repeat(1024),
];

// Forbidden anywhere in a key (docs/protocol.md 1.5).
const forbidden = ["a/b", "a\\b", "a#b", "a?b", "a\tb", "a\nb", "\u0000", "\u007f", "\u0085", "\u009f"];

function label(k) {
  // Invisible characters (controls, format, separators) as \u escapes.
  const s = JSON.stringify(k).replace(/[\p{C}\p{Z}]/gu, (c) => (c === " " ? c : "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")));
  return s.length > 24 ? s.slice(0, 20) + '…"' : s;
}

module.exports = { awkward, forbidden, label };
