-- Projects and API keys stored as hashes.
--
-- Every experiment belongs to a project; a key belongs to one project (or to none: a global key)
-- and reaches only its project's experiments. An existing database moves to one project,
-- `default` (id 1), which also takes experiments created without naming a project.
CREATE TABLE projects (
    id         BIGSERIAL PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO projects (id, name) VALUES (1, 'default');
SELECT setval('projects_id_seq', 1);

ALTER TABLE experiments
    ADD COLUMN project_id BIGINT NOT NULL DEFAULT 1 REFERENCES projects (id);
-- A project's list of live experiments, in id order.
CREATE INDEX experiments_project_live ON experiments (project_id, id) WHERE deleted_at IS NULL;

-- Keys are never deleted, only revoked, so an id in the access log always names one key.
CREATE TABLE api_keys (
    id         BIGSERIAL PRIMARY KEY,
    -- NULL: a global key, which reaches every project.
    project_id BIGINT REFERENCES projects (id),
    scope      TEXT NOT NULL CHECK (scope IN ('admin', 'ingest', 'read')),
    name       TEXT NOT NULL DEFAULT '',
    -- The key's first characters, shown in lists so that an operator can tell keys apart.
    prefix     TEXT NOT NULL,
    -- SHA-256 of the whole key; the key itself is shown once, when it is created.
    hash       BYTEA NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ,
    revoked_at TIMESTAMPTZ
);
