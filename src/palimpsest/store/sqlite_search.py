"""Full text on SQLite: FTS5's best matches, or a read's in-memory term index
(store/term_index.py), under the filters, re-ranked by store/bm25.py."""

from __future__ import annotations

import json
import sqlite3
from abc import abstractmethod
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from . import bm25
from .rows import FOUND_COLUMNS, Row, found_from_row
from .search_rows import SearchRows
from .sqlite_fts import SEARCHED, fts_table, has_table, match_expression
from .values import Found, SearchQuery

if TYPE_CHECKING:  # numpy is loaded by the term index, when a read first ranks on it
    from .term_index import Passed, Positions, Ranked, TermIndex, TermView

# How many of the best full-text matches are scored against the filters before widening,
# and how many of the newest matches are ranked before all of them are.
CANDIDATES = 500
WINDOW = 4_000


class SqliteWords(SearchRows):
    """The full-text search of a SQLite session (mixed into `SqliteSession`)."""

    conn: sqlite3.Connection
    _term_indexes: dict[str, TermIndex] | None  # none for a write: its rows are not in
    _fts_written: bool  # whether full text changed in this transaction

    @abstractmethod
    def _last_seq(self) -> int:
        """The store's last event (every workspace's)."""

    @property
    def _fts_table(self) -> str:
        return fts_table(self.workspace)

    def _has_fts_table(self) -> bool:
        return has_table(self.conn, self._fts_table)

    def search_found(self, query: SearchQuery) -> list[tuple[Found, float]]:
        where, args = self.filters(query)
        terms = query.terms()
        if query.notebook_ids == ():
            return []
        if not terms:
            return self.recent(where, args, query.limit)
        if not self._has_fts_table():  # a workspace nothing was ever written to
            return []
        index = self._term_view() if query.notebook_ids is None and not query.tags else None
        if index is not None:
            stats = index.stats(terms)
            pool = self._indexed_pool(index, query, where, args, terms, stats)
            return self._ranked_words(pool, query, stats)
        # FTS5's best DEPTH (memories holding every word first, any word fills the rest),
        # re-ranked by bm25.py.
        depth = max(query.limit, bm25.DEPTH)
        stats = self._search_stats(terms)
        held = [stats.holding[term] for term in terms]
        passes: list[list[Found]] = []
        for joiner in (" AND ", " OR ")[: 2 if len(terms) > 1 else 1]:
            match = match_expression(joiner.join(f'"{t}"' for t in terms), query)
            most = min(held) if joiner == " AND " else sum(held)  # matches at most
            rows = self._best(match, where, args, query.limit, depth, most)
            passes.append([found_from_row(row) for row in rows])
            if len(passes[0]) >= query.limit:
                break
        found = bm25.pooled(passes[0], passes[1] if len(passes) > 1 else [], depth)
        # Their counts read once, for the pool alone (in the ranking query SQLite computed
        # them for every candidate it sorted).
        counted = {m.found.rowid: m for m in self._version_matches(
            [f"v.rowid IN ({', '.join('?' * len(found))})"], [f.rowid for f in found], terms
        )} if found else {}  # fmt: skip
        pool = [counted[f.rowid] for f in found]
        return self._ranked_words(pool, query, stats)

    # -- full text ranked on the term index (store/term_index.py) ---------------------

    def _term_view(self) -> TermView | None:
        """The workspace's term index as this transaction sees it, brought up to its last
        event; None where FTS5 ranks instead: in a write transaction (its own rows are not
        in the index) or when another thread moved the index past this snapshot."""
        if self._term_indexes is None:
            return None
        from .term_index import view_at

        seq, generation = self._last_seq(), self.vector_generation()
        return view_at(self._term_indexes, self.workspace, seq, generation,
                       self._counted_between)  # fmt: skip

    def _counted_between(self, after: int, upto: int) -> Iterator[tuple[int, str, int | None]]:
        """The term counts of the versions filed after event `after` up to `upto`."""
        rows = self.conn.execute(
            "SELECT rowid, search_counts, search_length FROM memory_versions "
            "WHERE workspace = ? AND from_seq > ? AND from_seq <= ? "
            "AND search_counts IS NOT NULL ORDER BY rowid",
            (self.workspace, after, upto),
        )
        return ((int(row[0]), row[1], row[2]) for row in rows)

    def _indexed_pool(
        self,
        index: TermView,
        query: SearchQuery,
        where: list[str],
        args: list[Any],
        terms: list[str],
        stats: bm25.Stats,
    ) -> list[bm25.Match]:
        """What FTS5's passes give `search_found` (the best DEPTH matches passing the
        filters, those holding every term first, with their counts), from the index."""
        depth = max(query.limit, bm25.DEPTH)
        passes: list[list[Passed]] = []
        for every in (True, False)[: 2 if len(terms) > 1 else 1]:
            matching = index.matching(terms, every)
            passes.append(self._best_indexed(index, matching, terms, stats, where, args,
                                             query.limit, depth))  # fmt: skip
            if len(passes[0]) >= query.limit:
                break
        return index.pooled(passes[0], passes[1] if len(passes) > 1 else [], depth, terms)

    def _best_indexed(
        self,
        index: TermView,
        matching: Positions,
        terms: list[str],
        stats: bm25.Stats,
        where: list[str],
        args: list[Any],
        limit: int,
        depth: int,
    ) -> list[Passed]:
        """`_best` on the index: the newest WINDOW matches, their CANDIDATES best checked
        against the filters, then wider while fewer than `limit` pass."""
        window = matching[-WINDOW:]
        tries: list[tuple[Positions, int | None]] = [(window, CANDIDATES)]
        if len(window) > CANDIDATES:
            tries.append((window, None))
        if len(matching) > WINDOW:
            tries.append((matching, None))
        best: list[Passed] = []
        for rows, cap in tries:
            best = self._passing(index.ranked(rows, terms, stats, cap), where, args, depth)
            if len(best) >= limit:
                break
        return best

    def _passing(
        self, leaders: Ranked, where: list[str], args: list[Any], depth: int
    ) -> list[Passed]:
        """The best `depth` of `leaders` that pass the filters, asked of SQL a few at a
        time."""
        passed: list[tuple[float, int, Row]] = []  # (score, row, its columns)
        start = 0
        while start < len(leaders.rows) and len(passed) < depth:
            # Leaders left for later rank below these (newest first on a tie, as by seq).
            end = start + 2 * depth
            rowids = leaders.rowids[start:end].tolist()
            rows = self._rows(
                f"SELECT {FOUND_COLUMNS}, v.from_seq AS seq FROM json_each(?) AS c "
                f"CROSS JOIN memory_versions v ON v.rowid = c.value WHERE {' AND '.join(where)}",
                [json.dumps(rowids), *args],
            )
            by_rowid = {int(row["rowid"]): row for row in rows}
            scores, rows_in_index = leaders.scores[start:end], leaders.rows[start:end]
            chunk = zip(scores.tolist(), rows_in_index.tolist(), rowids, strict=True)
            passed += [(score, row, by_rowid[rowid]) for score, row, rowid in chunk
                       if rowid in by_rowid]  # fmt: skip
            start = end
        from .term_index import Passed

        passed.sort(key=lambda leader: (-leader[0], -int(leader[2]["seq"])))
        return [Passed(found_from_row(columns), int(columns["seq"]), row)
                for _, row, columns in passed[:depth]]  # fmt: skip

    def _version_matches(
        self, where: list[str], args: list[Any], terms: list[str]
    ) -> list[bm25.Match]:
        columns, paths = _counted(terms)
        sql = f"SELECT {FOUND_COLUMNS}, {columns} FROM memory_versions v "
        rows = self._rows(sql + f"WHERE {' AND '.join(where)}", [*paths, *args])
        return bm25.found_matches(rows, terms)

    def _search_stats(self, terms: list[str]) -> bm25.Stats:
        """The workspace's figures for BM25, as FTS5 keeps them: its count of rows and
        their total length (the table's averages record), and each term's matches."""
        table = self._fts_table
        if self._fts_written:  # FTS5 saves the record when a savepoint opens, else at commit
            self._run("SAVEPOINT fts_totals")
            self._run("RELEASE fts_totals")
        held = "".join(
            f", (SELECT count(*) FROM {table} WHERE {table} MATCH ?) AS d{i}"
            for i in range(len(terms))
        )
        searched = " ".join(SEARCHED)
        row = self._row(
            f"SELECT (SELECT block FROM {table}_data WHERE id = 1) AS block{held}",
            [f'{{{searched}}} : "{term}"' for term in terms],
        )
        assert row is not None  # a SELECT of subqueries: always one row
        versions, *lengths = (_varints(row["block"]) if row["block"] else []) or [0]  # none yet
        holding = {term: int(row[f"d{i}"]) for i, term in enumerate(terms)}
        return bm25.Stats(versions, sum(lengths), holding)

    def _best(
        self, match: str, where: list[str], args: list[Any], limit: int, depth: int, most: int
    ) -> list[Row]:
        """Up to `depth` of the best matches passing the filters, widening the search only
        while fewer than `limit` pass (`most`: how many rows can match, at most).

        BM25 must score every match it ranks, so words found in very many memories would
        cost a scan: the first passes rank the newest WINDOW matches only, and of those
        score the CANDIDATES best against the filters. A pass that comes back short and
        did not cover every match is followed by a wider one.
        """
        start = self._window_start(match) if most > WINDOW else None
        rows = self._matches(match, where, args, depth, CANDIDATES, start)
        if len(rows) >= limit:
            return rows  # the common case: the window's best passed (no count needed)
        passes: list[tuple[int | None, int | None]] = []
        if most > CANDIDATES and self._count(match, start, CANDIDATES + 1) > CANDIDATES:
            passes.append((None, start))
        if start is not None:
            passes.append((None, None))
        for cap, lowest in passes:
            rows = self._matches(match, where, args, depth, cap, lowest)
            if len(rows) >= limit:
                break
        return rows

    def _window_start(self, match: str) -> int | None:
        """The rowid below which matches fall outside the newest WINDOW, if there are more."""
        row = self._row(
            f"SELECT rowid FROM {self._fts_table} WHERE {self._fts_table} MATCH ? "
            "ORDER BY rowid DESC "
            "LIMIT 1 OFFSET ?",
            (match, WINDOW),
        )
        return None if row is None else int(row["rowid"])

    def _count(self, match: str, lowest: int | None, most: int) -> int:
        row = self._row(
            f"SELECT count(*) AS n FROM (SELECT 1 FROM {self._fts_table} "
            f"WHERE {self._fts_table} MATCH ? "
            "AND rowid > ? LIMIT ?)",
            (match, lowest or 0, most),
        )
        return int(row["n"]) if row else 0

    def _matches(
        self,
        match: str,
        where: list[str],
        args: list[Any],
        limit: int,
        cap: int | None,
        lowest: int | None,
    ) -> list[Row]:
        table = self._fts_table
        candidates = f"SELECT rowid, rank FROM {table} WHERE {table} MATCH ? AND rowid > ?"
        if cap is not None:
            candidates += f" ORDER BY rank LIMIT {cap}"
        sql = (
            f"SELECT {FOUND_COLUMNS} FROM ({candidates}) c "
            f"JOIN memory_versions v ON v.rowid = c.rowid WHERE {' AND '.join(where)} "
            "ORDER BY c.rank, v.from_seq DESC LIMIT ?"
        )
        return self._rows(sql, [match, lowest or 0, *args, limit])


def _counted(terms: list[str]) -> tuple[str, list[str]]:
    """What bm25.found_matches reads of version v, and the JSON paths it takes.

    The counts are JSON with keys outside ASCII escaped (東 is kept as \\u6771): SQLite
    3.40 finds such a key only by the escaped path, later releases by either, so such a
    term asks both."""
    columns: list[str] = []
    paths: list[str] = []
    for i, term in enumerate(terms):
        ways = dict.fromkeys([f'$."{term}"', "$." + json.dumps(term)])
        reads = ", ".join("json_extract(v.search_counts, ?)" for _ in ways)
        columns.append(f", coalesce({reads}, 0) AS tf{i}")
        paths += ways
    return f"v.from_seq AS seq, v.search_length AS length{''.join(columns)}", paths


def _varints(block: bytes) -> list[int]:
    """The numbers of an FTS5 record: SQLite's varints, most significant 7 bits first,
    the ninth byte whole."""
    numbers, at = [], 0
    while at < len(block):
        value = 0
        for i in range(9):
            byte = block[at]
            at += 1
            if i == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        numbers.append(value)
    return numbers
