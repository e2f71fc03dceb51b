-- A btree entry must fit in a third of a page (2,704 bytes), and a text of up to 8,000
-- characters that barely compresses does not: such a remember failed. Exact-text lookups
-- (duplicates, revise by text) only ask for equality, which a hash index answers for any
-- length; it keeps 4-byte hashes, never the text, so it holds nothing a forget must scrub.
DROP INDEX IF EXISTS versions_current_text;
CREATE INDEX versions_current_text
    ON memory_versions USING hash (norm_text) WHERE to_seq IS NULL;
