"""Exact nearest-vector ranking in numpy, shared by the SQLite store and its cache.

Vectors are unit length, so cosine similarity is a dot product. Ties are broken by the
newer version row first, as PostgreSQL's search is asked to break them, so that both
stores give the same order for the same vectors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from . import SearchQuery

# What the embedders make (embed.base.Vectors, the same type): named here, since the store
# takes vectors as plain arrays and knows nothing of embedders.
Vectors = npt.NDArray[np.float32]
RowIds = npt.NDArray[np.int64]


def similarities(rows: npt.NDArray[Any], vector: Vectors) -> Vectors:
    """`rows` (int8 or float32) times `vector`, in float32, without BLAS. BLAS sums some
    rows of a small matrix in blocks of other shapes, so two copies of one vector could
    score apart in the last bit and a tie no longer go to the newer row; and an int8
    matrix is read as it is instead of copied to float32 first (four times the bytes)."""
    scores: Vectors = np.einsum("ij,j->i", rows, vector, dtype=np.float32, casting="unsafe")
    return scores


def from_blobs(blobs: list[bytes], dimensions: int) -> Vectors:
    """Stored float32 blobs as one matrix (rows of another length are left as zeros)."""
    width = dimensions * 4
    if all(len(blob) == width for blob in blobs):  # the rule: one copy, no loop
        joined = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dimensions)
        return joined.astype(np.float32)
    matrix = np.zeros((len(blobs), dimensions), dtype=np.float32)
    for index, blob in enumerate(blobs):
        if len(blob) == width:
            matrix[index] = np.frombuffer(blob, dtype="<f4")
    return matrix


def ranked(scores: npt.NDArray[np.float32], rowids: RowIds, limit: int) -> list[tuple[int, float]]:
    """The `limit` best (rowid, score) pairs: highest score first, then the newest row."""
    if limit <= 0 or len(scores) == 0:
        return []
    if len(scores) > limit:
        # Everything tied with the limit-th best stays in, so the tie-break sees it all.
        edge = np.partition(scores, len(scores) - limit)[len(scores) - limit]
        keep = np.flatnonzero(scores >= edge)
        scores, rowids = scores[keep], rowids[keep]
    order = np.lexsort((-rowids, -scores))[:limit]
    return [(int(rowids[i]), float(scores[i])) for i in order]


def merged(
    first: list[tuple[int, float]], second: list[tuple[int, float]]
) -> list[tuple[int, float]]:
    """Two best-first lists of (rowid, score) as one, in the order `ranked` gives."""
    return sorted(first + second, key=lambda pair: (-pair[1], -pair[0]))


def narrowed(query: SearchQuery) -> bool:
    """Whether the filters may leave out many current active memories (a notebook, kind,
    tag, scope, time range, a past state, other statuses): then a search is exact, since
    an index or a cache of candidates could come back short."""
    return bool(
        query.notebook_ids is not None
        or query.kinds
        or query.tags
        or query.scopes
        or query.since is not None
        or query.until is not None
        or query.at_seq is not None
        or tuple(query.statuses) != ("active",)
    )
