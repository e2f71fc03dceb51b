"""A compact in-memory copy of a large SQLite workspace's current vectors: 1 bit a dimension.

Scoring every float32 vector of 100,000 memories reads 150 MB per question (tens of ms
on a small machine) and holding them costs as much memory as the model itself. Instead
each current version's vector is kept as its signs (around the workspace's mean vector):
48 bytes for 384 dimensions, 5 MB for 100,000 memories. A question ranks them all by
Hamming distance in a few milliseconds; the best CANDIDATES are then scored exactly from
the float32 column (the source of truth) under the query's filters, widening when too few
pass. So the answer is exact among the candidates, and the candidates are approximate:
used, like PostgreSQL's HNSW index, only for the unfiltered question over a large store.

The copy is a cache tied to the last event sequence it has seen: every question reads the
store's last sequence and the workspace's vector generation (bumped by a reindex or a
forget, which change vectors without a new version), loads only the versions written
since, drops the versions they ended, and starts over when the generation moved. So
another process's writes are never missed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..embed.base import Vectors

Codes = npt.NDArray[np.uint64]
RowIds = npt.NDArray[np.int64]


def sign_codes(vectors: Vectors, centre: Vectors) -> Codes:
    """Each row's signs around `centre`, packed 64 to a word."""
    bits = np.packbits(vectors > centre, axis=1)
    width = -(-bits.shape[1] // 8) * 8  # whole 64-bit words
    padded = np.zeros((len(vectors), width), dtype=np.uint8)
    padded[:, : bits.shape[1]] = bits
    return padded.view(np.uint64)


@dataclass
class VectorCache:
    """One workspace's current vectors of one model, as sign codes."""

    dimensions: int
    centre: Vectors
    seq: int  # the last event the copy has seen
    generation: int  # the workspace's vector generation it was loaded under
    # Rows and their codes, replaced together (one assignment) so that a reader in
    # another thread never pairs the rows of one state with the codes of another.
    table: tuple[RowIds, Codes] = field(
        default_factory=lambda: (np.zeros(0, dtype=np.int64), np.zeros((0, 1), dtype=np.uint64))
    )
    lock: threading.Lock = field(default_factory=threading.Lock)  # one refresh at a time

    def __len__(self) -> int:
        return len(self.table[0])

    def add(self, rowids: RowIds, vectors: Vectors) -> None:
        if len(rowids):
            old_rows, old_codes = self.table
            codes = sign_codes(vectors, self.centre)
            if len(old_rows) == 0:
                self.table = (rowids, codes)
            else:
                self.table = (
                    np.concatenate([old_rows, rowids]),
                    np.concatenate([old_codes, codes]),
                )

    def drop(self, rowids: RowIds) -> None:
        old_rows, old_codes = self.table
        if len(rowids) and len(old_rows):
            keep = ~np.isin(old_rows, rowids)
            self.table = (old_rows[keep], old_codes[keep])

    def candidates(self, vector: Vectors, count: int) -> RowIds:
        """The `count` rows nearest `vector` by Hamming distance of their signs."""
        rows, codes = self.table
        if count >= len(rows):
            return rows
        query = sign_codes(vector[None, :], self.centre)[0]
        distance = np.bitwise_count(codes ^ query).sum(axis=1, dtype=np.uint16)
        best = np.argpartition(distance, count - 1)[:count]
        return rows[best]
