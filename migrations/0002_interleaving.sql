-- Each experiment's interleaving settings: {"method": ..., "options": {...}, "max_length": N}.
-- Experiments created before interleaving existed get Team-Draft with its defaults.
ALTER TABLE experiments
    ADD COLUMN interleaving JSONB NOT NULL
    DEFAULT '{"method": "team_draft", "options": {"shared_prefix": "draft", "exhausted": "stop"}, "max_length": 10}';
