-- SQLite and PostgreSQL find the same memories for the same words: both now index the
-- terms that store/terms.py makes (folded, accents dropped, Snowball English stems),
-- instead of each database's own word rules (here the Porter tokenizer, which stemmed
-- `deploy` to `deploi` but `deployment` to `deploy`).
-- The index is contentless: it holds the terms it is given, not the text, and a delete
-- names the same terms again (store/sqlite.py makes them with the same function). The
-- `ascii` tokenizer splits only at the spaces between terms: every other character a term
-- may hold is a letter, digit or mark. After this script the store indexes every version
-- that has content (sqlite.REINDEX_AFTER): SQL cannot run the stemmer.
DROP TABLE memory_fts;
CREATE VIRTUAL TABLE memory_fts USING fts5(
    text, title, why, tags_text, notebook_id,
    content = '',
    tokenize = 'ascii'
);
-- Rank by BM25 weighting the text over title, why and tags; the notebook id counts nothing.
INSERT INTO memory_fts(memory_fts, rank) VALUES ('rank', 'bm25(1.0, 0.6, 0.4, 0.4, 0.0)');
