// Types for the tableemu test helper (lib/index.js). README.md shows it in use.
/// <reference types="node" />

import type { ChildProcess } from "node:child_process";

export interface StartOptions {
  /** Keep everything in memory (--inMemoryPersistence). Default: true unless `location` is given;
   * false without a location keeps the database in the current directory, as Azurite does. */
  inMemory?: boolean;
  /** Keep the database, tableemu.sqlite, in this directory (--location). */
  location?: string;
  /** Port to listen on (--tablePort). Default 0: a free port, read back from the server. */
  port?: number;
  /** Address to listen on (--tableHost). Default 127.0.0.1. */
  host?: string;
  /** More command-line arguments, Azurite's flags (for example ["--loose"]). */
  args?: string[];
  /** Pass --silent (no access log). Default true. */
  silent?: boolean;
  /** Extra environment for the server, for example { AZURITE_ACCOUNTS: "acct:a2V5" }. TABLEEMU_PROFILE
   * here, or in this process's environment, chooses the profile when the `profile` option does not. */
  env?: Record<string, string>;
  /** The service tableemu answers as (--profile): "storage", Azure Table storage (the default), or
   * "cosmos", Azure Cosmos DB for Table (docs/cosmos.md). Default: $TABLEEMU_PROFILE, else "storage".
   * Under "cosmos" the endpoint and connection string name `localhost`, and the account, unless
   * AZURITE_ACCOUNTS is set, is "devcosmosaccount1" (the development key): what puts
   * @azure/data-tables in its Cosmos mode. The port is still a free one unless `port` is given. */
  profile?: "storage" | "cosmos";
  /** Milliseconds to wait for the readiness line. Default 30000. */
  timeout?: number;
  /** The binary to run. Default: $TABLEEMU_BINARY, else the one in this platform's @tableemu package. */
  binary?: string;
  /** Called with every line the server prints once it is ready (and with stderr lines before).
   * Default: stderr lines (warnings, errors) go to process.stderr, stdout lines are dropped. */
  onLine?: (line: string, stream: "stdout" | "stderr") => void;
}

export interface SetupOptions extends StartOptions {
  /** The environment variable that gets the connection string. Default AZURE_TABLES_CONNECTION_STRING. */
  envName?: string;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Emulator {
  /** http://127.0.0.1:PORT */
  url: string;
  /** The first account's table endpoint, http://127.0.0.1:PORT/devstoreaccount1
   * (under the cosmos profile http://localhost:PORT/devcosmosaccount1). */
  endpoint: string;
  /** The first account's connection string, for TableClient.fromConnectionString. */
  connectionString: string;
  accountName: string;
  accountKey: string;
  port: number;
  /** The service the server answers as, read from its first line: "storage" or "cosmos". */
  profile: "storage" | "cosmos";
  /** The server's process. */
  process: ChildProcess;
  /** SIGTERM, then wait for the exit (SIGKILL after `graceMs`, default 10000). Exit code 0 is a clean stop. */
  stop(graceMs?: number): Promise<Exit>;
  /** Return the first account to the state of a fresh server: no tables, default service properties.
   * Its snapshots stay. Atomic: a request running meanwhile sees before or after. See docs/isolation.md. */
  reset(): Promise<ResetResult>;
  /** Save the account's state (tables, entities, policies, service properties) as `name`, replacing one of that name. */
  snapshot(name: string): Promise<SnapshotInfo>;
  /** Put the account back as snapshot `name` saved it, in one transaction. */
  restore(name: string): Promise<SnapshotInfo>;
  /** Delete snapshot `name`. */
  deleteSnapshot(name: string): Promise<void>;
  /** The account's snapshots, by name. */
  snapshots(): Promise<SnapshotInfo[]>;
  /** Load fixtures from files into the first account: a directory of `<table>.jsonl` files (with the
   * manifest `tableemu.json` that `tableemu export` writes, if any) or one `FILE.jsonl`. See load(). */
  load(path: string, options?: { mode?: LoadMode }): Promise<LoadResult>;
}

/** A saved snapshot of an account. */
export interface SnapshotInfo {
  account: string;
  name: string;
  /** When it was saved, RFC 3339 UTC. */
  created: string;
  tables: number;
  entities: number;
}

export interface ResetResult {
  account: string;
  tablesDeleted: number;
}

/** Which server and account the module-level reset(), snapshot() and restore() act on. */
export interface IsolationOptions {
  /** Default: process.env[envName], which setup() sets. */
  connectionString?: string;
  /** Default AZURE_TABLES_CONNECTION_STRING. */
  envName?: string;
}

/** What load() does with a table that exists: "replace" (the default) deletes it and creates it again from
 * its file; "merge" writes the file's entities over those with the same keys; "fail" refuses it (409 TableAlreadyExists). */
export type LoadMode = "replace" | "merge" | "fail";

export interface LoadOptions extends IsolationOptions {
  /** Default "replace": loading the same fixtures again gives the tables exactly as the files say. */
  mode?: LoadMode;
}

export interface LoadResult {
  /** Each table loaded, in the order loaded, with its number of entities. */
  tables: { table: string; entities: number }[];
  /** All the entities loaded. */
  entities: number;
}

/** Start a server; resolves once it accepts connections, rejects with its error line if it exits first or times out. */
export function start(options?: StartOptions): Promise<Emulator>;

/** Start a server for a whole test run and set process.env[envName] to its connection string.
 * Resolves to a function that stops it (vitest globalSetup's teardown). */
export function setup(options?: SetupOptions): Promise<() => Promise<void>>;

/** Stop every server setup() started in this process (jest globalTeardown, mochaGlobalTeardown). */
export function teardown(): Promise<void>;

/** reset() for the account of a connection string: by default the one setup() put in the environment,
 * so that test files of a runner's workers can call it. Rejects with a TableemuError (status, code) on a refusal. */
export function reset(options?: IsolationOptions): Promise<ResetResult>;
export function snapshot(name: string, options?: IsolationOptions): Promise<SnapshotInfo>;
export function restore(name: string, options?: IsolationOptions): Promise<SnapshotInfo>;
export function deleteSnapshot(name: string, options?: IsolationOptions): Promise<void>;
export function snapshots(options?: IsolationOptions): Promise<SnapshotInfo[]>;

/** Load fixtures from files into the account of a connection string (by default the one setup() put in the
 * environment): `path` is a directory of `<table>.jsonl` files, one entity a line as `tableemu export` writes
 * them, with an optional manifest `tableemu.json` (its tables' stored access policies and the account's service
 * properties are applied too), or one `FILE.jsonl` (the table named after the file). Each table is one request,
 * streamed from its file, and written all or nothing. Rejects with a TableemuError (status, code) on a refusal,
 * which names the file and line of a bad entity. See docs/isolation.md. */
export function load(path: string, options?: LoadOptions): Promise<LoadResult>;

/** The path of the binary start() and `npx tableemu` run; throws BinaryNotFoundError (one line) on an unsupported platform. */
export function binaryPath(): string;

export class BinaryNotFoundError extends Error {}
