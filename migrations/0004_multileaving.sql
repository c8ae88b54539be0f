-- Multi-ranker experiments: how many rankers each query compares (2 is a duel), and for an
-- outcome of a query that compared more than two, every ranker shown and the result of every
-- pair, so that a retry can be told from a different outcome for the same duel id.
ALTER TABLE experiments
    ADD COLUMN rankers_per_query INTEGER NOT NULL DEFAULT 2 CHECK (rankers_per_query >= 2);

-- NULL for a two-ranker duel (first_idx, second_idx and winner_idx say everything). Otherwise the
-- rankers in the order the duel token lists them, and per pair (i, j), i < j, in row-major order
-- of that list: 1 when rankers[i] won, -1 when rankers[j] won, 0 for a tie. first_idx and
-- second_idx then hold the first two rankers (the same one twice for a one-ranker query) and
-- winner_idx is NULL.
ALTER TABLE outcomes
    ADD COLUMN rankers INTEGER[],
    ADD COLUMN results SMALLINT[];
