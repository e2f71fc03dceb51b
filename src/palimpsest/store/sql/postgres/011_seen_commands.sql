-- Commands the guard was asked about, credentials redacted: what a new `forbidden` check
-- is tried against (DESIGN section 2, check and guard: trials). Bounded in number and age
-- by the service; a forget deletes a row, and `palimpsest scrub` rewrites the table.
CREATE TABLE seen_commands (
    id          TEXT PRIMARY KEY,
    workspace   TEXT NOT NULL REFERENCES workspaces(id),
    seen_at     TEXT NOT NULL,
    command     TEXT NOT NULL,
    decision    TEXT NOT NULL,
    notebook_id TEXT,
    session     TEXT
);
CREATE INDEX seen_commands_at ON seen_commands(workspace, seen_at);
