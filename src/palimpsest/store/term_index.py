"""An in-memory copy of a SQLite workspace's term counts, to rank full text's matches.

FTS5's bm25() costs about 1.5 microseconds for each match it ranks, and a question of
common words matches many: over a thousand of 5,000 memories, a quarter of a recall's
time. Each version's weighted term counts and length are kept beside it (bm25.py), so
held here as postings (per term, the versions holding it and its count in each) they rank
the same matches by the same formula in numpy, in a tenth of the time, and give the
figures bm25.py re-scores with. Which matches pass a recall's filters is still SQL's to
say; FTS5 keeps finding the matches of a search narrowed to notebooks or tags.

Where the two could differ the index follows the kept counts, as PostgreSQL does: a tie
goes to the newest (FTS5 cut a list of more tied matches than it ranks anywhere), and
counts are those kept, rounded to six places (FTS5 sums each column's weight, so 6.0 may
be 6.000000000000002 there and break a tie that is one).

Like the vector cache (vector_cache.py) the copy is a cache tied to the last event it has
seen and the workspace's generation: a question loads the versions written since, starts
over when a forget moved the generation (it takes a version's words out), and uses only
the rows of its own snapshot. It holds every version with content, past ones too, as
FTS5 does: 6 bytes a term of a version loaded at once, 12 for one filed since.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from . import Found, bm25

Positions = npt.NDArray[np.int32]  # rows of the copy, in the order they were added
Counts = npt.NDArray[np.float64]
FTS5_B = 0.75  # what FTS5's bm25() uses, which the first ranking reproduces
CHUNK = 5_000  # versions read into Python objects at a time


class Passed(NamedTuple):
    """A full-text match that passed the filters, as a search on the index keeps it."""

    found: Found
    seq: int  # its version's from_seq: the newer first on a tie
    row: int  # its row in the index


class Posting(NamedTuple):
    rows: Positions  # the versions holding the term, ascending
    counts: Counts  # its weighted count in each


class Ranked(NamedTuple):
    """Matches best first: each one's row in the copy, row id and score."""

    rows: Positions
    rowids: npt.NDArray[np.int64]
    scores: Counts


class Packed(NamedTuple):
    """The postings of a first load, in two arrays: a term's are from `bounds[code]` to
    `bounds[code + 1]`. A Python object per term would cost more than the numbers."""

    codes: dict[str, int]
    bounds: npt.NDArray[np.int64]
    rows: Positions
    counts: Counts | npt.NDArray[np.int16]  # in fifths where that is exact (`_fifths`)

    def posting(self, code: int) -> Posting:
        start, end = self.bounds[code], self.bounds[code + 1]
        counts = self.counts[start:end]
        weighted = counts / 5 if counts.dtype == np.int16 else counts.astype(np.float64, copy=False)
        return Posting(self.rows[start:end], weighted)


def _fifths(counts: Counts) -> Counts | npt.NDArray[np.int16]:
    """`counts` in fifths, a quarter of the bytes, when each is a whole number of fifths
    read back exactly (bm25.WEIGHTS are: 1.0, 0.6, 0.4); else as they are."""
    fifths = np.rint(counts * 5)
    if len(counts) and fifths.max() < 2**15 and np.array_equal(fifths / 5, counts):
        return fifths.astype(np.int16)
    return counts


@dataclass
class TermIndex:
    """One workspace's versions with content: their row ids, lengths and postings."""

    generation: int  # the workspace's generation it was loaded under
    seq: int = 0  # the last event it has seen
    lock: threading.Lock = field(default_factory=threading.Lock)  # one change at a time
    # Rows [0, size) are published; the arrays have room after them, and a term's later
    # posting is replaced whole, so a reader's view never changes under it.
    _rowids: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    _lengths: Counts = field(default_factory=lambda: np.zeros(0, np.float64))
    _published: tuple[int, float] = (0, 0.0)  # (size, total length), replaced as one
    _packed: Packed | None = None  # the first load's postings
    _later: dict[str, Posting] = field(default_factory=dict)  # those of rows added since

    def add(self, rows: Iterable[tuple[int, str, int | None]], seq: int) -> None:
        """Versions (rowid, JSON term counts, length) filed up to event `seq`, rowid
        ascending and after every row held (new versions have the highest row ids)."""
        size, total = self._published
        read = _read(rows, size)
        if not read.rowids:
            self.seq = seq
            return
        end = size + len(read.rowids)
        if end > len(self._rowids):  # a quarter more room than needed: few copies
            room = end + end // 4
            self._rowids = np.resize(self._rowids, room)
            self._lengths = np.resize(self._lengths, room)
        self._rowids[size:end] = read.rowids
        self._lengths[size:end] = read.lengths
        order = np.argsort(read.terms, kind="stable")  # each term's rows stay ascending
        codes, at, counted = read.terms[order], read.rows[order], read.counts[order]
        bounds = np.concatenate(([0], np.cumsum(np.bincount(codes, minlength=len(read.codes)))))
        if size == 0:
            self._packed = Packed(read.codes, bounds, at, _fifths(counted))
        else:
            for term, code in read.codes.items():
                new = Posting(at[bounds[code] : bounds[code + 1]],
                              counted[bounds[code] : bounds[code + 1]])  # fmt: skip
                old = self._later.get(term)
                self._later[term] = new if old is None else Posting(
                    np.concatenate((old.rows, new.rows)),
                    np.concatenate((old.counts, new.counts)),
                )  # fmt: skip
        self._published = (end, total + sum(read.lengths))  # last: the rows are all in
        self.seq = seq
        if read.chunks > 1:
            del read, order, codes, at, counted
            _give_back()

    def view(self) -> TermView:
        size, total = self._published
        return TermView(size, total, self._rowids, self._lengths, self._packed, self._later)


def view_at(
    indexes: dict[str, TermIndex],
    workspace: str,
    seq: int,
    generation: int,
    counted_between: Callable[[int, int], Iterable[tuple[int, str, int | None]]],
) -> TermView | None:
    """`workspace`'s index in `indexes` as a snapshot at event `seq` and forget
    `generation` sees it, brought up to `seq` (`counted_between(after, upto)` reads the
    versions filed between); None when another reader moved it past this snapshot. A
    forget moves the generation (it takes a version's words out): the index starts over."""
    index = indexes.get(workspace)
    if index is not None and index.generation > generation:
        return None  # a snapshot from before a forget: keep the index of after it
    if index is None or index.generation < generation:
        index = indexes[workspace] = TermIndex(generation)
    with index.lock:
        if index.seq < seq:
            index.add(counted_between(index.seq, seq), seq)
        return index.view() if index.seq == seq else None


class Read(NamedTuple):
    """Versions read for `TermIndex.add`: their postings flat, term by term code."""

    codes: dict[str, int]  # each term met, numbered
    terms: npt.NDArray[np.int32]  # a posting's term code
    rows: Positions  # its version's row in the copy
    counts: Counts  # its weighted count
    rowids: list[int]
    lengths: list[float]
    chunks: int  # how many CHUNKs of versions it took


def _read(rows: Iterable[tuple[int, str, int | None]], size: int) -> Read:
    """`rows` (rowid, JSON term counts, length) as postings, the first at row `size`; a
    chunk at a time into flat arrays: Python's objects for two million postings would
    leave the process a hundred MiB larger for good."""
    codes: dict[str, int] = {}
    parts: list[tuple[npt.NDArray[np.int32], Positions, Counts]] = []
    rowids: list[int] = []
    lengths: list[float] = []
    read = iter(rows)
    while chunk := list(itertools.islice(read, CHUNK)):
        terms: list[int] = []
        positions: list[int] = []
        weighted: list[float] = []
        for rowid, counts, length in chunk:
            for term, count in json.loads(counts).items():
                terms.append(codes.setdefault(term, len(codes)))
                positions.append(size + len(rowids))
                weighted.append(count)
            rowids.append(rowid)
            lengths.append(float(length or 0))
        parts.append((np.array(terms, np.int32), np.array(positions, np.int32),
                      np.array(weighted, np.float64)))  # fmt: skip
    if not parts:
        empty = np.zeros(0, np.int32)
        return Read(codes, empty, empty, np.zeros(0, np.float64), rowids, lengths, 0)
    terms_of, at, counted = (np.concatenate(part) for part in zip(*parts, strict=True))
    return Read(codes, terms_of, at, counted, rowids, lengths, len(parts))


@dataclass(frozen=True)
class TermView:
    """The index as one snapshot sees it: its first `size` rows."""

    size: int
    total: float  # their total length
    rowids: npt.NDArray[np.int64]
    lengths: Counts
    packed: Packed | None
    later: dict[str, Posting]  # may hold rows past `size`, which `posting` leaves out

    def posting(self, term: str) -> Posting:
        parts = []
        code = self.packed.codes.get(term) if self.packed is not None else None
        if self.packed is not None and code is not None:
            parts.append(self.packed.posting(code))
        if term in self.later:
            parts.append(self.later[term])
        if not parts:
            return Posting(np.zeros(0, np.int32), np.zeros(0, np.float64))
        found = parts[0] if len(parts) == 1 else Posting(
            np.concatenate([p.rows for p in parts]), np.concatenate([p.counts for p in parts])
        )  # fmt: skip
        end = int(np.searchsorted(found.rows, self.size))
        return Posting(found.rows[:end], found.counts[:end])

    def stats(self, terms: Sequence[str]) -> bm25.Stats:
        holding = {term: len(self.posting(term).rows) for term in terms}
        return bm25.Stats(self.size, round(self.total), holding)

    def matching(self, terms: Sequence[str], every: bool) -> Positions:
        """The rows holding every one of `terms` (`every`), or any, ascending."""
        rows = [self.posting(term).rows for term in dict.fromkeys(terms)]
        if not rows:
            return np.zeros(0, np.int32)
        if not every:
            return np.unique(np.concatenate(rows))
        common = rows[0]
        for more in rows[1:]:
            common = np.intersect1d(common, more, assume_unique=True)
        return common

    def ranked(
        self, rows: Positions, terms: Sequence[str], stats: bm25.Stats, cap: int | None
    ) -> Ranked:
        """`rows` (ascending) best first as FTS5's bm25() ranks them, the newest first on
        a tie, cut after the best `cap` (with any tied with the last)."""
        average = stats.length / stats.versions if stats.versions else 1.0
        norms = bm25.K1 * (1 - FTS5_B + FTS5_B * self.lengths[rows] / average)
        scores = np.zeros(len(rows), np.float64)
        for term in dict.fromkeys(terms):
            posting = self.posting(term)
            at = np.searchsorted(rows, posting.rows)  # where each holder is among `rows`
            inside = at < len(rows)
            inside[inside] = rows[at[inside]] == posting.rows[inside]
            weight = bm25.idf(stats.versions, stats.holding.get(term, 0))
            counts, where = posting.counts[inside], at[inside]
            scores[where] += weight * (counts * (bm25.K1 + 1)) / (counts + norms[where])
        if cap is not None and len(rows) > cap:
            # Everything tied with the cap-th best stays in, so the tie-break sees it all.
            edge = np.partition(scores, len(scores) - cap)[len(scores) - cap]
            kept = np.flatnonzero(scores >= edge)
            rows, scores = rows[kept], scores[kept]
        rowids = self.rowids[rows]
        order = np.lexsort((-rowids, -scores))
        return Ranked(rows[order], rowids[order], scores[order])

    def pooled(
        self, every: list[Passed], rest: list[Passed], depth: int, terms: Sequence[str]
    ) -> list[bm25.Match]:
        """The best `depth` of a search's two passes (`every` term held, any term: `rest`),
        as bm25.py scores them: every-term matches first, each with its counts here."""
        passed = {p.found.rowid: p for p in itertools.chain(every, rest)}
        found = bm25.pooled([p.found for p in every], [p.found for p in rest], depth)
        pool = [passed[f.rowid] for f in found]
        counts = self.counts_of([p.row for p in pool], terms)
        return [
            bm25.Match(p.found, p.seq, counted, int(self.lengths[p.row]))
            for p, counted in zip(pool, counts, strict=True)
        ]

    def counts_of(self, rows: Sequence[int], terms: Sequence[str]) -> list[dict[str, float]]:
        """Each term's weighted count in each of `rows` (0 where it is not held)."""
        wanted = np.array(rows, np.int32)
        columns = []
        for term in terms:
            posting = self.posting(term)
            values = np.zeros(len(wanted), np.float64)
            if len(posting.rows):
                at = np.minimum(np.searchsorted(posting.rows, wanted), len(posting.rows) - 1)
                held = posting.rows[at] == wanted
                values[held] = posting.counts[at[held]]
            columns.append(values.tolist())
        return [dict(zip(terms, values, strict=True)) for values in zip(*columns, strict=True)]


def _give_back() -> None:
    """Hand the memory a large load freed back to the system (glibc keeps freed heap
    memory for later; a load's temporaries would stay resident for good)."""
    with contextlib.suppress(OSError, AttributeError):  # not glibc: its allocator decides
        ctypes.CDLL(None).malloc_trim(0)
