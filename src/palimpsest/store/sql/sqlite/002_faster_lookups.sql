-- The latest event is read on every write: give it an index of its own.
CREATE INDEX events_workspace_seq ON events(workspace, seq);

-- Standing rules are listed by kind, newest first, on every recall.
DROP INDEX versions_current_kind;
CREATE INDEX versions_current_kind
    ON memory_versions(workspace, kind, from_seq) WHERE to_seq IS NULL;

-- The notebook id joins the full-text index (unweighted), so a notebook filter narrows the
-- search itself instead of being applied to every match afterwards.
DROP TABLE memory_fts;
CREATE VIRTUAL TABLE memory_fts USING fts5(
    text, title, why, tags_text, notebook_id,
    content = 'memory_versions', content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
-- Rank by BM25 weighting the text over title, why and tags; the notebook id counts nothing.
INSERT INTO memory_fts(memory_fts, rank) VALUES ('rank', 'bm25(1.0, 0.6, 0.4, 0.4, 0.0)');
INSERT INTO memory_fts(memory_fts) VALUES ('rebuild');
