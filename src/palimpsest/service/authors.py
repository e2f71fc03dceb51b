"""People a query names: "what did Ana decide about the cache?" asks for Ana's memories.

When every word of a person's name (`user:Ana Lima` is "ana lima") is among the query's
terms and the candidates have other authors too, the name stops being searched as words
and each memory by that person gains a share of the score. As words, the name matched
every memory quoting that person, however little else it shared with the question; as an
author it tells the memories apart by who filed them. Only people count: an agent's name
(`agent:deploy`, `agent:ci`) is a word of the trade that queries use for what it means,
and `user:local` names the machine's own user, not a person. A store with one author
(most local ones) is never changed by this: the name tells nothing apart there.

Measured on the LoCoMo dev conversations, each turn filed by its speaker (docs/recall.md,
fourth round): the named speaker's turns gaining 0.15 (of the best score) and the names
dropped from full text raised multi-hop recall@5, the questions that need two turns of one
person, the most.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..domain.model import Memory
from ..store import RowFacts, StoreReader
from ..store.terms import index_terms
from .episodes import known_facts
from .fusion import Candidate, Fused

NOT_A_NAME = "user:local"  # the default actor: the machine's own user


def name_terms(author: str) -> frozenset[str]:
    """The terms of a person's name (what follows `user:`); none for an agent."""
    kind, _, name = author.partition(":")
    return frozenset(index_terms(name)) if kind == "user" and author != NOT_A_NAME else frozenset()


def named_authors(authors: Mapping[int, str | None], query_terms: list[str]) -> set[str]:
    """The people among `authors` (the candidates' rows -> author) that the query names,
    when some candidate is by another author (else none: naming would tell nothing apart)."""
    held = set(query_terms)
    present = {a for a in authors.values() if a is not None}
    named = {a for a in present if (terms := name_terms(a)) and terms <= held}
    return named if named and present - named else set()


def with_authors(
    tx: StoreReader,
    hits: list[Fused[Candidate]],
    named: set[str],
    share: float,
    facts: dict[int, RowFacts] | None = None,
) -> list[Fused[Candidate]]:
    """`hits` with each one by a named person gaining `share` of the best score (scores
    are absolute: a fixed gain weighed more where every match is weak), best first (`facts`: what
    is known of the candidates' rows already)."""
    if share <= 0 or not named or not hits:
        return hits
    facts = known_facts(tx, hits, facts)

    def author(candidate: Candidate) -> str | None:
        return candidate.author if isinstance(candidate, Memory) else facts[candidate.rowid].author

    gain = share * max(hit.score for hit in hits)
    rescored = [hit.rescored(hit.score + gain) if author(hit.memory) in named else hit
                for hit in hits]  # fmt: skip
    return sorted(rescored, key=lambda hit: -hit.score)
