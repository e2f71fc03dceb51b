-- Who may use a workspace, and the keys they use over HTTP (DESIGN section 6). A user is
-- a name with a role; a key acts as its holder: a user (`user:NAME`, with that user's
-- role when it is used) or an agent of the workspace (`agent:NAME`). A key's secret is
-- never stored: only its sha256, checked on every request, so a revocation holds at once
-- in every server process. Each change is also an event (user.add, key.create, ...).
CREATE TABLE users (
    workspace   TEXT NOT NULL REFERENCES workspaces(id),
    name        TEXT NOT NULL,
    role        TEXT NOT NULL,
    added_at    TEXT NOT NULL,
    PRIMARY KEY (workspace, name)
);
CREATE TABLE access_keys (
    id          TEXT PRIMARY KEY,
    workspace   TEXT NOT NULL REFERENCES workspaces(id),
    secret_hash TEXT NOT NULL,
    holder      TEXT NOT NULL,
    note        TEXT,
    created_at  TEXT NOT NULL,
    expires_at  TEXT,
    revoked_at  TEXT
);
CREATE INDEX access_keys_workspace ON access_keys(workspace, created_at);
-- The key a write came through (its id; null for the CLI, stdio and keyless HTTP).
ALTER TABLE events ADD COLUMN key_id TEXT;
-- A workspace's name, which users choose and may change; the id every row carries stays.
ALTER TABLE workspaces ADD COLUMN name TEXT;
UPDATE workspaces SET name = id;
CREATE UNIQUE INDEX workspaces_name ON workspaces(name);
-- Failed authentications over HTTP, counted an hour at a time (doctor shows them). The
-- workspace is the one a known key belongs to; '' when the key was unknown or missing.
CREATE TABLE failed_auth (
    workspace   TEXT NOT NULL,
    hour        TEXT NOT NULL,
    failures    INTEGER NOT NULL,
    last_at     TEXT NOT NULL,
    PRIMARY KEY (workspace, hour)
);
-- Each workspace gets a full-text table of its own (store/sqlite.py, fts_table), so that
-- BM25's counts are its own; memory_fts stays `default`'s. Emptied here, every version is
-- then indexed anew in its workspace's table (sqlite.REINDEX_AFTER).
INSERT INTO memory_fts(memory_fts) VALUES ('delete-all');
