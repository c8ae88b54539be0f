-- Units (a user or session, known only by a keyed hash) and segments (a label of the query).
--
-- `units`: how an experiment treats requests that name a unit: {"window_seconds": N,
-- "aggregation": "query" | "unit"}; NULL for the defaults (docs/units-and-segments.md).
-- `max_segments`: the most distinct segment labels the experiment accepts.
ALTER TABLE experiments
    ADD COLUMN units        JSONB,
    ADD COLUMN max_segments INTEGER NOT NULL DEFAULT 20 CHECK (max_segments > 0);

-- The bandit state every replica selects a unit's duel from during one window (epoch) of an
-- experiment: written once per experiment and window, by the first replica that needs it
-- (INSERT ... ON CONFLICT DO NOTHING), then read by the others. Selecting from one agreed state
-- is what makes a unit's duel the same on every replica while outcomes keep changing the live
-- state. Windows older than the previous one are pruned when a new one is pinned.
CREATE TABLE unit_window_states (
    experiment_id BIGINT NOT NULL REFERENCES experiments (id),
    epoch         BIGINT NOT NULL,
    state_version BIGINT NOT NULL,
    state         JSONB NOT NULL,
    pinned_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (experiment_id, epoch)
);

-- The segment labels an experiment has seen, each with a small index that duel tokens and
-- outcome rows carry. Registered once per label (the first duel naming it), never per duel.
CREATE TABLE experiment_segments (
    experiment_id BIGINT NOT NULL REFERENCES experiments (id),
    idx           SMALLINT NOT NULL,
    label         TEXT NOT NULL,
    added_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (experiment_id, idx),
    UNIQUE (experiment_id, label)
);

-- What the outcome's duel token said of its unit (the keyed hash) and its segment (the index).
ALTER TABLE outcomes
    ADD COLUMN unit_hash BYTEA,
    ADD COLUMN segment   SMALLINT;

-- The win and tie counts of each segment, written by the owner in the transaction that applies
-- the outcomes (as win_counts and tie_counts are).
CREATE TABLE segment_win_counts (
    experiment_id BIGINT NOT NULL REFERENCES experiments (id),
    segment       SMALLINT NOT NULL,
    winner        INTEGER NOT NULL,
    loser         INTEGER NOT NULL,
    wins          BIGINT NOT NULL,
    PRIMARY KEY (experiment_id, segment, winner, loser)
);

CREATE TABLE segment_tie_counts (
    experiment_id BIGINT NOT NULL REFERENCES experiments (id),
    segment       SMALLINT NOT NULL,
    a             INTEGER NOT NULL,
    b             INTEGER NOT NULL,
    ties          BIGINT NOT NULL,
    PRIMARY KEY (experiment_id, segment, a, b),
    CHECK (a <= b)
);

-- Evidence per unit, for experiments that aggregate by unit: a unit's first decisive comparison
-- of a pair counts once (docs/units-and-segments.md). `unit_pair_votes` records which units were
-- counted for which pair (a < b); `unit_win_counts` is the unit-level win matrix the champion
-- and the decision read. Both are written by the owner in the transaction that applies the
-- outcomes.
CREATE TABLE unit_pair_votes (
    experiment_id BIGINT NOT NULL REFERENCES experiments (id),
    a             INTEGER NOT NULL,
    b             INTEGER NOT NULL,
    unit_hash     BYTEA NOT NULL,
    PRIMARY KEY (experiment_id, a, b, unit_hash),
    CHECK (a < b)
);

CREATE TABLE unit_win_counts (
    experiment_id BIGINT NOT NULL REFERENCES experiments (id),
    winner        INTEGER NOT NULL,
    loser         INTEGER NOT NULL,
    wins          BIGINT NOT NULL,
    PRIMARY KEY (experiment_id, winner, loser)
);
