-- The creation order of entities (docs/cosmos.md, "order of query results"):
-- Azure Cosmos DB for Table answers a partition's entities in the order
-- they were created, an update keeping an entity's place. seq is that
-- order: every insert (an upsert that inserts, too) takes the column's
-- default, the next value of entity_seq; an update, merge or replace
-- leaves it (ON CONFLICT DO UPDATE does not set it). A sequence rather
-- than the partition's largest seq plus one: nextval takes no lock and
-- reads no rows, so concurrent inserts into one partition do not conflict
-- under serializable isolation. Values may have gaps and are unique in
-- the database; only their order within a partition matters. Table
-- storage's answers stay in key order and do not read it.
--
-- Entities written before this migration get their key order, the order
-- they were answered in until now.
CREATE SEQUENCE entity_seq;
ALTER TABLE entities ADD COLUMN seq bigint;
UPDATE entities SET seq = o.n
  FROM (SELECT tid, pk, rk, row_number() OVER (ORDER BY tid, pk, rk) AS n FROM entities) AS o
 WHERE entities.tid = o.tid AND entities.pk = o.pk AND entities.rk = o.rk;
SELECT setval('entity_seq', (SELECT coalesce(max(seq), 0) + 1 FROM entities), false);
ALTER TABLE entities ALTER COLUMN seq SET DEFAULT nextval('entity_seq');
ALTER TABLE entities ALTER COLUMN seq SET NOT NULL;
CREATE INDEX entities_by_seq ON entities (tid, pk, seq);

-- Snapshots keep it, so that a restore gives the entities their places.
ALTER TABLE snapshot_entities ADD COLUMN seq bigint NOT NULL DEFAULT 0;
UPDATE snapshot_entities SET seq = o.n
  FROM (SELECT stid, pk, rk, row_number() OVER (ORDER BY stid, pk, rk) AS n FROM snapshot_entities) AS o
 WHERE snapshot_entities.stid = o.stid AND snapshot_entities.pk = o.pk AND snapshot_entities.rk = o.rk;
