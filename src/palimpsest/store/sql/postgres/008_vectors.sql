-- Vectors for recall by meaning (pgvector): one per memory version, keyed by the version's
-- row and written in the same transaction as the version. `model` is the tag of the
-- embedder and recipe that made it (service/vectors.py: model_tag); a vector whose tag is
-- not the current one is stale, and `palimpsest reindex` makes it anew. The plain
-- `vector` column is the source of truth; the HNSW index is derived from it (cosine, for
-- the 384 dimensions of the default embedder; vectors of other lengths are searched
-- exactly). A forget deletes the rows of the versions it scrubs; the index keeps their
-- entries until `palimpsest scrub` rewrites the table and rebuilds it (store/pg_rewrite.py).
-- No foreign key to memory_versions: the rewrite swaps that table for a copy, and a
-- reference would hold on to the old one (the store writes both in one transaction).
-- Needs the pgvector extension (0.8 or later) on the server.
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE memory_vectors (
    version_rowid BIGINT PRIMARY KEY,
    workspace     TEXT NOT NULL,
    model         TEXT NOT NULL,
    vector        vector NOT NULL
);
CREATE INDEX vectors_model ON memory_vectors(workspace, model);
CREATE INDEX vectors_hnsw ON memory_vectors
    USING hnsw ((vector::vector(384)) vector_cosine_ops) WHERE vector_dims(vector) = 384;
CREATE TABLE vector_generations (
    workspace     TEXT PRIMARY KEY,
    generation    BIGINT NOT NULL
);
