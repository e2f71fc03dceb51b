"""Hybrid ranking: the full-text hits and the nearest vectors of one query, made one list.

Measured on the LoCoMo dev conversations (docs/recall.md, bench/recall_research.py):
reciprocal rank fusion lost to full text alone there (0.482-0.520 against 0.553 recall@5
at k=60) because full text ranks well and RRF flattens its lead; fusing the scores
themselves did better. So a candidate's score is

    weight.words x its full-text score scaled to 0-1 over the full-text pool (min-max)
  + weight.meaning x its cosine similarity to the query

A full-text hit that is not among the nearest vectors gets the lowest similarity of the
pool, a bound the store's answer gives (it is no nearer than that) instead of 0, which
sank good word matches. A vector below the similarity floor is no match by meaning: in a
small store every memory is "nearest", and "xyzzy" must not list them all.

A memory in neither pool (one that neighbouring context brings in, context.py) is bounded
the same way: no word score above the pool's lowest (0 once scaled), no similarity above
the lowest the store returned (none at all when that is below the floor): that is
`unmatched_score`, the most fusion would give it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from ..model import Memory
from ..store import Found

WORDS, MEANING, BOTH = "words", "meaning", "both"
CONTEXT = "context"  # found through the memories filed beside it (context.py, store/bm25.py)


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
    author: float = 0.0  # what a hit gains when the query names its author (authors.py)


@dataclass(frozen=True)
class Fused(Generic[M]):
    memory: M
    score: float
    matched: str  # words, meaning, both or context


def fuse(
    words: Sequence[tuple[Candidate, float]],
    meaning: Sequence[tuple[Candidate, float]],
    weights: Weights,
) -> list[Fused[Candidate]]:
    """Every candidate of either list once, best fused score first (ties: full-text order)."""
    near = _near(meaning, weights)
    lowest = min(near.values(), default=0.0)
    scaled = _scaled([score for _, score in words])
    fused: dict[str, Fused[Candidate]] = {}
    for (memory, _), words_score in zip(words, scaled, strict=True):
        if memory.id in fused:
            continue
        similarity = near.get(memory.id, lowest)
        score = weights.words * words_score + weights.meaning * max(similarity, 0.0)
        fused[memory.id] = Fused(memory, score, _matched(memory, memory.id in near))
    for memory, similarity in meaning:
        if memory.id in near and memory.id not in fused:
            fused[memory.id] = Fused(memory, weights.meaning * similarity, MEANING)
    return sorted(fused.values(), key=lambda hit: -hit.score)


def _matched(memory: Candidate, near: bool) -> str:
    """How a full-text hit matched: by its words, or by those of the memory before it."""
    if isinstance(memory, Found) and memory.borrowed:
        return MEANING if near else CONTEXT
    return BOTH if near else WORDS


def unmatched_score(meaning: Sequence[tuple[Candidate, float]], weights: Weights) -> float:
    """The most fusion could give a memory found by neither side: weight.meaning x the
    lowest similarity the store returned, which no memory left out exceeds (`meaning`
    holds every returned, best first), or 0 when that is below the floor: what was left
    out then is no match by meaning at all."""
    if not meaning or meaning[-1][1] < weights.min_similarity:
        return 0.0
    return weights.meaning * meaning[-1][1]


def _near(meaning: Sequence[tuple[Candidate, float]], weights: Weights) -> dict[str, float]:
    return {m.id: similarity for m, similarity in meaning if similarity >= weights.min_similarity}


def _scaled(scores: list[float]) -> list[float]:
    """Scores mapped to 0-1 over their own list (the best 1); a list of one, or of equal
    scores, is all 1: each is as good a word match as the query found."""
    if not scores:
        return []
    low, high = min(scores), max(scores)
    if high - low < 1e-12:
        return [1.0] * len(scores)
    return [(score - low) / (high - low) for score in scores]
