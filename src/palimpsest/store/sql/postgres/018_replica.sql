-- A store that follows a Palimpsest server (docs/sync.md): what it knows of that server.
-- `replica_state` names the server (its address, never a key), the workspace followed
-- there, and the position reached: the server's sequence number and operation id of the
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
    synced_at        TEXT,
    refused          TEXT
);
CREATE TABLE replica_seqs (
    workspace   TEXT NOT NULL,
    server_seq  BIGINT NOT NULL,
    local_seq   BIGINT NOT NULL,
    PRIMARY KEY (workspace, server_seq)
);
