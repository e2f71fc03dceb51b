"""PostgreSQL's full text ranked on an in-memory copy of its term counts, as SQLite's is.

Ranking in SQL read each match's `search_counts` (jsonb) and scored it there: 4,000
matches of common words cost most of a recall's time at 100,000 memories (59 of 74 ms),
and a filter that kept the window's best from passing had every match scored (274 ms).
The counts are the ones store/term_index.py keeps for SQLite, so each process holds the
same copy (a `TermIndex` per workspace) and ranks on it as SQLite does: the same matches,
window, cut and order, hence the same answers. SQL only says which of the best pass the
filters, a few hundred row ids at a time; a search narrowed to notebooks or tags (which
may pass few of the best) asks SQL for the matches passing the filters instead, row ids
alone, and ranks all of them, as pg_search does.

The copy follows the workspace's events. Writers of a workspace commit in the order of
their events (postgres.py), so a read's snapshot holds every event of the workspace up
to its last and none after: the versions filed since the copy's last event are the ones
to add, with row ids above every row held (the same lock hands them out in that order).
A forget takes words out, and moves the workspace's generation, so the copy starts over;
a read whose snapshot is older than the copy, and a write (its own rows are not in the
copy), rank in SQL (pg_search).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from . import Found, SearchQuery, bm25, pg_search
from .rows import FOUND_COLUMNS, Row
from .term_index import Passed, Positions, Ranked, TermIndex, TermView, view_at
from .vector_cache import Mask, RowIds
from .vector_search import narrowed


class IndexedWords:
    """The term-index part of a PostgreSQL session (mixed into `PostgresSession`)."""

    workspace: str
    term_indexes: dict[str, TermIndex] | None  # None in a write: its own rows are not in

    @abstractmethod
    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[Row]: ...

    @abstractmethod
    def _row(self, sql: str, params: Iterable[Any] = ()) -> Row | None: ...

    @abstractmethod
    def _cursor(self, sql: str, params: Iterable[Any] = ()) -> Iterator[Row]: ...

    @abstractmethod
    def snapshot_state(self) -> tuple[int, int]: ...

    @abstractmethod
    def failing(self, query: SearchQuery) -> Callable[[RowIds], Mask] | None: ...

    def term_view(self) -> TermView | None:
        """The workspace's copy as this snapshot sees it, brought up to its last event;
        None where SQL ranks instead (a write, or a snapshot older than the copy)."""
        if self.term_indexes is None:
            return None
        seq, generation = self.snapshot_state()
        return view_at(self.term_indexes, self.workspace, seq, generation,
                       self._counted_between)  # fmt: skip

    def _counted_between(self, after: int, upto: int) -> Iterator[tuple[int, str, int | None]]:
        """The term counts of the versions filed after event `after` up to `upto`."""
        rows = self._cursor(
            "SELECT rowid, search_counts::text AS counts, search_length FROM memory_versions "
            "WHERE workspace = ? AND from_seq > ? AND from_seq <= ? "
            "AND search_counts IS NOT NULL ORDER BY rowid",
            (self.workspace, after, upto),
        )
        return ((int(row["rowid"]), row["counts"], row["search_length"]) for row in rows)

    def indexed_pool(
        self, view: TermView, query: SearchQuery, where: list[str], args: list[Any]
    ) -> list[bm25.Match]:
        """What ranking in SQL gives `search_found` (the best DEPTH matches passing the
        filters, those holding every term first, with their counts), from the copy."""
        terms = query.terms()
        stats = view.stats(terms)
        depth = max(query.limit, bm25.DEPTH)
        if pg_search.narrows(query):  # as SQL decides (postgres.py)
            every, rest = self._indexed_narrowed(view, query, where, args, stats, depth)
        else:
            every, rest = self._indexed_passes(view, query, where, args, stats, depth)
        return view.pooled(every, rest, depth, terms)

    def _indexed_passes(
        self, view: TermView, query: SearchQuery, where: list[str], args: list[Any],
        stats: bm25.Stats, depth: int,
    ) -> tuple[list[Passed], list[Passed]]:  # fmt: skip
        """SQLite's passes: the matches holding every term, then (while fewer than the
        limit pass) those holding any."""
        terms = query.terms()
        passes: list[list[Passed]] = []
        # What SQL or the vector copy said of each row id (None: fails): a filter that
        # drops most of the best costs no round trip for them.
        known: dict[int, Row | None] = {}
        fails = self.failing(query) if narrowed(query) else None
        for every in (True, False)[: 2 if len(terms) > 1 else 1]:
            matching = view.matching(terms, every)
            passes.append(self._indexed_best(view, matching, terms, stats, where, args,
                                     query.limit, depth, known, fails))  # fmt: skip
            if len(passes[0]) >= query.limit:
                break
        return passes[0], passes[1] if len(passes) > 1 else []

    def _indexed_best(
        self, view: TermView, matching: Positions, terms: list[str], stats: bm25.Stats,
        where: list[str], args: list[Any], limit: int, depth: int, known: dict[int, Row | None],
        fails: Callable[[RowIds], Mask] | None,
    ) -> list[Passed]:  # fmt: skip
        """SQLite's `_best_indexed`: the newest WINDOW matches, their CANDIDATES best
        checked against the filters, then wider while fewer than `limit` pass."""
        window = matching[-pg_search.WINDOW :]
        tries: list[tuple[Positions, int | None]] = [(window, pg_search.CANDIDATES)]
        if len(window) > pg_search.CANDIDATES:
            tries.append((window, None))
        if len(matching) > pg_search.WINDOW:
            tries.append((matching, None))
        best: list[Passed] = []
        for rows, cap in tries:
            leaders = view.ranked(rows, terms, stats, cap)
            best = self._indexed_passing(leaders, where, args, depth, known, fails)
            if len(best) >= limit:
                break
        return best

    def _indexed_passing(
        self, leaders: Ranked, where: list[str], args: list[Any], depth: int,
        known: dict[int, Row | None], fails: Callable[[RowIds], Mask] | None,
    ) -> list[Passed]:  # fmt: skip
        """The best `depth` of `leaders` that pass the filters, asked of SQL a few hundred
        at a time (twice as many each time: a filter may pass few); the row ids in `known`
        are not asked again, nor those `fails` (the vector copy) knows to fail."""
        passed: list[tuple[float, int, Row]] = []  # (score, row in the copy, its columns)
        start, size = 0, 2 * depth
        while start < len(leaders.rows) and len(passed) < depth:
            # Leaders left for later rank below these (newest first on a tie, as by seq).
            end = start + size
            rowids = leaders.rowids[start:end].tolist()
            if fails is not None:
                chunk_ids = leaders.rowids[start:end]
                known.update(dict.fromkeys(chunk_ids[fails(chunk_ids)].tolist()))
            asked = [rowid for rowid in rowids if rowid not in known]
            if asked:
                known.update(dict.fromkeys(asked))
                known.update((int(row["rowid"]), row)
                             for row in self._passing_rows(asked, where, args))  # fmt: skip
            chunk = zip(leaders.scores[start:end].tolist(), leaders.rows[start:end].tolist(),
                        rowids, strict=True)  # fmt: skip
            passed += [(score, row, columns) for score, row, rowid in chunk
                       if (columns := known[rowid]) is not None]  # fmt: skip
            start, size = end, 2 * size
        passed.sort(key=lambda leader: (-leader[0], -int(leader[2]["seq"])))
        return [Passed(Found(columns["memory_id"], int(columns["rowid"])), int(columns["seq"]), row)
                for _, row, columns in passed[:depth]]  # fmt: skip

    def _passing_rows(self, rowids: list[int], where: list[str], args: list[Any]) -> list[Row]:
        return self._rows(
            f"SELECT {FOUND_COLUMNS}, v.from_seq AS seq FROM unnest(CAST(? AS bigint[])) AS c(id) "
            f"JOIN memory_versions v ON v.rowid = c.id WHERE {' AND '.join(where)}",
            [rowids, *args],
        )

    def _indexed_narrowed(
        self, view: TermView, query: SearchQuery, where: list[str], args: list[Any],
        stats: bm25.Stats, depth: int,
    ) -> tuple[list[Passed], list[Passed]]:  # fmt: skip
        """A search narrowed to notebooks or tags, as pg_search ranks it: every match
        passing the filters (found by SQL, row ids alone), the best `depth` of them,
        those holding every term first."""
        terms = query.terms()
        found = self._rows(
            f"SELECT {FOUND_COLUMNS}, v.from_seq AS seq FROM memory_versions v "
            f"WHERE v.search @@ CAST(? AS tsquery) AND {' AND '.join(where)}",
            [pg_search.match(terms, False), *args],
        )
        by_rowid = {int(row["rowid"]): row for row in found}
        if not by_rowid or not view.size:
            return [], []
        wanted = np.array(sorted(by_rowid), np.int64)
        at = np.searchsorted(view.rowids[: view.size], wanted)
        rows = at[(at < view.size) & (view.rowids[np.minimum(at, view.size - 1)] == wanted)]
        rows = rows.astype(np.int32)
        holding = np.isin(rows, view.matching(terms, True), assume_unique=True)
        groups = []
        for group in (rows[holding], rows[~holding]):
            ranked = view.ranked(group, terms, stats, depth)
            groups.append([
                Passed(Found(by_rowid[rowid]["memory_id"], rowid), int(by_rowid[rowid]["seq"]), row)
                for row, rowid in zip(ranked.rows.tolist(), ranked.rowids.tolist(), strict=True)
            ][:depth])  # fmt: skip
        every, rest = groups
        return every, rest[: max(depth - len(every), 0)] if len(every) < query.limit else []
