"""PostgreSQL's full text, made to agree with SQLite's: same terms, same ranking.

The terms are store/terms.py's, written by the store (a generated column cannot call
Python) as a tsvector literal, and searched with a tsquery literal: no parser or dictionary
of PostgreSQL's changes a term. Three columns of memory_versions follow the content (a
forget sets them to NULL with it):

- `search`: the tsvector, GIN-indexed, that finds the matches;
- `search_counts`: each term's weighted count (jsonb), for ranking;
- `search_length`: the version's length in terms.

Ranking is SQLite's FTS5 BM25 (k1 1.2, b 0.75; store/bm25.py then re-scores the best of
it, the same for both stores), a term in the text counting 1.0, in the title 0.6, in why
or the tags 0.4 (ts_rank has no inverse document frequency: it ranked a word found in
every memory as high as a rare one). Its statistics are those SQLite's index
has: how many versions with content the workspace holds (past ones too) and their average
length, which the writers keep in `search_stats`, and how many of them hold each term,
which they keep in `search_terms` (a term's row goes with the last version holding it:
a forgotten word may be the secret itself). (A SQLite file holding several workspaces
counts them all.)

A read ranks on an in-memory copy of the counts instead (pg_indexed.py), by the same
rules; the SQL here ranks a write's searches and a snapshot older than the copy.

Every match is scored, as SQLite scores every match of its window: for words in more
than 4,000 versions SQLite ranks the newest 4,000 matches (WINDOW) unless fewer than the
limit of those pass the filters, and so does PostgreSQL (`window_walk`). With a notebook or tag
filter, which SQLite's window counts in, PostgreSQL ranks all matches: where more than
4,000 of them are in the notebook, the two stores may then rank differently. Known
difference: SQLite's match holds a tag filter's words, so its BM25 counts them too;
PostgreSQL's does not.
"""

from __future__ import annotations

import json
from typing import Any

from . import SearchQuery, bm25
from .rows import FOUND_COLUMNS, Row
from .terms import index_terms

# Each searched column's tsvector weight (bm25.WEIGHTS has their weights in the ranking).
LETTERS = (("text", "A"), ("title", "B"), ("why", "C"), ("tags_text", "C"))
BM25_K1 = 1.2
BM25_B = 0.75
# A term's weighted count in version v (the term a parameter).
TERM_COUNT = "coalesce(CAST(v.search_counts ->> CAST(? AS text) AS float8), 0)"
# PostgreSQL keeps positions up to 16,383, and 256 of them per lexeme.
MAX_POSITION = 16_383
MAX_POSITIONS = 256
# As SQLite (store/sqlite.py): for words in most memories, the newest WINDOW matches are
# ranked, and all of them only when fewer than the limit of those pass the filters.
WINDOW = 4_000
CANDIDATES = 500  # of those the best, checked against the filters first (pg_indexed)


def search_values(columns: Row) -> dict[str, Any]:
    """The search columns of a version with these content columns."""
    positions: dict[str, list[str]] = {}
    at = 0
    for column, letter in LETTERS:
        for term in index_terms(columns[column]):
            at += 1
            kept = positions.setdefault(term, [])
            if len(kept) < MAX_POSITIONS:
                kept.append(f"{min(at, MAX_POSITION)}{letter}")
    vector = " ".join(f"{lexeme(term)}:{','.join(at)}" for term, at in positions.items())
    return {"search": vector, **bm25.stored_counts(columns)}


EMPTY = {"search": None, "search_counts": None, "search_length": None}


def lexeme(term: str) -> str:
    """A term quoted for a tsvector or tsquery literal (terms hold no quote, but be sure)."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def counted_terms(counts: str | dict[str, float] | None) -> list[str]:
    """The terms a version's `search_counts` names (JSON text as written, or as read),
    sorted: every writer touches the rows of `search_terms` in the same order."""
    if counts is None:
        return []
    return sorted(json.loads(counts) if isinstance(counts, str) else counts)


def held_sql(terms: list[str], workspace: str) -> tuple[str, list[Any]]:
    """How many versions of the workspace hold each term (d0, d1, ...; NULL for none) and
    how many the workspace has, with their total length: the writers' counts, read by key."""
    counts = "".join(
        f", (SELECT versions FROM search_terms WHERE workspace = ? AND term = ?) AS d{i}"
        for i in range(len(terms))
    )
    sql = (
        "SELECT (SELECT versions FROM search_stats WHERE workspace = ?) AS versions, "
        f"(SELECT terms FROM search_stats WHERE workspace = ?) AS terms{counts}"
    )
    return sql, [workspace, workspace, *(a for term in terms for a in (workspace, term))]


def ranked_sql(
    terms: list[str],
    held: Row,
    where: list[str],
    args: list[Any],
    limit: int,
    every: bool | None = None,
) -> tuple[str, list[Any]]:
    """The best `limit` matches passing the filters `where` (alias v), by BM25 with the
    figures of `held_sql`, newest first on a tie: of the versions holding any term, those
    holding every term first (`every` None); or one of SQLite's passes, over the versions
    holding every term (True) or any (False).

    Every match is scored, so the score is cheap: double precision throughout, in the
    order of operations of FTS5's bm25() (the same rounding, so the same ties); the rows
    are not read here (`Found`)."""
    versions = int(held["versions"] or 0)
    average = int(held["terms"] or 0) / versions if versions else 1.0
    norm = (
        f"{_real(BM25_K1)} * ({_real(1 - BM25_B)} + {_real(BM25_B)} * "
        f"CAST(v.search_length AS float8) / {_real(average)})"
    )
    tf = TERM_COUNT
    parts, held_terms, counts = [], [], []
    for i in range(len(terms)):
        idf = _real(bm25.idf(versions, int(held[f"d{i}"] or 0)))
        parts.append(f"{idf} * (({tf} * {_real(BM25_K1 + 1)}) / ({tf} + {norm}))")
        held_terms.append("v.search_counts ->> CAST(? AS text) IS NOT NULL")
        counts.append(f", {tf} AS tf{i}")
    # A constant where every match holds every term, or only any term counts.
    every_term = " AND ".join(held_terms) if every is None else "true"
    sql = (
        f"SELECT {FOUND_COLUMNS}, v.from_seq AS seq, v.search_length AS length, "
        f"({every_term}) AS every_term, ({' + '.join(parts)}) AS score{''.join(counts)} "
        "FROM memory_versions v "
        f"WHERE v.search @@ CAST(? AS tsquery) AND {' AND '.join(where)} "
        "ORDER BY every_term DESC, score DESC, v.from_seq DESC LIMIT ?"
    )
    params = [
        *(terms if every is None else []), *(t for term in terms for t in (term, term)),
        *terms, match(terms, bool(every)), *args, limit,
    ]  # fmt: skip
    return sql, params


def narrows(query: SearchQuery) -> bool:
    """Whether a search's notebooks or tags may narrow its matches, so that every match
    passing the filters is ranked; a tag with no index terms (`_`) cannot, and the search
    takes the passes over the newest matches as an unnarrowed one (as SQLite's FTS5 does)."""
    return bool(query.notebook_ids) or any(index_terms(tag) for tag in query.tags)


def match(terms: list[str], every: bool) -> str:
    """The tsquery of the versions holding every term (`every`), or any of them."""
    return (" & " if every else " | ").join(lexeme(t) for t in terms)


def window_walk(held: Row, count: int, every: bool) -> bool | None:
    """How to find the newest WINDOW matches, if the term counts say there may be more
    (None: there are not): walking the newest versions back (True: the words are in so
    many that the walk soon meets enough, about 14,000 of 100,000 versions), or reading
    every match's row id (False: the walk would pass over many versions for each match)."""
    versions = int(held["versions"] or 0)
    found = [int(held[f"d{i}"] or 0) for i in range(count)]
    matches = min(found) if every else sum(found)
    if matches <= WINDOW:
        return None
    return 2 * matches * matches > WINDOW * versions


def window_sql(terms: list[str], every: bool, workspace: str, walk: bool) -> tuple[str, list[Any]]:
    """The row id below which the matches fall outside the newest WINDOW, if there are
    more (SQLite's `_window_start`, over the versions its full-text index holds)."""
    sql = (
        "SELECT v.rowid FROM memory_versions v WHERE v.search @@ CAST(? AS tsquery) "
        f"AND v.workspace = ? AND v.scrubbed = 0 ORDER BY {newer(walk)} DESC LIMIT 1 OFFSET ?"
    )
    return sql, [match(terms, every), workspace, WINDOW]


def newer(walk: bool) -> str:
    """The row id to order or bound by: as it is, to walk its index; as an expression,
    to keep the planner to the full-text index (a walk would pass over many versions)."""
    return "v.rowid" if walk else "(v.rowid + 0)"


def _real(value: float) -> str:
    """A double precision literal (a bare decimal is numeric, far slower to compute with)."""
    return f"CAST({value!r} AS float8)"


# Every workspace's term counts, counted anew from the versions (a reindex's last step).
COUNT_EVERY_TERM = (
    "INSERT INTO search_terms(workspace, term, versions) SELECT v.workspace, t.term, count(*) "
    "FROM memory_versions v, jsonb_object_keys(v.search_counts) AS t(term) "
    "WHERE v.scrubbed = 0 AND v.search_counts IS NOT NULL GROUP BY v.workspace, t.term"
)


def counts_sql(terms: list[str], where: list[str], args: list[Any]) -> tuple[str, list[Any]]:
    """The versions passing `where` (alias v) with what bm25.found_matches reads of them."""
    counts = "".join(f", {TERM_COUNT} AS tf{i}" for i in range(len(terms)))
    sql = (
        f"SELECT {FOUND_COLUMNS}, v.from_seq AS seq, v.search_length AS length{counts} "
        f"FROM memory_versions v WHERE {' AND '.join(where)}"
    )
    return sql, [*terms, *args]


def stats(held: Row, terms: list[str]) -> bm25.Stats:
    """The figures of `held_sql` as bm25.py takes them."""
    holding = {term: int(held[f"d{i}"] or 0) for i, term in enumerate(terms)}
    return bm25.Stats(int(held["versions"] or 0), int(held["terms"] or 0), holding)
