-- The creation order of entities (docs/cosmos.md, "order of query results"):
-- Azure Cosmos DB for Table answers a partition's entities in the order
-- they were created, an update keeping an entity's place. seq is that
-- order, kept by a store opened for the cosmos profile
-- (Options.CreationOrder): there every insert (an upsert that inserts,
-- too) takes the next value of entity_seq, and Open creates the index
-- entities_by_seq (tid, pk, seq, rk) that queries in creation order read;
-- an update, merge or replace leaves it (ON CONFLICT DO UPDATE does not
-- set it). A sequence rather than the partition's largest seq plus one:
-- nextval takes no lock and reads no rows, so concurrent inserts into one
-- partition do not conflict under serializable isolation. Values may have
-- gaps and are unique in the database; only their order within a
-- partition matters.
--
-- Every other write leaves it 0: entities written before this migration,
-- or under Table storage's profile, whose answers stay in key order and
-- do not read it. Queried in creation order they come first in their
-- partition, by RowKey. A column with a constant default rewrites no row.
CREATE SEQUENCE entity_seq;
ALTER TABLE entities ADD COLUMN seq bigint NOT NULL DEFAULT 0;

-- Snapshots keep it, so that a restore gives the entities their places.
ALTER TABLE snapshot_entities ADD COLUMN seq bigint NOT NULL DEFAULT 0;
