-- Tables of every account. Names are unique per account without regard to
-- case (docs/protocol.md 1.4), so lookups go through lname; name keeps the case
-- used at creation for listing.
CREATE TABLE tables (
	id      INTEGER PRIMARY KEY,
	account TEXT    NOT NULL,
	name    TEXT    NOT NULL,
	lname   TEXT    NOT NULL,
	created INTEGER NOT NULL  -- ticks
);
CREATE UNIQUE INDEX tables_by_name ON tables (account, lname);

-- Entities, clustered by (table, PartitionKey, RowKey): point reads, key
-- ranges and partition scans are primary-key lookups, and the primary key
-- order is the service's result order. Keys are stored in the sort form of
-- keys.go so that byte order is UTF-16 ordinal order. props is a JSONB
-- object of "Name$<type letter>" -> value (see props.go).
CREATE TABLE entities (
	tid   INTEGER NOT NULL,
	pk    TEXT    NOT NULL,
	rk    TEXT    NOT NULL,
	ts    INTEGER NOT NULL,  -- Timestamp in ticks; the ETag derives from it
	props BLOB    NOT NULL,
	PRIMARY KEY (tid, pk, rk)
) WITHOUT ROWID;
