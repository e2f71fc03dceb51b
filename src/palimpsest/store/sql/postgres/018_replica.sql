-- A store that follows a Palimpsest server (docs/sync.md): what it knows of that server.
-- `replica_state` names the server (its address, never a key), the workspace followed
-- there (and who the key acts as there), and the position reached: the server's sequence number and operation id of the
-- last event applied, so that a server whose history no longer holds that event (restored
-- from an export, or another server at the same address) is noticed, not trusted. Events
-- pulled get this store's own sequence numbers; `replica_seqs` maps the server's to ours,
-- for the spans of versions a later round closes. Written in the same transaction as the
-- rows a round applies: a round lands whole or not at all. Not copied, not exported.
CREATE TABLE replica_state (
    workspace        TEXT PRIMARY KEY REFERENCES workspaces(id),
    server           TEXT NOT NULL,
    server_workspace TEXT NOT NULL,
    position_seq     BIGINT NOT NULL DEFAULT 0,
    position_op_id   TEXT,
    role             TEXT NOT NULL,
    actor            TEXT,
    synced_at        TEXT,
    refused          TEXT
);
CREATE TABLE replica_seqs (
    workspace   TEXT NOT NULL,
    server_seq  BIGINT NOT NULL,
    local_seq   BIGINT NOT NULL,
    PRIMARY KEY (workspace, server_seq)
);
-- The writes made on a replica, queued as requests for the server (not as events): each
-- is replayed there through the server's service, under its id as the idempotency key, so
-- a push repeated after a crash is answered, not applied twice. Kept once answered, with
-- the server's answer or refusal: nothing written here is dropped without a trace. The
-- arguments passed this store's write gate before they were queued.
CREATE TABLE replica_queue (
    id          TEXT PRIMARY KEY,
    workspace   TEXT NOT NULL REFERENCES workspaces(id),
    op          TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    target_id   TEXT,
    actor       TEXT NOT NULL,
    queued_at   TEXT NOT NULL,
    state       TEXT NOT NULL,
    answer      TEXT,
    done_at     TEXT
);
CREATE INDEX replica_queue_state ON replica_queue(workspace, state, queued_at);
