"""The embedded store: one SQLite file in WAL mode, full text with FTS5 (BM25).

One writer at a time (`BEGIN IMMEDIATE`), one connection per thread. `secure_delete` is
always on, so forgotten content is overwritten with zeros in the file rather than left in
free pages; the FTS index is merged after a forget so no segment keeps the words.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import Conflict, PalimpsestError, Retryable, ValidationError
from ..model import (
    Anchor,
    Bindings,
    Check,
    Event,
    Link,
    Memory,
    MemoryVersion,
    Notebook,
    Tombstone,
    normalize_text,
    now_utc,
)
from . import EventFilter, SearchQuery, StoredResponse
from .terms import query_terms

BUSY_TIMEOUT_MS = 15_000
# How many of the best full-text matches are scored against the filters before widening,
# and how many of the newest matches are ranked before all of them are.
CANDIDATES = 500
WINDOW = 4_000

# Columns of memory_versions that hold a memory's content; forget sets them all to NULL.
_CONTENT_COLUMNS = (
    "notebook_id",
    "kind",
    "status",
    "text",
    "norm_text",
    "title",
    "why",
    "tags",
    "tags_text",
    "key",
    "occurred_at",
    "recorded_at",
    "expires_at",
    "status_note",
    "superseded_by",
    "verified_at",
    "owner",
    "author",
    "source",
    "anchors",
    "severity",
    "falsifier",
    "check_json",
    "bindings",
    "scope",
)


def migrations() -> list[tuple[int, str]]:
    """The numbered SQL files of this backend, in order: (number, script)."""
    folder = resources.files("palimpsest.store") / "sql" / "sqlite"
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            found.append((int(entry.name.split("_", 1)[0]), entry.read_text("utf-8")))
    return sorted(found)


class SqliteStore:
    def __init__(self, path: Path):
        self.path = path
        self.url = str(path)
        self._local = threading.local()
        self._connections: dict[threading.Thread, sqlite3.Connection] = {}
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._migrate()
        except (OSError, sqlite3.DatabaseError) as exc:
            self.close()
            raise ValidationError(
                f"Cannot open {path} as a Palimpsest store ({exc}); pass --db a new or "
                "existing Palimpsest SQLite file."
            ) from None

    # -- connections -------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=15
            )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA secure_delete = ON")
            self._local.conn = conn
            with self._lock:
                # Threads come and go (worker pools); their connections must not pile up.
                for thread in [t for t in self._connections if not t.is_alive()]:
                    self._connections.pop(thread).close()
                self._connections[threading.current_thread()] = conn
        return conn

    def _migrate(self) -> None:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = conn.execute("PRAGMA user_version").fetchone()[0]
            for number, script in migrations():
                if number > current:
                    for statement in _split_sql(script):
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def schema_version(self) -> int:
        return int(self._connection().execute("PRAGMA user_version").fetchone()[0])

    # -- sessions ----------------------------------------------------------------------

    @contextmanager
    def read(self, workspace: str) -> Iterator[SqliteSession]:
        conn = self._connection()
        with _translated():
            conn.execute("BEGIN")
            try:
                yield SqliteSession(conn, workspace)
            finally:
                conn.execute("COMMIT")

    @contextmanager
    def write(self, workspace: str) -> Iterator[SqliteSession]:
        conn = self._connection()
        with _translated():
            conn.execute("BEGIN IMMEDIATE")
            session = SqliteSession(conn, workspace)
            try:
                session.ensure_workspace()
                yield session
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            if session.discarded:
                conn.execute("ROLLBACK")
            else:
                conn.execute("COMMIT")

    def scrub(self) -> bool:
        """Fold the WAL back into the file and truncate it, so no side file keeps old pages."""
        busy, _, _ = self._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return bool(busy == 0)

    def close(self) -> None:
        with self._lock:
            for conn in self._connections.values():
                conn.close()
            self._connections.clear()
        self._local = threading.local()


@contextmanager
def _translated() -> Iterator[None]:
    """The one place where driver errors become Palimpsest errors."""
    try:
        yield
    except PalimpsestError:
        raise
    except sqlite3.IntegrityError as exc:
        if "versions_active_key" in str(exc) or "memory_versions.notebook_id" in str(exc):
            raise Conflict(
                "Another active memory of this notebook took the same key meanwhile; "
                "re-read and choose another key, or revise that memory instead."
            ) from exc
        raise
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise Retryable("The database is busy with another writer; try again.") from exc
        raise


def _split_sql(script: str) -> list[str]:
    """Split a migration into statements (ours hold no semicolons inside literals)."""
    without_comments = "\n".join(
        line for line in script.splitlines() if not line.lstrip().startswith("--")
    )
    return [part.strip() for part in without_comments.split(";") if part.strip()]


class SqliteSession:
    """A workspace-bound view of the store inside one transaction."""

    def __init__(self, conn: sqlite3.Connection, workspace: str):
        self.conn = conn
        self.workspace = workspace
        self.discarded = False

    def discard(self) -> None:
        """Roll the transaction back at the end instead of committing (dry runs)."""
        self.discarded = True

    def ensure_workspace(self) -> None:
        self.conn.execute(
            "INSERT OR IGNORE INTO workspaces(id, created_at) VALUES (?, ?)",
            (self.workspace, now_utc()),
        )

    # -- memories ----------------------------------------------------------------------

    def get_memory(self, memory_id: str) -> Memory | None:
        row = self.conn.execute(
            "SELECT * FROM memory_versions WHERE memory_id = ? AND +workspace = ? "
            "AND to_seq IS NULL AND scrubbed = 0",
            (memory_id, self.workspace),
        ).fetchone()
        return _memory(row) if row else None

    def get_tombstone(self, memory_id: str) -> Tombstone | None:
        row = self.conn.execute(
            "SELECT * FROM memories WHERE id = ? AND workspace = ? AND forgotten_at IS NOT NULL",
            (memory_id, self.workspace),
        ).fetchone()
        if row is None:
            return None
        return Tombstone(row["id"], row["forgotten_at"], row["forgotten_by"], row["forget_reason"])

    def memory_versions(self, memory_id: str) -> list[MemoryVersion]:
        rows = self.conn.execute(
            "SELECT v.*, e.at AS event_at, e.actor AS event_actor, e.op AS event_op "
            "FROM memory_versions v JOIN events e ON e.seq = v.from_seq "
            "WHERE v.memory_id = ? AND +v.workspace = ? ORDER BY v.version",
            (memory_id, self.workspace),
        ).fetchall()
        return [
            MemoryVersion(
                version=row["version"],
                seq=row["from_seq"],
                at=row["event_at"],
                actor=row["event_actor"],
                op=row["event_op"],
                memory=None if row["scrubbed"] else _memory(row),
            )
            for row in rows
        ]

    def memory_at(self, memory_id: str, seq: int) -> Memory | None:
        row = self.conn.execute(
            "SELECT * FROM memory_versions WHERE memory_id = ? AND +workspace = ? "
            "AND from_seq <= ? AND (to_seq IS NULL OR to_seq > ?) AND scrubbed = 0",
            (memory_id, self.workspace, seq, seq),
        ).fetchone()
        return _memory(row) if row else None

    def memories_at(self, seq: int | None, notebook_id: str | None = None) -> list[Memory]:
        span, params = _span(seq)
        sql = f"SELECT * FROM memory_versions v WHERE v.workspace = ? AND {span} AND scrubbed = 0"
        args: list[Any] = [self.workspace, *params]
        if notebook_id is not None:
            sql += " AND v.notebook_id = ?"
            args.append(notebook_id)
        return [_memory(row) for row in self.conn.execute(sql + " ORDER BY v.memory_id", args)]

    def all_versions(self) -> Iterator[Memory]:
        rows = self.conn.execute(
            "SELECT * FROM memory_versions WHERE workspace = ? AND scrubbed = 0 ORDER BY rowid",
            (self.workspace,),
        )
        return (_memory(row) for row in rows)

    def find_by_text(self, notebook_id: str, norm_text: str) -> list[Memory]:
        rows = self.conn.execute(
            "SELECT * FROM memory_versions WHERE notebook_id = ? AND norm_text = ? "
            "AND to_seq IS NULL AND scrubbed = 0 AND +workspace = ? ORDER BY memory_id",
            (notebook_id, norm_text, self.workspace),
        ).fetchall()
        return [_memory(row) for row in rows]

    def key_holder(self, notebook_id: str, key: str) -> Memory | None:
        row = self.conn.execute(
            "SELECT * FROM memory_versions WHERE notebook_id = ? AND key = ? AND status = 'active' "
            "AND to_seq IS NULL AND scrubbed = 0 AND +workspace = ?",
            (notebook_id, key, self.workspace),
        ).fetchone()
        return _memory(row) if row else None

    def memories_with_key(self, key: str, at_seq: int | None) -> list[Memory]:
        span, args = _span(at_seq)
        rows = self.conn.execute(
            f"SELECT * FROM memory_versions v WHERE v.workspace = ? AND v.key = ? AND {span} "
            "AND v.scrubbed = 0 ORDER BY v.memory_id LIMIT 50",
            (self.workspace, key, *args),
        ).fetchall()
        return [_memory(row) for row in rows]

    def search(self, query: SearchQuery) -> list[tuple[Memory, float]]:
        where, args = _filters(self.workspace, query)
        terms = query_terms(query.text)
        if query.notebook_ids == ():
            return []
        if not terms:
            sql = (
                f"SELECT v.*, 0.0 AS score FROM memory_versions v WHERE {' AND '.join(where)} "
                "ORDER BY v.from_seq DESC LIMIT ?"
            )
            rows = self.conn.execute(sql, [*args, query.limit]).fetchall()
            return [(_memory(row), 0.0) for row in rows]
        # Memories holding every word rank first; any word fills the rest.
        found: dict[str, tuple[Memory, float]] = {}
        for joiner in (" AND ", " OR ")[: 2 if len(terms) > 1 else 1]:
            match = _match_expression(joiner.join(f'"{t}"' for t in terms), query)
            for row in self._best(match, where, args, query.limit):
                found.setdefault(row["memory_id"], (_memory(row), float(row["score"])))
            if len(found) >= query.limit:
                break
        return list(found.values())[: query.limit]

    def _best(self, match: str, where: list[str], args: list[Any], limit: int) -> list[sqlite3.Row]:
        """The best `limit` matches passing the filters, widening the search only as needed.

        BM25 must score every match it ranks, so words found in very many memories would
        cost a scan: the first passes rank the newest WINDOW matches only, and of those
        score the CANDIDATES best against the filters. A pass that comes back short and
        did not cover every match is followed by a wider one.
        """
        start = self._window_start(match)
        passes: list[tuple[int | None, int | None]] = [(CANDIDATES, start)]
        if self._count(match, start, CANDIDATES + 1) > CANDIDATES:
            passes.append((None, start))
        if start is not None:
            passes.append((None, None))
        rows: list[sqlite3.Row] = []
        for cap, lowest in passes:
            rows = self._matches(match, where, args, limit, cap, lowest)
            if len(rows) >= limit:
                break
        return rows

    def _window_start(self, match: str) -> int | None:
        """The rowid below which matches fall outside the newest WINDOW, if there are more."""
        row = self.conn.execute(
            "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid DESC "
            "LIMIT 1 OFFSET ?",
            (match, WINDOW),
        ).fetchone()
        return None if row is None else int(row[0])

    def _count(self, match: str, lowest: int | None, most: int) -> int:
        sql = (
            "SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? "
            "AND rowid > ? LIMIT ?)"
        )
        return int(self.conn.execute(sql, (match, lowest or 0, most)).fetchone()[0])

    def _matches(
        self,
        match: str,
        where: list[str],
        args: list[Any],
        limit: int,
        cap: int | None,
        lowest: int | None,
    ) -> list[sqlite3.Row]:
        candidates = "SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH ? AND rowid > ?"
        if cap is not None:
            candidates += f" ORDER BY rank LIMIT {cap}"
        sql = (
            f"SELECT v.*, -c.rank AS score FROM ({candidates}) c "
            f"JOIN memory_versions v ON v.rowid = c.rowid WHERE {' AND '.join(where)} "
            "ORDER BY c.rank LIMIT ?"
        )
        return self.conn.execute(sql, [match, lowest or 0, *args, limit]).fetchall()

    def put_memory(self, memory: Memory, seq: int) -> None:
        self.conn.execute(
            "INSERT OR IGNORE INTO memories(id, workspace) VALUES (?, ?)",
            (memory.id, self.workspace),
        )
        self.conn.execute(
            "UPDATE memory_versions SET to_seq = ? WHERE memory_id = ? AND to_seq IS NULL",
            (seq, memory.id),
        )
        columns = _memory_columns(memory)
        cursor = self.conn.execute(
            f"INSERT INTO memory_versions(memory_id, version, workspace, from_seq, "
            f"{', '.join(columns)}) VALUES (?, ?, ?, ?, {_marks(columns)})",
            (memory.id, memory.version, self.workspace, seq, *columns.values()),
        )
        self._fts("insert", cursor.lastrowid, columns)

    def forget_memory(self, tombstone: Tombstone, seq: int) -> None:
        rows = self.conn.execute(
            "SELECT * FROM memory_versions WHERE memory_id = ? AND +workspace = ? AND scrubbed = 0",
            (tombstone.id, self.workspace),
        ).fetchall()
        for row in rows:
            self._scrub_version_row(row)
        self.conn.execute(
            "UPDATE memory_versions SET to_seq = ? WHERE memory_id = ? AND to_seq IS NULL",
            (seq, tombstone.id),
        )
        self.conn.execute(
            "UPDATE events SET note = NULL, data = '{}', fields = '[]' "
            "WHERE target_id = ? AND seq < ?",
            (tombstone.id, seq),
        )
        self.conn.execute(
            "UPDATE memories SET forgotten_at = ?, forgotten_by = ?, forget_reason = ? "
            "WHERE id = ?",
            (tombstone.forgotten_at, tombstone.actor, tombstone.reason, tombstone.id),
        )
        self._merge_fts()

    def forget_version(self, memory_id: str, version: int) -> None:
        row = self.conn.execute(
            "SELECT * FROM memory_versions WHERE memory_id = ? AND version = ? AND +workspace = ?",
            (memory_id, version, self.workspace),
        ).fetchone()
        if row is None or row["scrubbed"]:
            return
        self._scrub_version_row(row)
        self.conn.execute(
            "UPDATE events SET note = NULL, data = '{}' WHERE target_id = ? AND version = ?",
            (memory_id, version),
        )
        self._merge_fts()

    def _scrub_version_row(self, row: sqlite3.Row) -> None:
        self._fts("delete", row["rowid"], {c: row[c] for c in _FTS_COLUMNS})
        assignments = ", ".join(f"{c} = NULL" for c in _CONTENT_COLUMNS)
        self.conn.execute(
            f"UPDATE memory_versions SET {assignments}, scrubbed = 1 WHERE rowid = ?",
            (row["rowid"],),
        )

    def _fts(self, action: str, rowid: int | None, values: dict[str, Any]) -> None:
        command = "" if action == "insert" else "memory_fts, "
        head = "" if action == "insert" else "'delete', "
        self.conn.execute(
            f"INSERT INTO memory_fts({command}rowid, {', '.join(_FTS_COLUMNS)}) "
            f"VALUES ({head}?, {_marks(_FTS_COLUMNS)})",
            (rowid, *(values[c] for c in _FTS_COLUMNS)),
        )

    def _merge_fts(self) -> None:
        # Deleted words linger in older segments until they are merged: merge them all now.
        self.conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('optimize')")

    # -- notebooks and links -----------------------------------------------------------

    def get_notebook(self, ref: str) -> Notebook | None:
        row = self.conn.execute(
            "SELECT * FROM notebooks WHERE workspace = ? AND (id = ? OR name = ?) "
            "ORDER BY id = ? DESC LIMIT 1",
            (self.workspace, ref, ref, ref),
        ).fetchone()
        return _notebook(row) if row else None

    def list_notebooks(self) -> list[Notebook]:
        rows = self.conn.execute(
            "SELECT * FROM notebooks WHERE workspace = ? ORDER BY name", (self.workspace,)
        )
        return [_notebook(row) for row in rows]

    def put_notebook(self, notebook: Notebook) -> None:
        self.conn.execute(
            "INSERT INTO notebooks(id, workspace, name, summary, domain, tags, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, "
            "summary = excluded.summary, domain = excluded.domain, tags = excluded.tags",
            (
                notebook.id,
                self.workspace,
                notebook.name,
                notebook.summary,
                notebook.domain,
                json.dumps(list(notebook.tags)),
                notebook.created_at,
            ),
        )

    def links(self, object_id: str) -> list[Link]:
        rows = self.conn.execute(
            "SELECT * FROM links WHERE workspace = ? AND (source_id = ? OR target_id = ?) "
            "ORDER BY created_at, id",
            (self.workspace, object_id, object_id),
        )
        return [_link(row) for row in rows]

    def add_link(self, link: Link) -> None:
        self.conn.execute(
            "INSERT INTO links(id, workspace, source_id, target_id, type, created_at, actor) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                link.id,
                self.workspace,
                link.source_id,
                link.target_id,
                link.type,
                link.created_at,
                link.actor,
            ),
        )

    def remove_link(self, link_id: str) -> None:
        self.conn.execute(
            "DELETE FROM links WHERE id = ? AND workspace = ?", (link_id, self.workspace)
        )

    # -- events ------------------------------------------------------------------------

    def append_event(self, event: Event) -> int:
        cursor = self.conn.execute(
            "INSERT INTO events(workspace, op_id, at, actor, op, target_type, target_id, "
            "notebook_id, version, fields, note, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.workspace,
                event.op_id,
                event.at,
                event.actor,
                event.op,
                event.target_type,
                event.target_id,
                event.notebook_id,
                event.version,
                json.dumps(list(event.fields)),
                event.note,
                json.dumps(event.data),
            ),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def events(self, query: EventFilter) -> list[Event]:
        where, args = ["workspace = ?"], [self.workspace]
        for column, value in (
            ("target_id", query.target_id),
            ("actor", query.actor),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if query.notebook_id is not None:
            where.append("(notebook_id = ? OR target_id = ?)")
            args.extend([query.notebook_id, query.notebook_id])
        if query.since is not None:
            where.append("at >= ?")
            args.append(query.since)
        if query.until is not None:
            where.append("at <= ?")
            args.append(query.until)
        rows = self.conn.execute(
            f"SELECT * FROM (SELECT * FROM events WHERE {' AND '.join(where)} "
            "ORDER BY seq DESC LIMIT ?) ORDER BY seq",
            [*args, query.limit],
        )
        return [_event(row) for row in rows]

    def seq_at(self, time: str) -> int:
        row = self.conn.execute(
            "SELECT max(seq) FROM events WHERE workspace = ? AND at <= ?", (self.workspace, time)
        ).fetchone()
        return int(row[0] or 0)

    def last_event(self) -> Event | None:
        row = self.conn.execute(
            "SELECT * FROM events WHERE workspace = ? ORDER BY seq DESC LIMIT 1", (self.workspace,)
        ).fetchone()
        return _event(row) if row else None

    # -- idempotency -------------------------------------------------------------------

    def stored_response(self, actor: str, op: str, key: str) -> StoredResponse | None:
        row = self.conn.execute(
            "SELECT request_hash, response FROM idempotency "
            "WHERE workspace = ? AND actor = ? AND op = ? AND key = ?",
            (self.workspace, actor, op, key),
        ).fetchone()
        return StoredResponse(row[0], row[1]) if row else None

    def store_response(self, actor: str, op: str, key: str, stored: StoredResponse) -> None:
        self.conn.execute(
            "INSERT INTO idempotency(workspace, actor, op, key, request_hash, response) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (self.workspace, actor, op, key, stored.request_hash, stored.response),
        )


_FTS_COLUMNS = ("text", "title", "why", "tags_text", "notebook_id")


def _filters(workspace: str, query: SearchQuery) -> tuple[list[str], list[Any]]:
    """The SQL conditions on memory_versions (alias v) for a search's filters."""
    span, span_args = _span(query.at_seq)
    where = ["v.workspace = ?", span, "v.scrubbed = 0"]
    args: list[Any] = [workspace, *span_args]
    for column, values in (
        ("notebook_id", query.notebook_ids),
        ("kind", query.kinds),
        ("status", query.statuses),
    ):
        if values:
            where.append(f"v.{column} IN ({_marks(values)})")
            args.extend(values)
    for tag in query.tags:
        where.append("EXISTS (SELECT 1 FROM json_each(v.tags) WHERE json_each.value = ?)")
        args.append(tag)
    for bound, operator in ((query.since, ">="), (query.until, "<=")):
        if bound is not None:
            where.append(f"coalesce(v.occurred_at, v.recorded_at) {operator} ?")
            args.append(bound)
    if query.alive_at is not None:
        where.append("(v.expires_at IS NULL OR v.expires_at > ?)")
        args.append(query.alive_at)
    return where, args


def _match_expression(words: str, query: SearchQuery) -> str:
    """An FTS5 query: the words in the content columns, narrowed by notebook and tags.

    The SQL filters still check notebook and tags exactly; here they only shrink the set
    of matches to rank (a tag `a-b` is the phrase "a b" in the index).
    """
    parts = [f"{{text title why tags_text}} : ({words})"]
    if query.notebook_ids:
        parts.append("notebook_id : (" + " OR ".join(_phrase(n) for n in query.notebook_ids) + ")")
    parts += [f"tags_text : {_phrase(tag)}" for tag in query.tags]
    return " AND ".join(parts)


def _phrase(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def _marks(values: Any) -> str:
    return ", ".join("?" for _ in values)


def _span(seq: int | None) -> tuple[str, list[Any]]:
    """The condition for the version rows that were current at event `seq` (None: now)."""
    if seq is None:
        return "v.to_seq IS NULL", []
    return "v.from_seq <= ? AND (v.to_seq IS NULL OR v.to_seq > ?)", [seq, seq]


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _memory_columns(m: Memory) -> dict[str, Any]:
    return {
        "notebook_id": m.notebook_id,
        "kind": m.kind,
        "status": m.status,
        "text": m.text,
        "norm_text": normalize_text(m.text),
        "title": m.title,
        "why": m.why,
        "tags": json.dumps(list(m.tags)),
        "tags_text": " ".join(m.tags),
        "key": m.key,
        "occurred_at": m.occurred_at,
        "recorded_at": m.recorded_at,
        "expires_at": m.expires_at,
        "status_note": m.status_note,
        "superseded_by": m.superseded_by,
        "verified_at": m.verified_at,
        "owner": m.owner,
        "author": m.author,
        "source": m.source,
        "anchors": json.dumps([a.to_dict() for a in m.anchors]),
        "severity": m.severity,
        "falsifier": m.falsifier,
        "check_json": _dumps(m.check.to_dict() if m.check else None),
        "bindings": _dumps(m.bindings.to_dict() if m.bindings else None),
        "scope": m.scope,
    }


def _memory(row: sqlite3.Row) -> Memory:
    check = json.loads(row["check_json"]) if row["check_json"] else None
    bindings = json.loads(row["bindings"]) if row["bindings"] else None
    return Memory(
        id=row["memory_id"],
        workspace=row["workspace"],
        notebook_id=row["notebook_id"],
        kind=row["kind"],
        text=row["text"],
        version=row["version"],
        recorded_at=row["recorded_at"],
        author=row["author"],
        owner=row["owner"],
        status=row["status"],
        title=row["title"],
        why=row["why"],
        tags=tuple(json.loads(row["tags"])),
        key=row["key"],
        occurred_at=row["occurred_at"],
        expires_at=row["expires_at"],
        status_note=row["status_note"],
        superseded_by=row["superseded_by"],
        verified_at=row["verified_at"],
        source=row["source"],
        anchors=tuple(Anchor(**a) for a in json.loads(row["anchors"])),
        severity=row["severity"],
        falsifier=row["falsifier"],
        check=Check(
            kind=check["kind"],
            path=check.get("path"),
            literal=check.get("literal"),
            literals=tuple(check.get("literals", ())),
        )
        if check
        else None,
        bindings=Bindings(
            always=bindings["always"],
            moments=tuple(bindings["moments"]),
            targets=tuple(bindings["targets"]),
        )
        if bindings
        else None,
        scope=row["scope"],
    )


def _notebook(row: sqlite3.Row) -> Notebook:
    return Notebook(
        id=row["id"],
        workspace=row["workspace"],
        name=row["name"],
        created_at=row["created_at"],
        summary=row["summary"],
        domain=row["domain"],
        tags=tuple(json.loads(row["tags"])),
    )


def _link(row: sqlite3.Row) -> Link:
    return Link(
        id=row["id"],
        workspace=row["workspace"],
        source_id=row["source_id"],
        target_id=row["target_id"],
        type=row["type"],
        created_at=row["created_at"],
        actor=row["actor"],
    )


def _event(row: sqlite3.Row) -> Event:
    return Event(
        seq=row["seq"],
        op_id=row["op_id"],
        at=row["at"],
        actor=row["actor"],
        op=row["op"],
        target_type=row["target_type"],
        target_id=row["target_id"],
        notebook_id=row["notebook_id"],
        version=row["version"],
        fields=tuple(json.loads(row["fields"])),
        note=row["note"],
        data=json.loads(row["data"]),
    )
