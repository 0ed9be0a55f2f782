// Types for the ESM entry (lib/index.mjs): the same API as index.d.ts.
export * from "./index.js";
import tableemu from "./index.js";
export default tableemu;
