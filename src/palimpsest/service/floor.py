"""The relevance floor: what recall leaves out because it does not answer the query.

Two rules, measured on the project dev set and LoCoMo at once (docs/recall.md):

- A query is answered only when some candidate shows evidence of its own: a similarity of
  at least `similarity`, or at least `words` of the query's words (weighted by rarity,
  store/bm25.py's `whole`), or a nearest memory that stands STANDS_APART nearer than the
  tenth (a one-word query's similarities are all low, "feline" to a note on a cat 0.27,
  but the cat stands out). Otherwise nothing matches: the answer says so, rather than
  listing the nearest strangers.
- A hit scoring under `share` of the best hit is left out: in a notebook of fifty memories
  the tenth "nearest" is rarely about the question at all.

`near_misses` keeps what the floor would leave out, marked, for a caller who wants the
closest memories anyway. Lists by filters alone (no query) have no floor, and full text
alone (the embedder `none`) only the second rule: each of its hits shares a word, and
without meaning a paraphrase shares few.
"""

from __future__ import annotations

from dataclasses import dataclass

from .fusion import LISTED, Candidate, Fused

STANDS_APART = 0.25  # costs no answer on the dev set at any similarity floor tried


@dataclass(frozen=True)
class Floor:
    similarity: float  # some candidate this near answers the query...
    words: float  # ...or one holding this share of its words
    share: float  # a hit under this share of the best score is left out


def above_floor(
    hits: list[Fused[Candidate]], floor: Floor, apart: float | None, near_misses: bool
) -> tuple[list[Fused[Candidate]], set[str]]:
    """The `hits` (best first) that pass `floor`, and the ids of those that do not; with
    `near_misses` every hit stays and the ids say which would have gone. `apart`: how far
    the nearest memory stands from the rest (fusion.py's `spread`); None when recall has no
    meaning to judge by (full text alone), where every hit shares a word and only the
    second rule applies."""
    if not hits or hits[0].matched == LISTED:
        return hits, set()
    answered = (
        apart is None
        or apart >= STANDS_APART
        or any(
            hit.words >= floor.words or (hit.similarity or 0.0) >= floor.similarity for hit in hits
        )
    )
    least = floor.share * hits[0].score if answered else float("inf")
    missed = {hit.memory.id for hit in hits if hit.score < least}
    if near_misses:
        return hits, missed
    return [hit for hit in hits if hit.memory.id not in missed], missed
