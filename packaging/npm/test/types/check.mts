// Type-checked by packaging/npm/test.sh (tsc --noEmit, module nodenext): the ESM
// entry's types (index.d.mts) as a TypeScript user imports them.
import { start, setup, teardown, reset, snapshot, restore, snapshots, load, type Emulator, type Exit, type LoadResult, type SnapshotInfo } from "tableemu";
import tableemu from "tableemu";

const emu: Emulator = await start({ inMemory: true, port: 0, args: ["--loose"], silent: true, timeout: 5000 });
const url: string = emu.url;
const port: number = emu.port;
const exit: Exit = await emu.stop(1000);
const stopAll: () => Promise<void> = await setup({ envName: "X", location: "/tmp/x" });
await stopAll();
await teardown();
await tableemu.start({ onLine: (line: string, stream: "stdout" | "stderr") => void [line, stream] });
// @ts-expect-error: port is a number
await start({ port: "10002" });
const saved: SnapshotInfo = await emu.snapshot("fixtures");
const back: SnapshotInfo = await emu.restore("fixtures");
const removed: number = (await emu.reset()).tablesDeleted;
const names: string[] = (await emu.snapshots()).map((s) => s.name);
await emu.deleteSnapshot("fixtures");
await reset({ connectionString: emu.connectionString });
await snapshot("s", { envName: "X" });
await restore("s");
const all: SnapshotInfo[] = await snapshots();
// @ts-expect-error: a snapshot has a name
await emu.snapshot();
const loaded: LoadResult = await emu.load("fixtures", { mode: "merge" });
const count: number = (await load("fixtures/orders.jsonl", { envName: "X", mode: "fail" })).tables[0].entities;
// @ts-expect-error: the modes are replace, merge and fail
await load("fixtures", { mode: "overwrite" });
const cosmos: Emulator = await start({ profile: "cosmos" });
const profile: "storage" | "cosmos" = cosmos.profile;
// @ts-expect-error: the profiles are storage and cosmos
await start({ profile: "table" });
void [saved, back, removed, names, all, loaded, count, profile];
export { url, port, exit };
