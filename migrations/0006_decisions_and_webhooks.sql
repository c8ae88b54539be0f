-- Decisions, stop rules and webhooks.
--
-- An experiment's decision settings (delta, epsilon, the confirmation layer) change how duels
-- are chosen, so every replica builds the bandit state with them: they are stored with the
-- experiment, not only in memory. NULL means the defaults of the release that created it.
ALTER TABLE experiments
    ADD COLUMN decision    JSONB,
    -- {"min_outcomes": N}: conclude once decided and at least N outcomes were applied. NULL: off.
    ADD COLUMN stop_rule   JSONB,
    -- Where events are posted, and the secret their HMAC-SHA256 signature is keyed with. The
    -- secret is write-only in the API: it is never sent back.
    ADD COLUMN webhook_url    TEXT,
    ADD COLUMN webhook_secret TEXT,
    ADD CONSTRAINT webhook_whole CHECK ((webhook_url IS NULL) = (webhook_secret IS NULL));

-- The webhook outbox: one row per event, written in the same transaction as the change that
-- caused it, so an event exists exactly when its change committed. A background task on every
-- replica claims due rows (FOR UPDATE SKIP LOCKED, then a lease in next_attempt_at, so a replica
-- that dies mid-delivery leaves the row to be retried), posts them and records the result.
CREATE TABLE webhook_deliveries (
    id              BIGSERIAL PRIMARY KEY,
    -- Sent with the event: a receiver drops repeats of an event it has already handled.
    event_id        UUID NOT NULL UNIQUE,
    experiment_id   BIGINT NOT NULL REFERENCES experiments (id),
    event           TEXT NOT NULL CHECK (event IN ('decided', 'champion_changed', 'concluded')),
    -- The exact JSON text posted: every attempt sends (and signs) the same bytes.
    body            TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Due time of the next attempt (or the end of a claim's lease while an attempt runs).
    next_attempt_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    delivered_at    TIMESTAMPTZ,
    -- Given up: too many failed attempts, or the experiment no longer has a webhook.
    abandoned_at    TIMESTAMPTZ
);

-- What the delivery task scans: pending rows by due time.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE delivered_at IS NULL AND abandoned_at IS NULL;
