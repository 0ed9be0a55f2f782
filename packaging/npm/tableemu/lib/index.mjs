// The ESM entry: the CommonJS module itself, re-exported, so that `import`
// and `require` share one copy (one list of servers for setup/teardown).
import cjs from "./index.js";

export const { start, setup, teardown, reset, snapshot, restore, deleteSnapshot, snapshots, load, binaryPath, BinaryNotFoundError } = cjs;
export default cjs;
