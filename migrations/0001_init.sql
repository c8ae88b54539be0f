-- Experiments, their rankers, the bandit state and every acknowledged outcome.
-- Postgres is the only source of truth; replicas cache and refresh from it by `version`.

CREATE TABLE experiments (
    id                      BIGSERIAL PRIMARY KEY,
    name                    TEXT NOT NULL,
    status                  TEXT NOT NULL CHECK (status IN ('running', 'paused', 'concluded')),
    -- The policy spec as given: {"name": ..., "params": {...}}.
    policy                  JSONB NOT NULL,
    tie_rule                TEXT NOT NULL CHECK (tie_rule IN ('ignore', 'half_win')),
    attribution_window_secs BIGINT NOT NULL CHECK (attribution_window_secs > 0),
    seed                    BIGINT NOT NULL,
    created_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Deleted experiments are tombstoned so that late outcomes are refused cleanly and the id is
    -- never reused.
    deleted_at              TIMESTAMPTZ
);

CREATE TABLE rankers (
    experiment_id BIGINT NOT NULL REFERENCES experiments (id),
    idx           INTEGER NOT NULL,
    name          TEXT NOT NULL,
    added_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Retired rankers keep their index forever; it is never reused.
    retired_at    TIMESTAMPTZ,
    PRIMARY KEY (experiment_id, idx),
    UNIQUE (experiment_id, name)
);

-- One row per experiment, locked by the outcome writer: the policy's own state (the win matrix
-- lives in win_counts), a version bumped on every change, and the counters.
CREATE TABLE experiment_state (
    experiment_id    BIGINT PRIMARY KEY REFERENCES experiments (id),
    version          BIGINT NOT NULL,
    policy_state     JSONB NOT NULL,
    outcomes_applied BIGINT NOT NULL DEFAULT 0,
    ties_applied     BIGINT NOT NULL DEFAULT 0,
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE win_counts (
    experiment_id BIGINT NOT NULL REFERENCES experiments (id),
    winner        INTEGER NOT NULL,
    loser         INTEGER NOT NULL,
    wins          BIGINT NOT NULL,
    PRIMARY KEY (experiment_id, winner, loser)
);

-- Ties are symmetric; stored once with a <= b.
CREATE TABLE tie_counts (
    experiment_id BIGINT NOT NULL REFERENCES experiments (id),
    a             INTEGER NOT NULL,
    b             INTEGER NOT NULL,
    ties          BIGINT NOT NULL,
    PRIMARY KEY (experiment_id, a, b),
    CHECK (a <= b)
);

-- Every acknowledged outcome. The duel id (a UUIDv7 carried in the token) is the unique key that
-- makes outcomes exactly-once: a retry finds the recorded row instead of counting twice. Its time
-- prefix keeps inserts near the right edge of the index, which halves the cost of an insert
-- compared with random keys. The experiment is checked by the writer (it locks the experiment's
-- state row first), so no per-row foreign-key check is paid on this hot path.
CREATE TABLE outcomes (
    duel_id       UUID PRIMARY KEY,
    experiment_id BIGINT NOT NULL,
    first_idx     INTEGER NOT NULL,
    second_idx    INTEGER NOT NULL,
    -- NULL for a tie.
    winner_idx    INTEGER,
    issued_at     TIMESTAMPTZ NOT NULL,
    recorded_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Duels are issued from memory; each replica flushes its counts here now and then.
CREATE TABLE duel_counters (
    experiment_id BIGINT NOT NULL REFERENCES experiments (id),
    instance_id   TEXT NOT NULL,
    issued        BIGINT NOT NULL,
    PRIMARY KEY (experiment_id, instance_id)
);

-- Service-wide settings shared by replicas, e.g. the duel-token signing secret.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
