"""Neighbouring context: a memory filed just before or after a good match gains from it.

What is filed together belongs together: a question and the answer after it, the steps
of one decision, a fix and the error it fixed. Measured on the LoCoMo dev conversations
(docs/recall.md), adding to each memory a share of the fused score of the memories filed
up to two places before and after it in its notebook (half the share at distance two)
raised recall@5 by about 0.06 over fusion alone, more than any other idea tried.

Only the best ANCHORS hits lend their score (their neighbours found in one statement); a memory
that gains this way without matching the query itself is listed with `matched` context,
scored what it gained plus `base`, the most fusion would have given it (fusion.py's
`unmatched_score`): without that base it ranked below every candidate that gained as
much, though it is no worse a match than the weakest of them (LoCoMo dev: +0.005 recall@5
with the meaning pool of 100, chosen in 4 of 5 leave-one-conversation-out folds).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from ..model import Memory
from ..store import SearchQuery, StoreReader
from .fusion import CONTEXT, Candidate, Fused

SPAN = 2  # memories each side
ANCHORS = 30  # hits that lend their score to their neighbours


def with_context(
    tx: StoreReader,
    hits: list[Fused[Candidate]],
    search: SearchQuery,
    share: float,
    passes: Callable[[Memory, SearchQuery], bool],
    base: float = 0.0,
) -> list[Fused[Candidate]]:
    """`hits` rescored with their neighbours' share, plus neighbours that pass the filters
    and gain enough to enter the first `search.limit`. Such a neighbour scores `base` (no
    candidate's own score is below it) plus what it gained."""
    if share <= 0 or not hits:
        return hits
    gained: dict[str, float] = defaultdict(float)
    anchors = hits[:ANCHORS]
    beside = tx.filed_beside([hit.memory.id for hit in anchors], SPAN, search.at_seq)
    for hit in anchors:
        for other, distance in beside.get(hit.memory.id, []):
            gained[other] += share / abs(distance) * hit.score
    found = {hit.memory.id: hit for hit in hits}
    rescored = [Fused(h.memory, h.score + gained.get(h.memory.id, 0.0), h.matched) for h in hits]
    rescored.sort(key=lambda hit: -hit.score)
    # Best first, so the reads stop at the first neighbour that could not enter the list.
    newcomers = sorted((g, m) for m, g in gained.items() if m not in found)
    while newcomers:
        gain, memory_id = newcomers.pop()
        entry = rescored[search.limit - 1].score if len(rescored) >= search.limit else 0.0
        if base + gain <= entry:
            break  # neither this neighbour nor any after it could enter: not worth a read
        memory = (
            tx.get_memory(memory_id)
            if search.at_seq is None
            else tx.memory_at(memory_id, search.at_seq)
        )
        if memory is not None and passes(memory, search):
            rescored.append(Fused[Candidate](memory, base + gain, CONTEXT))
            rescored.sort(key=lambda hit: -hit.score)
    return rescored
