"""Full text's last steps, the same for every store: its best matches re-ranked by BM25
with a gentler length penalty, each lent the words of the memory filed just before it.

Both stores first rank matches as SQLite's FTS5 `bm25()` does (k1 1.2, b 0.75), memories
holding every query term first. FTS5 cannot change b, so the best DEPTH of that list are
scored again here with b 0.2, newest first on a tie. b 0.75 pushed a long memory far
down for its length alone; on the LoCoMo dev conversations b 0.2-0.3 raised recall@5 in
every conversation, and the best 100 re-scored gave the same figures as scoring every
match (docs/recall.md, fourth round).

Then the first NEIGHBOURED borrow the words of the memory filed just before each in its
notebook, at SHARE of their weight, and the memory filed just after each joins with its
own words and those of the match before it. An answer often holds none of the
question's words while what it answers does ("Did you go to Lisbon?" - "Yes, in May");
scored as if SHARE of the memory before were its own text, LoCoMo's answers were found
(docs/recall.md). Only the first few borrow or draw: deeper ones gave no more.

The figures a score needs are each store's: how many versions with content the workspace
holds, their total length in terms, how many hold each query term.
"""

from __future__ import annotations

import heapq
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import Found
from .terms import index_terms

K1 = 1.2
B = 0.2
DEPTH = 100  # matches re-scored: the research's depth (its figures were those of all)
SHARE = 0.2  # the weight of the words of the memory filed just before
NEIGHBOURED = 20  # the first matches that borrow those words and draw in the next memory
# Each searched column's weight, as SQLite's bm25(1.0, 0.6, 0.4, 0.4) weighs them.
WEIGHTS = (("text", 1.0), ("title", 0.6), ("why", 0.4), ("tags_text", 0.4))
_ASCII_WORD = re.compile(r"[^\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+")  # FTS5's ascii tokens


@dataclass(frozen=True)
class Stats:
    versions: int  # versions with content in the workspace (past ones too)
    length: int  # their total length in terms
    holding: Mapping[str, int]  # how many of them hold each query term


@dataclass(frozen=True)
class Match:
    found: Found
    seq: int  # the version's from_seq: the newer first on a tie
    counts: Mapping[str, float]  # each term's count, weighted by its column
    length: int  # terms in the version, the notebook id's words too


def term_counts(columns: Mapping[str, str | None]) -> tuple[dict[str, float], int]:
    """Each term's weighted count in a version with these content columns, and its
    length as SQLite's index counts it (the notebook id's words too, though they weigh 0)."""
    counts: dict[str, float] = {}
    length = 0
    for column, weight in WEIGHTS:
        for term in index_terms(columns[column]):
            length += 1
            counts[term] = round(counts.get(term, 0.0) + weight, 6)
    length += len(_ASCII_WORD.findall(columns["notebook_id"] or ""))
    return counts, length


def stored_counts(columns: Mapping[str, str | None]) -> dict[str, str | int]:
    """The columns a store keeps beside a version's content: its term counts (JSON) and
    length, read back by `found_matches`."""
    counts, length = term_counts(columns)
    return {"search_counts": json.dumps(counts), "search_length": length}


def found_matches(rows: Iterable[Mapping[str, Any]], terms: list[str]) -> list[Match]:
    """Version rows with their `seq`, `length` and each term's count (`tf0`, `tf1`...)."""
    named = [(term, f"tf{i}") for i, term in enumerate(terms)]
    return [
        Match(
            Found(row["memory_id"], int(row["rowid"])),
            int(row["seq"]),
            {term: float(row[column]) for term, column in named},
            int(row["length"] or 0),  # NULL: none kept
        )
        for row in rows
    ]


def pooled(every: list[Found], any_term: list[Found], depth: int) -> list[Found]:
    """The `depth` best matches as both stores list them: every-term matches first, then
    the best of the rest (`any_term`, matches holding any term, may repeat them), as one
    ranked list would hold them."""
    held = {f.id for f in every}
    rest = [f for f in any_term if f.id not in held]
    return every[:depth] + rest[: max(depth - len(every), 0)]


def scored(matches: Iterable[Match], terms: list[str], stats: Stats) -> list[tuple[Match, float]]:
    """Each of `matches` with its BM25 score (b = B)."""
    average = stats.length / stats.versions if stats.versions else 1.0
    weights = {term: idf(stats.versions, stats.holding.get(term, 0)) for term in terms}
    return [(m, _score(m, weights, average)) for m in matches]


def whole(terms: list[str], stats: Stats) -> float:
    """The score of a version of average length holding each term once: a match's score
    over it says how much of the query it holds (rare words weigh more), whatever the
    store's size or the query's length, where BM25 itself grows with both."""
    return sum(idf(stats.versions, stats.holding.get(term, 0)) for term in terms) or 1.0


def ordered(scored: list[tuple[Match, float]], terms: list[str]) -> list[tuple[Match, float]]:
    """Scored matches holding every term first, then by score, newest first on a tie."""
    return sorted(scored, key=_order(terms))


def first(scored: list[tuple[Match, float]], terms: list[str], n: int) -> list[Match]:
    """The first `n` matches in `ordered`'s order, without ordering the rest."""
    return [m for m, _ in heapq.nsmallest(n, scored, key=_order(terms))]


def _order(terms: list[str]) -> Callable[[tuple[Match, float]], tuple[bool, float, int, int]]:
    def key(pair: tuple[Match, float]) -> tuple[bool, float, int, int]:
        match, score = pair
        counts = match.counts
        every = all(counts.get(term) for term in terms)
        return (not every, -score, -match.seq, -match.found.rowid)

    return key


def lent(match: Match, before: Match, terms: list[str]) -> Match:
    """`match` with SHARE of the words of `before` (the memory filed just before it)."""
    counts = {
        term: round(match.counts.get(term, 0.0) + SHARE * before.counts.get(term, 0.0), 6)
        for term in terms
    }
    return Match(match.found, match.seq, counts, match.length + before.length)


def _score(match: Match, weights: Mapping[str, float], average: float) -> float:
    norm = K1 * (1 - B + B * match.length / average)
    counts = match.counts
    score = 0.0
    for term, weight in weights.items():
        tf = counts.get(term)
        if tf:  # (most terms are not in most matches)
            score += weight * (tf * (K1 + 1)) / (tf + norm)
    return score


def idf(versions: int, holding: int) -> float:
    """FTS5's inverse document frequency of a term held by `holding` of `versions`."""
    return max(math.log((versions - holding + 0.5) / (holding + 0.5)), 1e-6)
