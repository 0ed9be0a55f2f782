-- Reset and snapshots (reset.go, snapshot.go, docs/isolation.md).
--
-- A reset or a restore retires tables instead of deleting their entities
-- in the transaction: a retired table keeps its row, so that its id is not
-- handed out again while entities remain under it, but moves to the
-- account '' (no account has that name) under lname '#<id>', where no
-- request can reach it; the store deletes its entities afterwards, a chunk
-- per transaction (gc.go).
--
-- base is the snapshot table (snapshot_tables.id) this table's entities
-- descend from: set when the table is saved into a snapshot or restored
-- from one, NULL otherwise. While it is set, every entity write to the
-- table records its keys in entity_changes, so that the live table equals
-- its base except at the keys listed there, and a restore from that
-- snapshot rewrites only those.
ALTER TABLE tables ADD COLUMN base INTEGER;

CREATE TABLE entity_changes (
	tid INTEGER NOT NULL,
	pk  TEXT    NOT NULL,  -- the stored (sort) form, as in entities
	rk  TEXT    NOT NULL,
	PRIMARY KEY (tid, pk, rk)
) WITHOUT ROWID;

-- Snapshots of an account, by name (exact, case-sensitive). AUTOINCREMENT
-- so that an id is never reused: tables.base must never come to name
-- another snapshot's table after the first is deleted. properties is the
-- account's service properties document (NULL: the defaults).
CREATE TABLE snapshots (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	account    TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	created    INTEGER NOT NULL,  -- ticks
	properties TEXT,
	tables     INTEGER NOT NULL DEFAULT 0,
	entities   INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX snapshots_by_name ON snapshots (account, name);

-- The tables of a snapshot. sid is NULL once the snapshot is deleted or
-- replaced: the table is then garbage, collected like a retired table.
CREATE TABLE snapshot_tables (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	sid      INTEGER,
	name     TEXT    NOT NULL,
	created  INTEGER NOT NULL,
	entities INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX snapshot_tables_by_snapshot ON snapshot_tables (sid);

CREATE TABLE snapshot_acl (
	stid       INTEGER NOT NULL,
	pos        INTEGER NOT NULL,
	id         TEXT    NOT NULL,
	start      TEXT,
	expiry     TEXT,
	permission TEXT,
	PRIMARY KEY (stid, pos)
) WITHOUT ROWID;

-- Entities as they were, in the layout of entities (keys in sort form,
-- JSONB properties, the Timestamp kept: a restored entity has its ETag).
CREATE TABLE snapshot_entities (
	stid  INTEGER NOT NULL,
	pk    TEXT    NOT NULL,
	rk    TEXT    NOT NULL,
	ts    INTEGER NOT NULL,
	props BLOB    NOT NULL,
	PRIMARY KEY (stid, pk, rk)
) WITHOUT ROWID;
