"""PostgreSQL's full text, made to agree with SQLite's: same terms, same ranking.

The terms are store/terms.py's, written by the store (a generated column cannot call
Python) as a tsvector literal, and searched with a tsquery literal: no parser or dictionary
of PostgreSQL's changes a term. Three columns of memory_versions follow the content (a
forget sets them to NULL with it):

- `search`: the tsvector, GIN-indexed, that finds the matches;
- `search_counts`: each term's weighted count (jsonb), for ranking;
- `search_length`: the version's length in terms.

Ranking is SQLite's FTS5 BM25 (k1 1.2, b 0.75), a term in the text counting 1.0, in the
title 0.6, in why or the tags 0.4 (ts_rank has no inverse document frequency: it ranked a
word found in every memory as high as a rare one). Its statistics are those SQLite's index
has: how many versions with content the workspace holds (past ones too) and their average
length, which the writers keep in `search_stats`, and how many of them hold each term,
counted at each search. (A SQLite file holding several workspaces counts them all.)
"""

from __future__ import annotations

import json
import re
from typing import Any

from .rows import Row
from .terms import index_terms

# Each searched column's tsvector weight and its weight in the ranking, as SQLite's
# bm25(1.0, 0.6, 0.4, 0.4) weighs its columns.
WEIGHTS = (("text", "A", 1.0), ("title", "B", 0.6), ("why", "C", 0.4), ("tags_text", "C", 0.4))
BM25_K1 = 1.2
BM25_B = 0.75
# PostgreSQL keeps positions up to 16,383, and 256 of them per lexeme.
MAX_POSITION = 16_383
MAX_POSITIONS = 256
_ASCII_WORD = re.compile(r"[^\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+")  # FTS5's ascii tokens


def search_values(columns: Row) -> dict[str, Any]:
    """The search columns of a version with these content columns."""
    positions: dict[str, list[str]] = {}
    counts: dict[str, float] = {}
    length = 0
    for column, letter, weight in WEIGHTS:
        for term in index_terms(columns.get(column)):
            length += 1
            kept = positions.setdefault(term, [])
            if len(kept) < MAX_POSITIONS:
                kept.append(f"{min(length, MAX_POSITION)}{letter}")
            counts[term] = round(counts.get(term, 0.0) + weight, 6)
    # SQLite counts the notebook id's words in a row's length too (its column weighs 0).
    length += len(_ASCII_WORD.findall(columns.get("notebook_id") or ""))
    vector = " ".join(f"{lexeme(term)}:{','.join(at)}" for term, at in positions.items())
    return {"search": vector, "search_counts": json.dumps(counts), "search_length": length}


EMPTY = {"search": None, "search_counts": None, "search_length": None}


def lexeme(term: str) -> str:
    """A term quoted for a tsvector or tsquery literal (terms hold no quote, but be sure)."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def ranked(
    terms: list[str], workspace: str, where: list[str], args: list[Any], limit: int
) -> tuple[str, list[Any]]:
    """The SQL (and its parameters) of a search in one statement: how many versions of the
    workspace hold each term (`held`: a pass over every match, which SQLite's index knows
    without one), then the matches passing the filters `where` (alias v), those holding
    every term first, each part by BM25 (`search_stats` gives the count and average
    length), newest first on a tie."""
    lexemes = [lexeme(t) for t in terms]
    counts = ", ".join(
        f"count(*) FILTER (WHERE m.search_counts ->> CAST(? AS text) IS NOT NULL) AS d{i}"
        for i in range(len(terms))
    )
    norm = f"{BM25_K1} * (1 - {BM25_B} + {BM25_B} * v.search_length / s.average)"
    parts = []
    for i in range(len(terms)):
        tf = "coalesce(CAST(v.search_counts ->> CAST(? AS text) AS float8), 0)"
        idf = f"greatest(ln((s.versions - held.d{i} + 0.5) / (held.d{i} + 0.5)), 1e-6)"
        parts.append(f"{idf} * {tf} * {BM25_K1 + 1} / ({tf} + {norm})")
    sql = (
        f"WITH held AS (SELECT {counts} FROM memory_versions m WHERE m.search @@ "
        "CAST(? AS tsquery) AND m.workspace = ? AND m.scrubbed = 0), "
        "s AS (SELECT CAST(versions AS float8) AS versions, "
        "CAST(terms AS float8) / greatest(versions, 1) AS average "
        "FROM search_stats WHERE workspace = ?) "
        f"SELECT v.*, ({' + '.join(parts)}) AS score FROM memory_versions v, held, s "
        f"WHERE v.search @@ CAST(? AS tsquery) AND {' AND '.join(where)} "
        "ORDER BY v.search @@ CAST(? AS tsquery) DESC, score DESC, v.from_seq DESC LIMIT ?"
    )
    any_term = " | ".join(lexemes)
    params = [
        *terms, any_term, workspace, workspace,
        *(t for term in terms for t in (term, term)),
        any_term, *args, " & ".join(lexemes), limit,
    ]  # fmt: skip
    return sql, params
