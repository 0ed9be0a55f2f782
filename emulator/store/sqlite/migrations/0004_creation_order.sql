-- The creation order of entities (docs/cosmos.md, "order of query results"):
-- Azure Cosmos DB for Table answers a partition's entities in the order
-- they were created, an update keeping an entity's place. seq is that
-- order within a partition, kept by a store opened for the cosmos profile
-- (Options.CreationOrder): there an insert, or an upsert that inserts,
-- takes the partition's largest seq plus one, through the index
-- entities_by_seq (tid, pk, seq), which Open creates then; an update,
-- merge or replace leaves it. Only its order matters, never its value.
--
-- Every other write leaves it 0: entities written before this migration,
-- or under Table storage's profile, whose answers stay in key order and
-- do not read it. Queried in creation order they come first in their
-- partition, by RowKey (pk, seq, rk), the order Table storage answers
-- them in. Adding a column with a constant default rewrites no row.
ALTER TABLE entities ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;

-- Snapshots keep it, so that a restore gives the entities their places.
ALTER TABLE snapshot_entities ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
