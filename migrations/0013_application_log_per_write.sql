-- The application log keeps one row per state write instead of one per application. A write
-- carries the chain of applications its owner held in memory (engine/apply/checkpoint.rs), and
-- on many experiments a log row per application was a third of the rows each write inserted
-- (docs/benchmarks.md).
--
-- A row's `version`, `through_xid` and `through_duel` are the chain's last application, as
-- before; `held_xids` and `held_duels` are the last rows of the applications before it in the
-- chain, versions version - n .. version - 1 in order (n their length), empty for a write of one
-- application. Rows logged before this migration are writes of one application. Both columns
-- have a constant default, so adding them rewrites nothing, and a writer that names only the
-- old columns still logs a correct write of one.
ALTER TABLE outcome_applies
    ADD COLUMN held_xids  BIGINT[] NOT NULL DEFAULT '{}',
    ADD COLUMN held_duels UUID[]   NOT NULL DEFAULT '{}',
    ADD CONSTRAINT outcome_applies_held_aligned
        CHECK (cardinality(held_xids) = cardinality(held_duels));

-- Every application's version and last row, one row each, as replay reads them.
CREATE VIEW applied_versions AS
SELECT a.experiment_id,
       a.version - cardinality(a.held_xids) + h.n - 1 AS version,
       h.xid AS through_xid,
       h.duel AS through_duel,
       a.applied_at
FROM outcome_applies a
CROSS JOIN LATERAL unnest(a.held_xids || a.through_xid, a.held_duels || a.through_duel)
    WITH ORDINALITY AS h(xid, duel, n);
