"""What SQLite and PostgreSQL do alike: a workspace-bound session over the same schema.

The SQL is written once with `?` placeholders; a backend runs it through `_rows`, `_row`
and `_run`, and fills in what differs: how full text is indexed and searched, how a tag
filter reads the JSON tags, and how to keep the planner on the right index.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from ..domain.errors import Conflict, InternalError
from ..domain.model import Dispute, Event, Link, Memory, MemoryVersion, Notebook, Tombstone, now_utc
from . import EventFilter, Found, PendingScrub, RowFacts, SearchQuery, StoredResponse, bm25
from .access_rows import AccessRows
from .dispute_rows import (
    DISPUTE_EVENT_TEXTS,
    DISPUTE_OPS,
    DISPUTE_TEXT_COLUMNS,
    dispute_columns,
    dispute_from_row,
)
from .guard_rows import GuardRows
from .orient_rows import OrientRows
from .rows import (
    CONTENT_COLUMNS,
    FOUND_COLUMNS,
    Row,
    event_from_row,
    found_from_row,
    link_from_row,
    memory_columns,
    memory_from_row,
    notebook_from_row,
)

if TYPE_CHECKING:  # numpy is imported where a vector is read (see sqlite.py)
    from .vector_search import Vectors


class SqlSession(OrientRows, GuardRows, AccessRows, ABC):
    """A view of the store bound to one workspace, inside one transaction."""

    # Prefix that keeps a column's index out of the planner's choice ("+" in SQLite),
    # where a lookup by memory id must use the unique (memory_id, version) index.
    UNINDEXED: ClassVar[str] = ""

    def __init__(self, workspace: str):
        self.workspace = workspace
        self.discarded = False
        self.key_id: str | None = None  # the HTTP key of the writes in this session, if any

    # -- what a backend provides ---------------------------------------------------------

    @abstractmethod
    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[Row]: ...

    @abstractmethod
    def _run(self, sql: str, params: Iterable[Any] = ()) -> None: ...

    @abstractmethod
    def _cursor(self, sql: str, params: Iterable[Any] = ()) -> Iterator[Row]:
        """Rows one at a time, for scans too large to hold in memory."""

    @abstractmethod
    def search_found(self, query: SearchQuery) -> list[tuple[Found, float]]: ...

    @abstractmethod
    def nearest_found(
        self, vector: Vectors, query: SearchQuery, model: str
    ) -> list[tuple[Found, float]]: ...

    def search(self, query: SearchQuery) -> list[tuple[Memory, float]]:
        return self._read_found(self.search_found(query))

    def nearest(
        self, vector: Vectors, query: SearchQuery, model: str
    ) -> list[tuple[Memory, float]]:
        return self._read_found(self.nearest_found(vector, query, model))

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

    @abstractmethod
    def _version_matches(
        self, where: list[str], args: list[Any], terms: list[str]
    ) -> list[bm25.Match]:
        """The versions passing `where` (alias v) as bm25.py scores them for `terms`."""

    @abstractmethod
    def _tag_condition(self) -> str:
        """SQL true when the JSON tags of version `v` hold the tag given as parameter."""

    def _search_values(self, columns: dict[str, Any]) -> dict[str, Any]:
        """Columns stored beside a version's content to search it (PostgreSQL's tsvector)."""
        return {}

    def _indexed(self, rowid: int, columns: Row) -> None:
        """A version row was inserted (its columns and `_search_values`): index its text in
        a table of its own (SQLite's), or count it (PostgreSQL's statistics)."""
        return None

    @abstractmethod
    def _reindexed(self, row: Row) -> None:
        """Index an existing version row anew, by the rules of store/terms.py."""

    def _unindexed(self, row: Row) -> None:
        """A version row is about to lose its content: drop it from the text index."""
        return None

    def _after_scrub(self) -> None:
        """Content was scrubbed: make the text index forget it physically too."""
        return None

    # How a SELECT reads a vector (of memory_vectors, alias mv) and how an INSERT writes one.
    VECTOR_OUT: ClassVar[str] = "mv.vector"
    VECTOR_IN: ClassVar[str] = "?"

    @abstractmethod
    def _vector_value(self, vector: Vectors) -> Any:
        """A vector as the parameter VECTOR_IN takes."""

    @abstractmethod
    def _vector_from(self, value: Any) -> Vectors:
        """A vector read through VECTOR_OUT, as float32."""

    def _row(self, sql: str, params: Iterable[Any] = ()) -> Row | None:
        found = self._rows(sql, params)
        return found[0] if found else None

    # -- sessions ------------------------------------------------------------------------

    def discard(self) -> None:
        """Roll the transaction back at the end instead of committing (dry runs)."""
        self.discarded = True

    def ensure_workspace(self) -> None:
        self._run(
            "INSERT INTO workspaces(id, name, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            (self.workspace, self.workspace, now_utc()),
        )

    # -- memories ------------------------------------------------------------------------

    def _versions(self, condition: str, params: Iterable[Any]) -> list[Memory]:
        rows = self._rows(
            f"SELECT * FROM memory_versions v WHERE {condition} "
            f"AND {self.UNINDEXED}v.workspace = ? AND v.scrubbed = 0 ORDER BY v.memory_id",
            (*params, self.workspace),
        )
        return [memory_from_row(row) for row in rows]

    def get_memory(self, memory_id: str) -> Memory | None:
        found = self._versions("v.memory_id = ? AND v.to_seq IS NULL", (memory_id,))
        return found[0] if found else None

    def get_tombstone(self, memory_id: str) -> Tombstone | None:
        row = self._row(
            "SELECT * FROM memories WHERE id = ? AND workspace = ? AND forgotten_at IS NOT NULL",
            (memory_id, self.workspace),
        )
        if row is None:
            return None
        return Tombstone(row["id"], row["forgotten_at"], row["forgotten_by"], row["forget_reason"])

    def memory_versions(self, memory_id: str) -> list[MemoryVersion]:
        rows = self._rows(
            "SELECT v.*, e.at AS event_at, e.actor AS event_actor, e.op AS event_op "
            "FROM memory_versions v JOIN events e ON e.seq = v.from_seq "
            f"WHERE v.memory_id = ? AND {self.UNINDEXED}v.workspace = ? ORDER BY v.version",
            (memory_id, self.workspace),
        )
        return [
            MemoryVersion(
                version=row["version"],
                seq=row["from_seq"],
                at=row["event_at"],
                actor=row["event_actor"],
                op=row["event_op"],
                memory=None if row["scrubbed"] else memory_from_row(row),
            )
            for row in rows
        ]

    def memory_at(self, memory_id: str, seq: int) -> Memory | None:
        span, span_args = current_at(seq)
        found = self._versions(f"v.memory_id = ? AND {span}", (memory_id, *span_args))
        return found[0] if found else None

    def memories_at(self, seq: int | None, notebook_id: str | None = None) -> list[Memory]:
        span, span_args = current_at(seq)
        if notebook_id is None:
            return self._versions(span, span_args)
        return self._versions(f"{span} AND v.notebook_id = ?", (*span_args, notebook_id))

    def all_versions(self) -> Iterator[Memory]:
        rows = self._cursor(
            "SELECT * FROM memory_versions WHERE workspace = ? AND scrubbed = 0 ORDER BY rowid",
            (self.workspace,),
        )
        return (memory_from_row(row) for row in rows)

    def find_by_text(self, notebook_id: str, norm_text: str) -> list[Memory]:
        return self._versions(
            "v.notebook_id = ? AND v.norm_text = ? AND v.to_seq IS NULL", (notebook_id, norm_text)
        )

    def key_holder(self, notebook_id: str, key: str) -> Memory | None:
        found = self._versions(
            "v.notebook_id = ? AND v.key = ? AND v.status = 'active' AND v.to_seq IS NULL",
            (notebook_id, key),
        )
        return found[0] if found else None

    def memories_with_key(self, key: str, at_seq: int | None) -> list[Memory]:
        span, span_args = current_at(at_seq)
        rows = self._rows(  # by (workspace, key): no notebook narrows this lookup
            f"SELECT * FROM memory_versions v WHERE v.workspace = ? AND v.key = ? AND {span} "
            "AND v.scrubbed = 0 ORDER BY v.memory_id LIMIT 50",
            (self.workspace, key, *span_args),
        )
        return [memory_from_row(row) for row in rows]

    def put_memory(self, memory: Memory, seq: int) -> None:
        self._run(
            "INSERT INTO memories(id, workspace) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (memory.id, self.workspace),
        )
        self._run(
            "UPDATE memory_versions SET to_seq = ? WHERE memory_id = ? AND to_seq IS NULL",
            (seq, memory.id),
        )
        columns = memory_columns(memory)
        stored = {**columns, **self._search_values(columns)}
        inserted = self._row(
            f"INSERT INTO memory_versions(memory_id, version, workspace, from_seq, "
            f"{', '.join(stored)}) VALUES (?, ?, ?, ?, {marks(stored)}) RETURNING rowid",
            (memory.id, memory.version, self.workspace, seq, *stored.values()),
        )
        assert inserted is not None
        self._indexed(int(inserted["rowid"]), stored)

    # -- vectors (recall by meaning): one per version, in memory_vectors ----------------

    def put_vector(self, memory_id: str, seq: int, vector: Vectors, model: str) -> None:
        row = self._row(
            "SELECT rowid FROM memory_versions WHERE memory_id = ? AND from_seq = ? "
            "AND workspace = ?",
            (memory_id, seq, self.workspace),
        )
        if row is None:
            raise InternalError(f"no version of {memory_id} was written by event {seq}")
        self._put_vector_row(int(row["rowid"]), vector, model)

    def _put_vector_row(self, rowid: int, vector: Vectors, model: str) -> None:
        self._run(
            "INSERT INTO memory_vectors(version_rowid, workspace, model, vector) "
            f"VALUES (?, ?, ?, {self.VECTOR_IN}) ON CONFLICT (version_rowid) DO UPDATE "
            "SET model = excluded.model, vector = excluded.vector",
            (rowid, self.workspace, model, self._vector_value(vector)),
        )

    def vector_of(self, memory_id: str, version: int, model: str) -> Vectors | None:
        row = self._row(
            f"SELECT {self.VECTOR_OUT} AS vector FROM memory_vectors mv "
            "JOIN memory_versions v ON v.rowid = mv.version_rowid "
            "WHERE v.memory_id = ? AND v.version = ? AND v.workspace = ? AND mv.model = ?",
            (memory_id, version, self.workspace, model),
        )
        return None if row is None else self._vector_from(row["vector"])

    _STALE = (
        "FROM memory_versions v LEFT JOIN memory_vectors mv ON mv.version_rowid = v.rowid "
        "WHERE v.workspace = ? AND v.scrubbed = 0 AND (mv.model IS NULL OR mv.model <> ?)"
    )

    def stale_vector_count(self, model: str) -> int:
        row = self._row(f"SELECT count(*) AS n {self._STALE}", (self.workspace, model))
        return int(row["n"]) if row else 0

    def stale_vectors(self, model: str, limit: int) -> list[Memory]:
        rows = self._rows(
            f"SELECT v.* {self._STALE} ORDER BY v.rowid LIMIT ?", (self.workspace, model, limit)
        )
        return [memory_from_row(row) for row in rows]

    def reindexed_vectors(self, vectors: list[tuple[Memory, Vectors]], model: str) -> None:
        for memory, vector in vectors:
            row = self._row(
                "SELECT rowid FROM memory_versions WHERE memory_id = ? AND version = ? "
                "AND workspace = ? AND scrubbed = 0",
                (memory.id, memory.version, self.workspace),
            )
            if row is not None:  # forgotten meanwhile: nothing to index
                self._put_vector_row(int(row["rowid"]), vector, model)
        self._next_vector_generation()

    def vector_generation(self) -> int:
        """Changes whenever vectors change other than by a new version (reindex, forget)."""
        row = self._row(
            "SELECT generation FROM vector_generations WHERE workspace = ?", (self.workspace,)
        )
        return int(row["generation"]) if row else 0

    def _next_vector_generation(self) -> None:
        self._run(
            "INSERT INTO vector_generations(workspace, generation) VALUES (?, 1) "
            "ON CONFLICT (workspace) DO UPDATE SET generation = vector_generations.generation + 1",
            (self.workspace,),
        )

    def forget_memory(self, tombstone: Tombstone, seq: int) -> None:
        rows = self._rows(
            "SELECT * FROM memory_versions WHERE memory_id = ? AND workspace = ? AND scrubbed = 0",
            (tombstone.id, self.workspace),
        )
        for row in rows:
            self._scrub(row)
        self._run(
            "UPDATE memory_versions SET to_seq = ? WHERE memory_id = ? AND to_seq IS NULL",
            (seq, tombstone.id),
        )
        self._run(
            "UPDATE events SET note = NULL, data = '{}', fields = '[]' "
            "WHERE target_id = ? AND seq < ?",
            (tombstone.id, seq),
        )
        self._run(
            "UPDATE memories SET forgotten_at = ?, forgotten_by = ?, forget_reason = ? "
            "WHERE id = ?",
            (tombstone.forgotten_at, tombstone.actor, tombstone.reason, tombstone.id),
        )
        self._drop_responses_naming(tombstone.id)
        self._forget_disputes(tombstone.id)
        self._mark_pending(tombstone.id, tombstone.forgotten_at)
        self._after_scrub()

    def forget_version(self, memory_id: str, version: int) -> None:
        row = self._row(
            "SELECT * FROM memory_versions WHERE memory_id = ? AND version = ? AND workspace = ?",
            (memory_id, version, self.workspace),
        )
        if row is None or row["scrubbed"]:
            return
        self._scrub(row)
        self._run(
            "UPDATE events SET note = NULL, data = '{}' WHERE target_id = ? AND version = ?",
            (memory_id, version),
        )
        self._mark_pending(memory_id, now_utc())
        self._after_scrub()

    def _mark_pending(self, target_id: str, at: str) -> None:
        """Note, in the forget's own transaction, that bytes may linger until the scrub."""
        self._run(
            "INSERT INTO scrub_pending(workspace, target_id, at) VALUES (?, ?, ?)",
            (self.workspace, target_id, at),
        )

    def pending_scrubs(self) -> list[PendingScrub]:
        rows = self._rows(
            "SELECT target_id, min(at) AS at FROM scrub_pending WHERE workspace = ? "
            "GROUP BY target_id ORDER BY min(at), target_id",
            (self.workspace,),
        )
        return [PendingScrub(row["target_id"], row["at"]) for row in rows]

    def _drop_responses_naming(self, target_id: str) -> None:
        """Idempotency records naming `target_id` hash a request that may hold its text."""
        records = self._rows(
            "SELECT actor, op, key FROM idempotency_targets WHERE workspace = ? AND target_id = ?",
            (self.workspace, target_id),
        )
        for record in records:
            where = "workspace = ? AND actor = ? AND op = ? AND key = ?"
            args = (self.workspace, record["actor"], record["op"], record["key"])
            self._run(f"DELETE FROM idempotency WHERE {where}", args)
            self._run(f"DELETE FROM idempotency_targets WHERE {where}", args)

    def _scrub(self, row: Row) -> None:
        self._unindexed(row)
        self._run("DELETE FROM memory_vectors WHERE version_rowid = ?", (row["rowid"],))
        self._next_vector_generation()
        assignments = ", ".join(f"{c} = NULL" for c in CONTENT_COLUMNS)
        self._run(
            f"UPDATE memory_versions SET {assignments}, scrubbed = 1 WHERE rowid = ?",
            (row["rowid"],),
        )

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

    # -- notebooks and links -------------------------------------------------------------

    def get_notebook(self, ref: str) -> Notebook | None:
        row = self._row(
            "SELECT * FROM notebooks WHERE workspace = ? AND (id = ? OR name = ?) "
            "ORDER BY (id = ?) DESC LIMIT 1",
            (self.workspace, ref, ref, ref),
        )
        return notebook_from_row(row) if row else None

    def list_notebooks(self) -> list[Notebook]:
        rows = self._rows(
            "SELECT * FROM notebooks WHERE workspace = ? ORDER BY name", (self.workspace,)
        )
        return [notebook_from_row(row) for row in rows]

    def put_notebook(self, notebook: Notebook) -> None:
        self._run(
            "INSERT INTO notebooks(id, workspace, name, summary, domain, tags, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, "
            "summary = excluded.summary, domain = excluded.domain, tags = excluded.tags",
            (notebook.id, self.workspace, notebook.name, notebook.summary, notebook.domain,
             json.dumps(list(notebook.tags)), notebook.created_at),
        )  # fmt: skip

    def get_notebook_tombstone(self, notebook_id: str) -> Tombstone | None:
        row = self._row(
            "SELECT * FROM notebook_tombstones WHERE id = ? AND workspace = ?",
            (notebook_id, self.workspace),
        )
        if row is None:
            return None
        return Tombstone(row["id"], row["forgotten_at"], row["forgotten_by"], row["forget_reason"])

    def forget_notebook_field(self, notebook_id: str, field: str, seq: int) -> None:
        """Scrub every value `field` had from the notebook's events before `seq`."""
        names: set[str] = set()
        for row in self._notebook_event_rows(notebook_id, seq):
            data = json.loads(row["data"])
            if field in data:
                if field == "name":
                    names |= _values(data[field])
                del data[field]
                self._run(
                    "UPDATE events SET data = ? WHERE seq = ?", (json.dumps(data), row["seq"])
                )
        # A stored answer may name the notebook by a past name (remember's does): it goes too.
        current = self.get_notebook(notebook_id)
        for target in {notebook_id} | (names - {current.name if current else ""}):
            self._drop_responses_naming(target)
        self._mark_pending(notebook_id, now_utc())
        self._after_scrub()

    def _notebook_event_rows(self, notebook_id: str, seq: int) -> list[Row]:
        return self._rows(
            "SELECT seq, data FROM events WHERE workspace = ? AND target_id = ? "
            "AND target_type = 'notebook' AND seq < ?",
            (self.workspace, notebook_id, seq),
        )

    def forget_notebook(self, tombstone: Tombstone, seq: int) -> None:
        """Remove an (empty) notebook for good: its row, links and events' content go."""
        rows = self._notebook_event_rows(tombstone.id, seq)
        names = set().union(*(_values(json.loads(row["data"]).get("name")) for row in rows))
        self._run(
            "UPDATE events SET note = NULL, data = '{}', fields = '[]' "
            "WHERE workspace = ? AND target_id = ? AND target_type = 'notebook' AND seq < ?",
            (self.workspace, tombstone.id, seq),
        )
        self._run(
            "DELETE FROM links WHERE workspace = ? AND (source_id = ? OR target_id = ?)",
            (self.workspace, tombstone.id, tombstone.id),
        )
        self._run(
            "DELETE FROM notebooks WHERE id = ? AND workspace = ?", (tombstone.id, self.workspace)
        )
        self._run(
            "INSERT INTO notebook_tombstones(id, workspace, forgotten_at, forgotten_by, "
            "forget_reason) VALUES (?, ?, ?, ?, ?)",
            (tombstone.id, self.workspace, tombstone.forgotten_at, tombstone.actor,
             tombstone.reason),
        )  # fmt: skip
        for target in {tombstone.id} | names:  # answers may name it by any name it had
            self._drop_responses_naming(target)
        self._mark_pending(tombstone.id, tombstone.forgotten_at)
        self._after_scrub()

    def links(self, object_id: str) -> list[Link]:
        rows = self._rows(
            "SELECT * FROM links WHERE workspace = ? AND (source_id = ? OR target_id = ?) "
            "ORDER BY created_at, id",
            (self.workspace, object_id, object_id),
        )
        return [link_from_row(row) for row in rows]

    def add_link(self, link: Link) -> None:
        self._run(
            "INSERT INTO links(id, workspace, source_id, target_id, type, created_at, actor) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (link.id, self.workspace, link.source_id, link.target_id, link.type,
             link.created_at, link.actor),
        )  # fmt: skip

    def remove_link(self, link_id: str) -> None:
        self._run("DELETE FROM links WHERE id = ? AND workspace = ?", (link_id, self.workspace))

    # -- events --------------------------------------------------------------------------

    def append_event(self, event: Event) -> int:
        row = self._row(
            "INSERT INTO events(workspace, op_id, at, actor, op, target_type, target_id, "
            "notebook_id, version, fields, note, data, key_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (self.workspace, event.op_id, event.at, event.actor, event.op, event.target_type,
             event.target_id, event.notebook_id, event.version, json.dumps(list(event.fields)),
             event.note, json.dumps(event.data), event.key_id or self.key_id),
        )  # fmt: skip
        assert row is not None
        return int(row["seq"])

    def events(self, query: EventFilter) -> list[Event]:
        where, args = ["workspace = ?"], [self.workspace]
        for condition, value in (
            ("target_id = ?", query.target_id),
            ("actor = ?", query.actor),
            ("at >= ?", query.since),
            ("at <= ?", query.until),
        ):
            if value is not None:
                where.append(condition)
                args.append(value)
        if query.notebook_id is not None:
            where.append("(notebook_id = ? OR target_id = ?)")
            args.extend([query.notebook_id, query.notebook_id])
        rows = self._rows(
            f"SELECT * FROM (SELECT * FROM events WHERE {' AND '.join(where)} "
            "ORDER BY seq DESC LIMIT ?) AS recent ORDER BY seq",
            [*args, query.limit],
        )
        return [event_from_row(row) for row in rows]

    def seq_at(self, time: str) -> int:
        row = self._row(
            "SELECT max(seq) AS seq FROM events WHERE workspace = ? AND at <= ?",
            (self.workspace, time),
        )
        return int(row["seq"] or 0) if row else 0

    def last_event(self) -> Event | None:
        row = self._row(
            "SELECT * FROM events WHERE workspace = ? ORDER BY seq DESC LIMIT 1", (self.workspace,)
        )
        return event_from_row(row) if row else None

    # -- workspace settings: the chosen values; a setting with no row has its default -------

    def settings(self) -> dict[str, Any]:
        rows = self._rows(
            "SELECT name, value FROM workspace_settings WHERE workspace = ?", (self.workspace,)
        )
        return {row["name"]: json.loads(row["value"]) for row in rows}

    def put_setting(self, name: str, value: Any) -> None:
        self._run(
            "INSERT INTO workspace_settings(workspace, name, value) VALUES (?, ?, ?) "
            "ON CONFLICT (workspace, name) DO UPDATE SET value = excluded.value",
            (self.workspace, name, json.dumps(value)),
        )

    def drop_setting(self, name: str) -> None:
        self._run(
            "DELETE FROM workspace_settings WHERE workspace = ? AND name = ?",
            (self.workspace, name),
        )

    # -- copying a whole workspace ---------------------------------------------------------

    def dump(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every row of this workspace, table by table, in an order `load` can replay."""
        for table, order in COPY_ORDER:
            if table == "memory_vectors":
                yield from self._dump_vectors()
                continue
            rows = self._cursor(
                f"SELECT * FROM {table} WHERE workspace = ? ORDER BY {order}", (self.workspace,)
            )
            for row in rows:
                yield table, {k: v for k, v in dict(row).items() if k not in DERIVED}

    def _dump_vectors(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Vectors as little-endian float32 bytes, whichever store holds them."""
        rows = self._cursor(
            f"SELECT mv.version_rowid, mv.model, {self.VECTOR_OUT} AS vector "
            "FROM memory_vectors mv WHERE mv.workspace = ? ORDER BY mv.version_rowid",
            (self.workspace,),
        )
        for row in rows:
            vector = self._vector_from(row["vector"]).astype("<f4").tobytes()
            yield "memory_vectors", {**dict(row), "vector": vector}

    def load(self, records: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        """Replay `dump` records into this (empty) workspace; returns the rows per table.

        Sequence numbers are handed out anew, in the same order (a store's sequence is
        shared by its workspaces), and the versions' spans follow them.
        """
        seqs: dict[int, int] = {}
        rowids: dict[int, int] = {}  # a version's row in the source -> its row here
        counts: dict[str, int] = {}
        for table, row in records:
            values = {**row, "workspace": self.workspace}
            if table == "memory_vectors":
                import numpy as np

                vector = np.frombuffer(row["vector"], dtype="<f4").astype(np.float32)
                self._put_vector_row(rowids[row["version_rowid"]], vector, row["model"])
                counts[table] = counts.get(table, 0) + 1
                continue
            if table == "events":
                values.pop("seq")
            elif table == "memory_versions":
                values.pop("rowid")
                values["from_seq"] = seqs[row["from_seq"]]
                values["to_seq"] = seqs[row["to_seq"]] if row["to_seq"] is not None else None
                if not row["scrubbed"]:
                    values.update(self._search_values(values))
            elif table == "dispute_versions":
                values = self._copied_dispute(values, seqs)
            insert = f"INSERT INTO {table}({', '.join(values)}) VALUES ({marks(values)})"
            if table == "events":
                inserted = self._row(insert + " RETURNING seq", tuple(values.values()))
                seqs[row["seq"]] = int(inserted["seq"]) if inserted else 0
            elif table == "memory_versions":
                inserted = self._row(insert + " RETURNING rowid", tuple(values.values()))
                if inserted:
                    rowids[row["rowid"]] = int(inserted["rowid"])
                if inserted and not row["scrubbed"]:
                    self._indexed(int(inserted["rowid"]), values)
            else:
                self._run(insert, tuple(values.values()))
            counts[table] = counts.get(table, 0) + 1
        return counts

    def table_rows(self, table: str) -> Iterator[Row]:
        """Every row of this workspace in `table` (one of COPY_ORDER's), in its copy order,
        streamed."""
        order = dict(COPY_ORDER)[table]
        return self._cursor(
            f"SELECT * FROM {table} WHERE workspace = ? ORDER BY {order}", (self.workspace,)
        )

    def ids_held(self, table: str, column: str, ids: Sequence[str]) -> dict[str, str]:
        """Which of `ids` `column` of `table` holds already, in any workspace of the store:
        id -> that workspace (ids are unique store-wide)."""
        held: dict[str, str] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self._rows(
                f"SELECT {column} AS id, workspace FROM {table} WHERE {column} IN ({marks(chunk)})",
                chunk,
            )
            held.update({row["id"]: row["workspace"] for row in rows})
        return held

    def is_empty(self) -> bool:
        return self.last_event() is None and not self.list_notebooks()

    # -- idempotency ---------------------------------------------------------------------

    def stored_response(self, actor: str, op: str, key: str) -> StoredResponse | None:
        row = self._row(
            "SELECT request_hash, response FROM idempotency "
            "WHERE workspace = ? AND actor = ? AND op = ? AND key = ?",
            (self.workspace, actor, op, key),
        )
        return StoredResponse(row["request_hash"], row["response"]) if row else None

    def store_response(self, actor: str, op: str, key: str, stored: StoredResponse) -> None:
        self._run(
            "INSERT INTO idempotency(workspace, actor, op, key, request_hash, response) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (self.workspace, actor, op, key, stored.request_hash, stored.response),
        )
        for target_id in sorted(named_ids(json.loads(stored.response))):
            self._run(
                "INSERT INTO idempotency_targets(workspace, actor, op, key, target_id) "
                "VALUES (?, ?, ?, ?, ?)",
                (self.workspace, actor, op, key, target_id),
            )

    # -- disputes: one row per version of a dispute, current over a span of events ------
    # (All dispute SQL is in this block; the service's rules are in service/disputes.py.)

    def put_dispute(self, dispute: Dispute, seq: int) -> None:
        """Make `dispute` the current state, as the version written by event `seq`."""
        self._run(
            "UPDATE dispute_versions SET to_seq = ? WHERE dispute_id = ? AND workspace = ? "
            "AND to_seq IS NULL",
            (seq, dispute.id, self.workspace),
        )
        columns = dispute_columns(dispute)
        self._run(
            f"INSERT INTO dispute_versions(workspace, from_seq, {', '.join(columns)}) "
            f"VALUES (?, ?, {marks(columns)})",
            (self.workspace, seq, *columns.values()),
        )

    def get_dispute(self, dispute_id: str) -> Dispute | None:
        found = self._disputes("v.dispute_id = ?", [dispute_id], None)
        return found[0] if found else None

    def disputes(
        self,
        memory_id: str | None = None,
        statuses: tuple[str, ...] = (),
        at_seq: int | None = None,
    ) -> list[Dispute]:
        """The disputes (as they stood at event `at_seq`; None: now) naming `memory_id`."""
        where, args = ["1 = 1"], []
        if memory_id is not None:
            where.append("(v.first_id = ? OR v.second_id = ?)")
            args += [memory_id, memory_id]
        if statuses:
            where.append(f"v.status IN ({marks(statuses)})")
            args += list(statuses)
        return self._disputes(" AND ".join(where), args, at_seq)

    def disputed_with(
        self, memory_ids: Iterable[str], at_seq: int | None = None
    ) -> dict[str, list[str]]:
        """For each of `memory_ids` in an open dispute (at `at_seq`), the other memories.

        A forgotten memory is absent from every past state, so a dispute naming one is
        left out at every time (now, it is withdrawn anyway)."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        listed = marks(ids)
        condition = (
            f"v.status = 'open' AND (v.first_id IN ({listed}) OR v.second_id IN ({listed})) "
            "AND NOT EXISTS (SELECT 1 FROM memories f WHERE f.id IN (v.first_id, v.second_id) "
            "AND f.forgotten_at IS NOT NULL)"
        )
        named: dict[str, list[str]] = {}
        for dispute in self._disputes(condition, [*ids, *ids], at_seq):
            for memory_id in dispute.memory_ids:
                if memory_id in ids:
                    named.setdefault(memory_id, []).append(dispute.other(memory_id))
        return {memory_id: sorted(others) for memory_id, others in named.items()}

    def _disputes(self, condition: str, params: list[Any], at_seq: int | None) -> list[Dispute]:
        span, span_args = current_at(at_seq)
        rows = self._rows(
            f"SELECT * FROM dispute_versions v WHERE v.workspace = ? AND {span} AND {condition} "
            "ORDER BY v.dispute_id",
            (self.workspace, *span_args, *params),
        )
        return [dispute_from_row(row) for row in rows]

    def _forget_disputes(self, memory_id: str) -> None:
        """A forgotten memory leaves no text in a dispute: the reason, the ruling's reason
        and evidence of every version of each dispute naming it go, from the dispute and
        from its events on the other memory too (they may quote what was forgotten). The
        ids, times and actors stay, as a tombstone's do."""
        rows = self._rows(
            "SELECT DISTINCT dispute_id, first_id, second_id FROM dispute_versions "
            "WHERE workspace = ? AND (first_id = ? OR second_id = ?)",
            (self.workspace, memory_id, memory_id),
        )
        erased = ", ".join(f"{column} = NULL" for column in DISPUTE_TEXT_COLUMNS)
        for row in rows:
            self._run(
                f"UPDATE dispute_versions SET {erased}, scrubbed = 1 "
                "WHERE workspace = ? AND dispute_id = ?",
                (self.workspace, row["dispute_id"]),
            )
            events = self._rows(
                "SELECT seq, data FROM events WHERE workspace = ? AND target_id IN (?, ?) "
                f"AND op IN ({marks(DISPUTE_OPS)})",
                (self.workspace, row["first_id"], row["second_id"], *DISPUTE_OPS),
            )
            for event in events:
                data = json.loads(event["data"])
                if data.get("dispute") == row["dispute_id"]:
                    kept = {k: v for k, v in data.items() if k not in DISPUTE_EVENT_TEXTS}
                    self._run(
                        "UPDATE events SET note = NULL, data = ? WHERE seq = ?",
                        (json.dumps(kept), event["seq"]),
                    )

    @staticmethod
    def _copied_dispute(values: dict[str, Any], seqs: dict[int, int]) -> dict[str, Any]:
        """A dispute version row of a `dump`, its spans renumbered for this store."""
        values.pop("rowid")
        values["from_seq"] = seqs[values["from_seq"]]
        values["to_seq"] = seqs[values["to_seq"]] if values["to_seq"] is not None else None
        return values


# Tables of a workspace in the order a copy writes them (what a row refers to comes first).
COPY_ORDER = (
    ("notebooks", "id"),
    ("memories", "id"),
    ("events", "seq"),
    ("memory_versions", "rowid"),
    ("memory_vectors", "version_rowid"),
    ("links", "id"),
    ("idempotency", "key"),
    ("idempotency_targets", "key, target_id"),
    ("notebook_tombstones", "id"),
    ("workspace_settings", "name"),
    ("dispute_versions", "rowid"),
    ("seen_commands", "seen_at, id"),  # the guard's, for trials: they come along too
    ("users", "name"),
    ("access_keys", "created_at, id"),  # hashes only: the same keys work on the copy
)
# Where a stored answer names a memory or notebook (ids_only keeps nothing else as text).
ID_KEYS = frozenset({"id", "ids", "duplicate_of", "superseded", "notebook"})
# Columns a store derives from the content (PostgreSQL's search): a copy makes them anew.
DERIVED = frozenset({"search", "search_counts", "search_length"})


def name_race() -> Conflict:
    """The unique name index refused a workspace's name: another took it meanwhile."""
    return Conflict("Another workspace took that name meanwhile: choose another name.",
                    field="name")  # fmt: skip


def key_race() -> Conflict:
    """The unique key index refused a write: another writer took the key meanwhile."""
    return Conflict(
        "Another active memory of this notebook took the same key meanwhile; "
        "re-read and choose another key, or revise that memory instead."
    )


def named_ids(value: Any, under_id_key: bool = False) -> set[str]:
    """Every id a stored answer names: the strings under `ID_KEYS`, at any depth."""
    if isinstance(value, str):
        return {value} if under_id_key else set()
    if isinstance(value, dict):
        return set().union(*(named_ids(v, k in ID_KEYS) for k, v in value.items()))
    if isinstance(value, list):
        return set().union(*(named_ids(v, under_id_key) for v in value))
    return set()


def _values(value: Any) -> set[str]:
    """The names an event's `name` holds: one (a creation) or a pair (a rename)."""
    listed = value if isinstance(value, list) else [value]
    return {v for v in listed if isinstance(v, str)}


def marks(values: Any) -> str:
    return ", ".join("?" for _ in values)


def current_at(seq: int | None) -> tuple[str, list[Any]]:
    """The condition for the version rows (alias v) current at event `seq` (None: now)."""
    if seq is None:
        return "v.to_seq IS NULL", []
    return "v.from_seq <= ? AND (v.to_seq IS NULL OR v.to_seq > ?)", [seq, seq]
