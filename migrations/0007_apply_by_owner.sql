-- Acknowledging an outcome is inserting its row; applying it to the bandit state happens later,
-- per experiment, by the replica that owns the experiment (docs/architecture.md).
--
-- `xid` is the inserting transaction's id. Every transaction below the database's oldest running
-- one (`pg_snapshot_xmin`) has ended, so a row below that horizon is final: no row can still
-- commit below it. The owner applies rows in (xid, duel_id) order up to the horizon and records
-- how far it got (`applied_xid`, `applied_duel`) in the same transaction as the state it wrote,
-- which is what makes application exactly once even when rows commit out of id order.
-- Rows recorded before this migration were applied as they were acknowledged: xid 0.
ALTER TABLE outcomes ADD COLUMN xid BIGINT NOT NULL DEFAULT 0;
ALTER TABLE outcomes ALTER COLUMN xid SET DEFAULT pg_current_xact_id()::text::bigint;
CREATE INDEX outcomes_apply_order ON outcomes (experiment_id, xid, duel_id);

-- The last row applied, in (xid, duel_id) order: every committed row at or below it is in the
-- state, none above it is. A new experiment starts past every row of xid 0.
ALTER TABLE experiment_state
    ADD COLUMN applied_xid  BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN applied_duel UUID NOT NULL DEFAULT 'ffffffff-ffff-ffff-ffff-ffffffffffff';

-- One row per application: the state version it wrote and the last row it took. The rows of
-- version v are those after the previous version's last row up to its own, applied in
-- (xid, duel_id) order with the RNG of version v - 1, so a state rebuilt from the outcomes is
-- the same state. Pruned with the outcome rows.
CREATE TABLE outcome_applies (
    experiment_id BIGINT NOT NULL,
    version       BIGINT NOT NULL,
    through_xid   BIGINT NOT NULL,
    through_duel  UUID NOT NULL,
    applied_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (experiment_id, version)
);
