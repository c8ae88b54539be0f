-- An experiment's history: a point written by the outcome writer, inside the transaction that
-- applies a group of outcomes, at most once per history interval. Dashboards draw outcomes, the
-- champion and each ranker's share of comparisons over time from it. Points go with their
-- experiment when it is deleted.
CREATE TABLE history_points (
    experiment_id    BIGINT NOT NULL REFERENCES experiments (id),
    at               TIMESTAMPTZ NOT NULL,
    -- The state version this point describes.
    version          BIGINT NOT NULL,
    outcomes_applied BIGINT NOT NULL,
    ties_applied     BIGINT NOT NULL,
    -- Duels issued as flushed by the replicas at that time (each flushes about once a second).
    duels_issued     BIGINT NOT NULL,
    -- The champion's ranker index (NULL before any evidence), the basis and the confidence.
    champion         INTEGER,
    basis            TEXT NOT NULL,
    confident        BOOLEAN NOT NULL,
    -- Wins and losses so far of each ranker, by ranker index.
    wins             BIGINT[] NOT NULL,
    losses           BIGINT[] NOT NULL,
    PRIMARY KEY (experiment_id, at)
);
