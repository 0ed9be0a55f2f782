-- Stored access policies of a table (Set Table ACL, docs/protocol.md 3.4), in
-- the order they were set; at most five per table (the handler checks).
-- Deleting a table deletes its policies through the foreign key (every
-- connection enables foreign_keys), so a new table that reuses the id never
-- inherits them. start and expiry are RFC 3339 UTC text (the range runs to
-- year 9999, past what Unix nanoseconds hold); NULL means the policy leaves
-- the field to the SAS.
CREATE TABLE table_acl (
	tid        INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
	pos        INTEGER NOT NULL,
	id         TEXT    NOT NULL,
	start      TEXT,
	expiry     TEXT,
	permission TEXT,
	PRIMARY KEY (tid, pos)
) WITHOUT ROWID;

-- Table service properties of each account (Set Table Service Properties,
-- docs/protocol.md 3.5), kept as the canonical XML document the service returns;
-- no row means the defaults of a new account.
CREATE TABLE service_properties (
	account TEXT NOT NULL PRIMARY KEY,
	xml     TEXT NOT NULL
) WITHOUT ROWID;
