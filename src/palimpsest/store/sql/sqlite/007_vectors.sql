-- Vectors for recall by meaning: one per memory version, keyed by the version's row and
-- written in the same transaction as the version. `model` is the tag of the embedder and
-- recipe that made it (service/vectors.py: model_tag); a vector whose tag is not the
-- current one is stale, and `palimpsest reindex` makes it anew. `vector` is the vector
-- as little-endian float32 bytes, unit length: this column is the source of truth, any
-- in-memory matrix (store/vector_cache.py) is a cache of it. A forget deletes the rows
-- of the versions it scrubs (secure_delete zeroes their bytes).
CREATE TABLE memory_vectors (
    version_rowid INTEGER PRIMARY KEY REFERENCES memory_versions(rowid),
    workspace     TEXT NOT NULL,
    model         TEXT NOT NULL,
    vector        BLOB NOT NULL
);
CREATE INDEX vectors_model ON memory_vectors(workspace, model);
-- Bumped when vectors change without a new event (a reindex) or go (a forget): an
-- in-memory copy of the vectors made before a change of generation is dropped.
CREATE TABLE vector_generations (
    workspace     TEXT PRIMARY KEY,
    generation    INTEGER NOT NULL
);
