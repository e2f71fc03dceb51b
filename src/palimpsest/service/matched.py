"""How a hit matched, as recall's answer says it beside `matched` (fusion.py's values)."""

from __future__ import annotations

from ..domain.model import Memory
from ..store.terms import STOPWORDS, index_terms, words
from .answers import Hit
from .fusion import Fused


def explained(view: Hit, hit: Fused[Memory], query: str) -> None:
    """Add to `view` how `hit` matched `query`, beside `matched`: the query's words it
    holds, and its similarity when known (each left out when there is none)."""
    memory = hit.memory
    searched = [memory.text, memory.title, memory.why, *memory.tags]
    held = {term for column in searched for term in index_terms(column)}
    asked = list(dict.fromkeys(words(query)))
    content = [word for word in asked if word not in STOPWORDS] or asked
    found = [word for word in content if set(index_terms(word)) & held]
    if found:
        view["words"] = found
    if hit.similarity is not None:
        view["similarity"] = round(hit.similarity, 2)
