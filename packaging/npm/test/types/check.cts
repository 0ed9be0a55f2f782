// Type-checked by npm/test.sh: the CommonJS entry's types (index.d.ts).
import tableemu = require("tableemu");

async function main(): Promise<void> {
  const emu = await tableemu.start();
  const cs: string = emu.connectionString;
  const pid: number | undefined = emu.process.pid;
  const { entities } = await emu.snapshot("fixtures");
  await tableemu.restore("fixtures", { connectionString: emu.connectionString });
  const { entities: loaded } = await tableemu.load("fixtures", { connectionString: emu.connectionString });
  await emu.stop();
  const cosmos = await tableemu.start({ profile: "cosmos" });
  const profile: "storage" | "cosmos" = cosmos.profile;
  await cosmos.stop();
  const path: string = tableemu.binaryPath();
  void [cs, pid, profile, path, entities, loaded];
}
void main;
