"""Hybrid ranking: the full-text hits and the nearest vectors of one query, made one list.

A candidate's score is

    weight.words x its share of the query's words (0-1, store/bm25.py's `whole`)
  + weight.meaning x trust x its cosine similarity to the query

Both parts are absolute: a memory holding one common word of four scores little by words
however it ranks among the matches, and one far from the question in meaning scores little
by meaning. (Scaling full text min-max over its pool, as before, gave the best word match
the whole words weight even when it held only "live" of "how do I push a new version
live?": in a project's notebook that ranked strangers above the answer.) A full-text hit
is scored with its own similarity when the store returned it, else with the lowest it
returned (it is no nearer than that).

`trust` says how much the nearest memories stand apart from the rest: the gap between the
nearest and the tenth nearest, as a share of SPREAD (squared; 1 at SPREAD or more). Where
the question's answer stands out (a project's notebook: median gap 0.27 on the dev set),
meaning is trusted whole; where every memory is about as near as the next (a long chat of
short turns: median 0.11 on LoCoMo), similarity tells little and words decide. Measured on
both dev sets at once (docs/recall.md): the one form that beat meaning alone on project
memory without losing the conversations.

A vector below `min_similarity` is no match by meaning: it is no candidate of its own, and
a word match that far away is labelled `words`, not `both`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Generic, Protocol, TypeVar

from ..domain.model import Memory
from ..store import Found

WORDS, MEANING, BOTH = "words", "meaning", "both"
CONTEXT = "context"  # found by the words of the memory filed before it (store/bm25.py)
LISTED = "filters"  # listed by filters alone, no query (recall's relevance floor skips it)
SPREAD = 0.15  # the gap between the nearest and the tenth nearest that meaning is trusted at
SPREAD_RANK = 9  # the tenth nearest


class Identified(Protocol):
    @property
    def id(self) -> str: ...


# What a hit holds: a memory read whole, or (while ranking) a version not read yet.
M = TypeVar("M", bound=Identified, covariant=True)
Candidate = Memory | Found


@dataclass(frozen=True)
class Weights:
    words: float
    meaning: float
    min_similarity: float  # a cosine below this is no match by meaning
    context: float = 0.0  # the share of a hit's score its neighbours gain (context.py)
    episode: float = 0.0  # the share of its episode's best score a hit gains (episodes.py)
    author: float = 0.0  # the share of the best score a hit gains when the query names its author


@dataclass(frozen=True)
class Fused(Generic[M]):
    memory: M
    score: float
    matched: str  # words, meaning, both, context or filters (recall adds id and key)
    words: float = 0.0  # the share of the query's words it holds (0: none)
    similarity: float | None = None  # its cosine to the query, when the store returned it

    def rescored(self, score: float) -> Fused[M]:
        return replace(self, score=score)


def fuse(
    words: Sequence[tuple[Candidate, float]],
    meaning: Sequence[tuple[Candidate, float]],
    weights: Weights,
    every: bool = False,
) -> list[Fused[Candidate]]:
    """Every candidate of either list once, best fused score first (ties: full-text order).
    `every`: each memory the store returned by meaning is a candidate however far (recall's
    `near_misses`, the closest there are), still labelled as a match by meaning only from
    `min_similarity`."""
    similarity = {m.id: s for m, s in meaning}
    lowest = meaning[-1][1] if meaning else 0.0
    by_meaning = weights.meaning * trust(meaning)
    fused: dict[str, Fused[Candidate]] = {}
    for memory, words_score in words:
        if memory.id in fused:
            continue
        share = min(words_score, 1.0)
        near = similarity.get(memory.id)
        score = weights.words * share + by_meaning * max(lowest if near is None else near, 0.0)
        matched = _matched(memory, near is not None and near >= weights.min_similarity)
        fused[memory.id] = Fused(memory, score, matched, share, near)
    for memory, near in meaning:
        if (every or near >= weights.min_similarity) and memory.id not in fused:
            fused[memory.id] = Fused(memory, by_meaning * near, MEANING, similarity=near)
    return sorted(fused.values(), key=lambda hit: -hit.score)


def trust(meaning: Sequence[tuple[Candidate, float]]) -> float:
    """How far the nearest memory stands from the tenth nearest, as a share of SPREAD,
    squared (1 when the store returned fewer than two: nothing to tell apart)."""
    return 1.0 if len(meaning) < 2 else min(1.0, spread(meaning) / SPREAD) ** 2


def spread(meaning: Sequence[tuple[Candidate, float]]) -> float:
    """How much nearer the nearest memory is than the tenth nearest; when the store
    returned fewer than ten, than the farthest of them or an unrelated text (0)."""
    if not meaning:
        return 0.0
    if len(meaning) > SPREAD_RANK:
        return max(meaning[0][1] - meaning[SPREAD_RANK][1], 0.0)
    return max(meaning[0][1] - min(meaning[-1][1], 0.0), 0.0)


def _matched(memory: Candidate, near: bool) -> str:
    """How a full-text hit matched: by its words, or by those of the memory before it."""
    if isinstance(memory, Found) and memory.borrowed:
        return MEANING if near else CONTEXT
    return BOTH if near else WORDS
