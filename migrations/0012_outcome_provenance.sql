-- What an outcome row says of where it came from, for exports (docs/export.md). All nullable
-- with no default, so adding them rewrites nothing and rows recorded before read as NULL
-- (unknown).
--
-- posted_as: the result field the client posted: 1 winner, 2 credits, 3 ordering, 4 clicks.
-- posted: the posted value where the row's result does not already say it, as JSON: the credits
--   object, the ordering, the clicked positions of the shown list, or a self-duel's posted
--   winner (recorded as a tie); NULL for a winner recorded as posted.
-- method: the interleaving method of a clicked duel.
-- chosen_by: which layer chose the duel, as its token said: 1 the policy, 2 the decision's
--   confirmation layer.
ALTER TABLE outcomes
    ADD COLUMN posted_as SMALLINT,
    ADD COLUMN posted    JSONB,
    ADD COLUMN method    TEXT,
    ADD COLUMN chosen_by SMALLINT;
