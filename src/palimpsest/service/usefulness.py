"""Usefulness: a memory marked `helped` or `noise` by whoever recalled it (DESIGN section 2).

A mark is revise's `feedback`: an event of its own (op `feedback`) that leaves the memory's
content and version as they are. Recall and orient rank by the marks with one small factor
(`usefulness_factor`); doctor lists the memories marked noise repeatedly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol, TypeVar

from ..domain.model import Memory
from ..store import StoreReader, StoreWriter
from ..store.orient_rows import FEEDBACK_OP
from .answers import Revised
from .findings import Noisy
from .fusion import Identified

if TYPE_CHECKING:
    from .base import ServiceBase

# How far marks move a memory's score: each `helped` +10%, each `noise` -15%, within
# [0.5, 1.5]: enough to break near ties and sink what keeps misleading, never enough for
# a marked memory to outrank a far better match.
HELPED_STEP = 0.10
NOISE_STEP = 0.15
FACTOR_RANGE = (0.5, 1.5)
NOISY_AT = 2  # doctor lists a memory marked noise this often, more than it helped


class Scored(Protocol):
    @property
    def memory(self) -> Identified: ...
    @property
    def score(self) -> float: ...


S = TypeVar("S", bound=Scored)


def usefulness_factor(helped: int, noise: int) -> float:
    low, high = FACTOR_RANGE
    return min(high, max(low, 1.0 + HELPED_STEP * helped - NOISE_STEP * noise))


def by_usefulness(tx: StoreReader, ranked: list[S]) -> list[S]:
    """`ranked` (dataclasses with `memory` and `score`) with each score times the memory's
    usefulness factor, best first again. Unmarked memories keep their score and order."""
    counts = tx.feedback_counts(hit.memory.id for hit in ranked)
    if not counts:
        return ranked
    weighed = [
        dataclasses.replace(hit, score=hit.score * usefulness_factor(*counts[hit.memory.id]))  # type: ignore[type-var]
        if hit.memory.id in counts
        else hit
        for hit in ranked
    ]
    return sorted(weighed, key=lambda hit: -hit.score)


def noisy(
    counts: Mapping[str, tuple[int, int]], current: Callable[[str], Memory | None]
) -> list[Noisy]:
    """Doctor's list: active memories marked noise at least NOISY_AT times, and more often
    than they helped, most noise first, each with what to do about it (`current` gives a
    memory's current version)."""
    found: list[Noisy] = []
    for memory_id, (helped, noise) in counts.items():
        if noise < NOISY_AT or noise <= helped:
            continue
        memory = current(memory_id)
        if memory is None or memory.status != "active":
            continue
        found.append({
            "id": memory_id,
            "kind": memory.kind,
            "text": memory.text[:120],
            "helped": helped,
            "noise": noise,
            "fix": f"palimpsest revise {memory_id} --status retracted --note 'marked noise', "
            "or rewrite it so it helps",
        })  # fmt: skip
    return sorted(found, key=lambda line: (-line["noise"], line["id"]))


def write_mark(
    service: ServiceBase,
    tx: StoreWriter,
    memory: Memory,
    feedback: str,
    note: str | None,
    now: str,
    op_id: str,
) -> Revised:
    """Write the mark as one event about `memory` with no new version (the version it
    judged is in its data); revise's answer for that target."""
    service._event(tx, FEEDBACK_OP, op_id, now, memory, note=note,
                   data={"feedback": feedback, "version": memory.version})  # fmt: skip
    return {
        "id": memory.id,
        "version": memory.version,
        "feedback": feedback,
        "changed": [],
    }
