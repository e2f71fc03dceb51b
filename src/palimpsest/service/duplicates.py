"""duplicates: groups of active memories that say the same thing, for a person to merge.

Two memories are grouped when they hold the same normalised text, or when a write of one
would list the other among its `possible_duplicates` (suggest.says_the_same: the same
rule and thresholds, so the queue and the suggestions on write agree): no sign that they
differ (a negation, another number or name, the same key with another text), and a cosine
of at least 0.92 or content words overlapping at least 0.8. Each memory's candidates are
its CANDIDATES nearest by meaning, as on write, and every memory its words overlap that
much; pairs join into groups transitively. Memories already linked, or standing in an
open dispute with each other, are left apart, as suggestions leave them: how they relate
is known.

The nearest are found among every active memory of the scope at once: their current
vectors read in one query (`current_vectors`) and multiplied as one matrix, BLOCK rows at a
time. That is n x n products, but in BLAS: about a second at 10,000 memories, where a
nearest-neighbour search per memory took 3 ms each (bench/bench_duplicates.py). The most
recently filed EXAMINED are examined (each against all), so a new repeat of an old memory
is always found. Overlapping words are found exactly by prefix filtering (`_overlapping`),
with no search per memory; the same text is grouped across all of them. The answer says
how many were examined.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..domain.errors import ValidationError
from ..domain.model import Memory, Notebook, normalize_text
from ..store import StoreReader
from .answers import DuplicateGroup, DuplicateMember, DuplicatesAnswer
from .base import MAX_LIMIT, ServiceBase
from .suggest import (
    BY_MEANING,
    BY_WORDS,
    CANDIDATES,
    content_terms,
    jaccard,
    says_the_same,
    snippet,
)

if TYPE_CHECKING:
    from ..embed import Vectors

EXAMINED = 10_000  # memories whose neighbours are looked for, the most recently filed first
BLOCK = 512  # rows of similarities computed at once (512 x 10,000 floats: 20 MB)
DEFAULT_LIMIT = 20


class DuplicateOps(ServiceBase):
    def duplicates(
        self, *, notebook: str | None = None, limit: int = DEFAULT_LIMIT
    ) -> DuplicatesAnswer:
        """Groups of active memories that say the same thing, in `notebook` or the whole
        workspace: the largest first, then the most alike; at most `limit` groups."""
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            raise ValidationError(f"`limit` is a number from 1 to {MAX_LIMIT}.", field="limit")
        with self.store.read(self.workspace) as tx:
            now = self.clock()
            scope = self._find_notebook(tx, notebook) if notebook is not None else None
            active = [
                m
                for m in tx.memories_at(None, scope.id if scope else None)
                if m.status == "active" and not m.expired(now)
            ]
            examined = sorted(active, key=lambda m: m.recorded_at, reverse=True)[:EXAMINED]
            pairs = _same_text(active) + self._alike(
                tx, examined, active, scope.id if scope else None
            )
            groups = _grouped(pairs, {m.id: m for m in active}, _apart(tx, pairs))
            shown = [self._group_view(tx, group, sim) for group, sim in groups[:limit]]
        answer: DuplicatesAnswer = {
            "groups": shown,
            "examined": len(examined),
            "by_meaning": self.vectors.enabled,
        }
        if len(groups) > limit:
            answer["more"] = True
        if len(active) > len(examined):
            answer["warnings"] = [
                f"Only the {len(examined):,} most recently filed of {len(active):,} active "
                "memories were compared (each with all); name a notebook to look further."
            ]
        return answer

    def _alike(
        self,
        tx: StoreReader,
        examined: list[Memory],
        active: list[Memory],
        notebook_id: str | None,
    ) -> list[tuple[str, str, float]]:
        """Pairs (a, b, similarity) that suggestions on write would call duplicates: of
        each examined memory, its CANDIDATES nearest by meaning among `active` (all of the
        scope); and every pair whose content words overlap enough, which the rule takes
        too (found exactly, without a search per memory)."""
        vectors = (
            tx.current_vectors(self.vectors.model, notebook_id) if self.vectors.enabled else {}
        )
        vectors = {m.id: vectors[m.id] for m in active if m.id in vectors}
        terms = {m.id: content_terms(m.text) for m in active}  # once each, not per pair
        embedded = [m for m in active if m.id in vectors]
        examined = [m for m in examined if m.id in vectors]
        found = _nearest_pairs(examined, embedded, vectors, terms)
        for a, b, words_alike in _overlapping(active, terms):
            cosine = None
            if a.id in vectors and b.id in vectors:
                cosine = float(vectors[a.id] @ vectors[b.id])
            alike = says_the_same(a, b, cosine, words_alike)
            if alike is not None:
                found.append((a.id, b.id, alike))
        return found

    def _group_view(
        self, tx: StoreReader, members: list[Memory], similarity: float
    ) -> DuplicateGroup:
        notebooks: dict[str, Notebook | None] = {}
        lines = []
        for memory in members:
            if memory.notebook_id not in notebooks:
                notebooks[memory.notebook_id] = tx.get_notebook(memory.notebook_id)
            notebook = notebooks[memory.notebook_id]
            versions = tx.memory_versions(memory.id)
            line: DuplicateMember = {
                "id": memory.id,
                "version": memory.version,
                "kind": memory.kind,
                "notebook": notebook.name if notebook else memory.notebook_id,
                "text": snippet(memory.text),
                "owner": memory.owner,
                "updated_at": versions[-1].at if versions else memory.recorded_at,
            }
            if memory.key is not None:
                line["key"] = memory.key
            lines.append(line)
        lines.sort(key=lambda line: (line["updated_at"], line["id"]), reverse=True)
        same_text = len({normalize_text(m.text) for m in members}) == 1
        group: DuplicateGroup = {
            "memories": lines,
            "by": "text" if same_text else ("meaning" if self.vectors.enabled else "words"),
            "similarity": round(similarity, 2),
        }
        mixed = [name for name in ("kind", "key") if len({getattr(m, name) for m in members}) > 1]
        if mixed:
            group["mixed"] = mixed
        return group


def _nearest_pairs(
    examined: list[Memory],
    pool: list[Memory],
    vectors: Mapping[str, Vectors],
    terms: Mapping[str, frozenset[str]],
) -> list[tuple[str, str, float]]:
    """Of each examined memory, those of its CANDIDATES nearest in `pool` whose cosine
    reaches BY_MEANING.duplicate (the vectors are unit length: a product of the matrix
    with itself, BLOCK rows at a time), judged as a write's suggestions judge its nearest.
    (Nearest ones below it that repeat the words are `_overlapping`'s.)"""
    import numpy as np

    if not examined or len(pool) < 2:
        return []
    matrix = np.stack([vectors[m.id] for m in pool]).astype(np.float32, copy=False)
    row_of = {m.id: index for index, m in enumerate(pool)}
    rows = np.array([row_of[m.id] for m in examined])
    nearest = min(CANDIDATES, len(pool) - 1)
    found = []
    for start in range(0, len(rows), BLOCK):
        block = rows[start : start + BLOCK]
        scores = matrix[block] @ matrix.T
        scores[np.arange(len(block)), block] = -np.inf  # not itself
        best = np.argpartition(-scores, nearest - 1, axis=1)[:, :nearest]
        cosines = np.take_along_axis(scores, best, axis=1)
        for line, place in zip(*np.nonzero(cosines >= BY_MEANING.duplicate), strict=True):
            memory, other = pool[block[line]], pool[best[line, place]]
            words_alike = jaccard(terms[memory.id], terms[other.id])
            alike = says_the_same(memory, other, float(cosines[line, place]), words_alike)
            if alike is not None:
                found.append((memory.id, other.id, alike))
    return found


def _overlapping(
    memories: list[Memory], by_id: Mapping[str, frozenset[str]]
) -> list[tuple[Memory, Memory, float]]:
    """Every pair whose content terms overlap (Jaccard) at least BY_WORDS.duplicate, with
    its overlap. Exact, by prefix filtering: with the terms of every memory in one order,
    rarest first, two sets that overlap that much share a term among the first
    |terms| - ceil(t * |terms|) + 1 of either, so only those are indexed and compared."""
    threshold = BY_WORDS.duplicate
    terms = [by_id[m.id] for m in memories]
    counts = Counter(term for found in terms for term in found)
    postings: defaultdict[str, list[int]] = defaultdict(list)
    pairs: set[tuple[int, int]] = set()
    for index, found in enumerate(terms):
        ordered = sorted(found, key=lambda term: (counts[term], term))
        prefix = len(ordered) - math.ceil(threshold * len(ordered)) + 1
        for term in ordered[:prefix]:
            pairs.update((other, index) for other in postings[term])
            postings[term].append(index)
    overlapping = []
    for first, second in sorted(pairs):
        words_alike = jaccard(terms[first], terms[second])
        if words_alike >= threshold:
            overlapping.append((memories[first], memories[second], words_alike))
    return overlapping


def _same_text(memories: Iterable[Memory]) -> list[tuple[str, str, float]]:
    """Pairs of memories holding the same normalised text (remember's own test of a
    repeat, here across kinds and notebooks): each joined to the first that holds it."""
    first: dict[str, str] = {}
    pairs = []
    for memory in memories:
        norm = normalize_text(memory.text)
        if norm in first:
            pairs.append((first[norm], memory.id, 1.0))
        else:
            first[norm] = memory.id
    return pairs


def _apart(tx: StoreReader, pairs: list[tuple[str, str, float]]) -> set[frozenset[str]]:
    """Of the memories paired, the pairs whose relation is known already: linked, or in
    an open dispute with each other."""
    ids = sorted({memory_id for a, b, _ in pairs for memory_id in (a, b)})
    apart: set[frozenset[str]] = set()
    for memory_id, others in tx.disputed_with(ids).items():
        apart.update(frozenset((memory_id, other)) for other in others)
    for memory_id in ids:
        apart.update(frozenset((link.source_id, link.target_id)) for link in tx.links(memory_id))
    return apart


def _grouped(
    pairs: list[tuple[str, str, float]], by_id: dict[str, Memory], apart: set[frozenset[str]]
) -> list[tuple[list[Memory], float]]:
    """Pairs joined into groups (union-find), each with the lowest similarity that joined
    it: the largest groups first, then the most alike."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.get(x, x) != x:
            parent[x] = parent.get(parent[x], parent[x])
            x = parent[x]
        return x

    weakest: dict[str, float] = {}
    for a, b, similarity in pairs:
        if a not in by_id or b not in by_id or frozenset((a, b)) in apart:
            continue
        ra, rb = root(a), root(b)
        low = min(similarity, weakest.pop(ra, 1.0), weakest.get(rb, 1.0))
        if ra != rb:
            parent[ra] = rb
        weakest[rb] = low
    members: defaultdict[str, list[Memory]] = defaultdict(list)
    for memory_id in parent.keys() | weakest.keys():
        members[root(memory_id)].append(by_id[memory_id])
    groups = [(sorted(group, key=lambda m: m.id), weakest[key]) for key, group in members.items()]
    groups.sort(key=lambda g: (-len(g[0]), -g[1], g[0][0].id))
    return groups
