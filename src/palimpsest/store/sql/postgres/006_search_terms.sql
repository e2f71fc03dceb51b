-- SQLite and PostgreSQL find the same memories for the same words: both now index the
-- terms that store/terms.py makes (folded, accents dropped, Snowball English stems),
-- instead of each database's own word rules (here to_tsvector('english'), which dropped
-- stopwords, kept accents and e-mail addresses whole, and folded no Cyrillic case).
-- A generated column cannot call Python, so `search` becomes a column the store writes
-- (a tsvector given lexeme by lexeme, with the same weights: text A, title B, why and
-- tags C), with two more for ranking as SQLite does (BM25, see store/pg_search.py): each
-- term's weighted count and the version's length. A forget sets all three to NULL with
-- the content. After this script the store writes them for every version that has
-- content (postgres.REINDEX_AFTER).
ALTER TABLE memory_versions ALTER COLUMN search DROP EXPRESSION;
ALTER TABLE memory_versions ADD COLUMN search_counts JSONB;
ALTER TABLE memory_versions ADD COLUMN search_length INTEGER;
-- The statistics BM25 ranks by, per workspace, kept by the writers (who go one at a time
-- per workspace): how many versions have content, and their total length in terms.
-- Counting them at each search cost a scan of the workspace.
CREATE TABLE search_stats (
    workspace   TEXT PRIMARY KEY,
    versions    BIGINT NOT NULL,
    terms       BIGINT NOT NULL
);
