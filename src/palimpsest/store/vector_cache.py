"""A compact in-memory copy of a large SQLite workspace's current vectors.

Scoring every float32 vector of 100,000 memories reads 150 MB per question (tens of ms
on a small machine) and holding them costs as much memory as the model itself. Instead
each current version's vector is kept twice, small:

- its signs around the workspace's mean vector, 1 bit a dimension (48 bytes for 384
  dimensions): a question ranks every memory by Hamming distance in a few milliseconds;
- the vector in int8 with its own scale (384 bytes): the best CANDIDATES by Hamming
  distance are ranked again by this close estimate of their cosine similarity.

At 100,000 memories that is 43 MB. Beside them each row keeps what the filters of a
recall read (notebook, kind, status, scope, time, expiry and tags, as small codes: a
version row never changes them), so a filtered question picks its rows in numpy instead
of asking SQL for tens of thousands of row ids. The best few by the estimate among the
rows passing the filters are then scored exactly from the float32 column (the source of
truth) under the query's filters in SQL too, widening when too few pass. So the answer is
exact among the candidates; while the copy holds the floats (a small workspace) the
candidates are the exact best, else they are approximate as PostgreSQL's HNSW index is.

The copy is a cache tied to the last event sequence it has seen: every question reads the
store's last sequence and the workspace's vector generation (bumped by a reindex or a
forget, which change vectors without a new version), loads only the versions written
since, drops the versions they ended, and starts over when the generation moved. So
another process's writes are never missed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from . import SearchQuery
from .vector_search import Vectors, ranked, similarities

Codes = npt.NDArray[np.uint64]
RowIds = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]
Labels = npt.NDArray[np.int32]
Times = npt.NDArray[np.bytes_]
NONE = -1  # the code of a missing value (no scope), which no filter names


class Facets(NamedTuple):
    """What a recall filters on, per row of the copy (a version row never changes them).
    Strings are codes of the cache's `names`; times are ASCII bytes, compared as SQL
    compares the text."""

    notebook: Labels
    kind: Labels
    status: Labels
    scope: Labels
    when: Times  # coalesce(occurred_at, recorded_at)
    expires: Times  # b"" for none
    # Tags as postings: the row id and tag code of every (version, tag) pair.
    tag_rows: RowIds
    tag_codes: Labels

    def kept(self, keep: Mask, dropped: RowIds) -> Facets:
        alive = ~np.isin(self.tag_rows, dropped)
        return Facets(
            self.notebook[keep], self.kind[keep], self.status[keep], self.scope[keep],
            self.when[keep], self.expires[keep], self.tag_rows[alive], self.tag_codes[alive],
        )  # fmt: skip

    def ordered(self, order: npt.NDArray[np.intp]) -> Facets:
        return Facets(
            self.notebook[order], self.kind[order], self.status[order], self.scope[order],
            self.when[order], self.expires[order], self.tag_rows, self.tag_codes,
        )  # fmt: skip


class Table(NamedTuple):
    rowids: RowIds  # ascending, so a row is found by binary search
    codes: Codes  # signs, 64 to a word: one row per word, one column per version
    small: npt.NDArray[np.int8]  # the vector in int8 ...
    scales: npt.NDArray[np.float32]  # ... times this
    exact: Vectors | None  # the float32 vectors themselves, while the copy is small
    facets: Facets

    def sorted(self) -> Table:
        order = np.argsort(self.rowids, kind="stable")
        return Table(
            self.rowids[order],
            self.codes[:, order],
            self.small[order],
            self.scales[order],
            None if self.exact is None else self.exact[order],
            self.facets.ordered(order),
        )

    def kept(self, keep: Mask) -> Table:
        exact = None if self.exact is None else self.exact[keep]
        facets = self.facets.kept(keep, self.rowids[~keep])
        return Table(
            self.rowids[keep], self.codes[:, keep], self.small[keep], self.scales[keep], exact,
            facets,
        )  # fmt: skip


def sign_codes(vectors: Vectors, centre: Vectors) -> Codes:
    """Each row's signs around `centre`, packed 64 to a word: one row per word."""
    bits = np.packbits(vectors > centre, axis=1)
    width = -(-bits.shape[1] // 8) * 8  # whole 64-bit words
    padded = np.zeros((len(vectors), width), dtype=np.uint8)
    padded[:, : bits.shape[1]] = bits
    # Word-major, so a question's Hamming distances are a few passes over contiguous words.
    return np.ascontiguousarray(padded.view(np.uint64).T)


def _empty(dimensions: int) -> Table:
    words = -(-dimensions // 64)
    labels = np.zeros(0, dtype=np.int32)
    times = np.zeros(0, dtype="S1")
    return Table(
        np.zeros(0, dtype=np.int64),
        np.zeros((words, 0), dtype=np.uint64),
        np.zeros((0, dimensions), dtype=np.int8),
        np.zeros(0, dtype=np.float32),
        np.zeros((0, dimensions), dtype=np.float32),
        Facets(labels, labels, labels, labels, times, times, np.zeros(0, np.int64), labels),
    )


def _joined(parts: Sequence[Table]) -> Table:
    exact = (
        None if any(p.exact is None for p in parts) else np.concatenate([p.exact for p in parts])
    )
    return Table(
        np.concatenate([p.rowids for p in parts]),
        np.concatenate([p.codes for p in parts], axis=1),
        np.concatenate([p.small for p in parts]),
        np.concatenate([p.scales for p in parts]),
        exact,
        Facets(
            *(np.concatenate(columns) for columns in zip(*(p.facets for p in parts), strict=True))
        ),
    )


# Facets one a row (the other two are postings of tags, as long as there are tags).
ROW_FACETS = 6


def _facets(rows: Sequence[Any], tag_rows: RowIds, tag_codes: Labels) -> Facets:
    notebook, kind, status, scope, when, expires = rows
    return Facets(notebook, kind, status, scope, when, expires, tag_rows, tag_codes)


def _fits(room: Table, rows: int, tags: int, new: Table, exact: bool) -> bool:
    """Whether `room` can take `new`'s rows (and its longer times: a wider text type)."""
    return (
        len(room.rowids) >= rows
        and len(room.facets.tag_rows) >= tags
        and (room.exact is not None) == exact
        and all(
            held.dtype.itemsize >= given.dtype.itemsize
            for held, given in zip(room.facets[:ROW_FACETS], new.facets[:ROW_FACETS], strict=True)
        )
    )


def _reserved(old: Table, rows: int, tags: int, new: Table, exact: bool) -> Table:
    """Arrays for `rows` and `tags` with a quarter more room (none for a first load: a
    store that is only read costs no more than its rows), `old`'s rows copied first."""
    held = len(old.rowids)
    size = rows if held == 0 else max(rows + rows // 4, 1_024)
    tag_size = tags if held == 0 else max(tags + tags // 4, 1_024)

    def grown(array: npt.NDArray[Any], like: npt.NDArray[Any], length: int, used: int) -> Any:
        room = np.zeros((length, *array.shape[1:]), dtype=np.result_type(array, like))
        room[:used] = array
        return room

    codes = np.zeros((old.codes.shape[0], size), dtype=old.codes.dtype)
    codes[:, :held] = old.codes
    facets = [
        grown(a, b, size, held)
        for a, b in zip(old.facets[:ROW_FACETS], new.facets[:ROW_FACETS], strict=True)
    ]
    used_tags = len(old.facets.tag_rows)
    return Table(
        grown(old.rowids, new.rowids, size, held),
        codes,
        grown(old.small, new.small, size, held),
        grown(old.scales, new.scales, size, held),
        grown(old.exact, new.exact, size, held)
        if exact and old.exact is not None and new.exact is not None
        else None,
        _facets(
            facets,
            grown(old.facets.tag_rows, new.facets.tag_rows, tag_size, used_tags),
            grown(old.facets.tag_codes, new.facets.tag_codes, tag_size, used_tags),
        ),
    )


def _write(room: Table, new: Table, at: int, tags_at: int, exact: bool) -> None:
    """`new`'s rows into `room` after its first `at` rows (and tags after `tags_at`)."""
    end, tags_end = at + len(new.rowids), tags_at + len(new.facets.tag_rows)
    room.rowids[at:end] = new.rowids
    room.codes[:, at:end] = new.codes
    room.small[at:end] = new.small
    room.scales[at:end] = new.scales
    if exact and room.exact is not None and new.exact is not None:
        room.exact[at:end] = new.exact
    for held, given in zip(room.facets[:ROW_FACETS], new.facets[:ROW_FACETS], strict=True):
        held[at:end] = given
    room.facets.tag_rows[tags_at:tags_end] = new.facets.tag_rows
    room.facets.tag_codes[tags_at:tags_end] = new.facets.tag_codes


def _view(room: Table, rows: int, tags: int, exact: bool) -> Table:
    """The first `rows` rows (and `tags` tags) of `room`, as a table of their own."""
    return Table(
        room.rowids[:rows],
        room.codes[:, :rows],
        room.small[:rows],
        room.scales[:rows],
        room.exact[:rows] if exact and room.exact is not None else None,
        _facets(
            [a[:rows] for a in room.facets[:ROW_FACETS]],
            room.facets.tag_rows[:tags],
            room.facets.tag_codes[:tags],
        ),
    )


# The columns of memory_versions (alias v) that `VectorCache.facets` reads, in its order.
FACET_COLUMNS = (
    "v.notebook_id, v.kind, v.status, v.scope, coalesce(v.occurred_at, v.recorded_at) "
    "AS happened, v.expires_at, v.tags"
)
# What a copy is built from, the same for both stores (each reads `{vector}` its own way):
# the versions current at an event, with their vectors (parameters: workspace, at, at,
# model).
CURRENT_SQL = (
    f"SELECT v.rowid AS rowid, {{vector}} AS vector, {FACET_COLUMNS} "
    "FROM memory_versions v JOIN memory_vectors mv ON mv.version_rowid = v.rowid "
    "WHERE v.workspace = ? AND v.from_seq <= ? AND (v.to_seq IS NULL OR v.to_seq > ?) "
    "AND v.scrubbed = 0 AND mv.model = ?"
)
# What a copy catches up on, as CURRENT_SQL:
# the versions filed after its last event up to the one asked, with their vectors, as they
# stood then (parameters: workspace, after, upto, upto, model); and the versions those
# ended (workspace, after, upto).
ADDED_SQL = (
    f"SELECT v.rowid AS rowid, {{vector}} AS vector, {FACET_COLUMNS} "
    "FROM memory_versions v JOIN memory_vectors mv ON mv.version_rowid = v.rowid "
    "WHERE v.workspace = ? AND v.from_seq > ? AND v.from_seq <= ? "
    "AND (v.to_seq IS NULL OR v.to_seq > ?) AND v.scrubbed = 0 AND mv.model = ? "
    "ORDER BY v.rowid"
)
ENDED_SQL = (
    "SELECT p.rowid AS rowid FROM memory_versions n JOIN memory_versions p "
    "ON p.memory_id = n.memory_id AND p.to_seq = n.from_seq "
    "WHERE n.workspace = ? AND n.from_seq > ? AND n.from_seq <= ?"
)


def current_copy(
    caches: dict[tuple[str, str], VectorCache],
    key: tuple[str, str],
    seq: int,
    generation: int,
    dimensions: int,
    built: Callable[[], VectorCache | None],
    caught_up: Callable[[VectorCache], None],
) -> tuple[VectorCache, Table] | None:
    """The copy `caches` holds under `key` (workspace, model) as a snapshot at event `seq`
    and forget `generation` sees it, with its table; None where the store searches exactly
    instead: the copy moved past this snapshot, or `built()` made none (a small workspace).
    A copy of another generation or size is `built()` anew; one behind is `caught_up`. The
    table is taken under the copy's lock with the check of its event: another reader
    catching the copy up later drops the versions its events ended, which this snapshot
    still holds current."""
    cache = caches.get(key)
    if cache is not None and (cache.seq > seq or cache.generation > generation):
        return None  # another reader moved it past this snapshot
    if cache is None or (cache.generation, cache.dimensions) != (generation, dimensions):
        cache = built()
        if cache is None:
            caches.pop(key, None)
            return None
        caches[key] = cache
    with cache.lock:
        if cache.seq < seq:
            caught_up(cache)
        return (cache, cache.table) if cache.seq == seq else None


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
    # The code of every notebook id, kind, status, scope and tag seen (only grows).
    names: dict[str, int] = field(default_factory=dict)
    # The arrays `table` is a view of, with room after its rows (None: no room kept).
    _room: Table | None = field(default=None, repr=False)
    _room_of: Table | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.table = _empty(self.dimensions)

    def __len__(self) -> int:
        return len(self.table.rowids)

    def facets(self, rowids: RowIds, rows: Sequence[Any]) -> Facets:
        """The facets of version rows read with FACET_COLUMNS, in the order of `rowids`."""
        tagged = [(rowid, tag) for rowid, r in zip(rowids.tolist(), rows, strict=True)
                  if r["tags"] and r["tags"] != "[]" for tag in json.loads(r["tags"])]  # fmt: skip
        return Facets(
            self._labels([r["notebook_id"] for r in rows]),
            self._labels([r["kind"] for r in rows]),
            self._labels([r["status"] for r in rows]),
            self._labels([r["scope"] for r in rows]),
            np.array([(r["happened"] or "").encode() for r in rows], dtype=np.bytes_),
            np.array([(r["expires_at"] or "").encode() for r in rows], dtype=np.bytes_),
            np.array([rowid for rowid, _ in tagged], dtype=np.int64),
            self._labels([tag for _, tag in tagged]),
        )

    def _labels(self, values: list[str | None]) -> Labels:
        """The codes of `values` (NONE for None), new values coded as they come."""
        new = {value for value in values if value is not None} - self.names.keys()
        for value in sorted(new):
            self.names[value] = len(self.names)
        codes: dict[str | None, int] = {None: NONE}
        codes.update(self.names)
        return np.array([codes[value] for value in values], dtype=np.int32)

    def encoded(self, rowids: RowIds, vectors: Vectors, facets: Facets) -> Table:
        """Rows as the copy keeps them, to `add` (the floats only while the copy holds them)."""
        scales = (np.abs(vectors).max(axis=1) / 127).astype(np.float32)
        small = np.round(vectors / np.maximum(scales, 1e-12)[:, None]).astype(np.int8)
        exact = None if self.table.exact is None else vectors.astype(np.float32, copy=False)
        return Table(rowids, sign_codes(vectors, self.centre), small, scales, exact, facets)

    def add(self, *parts: Table) -> None:
        """Rows `encoded` before, added in one step. They go into spare room after the
        rows held (a quarter more made when full), so filing one memory copies nothing: a reader's
        table is a view of the rows before them, which never change under it."""
        parts = tuple(part for part in parts if len(part.rowids))
        if not parts:
            return
        old = self.table
        new = parts[0] if len(parts) == 1 else _joined(parts)
        rows, tags = len(old.rowids) + len(new.rowids), len(old.facets.tag_rows)
        exact = old.exact is not None and rows <= self.exact_up_to
        room = self._room if self._room_of is old else None
        if room is None or not _fits(room, rows, tags + len(new.facets.tag_rows), new, exact):
            room = _reserved(old, rows, tags + len(new.facets.tag_rows), new, exact)
        _write(room, new, len(old.rowids), tags, exact)
        table = _view(room, rows, tags + len(new.facets.tag_rows), exact)
        # New versions have the highest rowids: the order only needs mending on a load.
        if (
            len(old.rowids)
            and len(new.rowids)
            and (new.rowids[0] < old.rowids[-1] or np.any(np.diff(new.rowids) < 0))
        ):
            table, room = table.sorted(), None
        self._room, self._room_of = room, table
        self.table = table

    def caught_up(
        self,
        seq: int,
        added: Sequence[Any],
        ended: Sequence[Any],
        vectors: Callable[[list[Any]], Vectors],
    ) -> None:
        """The copy brought up to event `seq`: the rows of ADDED_SQL in (`vectors` reads
        their vector column as the store gives it), those of ENDED_SQL out."""
        self.drop(np.array([row["rowid"] for row in ended], dtype=np.int64))
        if added:
            rowids = np.array([row["rowid"] for row in added], dtype=np.int64)
            matrix = vectors([row["vector"] for row in added])
            self.add(self.encoded(rowids, matrix, self.facets(rowids, added)))
        self.seq = seq

    def drop(self, rowids: RowIds) -> None:
        old = self.table
        if len(rowids) and len(old.rowids):
            self.table = old.kept(~np.isin(old.rowids, rowids))

    def passing(self, table: Table, query: SearchQuery) -> Mask | None:
        """Which rows of `table` pass the filters of `query` (None: every row), as the
        store's SQL filters read them (store/session.py `filters`)."""
        facets, mask = table.facets, None

        def narrow(more: Mask) -> None:
            nonlocal mask
            mask = more if mask is None else mask & more

        for column, values in (
            (facets.notebook, query.notebook_ids),
            (facets.kind, query.kinds),
            (facets.status, query.statuses),
            (facets.scope, query.scopes),
        ):
            if values:
                wanted = [self.names[v] for v in values if v in self.names]
                if len(wanted) == 1:  # the common case: a tenth of isin's time
                    narrow(column == wanted[0])
                else:
                    narrow(np.isin(column, np.array(wanted, dtype=np.int32)))
        for tag in query.tags:
            code = self.names.get(tag, NONE)
            holders = facets.tag_rows[facets.tag_codes == code]
            narrow(np.isin(table.rowids, holders))
        if query.since is not None:
            narrow(facets.when >= query.since.encode())
        if query.until is not None:
            narrow(facets.when <= query.until.encode())
        if query.alive_at is not None:
            narrow((facets.expires == b"") | (facets.expires > query.alive_at.encode()))
        return mask

    def candidates(
        self, table: Table, vector: Vectors, count: int, keep: int, mask: Mask | None
    ) -> Candidates:
        """The `keep` rows passing `mask` with the best estimated similarity to `vector`,
        best first, among the `count` nearest by Hamming distance of their signs (while
        the floats are held: the `keep` best by their exact similarity, so the answer is
        exact, with those scores)."""
        chosen = np.arange(len(table.rowids)) if mask is None else np.flatnonzero(mask)
        every = keep >= len(chosen)
        if table.exact is not None:  # held: the best by the exact score, ties newest first
            # Every row scored, then the passing ones picked: cheaper than copying the
            # passing rows out first.
            scores = similarities(table.exact, vector)
            leaders = ranked(scores if mask is None else scores[chosen], table.rowids[chosen], keep)
            rowids = np.array([rowid for rowid, _ in leaders], dtype=np.int64)
            return Candidates(rowids, every, leaders)
        if count < len(chosen):
            query = sign_codes(vector[None, :], self.centre)[:, 0]
            distance = np.zeros(len(chosen), dtype=np.uint16)
            for word, bits in zip(table.codes, query, strict=True):
                part = word if mask is None else word[chosen]
                distance += np.bitwise_count(part ^ bits)
            chosen = chosen[np.argpartition(distance, count - 1)[:count]]
        estimate = similarities(table.small[chosen], vector) * table.scales[chosen]
        if keep < len(chosen):
            best = np.argpartition(-estimate, keep - 1)[:keep]
            chosen, estimate = chosen[best], estimate[best]
        return Candidates(table.rowids[chosen[np.argsort(-estimate)]], every, None)


class Candidates(NamedTuple):
    rowids: RowIds  # best first
    every: bool  # they are every row that passes the filters
    exact: list[tuple[int, float]] | None  # their exact scores, where the copy held them
