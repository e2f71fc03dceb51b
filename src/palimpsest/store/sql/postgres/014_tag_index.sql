-- Current versions by tag: a search narrowed to a tag (full text's matches, the nearest
-- vectors) found its rows by reading the tags of every current version, or of every
-- match (95 ms for the nearest vectors at 100,000 memories); this finds the few that
-- carry the tag. The expression is the tag filter's own (store/postgres.py).
CREATE INDEX versions_current_tags ON memory_versions
    USING GIN ((tags::jsonb) jsonb_path_ops) WHERE to_seq IS NULL;
