"""Full text's shared steps on both stores: the filters of a search as SQL, the versions a
search found read back, and the last steps of ranking (store/bm25.py), the words of the
memories filed beside a match included. Matching itself is each backend's."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from ..domain.model import Memory
from . import bm25
from .rows import FOUND_COLUMNS, Row, found_from_row, memory_from_row
from .session_base import SessionBase, current_at, marks
from .values import Found, RowFacts, SearchQuery


class SearchRows(SessionBase):
    """The full-text part of a store session."""

    def search(self, query: SearchQuery) -> list[tuple[Memory, float]]:
        return self._read_found(self.search_found(query))

    def versions_of_rows(self, rowids: Sequence[int]) -> dict[int, Memory]:
        if not rowids:
            return {}
        rows = self._rows(
            f"SELECT v.* FROM memory_versions v WHERE v.rowid IN ({', '.join('?' * len(rowids))})",
            rowids,
        )
        return {int(row["rowid"]): memory_from_row(row) for row in rows}

    def facts_of_rows(self, rowids: Sequence[int]) -> dict[int, RowFacts]:
        if not rowids:
            return {}
        rows = self._rows(
            "SELECT v.rowid AS rowid, v.notebook_id AS notebook_id, v.author AS author, "
            "v.occurred_at AS occurred_at FROM memory_versions v "
            f"WHERE v.rowid IN ({', '.join('?' * len(rowids))})",
            rowids,
        )
        return {
            int(row["rowid"]): RowFacts(
                row["notebook_id"], (row["occurred_at"] or "")[:10] or None, row["author"]
            )
            for row in rows
        }

    def _read_found(self, found: list[tuple[Found, float]]) -> list[tuple[Memory, float]]:
        versions = self.versions_of_rows([version.rowid for version, _ in found])
        return [(versions[version.rowid], score) for version, score in found]

    # -- full text's last steps (store/bm25.py), the same on every store ----------------

    def _ranked_words(
        self, pool: list[bm25.Match], query: SearchQuery, stats: bm25.Stats
    ) -> list[tuple[Found, float]]:
        """`pool` (full text's best as FTS5 ranks them) re-ranked by bm25.py, the first
        NEIGHBOURED with the words of the memory filed just before each, and the memory
        filed just after each drawn in (when `query.beside`)."""
        terms = query.terms()
        scored = bm25.scored(pool, terms, stats)
        whole = bm25.whole(terms, stats)
        if not query.beside:
            best = bm25.ordered(scored, terms)[: query.limit]
            return [(m.found, score / whole) for m, score in best]
        top = bm25.first(scored, terms, bm25.NEIGHBOURED)
        beside = self.filed_beside([m.found.id for m in top], 1, query.at_seq)
        just = {
            m.found.id: dict((d, other) for other, d in beside.get(m.found.id, [])) for m in top
        }
        before = self._matches_of([j[-1] for j in just.values() if -1 in j], query, terms, False)
        drawn: dict[str, bm25.Match] = {}  # the memory filed just after a match -> it
        for m in top:
            if 1 in just[m.found.id]:
                drawn.setdefault(just[m.found.id][1], m)
        after = self._matches_of(list(drawn), query, terms, True)
        pooled = {m.found.id for m in pool}
        changed: dict[str, bm25.Match] = {}
        for m in top:
            lender = before.get(just[m.found.id].get(-1, ""))
            if lender is not None:
                changed[m.found.id] = bm25.lent(m, lender, terms)
        for memory_id, m in after.items():  # found by the words before it alone, or not
            found = m.found if memory_id in pooled else m.found._replace(borrowed=True)
            changed[memory_id] = bm25.lent(replace(m, found=found), drawn[memory_id], terms)
        kept = [(m, score) for m, score in scored if m.found.id not in changed]
        rescored = bm25.scored(changed.values(), terms, stats)
        best = bm25.ordered(kept + rescored, terms)[: query.limit]
        return [(m.found, score / whole) for m, score in best]

    def filed_beside(
        self, memory_ids: Sequence[str], span: int, at_seq: int | None
    ) -> dict[str, list[tuple[str, int]]]:
        # Creation events (version 1) in the notebook each memory was filed in, by
        # sequence: the events_notebook index (workspace, notebook_id, seq) serves each
        # step, events_target finds the memories (no ORDER BY: SQLite, unanalysed, then
        # walked every event of the workspace).
        if not memory_ids or span < 1:
            return {}
        # Only memories that say when they happened have an episode to look in: an agent's
        # project notes rarely do, and then the walk below is not made at all.
        days = self._days_filed(memory_ids)
        memory_ids = [memory_id for memory_id in memory_ids if memory_id in days]
        if not memory_ids:
            return {}
        near = (
            "(SELECT n.target_id FROM events n WHERE n.workspace = e.workspace "
            "AND n.notebook_id = e.notebook_id AND n.version = 1 AND n.target_type = 'memory' "
            "AND n.seq {} e.seq AND n.seq <= ? ORDER BY n.seq {} LIMIT 1 OFFSET {}) AS {}{}"
        )
        columns = [near.format(op, way, k, side, k) for op, way, side in
                   (("<", "DESC", "b"), (">", "ASC", "a")) for k in range(span)]  # fmt: skip
        last = at_seq if at_seq is not None else 2**62  # no bound: every later filing
        rows = self._rows(
            f"SELECT e.target_id AS id, e.seq AS seq, {', '.join(columns)} FROM events e "
            "WHERE e.workspace = ? AND e.version = 1 AND e.target_type = 'memory' "
            f"AND e.target_id IN ({marks(memory_ids)})",
            [*[last] * len(columns), self.workspace, *memory_ids],
        )
        sides = [f"{side}{k}" for side in "ba" for k in range(span)]
        named = {row[c] for row in rows for c in sides if row[c] is not None} - set(days)
        day = days | self._days_filed(sorted(named))
        beside: dict[str, list[tuple[str, int]]] = {}
        for row in sorted(rows, key=lambda row: int(row["seq"])):  # the first filing of each
            own = day.get(row["id"])
            beside.setdefault(row["id"], [
                (row[f"{side}{k}"], sign * (k + 1))
                for side, sign in (("b", -1), ("a", 1)) for k in range(span)
                if own is not None and day.get(row[f"{side}{k}"]) == own
            ])  # fmt: skip
        return beside

    def _days_filed(self, memory_ids: Sequence[str]) -> dict[str, str]:
        """The day each memory said it happened when it was filed (version 1's occurred_at),
        for those that said one: the episodes `filed_beside` keeps to."""
        if not memory_ids:
            return {}
        rows = self._rows(
            "SELECT v.memory_id AS id, v.occurred_at AS occurred_at FROM memory_versions v "
            f"WHERE v.memory_id IN ({marks(memory_ids)}) AND {self.UNINDEXED}v.workspace = ? "
            "AND v.version = 1 AND v.occurred_at IS NOT NULL",
            [*memory_ids, self.workspace],
        )
        return {row["id"]: row["occurred_at"][:10] for row in rows}

    def _matches_of(
        self, memory_ids: list[str], query: SearchQuery, terms: list[str], filtered: bool
    ) -> dict[str, bm25.Match]:
        """The versions of `memory_ids` as of the query's time, as bm25.py scores them:
        those passing the query's filters (`filtered`), or any with content."""
        if not memory_ids:
            return {}
        if filtered:
            where, args = self.filters(query)
        else:
            span, span_args = current_at(query.at_seq)
            where, args = ["v.workspace = ?", span, "v.scrubbed = 0"], [self.workspace, *span_args]
        # Found by memory id: SQLite, unanalysed, walked the workspace's index instead.
        assert where[0] == "v.workspace = ?"
        where = [f"v.memory_id IN ({marks(memory_ids)})", f"{self.UNINDEXED}{where[0]}", *where[1:]]
        matches = self._version_matches(where, [*memory_ids, *args], terms)
        return {m.found.id: m for m in matches}

    def reindex(self) -> None:
        """Index every version that has content anew, in batches (a migration's last step:
        the rules of store/terms.py changed, and a database cannot run them itself)."""
        for row in self.versions_with_content():
            self._reindexed(row)

    def versions_with_content(self) -> Iterator[Row]:
        """Every version of every workspace that has content, its searched columns, read
        1,000 at a time (a migration's walk)."""
        last = 0
        while True:
            rows = self._rows(
                "SELECT rowid, workspace, text, title, why, tags_text, notebook_id "
                "FROM memory_versions WHERE scrubbed = 0 AND rowid > ? ORDER BY rowid LIMIT 1000",
                (last,),
            )
            if not rows:
                return
            yield from rows
            last = int(rows[-1]["rowid"])

    def filters(self, query: SearchQuery) -> tuple[list[str], list[Any]]:
        """The SQL conditions on memory_versions (alias v) for a search's filters."""
        span, span_args = current_at(query.at_seq)
        where = ["v.workspace = ?", span, "v.scrubbed = 0"]
        args: list[Any] = [self.workspace, *span_args]
        for column, values in (
            ("notebook_id", query.notebook_ids),
            ("kind", query.kinds),
            ("status", query.statuses),
            ("scope", query.scopes),
        ):
            if values:
                where.append(f"v.{column} IN ({marks(values)})")
                args.extend(values)
        for tag in query.tags:
            where.append(self._tag_condition())
            args.append(tag)
        for bound, operator in ((query.since, ">="), (query.until, "<=")):
            if bound is not None:
                where.append(f"coalesce(v.occurred_at, v.recorded_at) {operator} ?")
                args.append(bound)
        if query.alive_at is not None:
            where.append("(v.expires_at IS NULL OR v.expires_at > ?)")
            args.append(query.alive_at)
        return where, args

    def recent(self, where: list[str], args: list[Any], limit: int) -> list[tuple[Found, float]]:
        """Without query words: the newest versions passing the filters."""
        rows = self._rows(
            f"SELECT {FOUND_COLUMNS} FROM memory_versions v WHERE {' AND '.join(where)} "
            "ORDER BY v.from_seq DESC LIMIT ?",
            [*args, limit],
        )
        return [(found_from_row(row), 0.0) for row in rows]
