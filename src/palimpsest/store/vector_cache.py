"""A compact in-memory copy of a large SQLite workspace's current vectors.

Scoring every float32 vector of 100,000 memories reads 150 MB per question (tens of ms
on a small machine) and holding them costs as much memory as the model itself. Instead
each current version's vector is kept twice, small:

- its signs around the workspace's mean vector, 1 bit a dimension (48 bytes for 384
  dimensions): a question ranks every memory by Hamming distance in a few milliseconds;
- the vector in int8 with its own scale (384 bytes): the best CANDIDATES by Hamming
  distance are ranked again by this close estimate of their cosine similarity.

At 100,000 memories that is 43 MB. The best few by the estimate are then scored exactly
from the float32 column (the source of truth) under the query's filters, widening when
too few pass. So the answer is exact among the candidates, and the candidates are
approximate: used, like PostgreSQL's HNSW index, only for the unfiltered question over a
large store.

The copy is a cache tied to the last event sequence it has seen: every question reads the
store's last sequence and the workspace's vector generation (bumped by a reindex or a
forget, which change vectors without a new version), loads only the versions written
since, drops the versions they ended, and starts over when the generation moved. So
another process's writes are never missed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from .vector_search import Vectors, ranked

Codes = npt.NDArray[np.uint64]
RowIds = npt.NDArray[np.int64]


class Table(NamedTuple):
    rowids: RowIds  # ascending, so a row is found by binary search
    codes: Codes  # signs, 64 to a word
    small: npt.NDArray[np.int8]  # the vector in int8 ...
    scales: npt.NDArray[np.float32]  # ... times this
    exact: Vectors | None  # the float32 vectors themselves, while the copy is small

    def sorted(self) -> Table:
        order = np.argsort(self.rowids, kind="stable")
        return Table(
            self.rowids[order],
            self.codes[order],
            self.small[order],
            self.scales[order],
            None if self.exact is None else self.exact[order],
        )

    def kept(self, keep: npt.NDArray[np.bool_]) -> Table:
        exact = None if self.exact is None else self.exact[keep]
        return Table(
            self.rowids[keep], self.codes[keep], self.small[keep], self.scales[keep], exact
        )


def sign_codes(vectors: Vectors, centre: Vectors) -> Codes:
    """Each row's signs around `centre`, packed 64 to a word."""
    bits = np.packbits(vectors > centre, axis=1)
    width = -(-bits.shape[1] // 8) * 8  # whole 64-bit words
    padded = np.zeros((len(vectors), width), dtype=np.uint8)
    padded[:, : bits.shape[1]] = bits
    return padded.view(np.uint64)


def _empty(dimensions: int) -> Table:
    words = -(-dimensions // 64)
    return Table(
        np.zeros(0, dtype=np.int64),
        np.zeros((0, words), dtype=np.uint64),
        np.zeros((0, dimensions), dtype=np.int8),
        np.zeros(0, dtype=np.float32),
        np.zeros((0, dimensions), dtype=np.float32),
    )


@dataclass
class VectorCache:
    """One workspace's current vectors of one model, as sign codes and int8."""

    dimensions: int
    centre: Vectors
    seq: int  # the last event the copy has seen
    generation: int  # the workspace's vector generation it was loaded under
    # Up to this many rows the float32 vectors are held too (1.5 KB a row at 384
    # dimensions), so a question is scored exactly by one product; past it they are
    # dropped and the exact scores come from the column.
    exact_up_to: int = 0
    # Replaced whole (one assignment), so a reader in another thread never pairs the
    # rows of one state with the codes of another.
    table: Table = field(init=False)
    lock: threading.Lock = field(default_factory=threading.Lock)  # one refresh at a time

    def __post_init__(self) -> None:
        self.table = _empty(self.dimensions)

    def __len__(self) -> int:
        return len(self.table.rowids)

    def add(self, rowids: RowIds, vectors: Vectors) -> None:
        if not len(rowids):
            return
        scales = (np.abs(vectors).max(axis=1) / 127).astype(np.float32)
        small = np.round(vectors / np.maximum(scales, 1e-12)[:, None]).astype(np.int8)
        old = self.table
        exact = None
        if old.exact is not None and len(old.rowids) + len(rowids) <= self.exact_up_to:
            exact = np.concatenate([old.exact, vectors.astype(np.float32, copy=False)])
        table = Table(
            np.concatenate([old.rowids, rowids]),
            np.concatenate([old.codes, sign_codes(vectors, self.centre)]),
            np.concatenate([old.small, small]),
            np.concatenate([old.scales, scales]),
            exact,
        )
        # New versions have the highest rowids: the order only needs mending on a load.
        if len(table.rowids) > 1 and np.any(np.diff(table.rowids) < 0):
            table = table.sorted()
        self.table = table

    def drop(self, rowids: RowIds) -> None:
        old = self.table
        if len(rowids) and len(old.rowids):
            self.table = old.kept(~np.isin(old.rowids, rowids))

    def positions(self, table: Table, rowids: RowIds) -> tuple[RowIds, npt.NDArray[np.intp]]:
        """Which of `rowids` the copy `table` holds, and at which rows."""
        at = np.searchsorted(table.rowids, rowids)
        found = at < len(table.rowids)
        found[found] = table.rowids[at[found]] == rowids[found]
        return rowids[found], at[found]

    def estimated(self, table: Table, at: npt.NDArray[np.intp], vector: Vectors) -> Vectors:
        """The similarity of the rows `at` to `vector`: exact while the floats are held,
        else the int8 estimate."""
        if table.exact is not None:
            if len(at) * 4 > len(table.rowids):  # most rows: one product beats a gather
                return (table.exact @ vector)[at]
            return table.exact[at] @ vector
        return (table.small[at].astype(np.float32) @ vector) * table.scales[at]

    def candidates(self, vector: Vectors, count: int, keep: int) -> RowIds:
        """The `keep` rows with the best estimated similarity to `vector`, best first,
        among the `count` nearest by Hamming distance of their signs (while the floats
        are held: the `keep` best by their exact similarity, so the answer is exact)."""
        table = self.table
        if table.exact is not None:  # held: the best by the exact score, ties newest first
            leaders = ranked(table.exact @ vector, table.rowids, keep)
            return np.array([rowid for rowid, _ in leaders], dtype=np.int64)
        chosen = np.arange(len(table.rowids))
        if count < len(chosen):
            query = sign_codes(vector[None, :], self.centre)[0]
            distance = np.bitwise_count(table.codes ^ query).sum(axis=1, dtype=np.uint16)
            chosen = np.argpartition(distance, count - 1)[:count]
        estimate = (table.small[chosen].astype(np.float32) @ vector) * table.scales[chosen]
        if keep < len(chosen):
            best = np.argpartition(-estimate, keep - 1)[:keep]
            chosen, estimate = chosen[best], estimate[best]
        return table.rowids[chosen[np.argsort(-estimate)]]
