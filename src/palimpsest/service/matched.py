"""How a hit matched, as recall's answer says it beside `matched` (fusion.py's values)."""

from __future__ import annotations

from typing import Any

from ..domain.model import Memory
from ..store.terms import STOPWORDS, index_terms, words
from .fusion import Fused


def explained(hit: Fused[Memory], query: str) -> dict[str, Any]:
    """How `hit` matched `query`, beside `matched`: the query's words it holds, and its
    similarity when known (each left out when there is none)."""
    memory = hit.memory
    searched = [memory.text, memory.title, memory.why, *memory.tags]
    held = {term for column in searched for term in index_terms(column)}
    asked = list(dict.fromkeys(words(query)))
    content = [word for word in asked if word not in STOPWORDS] or asked
    found = [word for word in content if set(index_terms(word)) & held]
    shown: dict[str, Any] = {}
    if found:
        shown["words"] = found
    if hit.similarity is not None:
        shown["similarity"] = round(hit.similarity, 2)
    return shown
