#!/usr/bin/env node
"use strict";
// `npx tableemu ARGS` runs the platform's tableemu binary with ARGS, with
// this process's stdin, stdout and stderr, and exits as it exits: with its
// exit code, or killed by the same signal.
//
// Signals. On Linux and macOS the binary runs in a process group of its own
// and this launcher forwards SIGINT, SIGTERM and SIGHUP to it. In the
// terminal's group it would get Ctrl-C twice (once from the terminal, once
// forwarded), and tableemu takes a second signal as "exit now, skip the
// graceful stop". For the same reason a signal that arrives again within
// REPEAT_MS of the one forwarded is dropped: where npm's `sh -c` execs
// this launcher (bash as sh, macOS), npm forwards the SIGINT it gets from
// the terminal, and Ctrl-C under npx reaches this process twice at once.
// A second Ctrl-C pressed by a person comes later and is forwarded.

const { spawn } = require("node:child_process");
const { binaryPath, BinaryNotFoundError } = require("../lib/binary.js");

const REPEAT_MS = 300;
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];

let bin;
try {
  bin = binaryPath();
} catch (err) {
  if (!(err instanceof BinaryNotFoundError)) throw err;
  process.stderr.write(err.message + "\n");
  process.exit(1);
}

const windows = process.platform === "win32";
const child = spawn(bin, process.argv.slice(2), {
  stdio: "inherit",
  // A new process group (setsid) on POSIX; on Windows detached would open a
  // new console, and the console sends Ctrl-C to every process in it.
  detached: !windows,
  windowsHide: false,
});

// The time the last signal was forwarded, whatever the signal.
let lastForward;
function forward(sig) {
  const now = Date.now();
  if (lastForward !== undefined && now - lastForward < REPEAT_MS) return;
  lastForward = now;
  try {
    child.kill(sig);
  } catch {
    // The child has exited already; its exit handler ends this process.
  }
}
const handlers = {};
for (const sig of SIGNALS) {
  handlers[sig] = () => forward(sig);
  process.on(sig, handlers[sig]);
}

// npm runs a package's bin through `sh -c` (npx, npm run, npm exec), and
// forwards SIGTERM to that shell only. Where sh is dash (Debian, Ubuntu)
// it does not exec the command, so it dies and this launcher is orphaned,
// still running the server. A new parent means whoever started us has
// gone: stop the server as if SIGTERM had come.
if (!windows) {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(watch);
      // Not if a signal was forwarded already (Ctrl-C kills sh too):
      // a second one would make the server skip its graceful stop.
      if (lastForward === undefined) forward("SIGTERM");
    }
  }, 500);
  watch.unref();
}

child.on("error", (err) => {
  const why = err.code === "ENOENT" ? "no such file" : err.code === "EACCES" ? "not executable" : err.message;
  process.stderr.write(
    `tableemu: cannot run ${bin} (${why}): ` +
      (process.env.TABLEEMU_BINARY
        ? "check TABLEEMU_BINARY"
        : "reinstall tableemu (npm ci, or delete node_modules and npm install)") +
      "\n",
  );
  process.exit(1);
});

child.on("exit", (code, signal) => {
  for (const sig of SIGNALS) process.removeListener(sig, handlers[sig]);
  if (signal) {
    // Die of the same signal, so that a shell or a supervisor sees what
    // happened to the server (128+n in a shell's $?).
    process.kill(process.pid, signal);
    // SIGKILL aside, nothing should survive that; in case it does:
    setTimeout(() => process.exit(1), 1000).unref();
    return;
  }
  process.exit(code ?? 1);
});
