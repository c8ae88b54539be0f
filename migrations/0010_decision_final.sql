-- A concluded experiment's decision is final, and `decided` is announced once.
--
-- Outcomes of duels issued before an experiment concluded are still applied after it (they were
-- acknowledged), so a decision recomputed from the counts could change after the conclusion:
-- the decision at the conclusion is stored and is the one the experiment reports and serves.
ALTER TABLE experiments
    -- The decision when the experiment concluded (the JSON of the bandit's Decision, rankers by
    -- index); NULL while it runs, and for an experiment concluded before this column existed.
    ADD COLUMN final_decision    JSONB,
    -- The winners (ranker indexes) the last `decided` or `champion_changed` event announced;
    -- NULL until `decided` was written to the outbox. `decided` is written only while it is NULL.
    ADD COLUMN announced_winners INTEGER[];
