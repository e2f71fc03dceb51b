-- Disputes: two memories said to contradict each other, as a review queue. One row per
-- version of a dispute (opened, ruled, ruling undone, withdrawn by a forget), each the
-- projection of the step's events and current from `from_seq` until `to_seq`, as
-- memory_versions are: the events stay the history, and `as_of` reads the open disputes
-- of a past time from these spans. A forget of either memory sets the free text (reason,
-- ruling reason, evidence) of every version to NULL and marks it `scrubbed`.
CREATE TABLE dispute_versions (
    rowid           BIGSERIAL PRIMARY KEY,
    dispute_id      TEXT NOT NULL,
    version         INTEGER NOT NULL,
    workspace       TEXT NOT NULL REFERENCES workspaces(id),
    from_seq        BIGINT NOT NULL,
    to_seq          BIGINT,
    first_id        TEXT NOT NULL,
    second_id       TEXT NOT NULL,
    status          TEXT NOT NULL,
    reason          TEXT,
    opened_at       TEXT NOT NULL,
    opened_by       TEXT NOT NULL,
    holds           TEXT,
    ruling_reason   TEXT,
    evidence        TEXT,
    ruled_at        TEXT,
    ruled_by        TEXT,
    retired_version INTEGER,
    linked          INTEGER NOT NULL DEFAULT 0,
    scrubbed        INTEGER NOT NULL DEFAULT 0,
    UNIQUE (dispute_id, version)
);
CREATE INDEX disputes_first ON dispute_versions(workspace, first_id, from_seq);
CREATE INDEX disputes_second ON dispute_versions(workspace, second_id, from_seq);
CREATE INDEX disputes_current ON dispute_versions(workspace, status) WHERE to_seq IS NULL;
-- At most one open dispute between two memories.
CREATE UNIQUE INDEX disputes_open_pair
    ON dispute_versions(workspace, first_id, second_id)
    WHERE to_seq IS NULL AND status = 'open';
