-- Full text's last step (store/bm25.py) re-scores its best 100 from each version's term
-- counts. SQLite counted them from the text at each search, which cost tens of
-- milliseconds where memories are long; as PostgreSQL does, the store now keeps each
-- version's weighted term counts (JSON) and its length beside its content, written with
-- it and set to NULL by a forget. After this script the store counts them for every
-- version that has content (sqlite.COUNT_AFTER).
ALTER TABLE memory_versions ADD COLUMN search_counts TEXT;
ALTER TABLE memory_versions ADD COLUMN search_length INTEGER;
