-- Metrics and conversions (docs/metrics.md).
--
-- An experiment's metrics: [{"name": ..., "credit": ..., "window_seconds": ..., "missing": ...}]
-- and the primary metric the policy learns from. NULL: the one metric `click`, primary, as
-- before metrics existed.
ALTER TABLE experiments
    ADD COLUMN metrics        JSONB,
    ADD COLUMN primary_metric TEXT;

-- Every acknowledged conversion: a later event (a purchase, a booking) on a document of a shown
-- interleaving. (duel, metric, event id) is the key that makes it exactly once: a retry finds
-- the recorded row. The row keeps what crediting needs (the interleaving the token carried and
-- the document's position in it), so the owner credits it without the token.
-- `xid` and `seq` give the apply order, as `outcomes.xid` does for outcomes: the owner takes rows
-- below the horizon after its cursor (`experiment_state.conversions_xid`, `conversions_seq`).
CREATE TABLE conversions (
    duel_id       UUID NOT NULL,
    metric        TEXT NOT NULL,
    event_id      TEXT NOT NULL,
    experiment_id BIGINT NOT NULL,
    first_idx     INTEGER NOT NULL,
    second_idx    INTEGER NOT NULL,
    document      TEXT NOT NULL,
    position      INTEGER NOT NULL,
    value         DOUBLE PRECISION,
    interleaving  JSONB NOT NULL,
    issued_at     TIMESTAMPTZ NOT NULL,
    -- The service clock's time of the event (the test clock's, when one is set).
    occurred_at   TIMESTAMPTZ NOT NULL,
    recorded_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    seq           BIGSERIAL,
    xid           BIGINT NOT NULL DEFAULT pg_current_xact_id()::text::bigint,
    PRIMARY KEY (duel_id, metric, event_id)
);
CREATE INDEX conversions_apply_order ON conversions (experiment_id, xid, seq);

ALTER TABLE experiment_state
    ADD COLUMN conversions_xid BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN conversions_seq BIGINT NOT NULL DEFAULT 0;

-- One row per (duel, conversion metric) whose outcome is being or was decided: opened when the
-- duel's outcome or its first conversion is applied, decided once (decided_at set, result
-- written) by the experiment's owner in a fenced transaction. result: 1 the first ranker won,
-- -1 the second, 0 a tie, NULL nothing counted (no event and the metric ignores missing ones).
CREATE TABLE metric_duels (
    experiment_id BIGINT NOT NULL,
    metric        TEXT NOT NULL,
    duel_id       UUID NOT NULL,
    first_idx     INTEGER NOT NULL,
    second_idx    INTEGER NOT NULL,
    closes_at     TIMESTAMPTZ NOT NULL,
    result        SMALLINT,
    decided_at    TIMESTAMPTZ,
    PRIMARY KEY (experiment_id, metric, duel_id)
);
CREATE INDEX metric_duels_open ON metric_duels (experiment_id, closes_at) WHERE decided_at IS NULL;

-- Each metric's win and tie counts, for every metric but the primary one (whose counts are
-- win_counts and tie_counts, what the policy learned from).
CREATE TABLE metric_win_counts (
    experiment_id BIGINT NOT NULL REFERENCES experiments (id),
    metric        TEXT NOT NULL,
    winner        INTEGER NOT NULL,
    loser         INTEGER NOT NULL,
    wins          BIGINT NOT NULL,
    PRIMARY KEY (experiment_id, metric, winner, loser)
);
CREATE TABLE metric_tie_counts (
    experiment_id BIGINT NOT NULL REFERENCES experiments (id),
    metric        TEXT NOT NULL,
    a             INTEGER NOT NULL,
    b             INTEGER NOT NULL,
    ties          BIGINT NOT NULL,
    PRIMARY KEY (experiment_id, metric, a, b),
    CHECK (a <= b)
);
