"""Episodes: the memories of one notebook that say they happened on one day gain from the
best of them.

A conversation's session, an incident, a meeting: what happened together is asked about
together ("what did we decide that day, and why?"), and the answer often shares neither
words nor meaning with the question while a memory of the same episode does. Measured on
the LoCoMo dev conversations (docs/recall.md, fourth round; a LoCoMo session is one day of
one conversation): each candidate gaining 0.3 x the best fused score among the candidates
of its notebook and day raised recall@5 from 0.657 to 0.671; with full text's later steps
(store/bm25.py) and named authors (authors.py), 0.7 did best (0.702 -> 0.712).

The day is the version's `occurred_at` (a UTC day, as every time is stored): a memory that
names none is in no episode. Only a date the memory itself gives says it belongs with
others: memories an agent files in one working session are about whatever came up, and
grouping them by the day they were recorded ranked strangers above answers in a project's
notebook (docs/recall.md). Fusion's candidates set each episode's best; every memory in the
list gains, and none enters it this way.
"""

from __future__ import annotations

from ..domain.model import Memory
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

    def episode(candidate: Candidate) -> tuple[str, str | None]:
        if isinstance(candidate, Memory):
            return candidate.notebook_id, (candidate.occurred_at or "")[:10] or None
        fact = facts[candidate.rowid]
        return fact.notebook_id, fact.day

    best: dict[tuple[str, str | None], float] = {}
    for hit in fused:
        key = episode(hit.memory)
        if key[1] is not None:
            best[key] = max(best.get(key, 0.0), hit.score)
    rescored = [
        hit.rescored(hit.score + share * best.get(episode(hit.memory), 0.0)) for hit in hits
    ]
    return sorted(rescored, key=lambda hit: -hit.score)


def known_facts(
    tx: StoreReader, hits: list[Fused[Candidate]], facts: dict[int, RowFacts] | None
) -> dict[int, RowFacts]:
    """`facts` with those of the hits' rows it lacks (hits read whole need none)."""
    known = dict(facts or {})
    unread = [h.memory.rowid for h in hits if isinstance(h.memory, Found)]
    return known | tx.facts_of_rows([rowid for rowid in unread if rowid not in known])
