-- The PostgreSQL schema: the same tables as SQLite's, with full text kept in a generated
-- tsvector column (GIN-indexed) instead of a separate FTS table. The events table is the
-- history; memory_versions keeps the content each event produced; memories names every
-- memory ever filed (and its tombstone once forgotten).

CREATE TABLE workspaces (
    id          TEXT PRIMARY KEY,
    created_at  TEXT NOT NULL
);

CREATE TABLE events (
    seq         BIGSERIAL PRIMARY KEY,
    workspace   TEXT NOT NULL REFERENCES workspaces(id),
    op_id       TEXT NOT NULL,
    at          TEXT NOT NULL,
    actor       TEXT NOT NULL,
    op          TEXT NOT NULL,
    target_type TEXT NOT NULL,
    target_id   TEXT NOT NULL,
    notebook_id TEXT,
    version     INTEGER,
    fields      TEXT NOT NULL DEFAULT '[]',
    note        TEXT,
    data        TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_target ON events(workspace, target_id, seq);
CREATE INDEX events_at ON events(workspace, at);
CREATE INDEX events_notebook ON events(workspace, notebook_id, seq);
CREATE INDEX events_workspace_seq ON events(workspace, seq);

CREATE TABLE notebooks (
    id          TEXT PRIMARY KEY,
    workspace   TEXT NOT NULL REFERENCES workspaces(id),
    name        TEXT NOT NULL,
    summary     TEXT,
    domain      TEXT,
    tags        TEXT NOT NULL DEFAULT '[]',
    created_at  TEXT NOT NULL,
    UNIQUE (workspace, name)
);

CREATE TABLE memories (
    id            TEXT PRIMARY KEY,
    workspace     TEXT NOT NULL REFERENCES workspaces(id),
    forgotten_at  TEXT,
    forgotten_by  TEXT,
    forget_reason TEXT
);

CREATE TABLE memory_versions (
    rowid         BIGSERIAL PRIMARY KEY,
    memory_id     TEXT NOT NULL REFERENCES memories(id),
    version       INTEGER NOT NULL,
    workspace     TEXT NOT NULL,
    from_seq      BIGINT NOT NULL,
    to_seq        BIGINT,
    scrubbed      INTEGER NOT NULL DEFAULT 0,
    notebook_id   TEXT,
    kind          TEXT,
    status        TEXT,
    text          TEXT,
    norm_text     TEXT,
    title         TEXT,
    why           TEXT,
    tags          TEXT,
    tags_text     TEXT,
    key           TEXT,
    occurred_at   TEXT,
    recorded_at   TEXT,
    expires_at    TEXT,
    status_note   TEXT,
    superseded_by TEXT,
    verified_at   TEXT,
    owner         TEXT,
    author        TEXT,
    source        TEXT,
    anchors       TEXT,
    severity      TEXT,
    falsifier     TEXT,
    check_json    TEXT,
    bindings      TEXT,
    scope         TEXT,
    -- Follows the content: a forget that sets the content to NULL empties it too.
    search        tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', coalesce(text, '')), 'A')
        || setweight(to_tsvector('english', coalesce(title, '')), 'B')
        || setweight(to_tsvector('english', coalesce(why, '')), 'C')
        || setweight(to_tsvector('english', coalesce(tags_text, '')), 'C')
    ) STORED,
    UNIQUE (memory_id, version)
);
CREATE INDEX versions_current_notebook
    ON memory_versions(workspace, notebook_id) WHERE to_seq IS NULL;
CREATE INDEX versions_current_text
    ON memory_versions(notebook_id, norm_text) WHERE to_seq IS NULL;
CREATE INDEX versions_current_kind
    ON memory_versions(workspace, kind, from_seq) WHERE to_seq IS NULL;
CREATE INDEX versions_current_key
    ON memory_versions(workspace, key) WHERE to_seq IS NULL AND key IS NOT NULL;
CREATE INDEX versions_span ON memory_versions(workspace, from_seq, to_seq);
CREATE INDEX versions_search ON memory_versions USING GIN (search);
-- A key names at most one active memory of a notebook: a second one is a conflict.
CREATE UNIQUE INDEX versions_active_key
    ON memory_versions(notebook_id, key)
    WHERE to_seq IS NULL AND status = 'active' AND key IS NOT NULL;

CREATE TABLE links (
    id          TEXT PRIMARY KEY,
    workspace   TEXT NOT NULL REFERENCES workspaces(id),
    source_id   TEXT NOT NULL,
    target_id   TEXT NOT NULL,
    type        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    actor       TEXT NOT NULL,
    UNIQUE (workspace, source_id, target_id, type)
);
CREATE INDEX links_target ON links(workspace, target_id);

CREATE TABLE idempotency (
    workspace    TEXT NOT NULL,
    actor        TEXT NOT NULL,
    op           TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    response     TEXT NOT NULL,
    PRIMARY KEY (workspace, actor, op, key)
);
