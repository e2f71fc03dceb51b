-- How many versions of a workspace hold each term (BM25's document frequency), kept by
-- the writers in the write's own transaction, as SQLite's full-text index keeps it.
-- Counting it at each search cost a pass over every match: 400 ms for a common word at
-- 100,000 memories. A term's row goes when no version with content holds it any more (a
-- forget's word may be the secret itself), and the rewrite of a scrub copies this table.
CREATE TABLE search_terms (
    workspace   TEXT NOT NULL,
    term        TEXT NOT NULL,
    versions    BIGINT NOT NULL,
    PRIMARY KEY (workspace, term)
);
INSERT INTO search_terms(workspace, term, versions)
SELECT v.workspace, t.term, count(*) FROM memory_versions v,
    jsonb_object_keys(v.search_counts) AS t(term)
WHERE v.scrubbed = 0 AND v.search_counts IS NOT NULL
GROUP BY v.workspace, t.term;
