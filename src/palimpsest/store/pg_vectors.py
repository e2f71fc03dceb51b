"""Nearest vectors on PostgreSQL: pgvector, exact or through its HNSW index.

The plain `vector` column of memory_vectors is the source of truth; the HNSW index
(cosine, 384 dimensions: migration 008) only speeds up the one search where it is safe.

An HNSW index is approximate, and with a filter it can return fewer rows than asked: it
walks the graph for `ef_search` candidates and the filter then drops some (pgvector 0.8's
iterative scan walks on, but still not to every row). So the search is exact — every row
passing the filters is scored, in SQL — whenever the filters narrow the memories (a
notebook, kind, tag, scope, time range, a past state, statuses other than active) or the
workspace is small (EXACT_BELOW versions), where exact is fast anyway (the filters'
indexes find the rows first). Only the common question over a large workspace's current
active memories takes the index, with the iterative scan in strict order so that the rows
the filters drop are made up for.

A filter on the kind, scope or status alone may pass most memories (a third of them are
facts): scoring all of those cost 170 ms at 100,000. There the planner's estimate of the
rows passing decides: where enough pass that the index meets `limit` of them sooner than
an exact search scores them all (`worth_the_index`), the index answers, and an answer
that comes back short (the iterative scan gave up: too few passed after all) is made
exact. Notebooks and tags (which their own indexes find), time ranges and past states
stay exact.

A read of a large workspace answers every filtered question (but a past state) from the
process's in-memory copy of the vectors instead (pg_vector_cache); what is here answers
the rest: the unfiltered question, a write, a past state, a small workspace.
"""

from __future__ import annotations

import math
from typing import Any

from . import SearchQuery
from .rows import FOUND_COLUMNS
from .vector_search import Vectors, narrowed

EXACT_BELOW = 20_000  # versions with content in the workspace (search_stats)
INDEXED_DIMENSIONS = 384  # the HNSW index's (migration 008): other lengths are exact
INDEX_SETTINGS = (
    "SET LOCAL hnsw.iterative_scan = strict_order",
    "SET LOCAL hnsw.ef_search = 100",
)


def literal(vector: Vectors) -> str:
    """A vector as pgvector's text form: [0.1,0.2,...] (float32 exact with 9 digits)."""
    return "[" + ",".join(f"{x:.9g}" for x in vector.tolist()) + "]"


def use_index(query: SearchQuery, dimensions: int, versions: int) -> bool:
    """Whether the HNSW index may answer `query` (else the search is exact)."""
    return not narrowed(query) and dimensions == INDEXED_DIMENSIONS and versions >= EXACT_BELOW


def may_use_index(query: SearchQuery, dimensions: int, versions: int) -> bool:
    """Whether the index may answer a search narrowed by kinds, scopes or statuses alone,
    should enough rows pass (`worth_the_index`)."""
    return (
        dimensions == INDEXED_DIMENSIONS
        and versions >= EXACT_BELOW
        and query.notebook_ids is None
        and not query.tags
        and query.since is None
        and query.until is None
        and query.at_seq is None
    )


def worth_the_index(passing: float, limit: int, versions: int) -> bool:
    """Whether the index finds `limit` of `passing` rows sooner than an exact search scores
    them all. The index visits about limit * versions / passing rows, at some 11 us each,
    an exact search about 4 us a row (both measured at 100,000): the index wins from about
    passing = sqrt(2.75 * limit * versions), 5,200 rows of 100,000 for recall's 100."""
    return passing >= math.sqrt(2.75 * limit * versions)


def estimate_sql(where: list[str], args: list[Any]) -> tuple[str, list[Any]]:
    """The planner's estimate of the rows passing the filters (a plan, nothing run)."""
    return (
        f"EXPLAIN (FORMAT JSON) SELECT 1 FROM memory_versions v WHERE {' AND '.join(where)}",
        args,
    )


def exact_sql(
    vector: Vectors, model: str, where: list[str], args: list[Any], limit: int
) -> tuple[str, list[Any]]:
    """Every row passing the filters, scored; ties broken by the newest version row."""
    value = literal(vector)
    sql = (
        f"SELECT {FOUND_COLUMNS}, 1 - (mv.vector <=> ?::vector) AS score FROM memory_versions v "
        f"JOIN memory_vectors mv ON mv.version_rowid = v.rowid WHERE {' AND '.join(where)} "
        "AND mv.model = ? AND vector_dims(mv.vector) = ? "
        "ORDER BY mv.vector <=> ?::vector, v.rowid DESC LIMIT ?"
    )
    return sql, [value, *args, model, len(vector), value, limit]


def indexed_sql(
    vector: Vectors, model: str, where: list[str], args: list[Any], limit: int
) -> tuple[str, list[Any]]:
    """The same search through the HNSW index (its expression and predicate, verbatim)."""
    value = literal(vector)
    sql = (
        f"SELECT {FOUND_COLUMNS}, 1 - (mv.vector::vector({INDEXED_DIMENSIONS}) <=> "
        f"?::vector({INDEXED_DIMENSIONS})) AS score FROM memory_vectors mv "
        f"JOIN memory_versions v ON v.rowid = mv.version_rowid WHERE {' AND '.join(where)} "
        f"AND mv.model = ? AND vector_dims(mv.vector) = {INDEXED_DIMENSIONS} "
        f"ORDER BY mv.vector::vector({INDEXED_DIMENSIONS}) <=> ?::vector({INDEXED_DIMENSIONS}) "
        "LIMIT ?"
    )
    return sql, [value, *args, model, value, limit]
