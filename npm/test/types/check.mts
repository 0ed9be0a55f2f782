// Type-checked by npm/test.sh (tsc --noEmit, module nodenext): the ESM
// entry's types (index.d.mts) as a TypeScript user imports them.
import { start, setup, teardown, type Emulator, type Exit } from "tableemu";
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
// @ts-expect-error: reset() is not there yet (issue 27)
emu.reset();
export { url, port, exit };
