"use strict";
// Preloaded by packaging/npm/test.sh (NODE_OPTIONS=--require) to make the launcher
// believe it runs on FAKE_PLATFORM/FAKE_ARCH: the way to see its message
// for a platform this machine is not.
Object.defineProperty(process, "platform", { value: process.env.FAKE_PLATFORM });
Object.defineProperty(process, "arch", { value: process.env.FAKE_ARCH });
