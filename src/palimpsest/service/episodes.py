"""Episodes: the memories of one notebook filed on one day gain from the best of them.

A conversation's session, a day's work on one project: what happened together is asked
about together ("what did we decide that day, and why?"), and the answer often shares
neither words nor meaning with the question while a memory of the same day does.
Measured on the LoCoMo dev conversations (docs/recall.md, fourth round; a LoCoMo session
is one day of one conversation): each candidate gaining 0.3 x the best fused score among
the candidates of its notebook and day raised recall@5 from 0.657 to 0.671 (0.668 with the
weight chosen on four conversations and scored on the fifth); with full text's later
steps (store/bm25.py) and named authors (authors.py), 0.7 did best (0.702 -> 0.712).

The day is the version's `occurred_at`, else when it was recorded: a UTC day, as every
time is stored. Fusion's candidates set each episode's best; every memory in the list
gains (neighbouring context's newcomers too), and none enters it this way.
"""

from __future__ import annotations

from ..model import Memory
from ..store import Found, RowFacts, StoreReader
from .fusion import Candidate, Fused


def with_episodes(
    tx: StoreReader,
    fused: list[Fused[Candidate]],
    hits: list[Fused[Candidate]],
    share: float,
    facts: dict[int, RowFacts] | None = None,
) -> list[Fused[Candidate]]:
    """`hits` (fusion's list after neighbouring context) with each one's gain: `share` x
    the best score in `fused` (before context) among the candidates of its episode
    (`facts`: what is known of the candidates' rows already)."""
    if share <= 0 or not hits:
        return hits
    facts = known_facts(tx, hits, facts)

    def episode(candidate: Candidate) -> tuple[str, str]:
        if isinstance(candidate, Memory):
            return candidate.notebook_id, (candidate.occurred_at or candidate.recorded_at)[:10]
        fact = facts[candidate.rowid]
        return fact.notebook_id, fact.day

    best: dict[tuple[str, str], float] = {}
    for hit in fused:
        key = episode(hit.memory)
        best[key] = max(best.get(key, 0.0), hit.score)
    rescored = [
        Fused(hit.memory, hit.score + share * best.get(episode(hit.memory), 0.0), hit.matched)
        for hit in hits
    ]
    return sorted(rescored, key=lambda hit: -hit.score)


def known_facts(
    tx: StoreReader, hits: list[Fused[Candidate]], facts: dict[int, RowFacts] | None
) -> dict[int, RowFacts]:
    """`facts` with those of the hits' rows it lacks (hits read whole need none)."""
    known = dict(facts or {})
    unread = [h.memory.rowid for h in hits if isinstance(h.memory, Found)]
    return known | tx.facts_of_rows([rowid for rowid in unread if rowid not in known])
