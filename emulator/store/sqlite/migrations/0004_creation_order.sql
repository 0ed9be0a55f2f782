-- The creation order of entities (docs/cosmos.md, "order of query results"):
-- Azure Cosmos DB for Table answers a partition's entities in the order
-- they were created, an update keeping an entity's place. seq is that
-- order within a partition: an insert (or an upsert that inserts) takes
-- the partition's largest seq plus one, through entities_by_seq; an update,
-- merge or replace leaves it. Only its order matters, never its value.
-- Table storage's answers stay in key order and do not read it.
--
-- Entities written before this migration get their key order, the order
-- they were answered in until now.
ALTER TABLE entities ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE entities SET seq = o.n
  FROM (SELECT tid, pk, rk, row_number() OVER (PARTITION BY tid, pk ORDER BY rk) AS n FROM entities) AS o
 WHERE entities.tid = o.tid AND entities.pk = o.pk AND entities.rk = o.rk;
CREATE INDEX entities_by_seq ON entities (tid, pk, seq);

-- Snapshots keep it, so that a restore gives the entities their places.
ALTER TABLE snapshot_entities ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE snapshot_entities SET seq = o.n
  FROM (SELECT stid, pk, rk, row_number() OVER (PARTITION BY stid, pk ORDER BY rk) AS n FROM snapshot_entities) AS o
 WHERE snapshot_entities.stid = o.stid AND snapshot_entities.pk = o.pk AND snapshot_entities.rk = o.rk;
