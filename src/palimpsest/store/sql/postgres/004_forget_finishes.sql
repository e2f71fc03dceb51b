-- Forget must finish. A forget writes a row here in its own transaction; the row goes once
-- the physical rewrite of the tables that held the text has run (`palimpsest scrub`):
-- until then the old row versions keep the bytes in the table and index files. `xid` is
-- the forget's transaction: the rewrite clears a row only once no snapshot still sees
-- what that transaction removed (else the rewrite would copy the old version along).
CREATE TABLE scrub_pending (
    id          BIGSERIAL PRIMARY KEY,
    workspace   TEXT NOT NULL,
    target_id   TEXT NOT NULL,
    at          TEXT NOT NULL,
    xid         xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX scrub_pending_target ON scrub_pending(workspace, target_id);

-- What is left of a forgotten notebook: who removed it, when and why.
CREATE TABLE notebook_tombstones (
    id            TEXT PRIMARY KEY,
    workspace     TEXT NOT NULL REFERENCES workspaces(id),
    forgotten_at  TEXT NOT NULL,
    forgotten_by  TEXT NOT NULL,
    forget_reason TEXT NOT NULL
);

-- The memories and notebooks a stored idempotent answer names, so that a forget can delete
-- the records whose request hash was computed over the forgotten text.
CREATE TABLE idempotency_targets (
    workspace   TEXT NOT NULL,
    actor       TEXT NOT NULL,
    op          TEXT NOT NULL,
    key         TEXT NOT NULL,
    target_id   TEXT NOT NULL,
    PRIMARY KEY (workspace, actor, op, key, target_id)
);
CREATE INDEX idempotency_targets_target ON idempotency_targets(workspace, target_id);
