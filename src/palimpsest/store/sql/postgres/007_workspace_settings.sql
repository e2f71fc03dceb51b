-- Workspace settings: the values a person chose, one row per setting changed from its
-- default (a setting with no row has its default, so a store written before this
-- migration keeps today's behaviour). Each change is also a `settings.change` event,
-- written in the same transaction: that event is the history, this table its projection.
CREATE TABLE workspace_settings (
    workspace   TEXT NOT NULL REFERENCES workspaces(id),
    name        TEXT NOT NULL,
    value       TEXT NOT NULL,
    PRIMARY KEY (workspace, name)
);
