-- The latest event is read on every write: give it an index of its own.
CREATE INDEX events_workspace_seq ON events(workspace, seq);

-- Standing rules are listed by kind, newest first, on every recall.
DROP INDEX versions_current_kind;
CREATE INDEX versions_current_kind
    ON memory_versions(workspace, kind, from_seq) WHERE to_seq IS NULL;

-- Rank matches by BM25 weighting the text over title, why and tags, for every query.
INSERT INTO memory_fts(memory_fts, rank) VALUES ('rank', 'bm25(1.0, 0.6, 0.4, 0.4)');
