"use strict";
// Which tableemu binary to run: the one in the platform package npm
// installed next to this one, or $TABLEEMU_BINARY.
//
// The binaries come in one package per platform (@tableemu/linux-x64, ...),
// each with "os" and "cpu" fields; this package lists them all as
// optionalDependencies at its own exact version, so npm installs only the
// one that fits and nothing is downloaded or run at install time (the way
// esbuild and Biome ship their native binaries). packaging/npm/build.sh makes them.

const path = require("node:path");

// process.platform-process.arch → the package that holds the binary.
// packaging/npm/build.sh makes exactly these; keep the two lists in step.
const PACKAGES = {
  "linux-x64": "@tableemu/linux-x64",
  "linux-arm64": "@tableemu/linux-arm64",
  "darwin-x64": "@tableemu/darwin-x64",
  "darwin-arm64": "@tableemu/darwin-arm64",
  "win32-x64": "@tableemu/win32-x64",
};

// The ways to get tableemu that do not go through npm, named in every
// failure so that it says what to do.
const ALTERNATIVES =
  "use a release binary (https://github.com/tableemu/tableemu/releases), " +
  "`go install github.com/tableemu/tableemu/cmd/tableemu@latest`, " +
  "or the container image ghcr.io/tableemu/tableemu (https://github.com/tableemu/tableemu/blob/main/docs/containers.md); " +
  "TABLEEMU_BINARY=path makes this package run that binary";

// A failure to find the binary: one line for the user, no stack trace.
class BinaryNotFoundError extends Error {
  constructor(message) {
    super(message);
    this.name = "BinaryNotFoundError";
  }
}

// binaryPath returns the path of the tableemu binary for this platform, or
// throws a BinaryNotFoundError whose message is one line that names the
// platform and the alternatives. It checks nothing but that a file is there:
// running it is the real check.
function binaryPath(env = process.env, platform = process.platform, arch = process.arch) {
  if (env.TABLEEMU_BINARY) return env.TABLEEMU_BINARY;
  const key = `${platform}-${arch}`;
  const pkg = PACKAGES[key];
  if (!pkg) {
    throw new BinaryNotFoundError(
      `tableemu: the npm package has no binary for ${platform}/${arch} ` +
        `(it has ${Object.keys(PACKAGES).join(", ")}); ${ALTERNATIVES}`,
    );
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    // npm skips optional dependencies with --omit=optional (or
    // --no-optional), and a package-lock.json written on another platform
    // by an older npm may lack this platform's entry (npm/cli#4828).
    throw new BinaryNotFoundError(
      `tableemu: ${pkg}, the binary for ${platform}/${arch}, is not installed ` +
        `(optional dependencies omitted, or a lock file from another platform?): ` +
        `reinstall tableemu without --omit=optional (delete node_modules and package-lock.json if that does not help), or ${ALTERNATIVES}`,
    );
  }
  return path.join(dir, "bin", platform === "win32" ? "tableemu.exe" : "tableemu");
}

module.exports = { binaryPath, BinaryNotFoundError, PACKAGES };
