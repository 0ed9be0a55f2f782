#!/usr/bin/env bash
# packaging/npm/build.sh DIST OUT — the npm packages, from the release binaries.
#
#   VERSION=v1.2.3 packaging/release/build.sh dist && VERSION=v1.2.3 packaging/npm/build.sh dist out
#
# DIST is packaging/release/build.sh's output (five binaries and SHA256SUMS), built
# with the same VERSION (a tag: v1.2.3, v1.2.3-rc.1; default v0.0.0-dev).
# The npm version is the tag without its v. Writes to OUT, with `npm pack`:
#
#   tableemu-X.tgz                the launcher (packaging/npm/tableemu): `npx tableemu`
#                                 and the test helper
#   tableemu-linux-x64-X.tgz      @tableemu/linux-x64: bin/tableemu
#   tableemu-linux-arm64-X.tgz    @tableemu/linux-arm64
#   tableemu-darwin-x64-X.tgz     @tableemu/darwin-x64
#   tableemu-darwin-arm64-X.tgz   @tableemu/darwin-arm64
#   tableemu-win32-x64-X.tgz      @tableemu/win32-x64: bin/tableemu.exe
#
# Each platform package has "os" and "cpu" and no scripts; the launcher
# lists all five as optionalDependencies at exactly X, so npm installs the
# one that fits and runs nothing at install time. Then it checks what it
# packed: every tarball's binary is byte-for-byte DIST's, no package.json
# has an install script and every version is X. npm pack already fixes every mtime (1985-10-26), owner and
# file order, and gzips at level 9, but keeps each file's mode: this script
# sets the modes (0644, binaries 0755), so the umask does not leak in:
# two runs on the same DIST give the same bytes (packaging/npm/test.sh checks it).
# Publishing: the five platform packages first, then the launcher, so
# that no published launcher names a version that is not there yet.
set -euo pipefail
dist=${1:?usage: packaging/npm/build.sh DIST OUT}
out=${2:?usage: packaging/npm/build.sh DIST OUT}
here=$(cd "$(dirname "$0")" && pwd)

version=${VERSION:-v0.0.0-dev}
if ! printf '%s\n' "$version" | grep -Eq '^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$'; then
  echo "packaging/npm/build.sh: VERSION=$version: want the tag packaging/release/build.sh was given, like v1.2.3" >&2
  exit 2
fi
npmver=${version#v}
command -v npm >/dev/null || { echo "packaging/npm/build.sh: npm is not installed" >&2; exit 1; }

dist=$(cd "$dist" && pwd)
(cd "$dist" && sha256sum --quiet -c SHA256SUMS) || {
  echo "packaging/npm/build.sh: $dist does not match its SHA256SUMS: rebuild it with packaging/release/build.sh" >&2
  exit 1
}
# The binary that runs here must say the same version (a DIST built with
# another VERSION would ship under the wrong number).
host=$dist/tableemu-$(node -p '({ win32: "windows" })[process.platform] ?? process.platform')-$(node -p '({ x64: "amd64" })[process.arch] ?? process.arch')
if [ -x "$host" ]; then
  got=$("$host" --version | head -1)
  if [ "$got" != "tableemu $version" ]; then
    echo "packaging/npm/build.sh: $host says '$got', not 'tableemu $version': build DIST and the packages with the same VERSION" >&2
    exit 1
  fi
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# npm platform/cpu → Go's, as in packaging/release/build.sh's file names.
platforms="linux-x64:linux-amd64 linux-arm64:linux-arm64 darwin-x64:darwin-amd64 darwin-arm64:darwin-arm64 win32-x64:windows-amd64"

# The launcher: packaging/npm/tableemu's published files, version stamped.
mkdir -p "$work/tableemu"
(cd "$here/tableemu" && cp -R package.json README.md index.d.ts index.d.mts bin lib "$work/tableemu/")
node - "$work/tableemu/package.json" "$npmver" <<'EOF'
const fs = require("node:fs");
const [file, version] = process.argv.slice(2);
const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
pkg.version = version;
for (const name of Object.keys(pkg.optionalDependencies)) pkg.optionalDependencies[name] = version;
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
EOF

for p in $platforms; do
  npmplat=${p%%:*} goplat=${p#*:}
  os=${npmplat%-*} cpu=${npmplat#*-}
  exe=tableemu src=tableemu-$goplat
  [ "$os" = win32 ] && exe=tableemu.exe src=$src.exe
  dir=$work/$npmplat
  mkdir -p "$dir/bin"
  cp "$dist/$src" "$dir/bin/$exe"
  node - "$dir" "$npmver" "$os" "$cpu" "$exe" <<'EOF'
const fs = require("node:fs");
const path = require("node:path");
const [dir, version, os, cpu, exe] = process.argv.slice(2);
const name = `@tableemu/${os}-${cpu}`;
const pkg = {
  name,
  version,
  description: `The ${os}/${cpu} binary of tableemu, the Azure Table storage emulator; install "tableemu", which runs it`,
  license: "MIT",
  homepage: "https://github.com/tableemu/tableemu#readme",
  repository: { type: "git", url: "git+https://github.com/tableemu/tableemu.git", directory: "npm" },
  os: [os],
  cpu: [cpu],
  files: [`bin/${exe}`],
  // Yarn PnP: a binary must be on disk to be run, not in a zip.
  preferUnplugged: true,
};
fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
fs.writeFileSync(
  path.join(dir, "README.md"),
  `# ${name}\n\nThe ${os}/${cpu} binary of [tableemu](https://github.com/tableemu/tableemu), ` +
    `an emulator of the Azure Table storage service.\n\n` +
    `Do not install this package yourself: install \`tableemu\` (\`npm i -D tableemu\`), ` +
    `which depends on it for ${os}/${cpu} only and runs \`bin/${exe}\` (\`npx tableemu\`).\n`,
);
EOF
done

# Modes, whatever the umask: directories and the binaries 0755, the rest 0644.
find "$work" -type d -exec chmod 0755 {} +
find "$work" -type f -exec chmod 0644 {} +
chmod 0755 "$work"/*/bin/tableemu "$work"/*/bin/tableemu.exe "$work/tableemu/bin/tableemu.js"

pack() { (cd "$1" && npm pack --silent --pack-destination "$2" >/dev/null); }
for d in tableemu $(for p in $platforms; do echo "${p%%:*}"; done); do
  pack "$work/$d" "$out"
done

# The checks: what is in the tarballs, not what was in the directory.
fail() { echo "packaging/npm/build.sh: $*" >&2; exit 1; }
chk=$work/check
for p in $platforms; do
  npmplat=${p%%:*} goplat=${p#*:}
  tgz=$out/tableemu-$npmplat-$npmver.tgz
  exe=tableemu src=tableemu-$goplat
  case $npmplat in win32-*) exe=tableemu.exe src=$src.exe ;; esac
  rm -rf "$chk" && mkdir -p "$chk" && tar -xzf "$tgz" -C "$chk"
  cmp -s "$chk/package/bin/$exe" "$dist/$src" || fail "$tgz: bin/$exe differs from $dist/$src"
  mode=$(tar -tvzf "$tgz" "package/bin/$exe" | cut -c1-10)
  [ "$mode" = -rwxr-xr-x ] || fail "$tgz: bin/$exe has mode $mode, want -rwxr-xr-x"
done
rm -rf "$chk" && mkdir -p "$chk"
for tgz in "$out"/tableemu-*"$npmver".tgz; do
  tar -xzOf "$tgz" package/package.json >"$chk/$(basename "$tgz").json"
done
node - "$npmver" "$chk"/*.json <<'EOF'
const fs = require("node:fs");
const [version, ...files] = process.argv.slice(2);
const fail = (m) => { console.error("packaging/npm/build.sh: " + m); process.exit(1); };
const pkgs = files.map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
if (pkgs.length !== 6) fail(`want 6 packages, packed ${pkgs.length}`);
for (const p of pkgs) {
  if (p.version !== version) fail(`${p.name} has version ${p.version}, want ${version}`);
  for (const s of ["preinstall", "install", "postinstall", "prepare"]) {
    if (p.scripts && p.scripts[s]) fail(`${p.name} has a ${s} script; nothing may run at install time`);
  }
}
const launcher = pkgs.find((p) => p.name === "tableemu");
const platforms = pkgs.filter((p) => p.name.startsWith("@tableemu/"));
const deps = launcher.optionalDependencies;
if (Object.keys(deps).sort().join() !== platforms.map((p) => p.name).sort().join()) {
  fail(`the launcher's optionalDependencies ${Object.keys(deps)} are not the platform packages`);
}
for (const p of platforms) {
  if (deps[p.name] !== version) fail(`the launcher wants ${p.name}@${deps[p.name]}, want exactly ${version}`);
  if (p.os.length !== 1 || p.cpu.length !== 1) fail(`${p.name}: want one os and one cpu`);
}
EOF
(cd "$out" && ls -l tableemu-*"$npmver".tgz | awk '{printf "%10d  %s\n", $5, $9}')
echo "packaging/npm/build.sh: 6 packages, version $npmver, in $out"
