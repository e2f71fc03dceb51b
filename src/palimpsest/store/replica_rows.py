"""Sync, the same SQL on both stores (docs/sync.md): a server's changes after a position, as
rows, and a replica applying them.

A server answers with the rows its events made after the position, in the order of its
sequence (one workspace's writes take a lock first, so that order is the order they were
committed in): the events, the versions and dispute versions they wrote, the spans they
closed, and the current rows of what they touched (memories' tombstones, notebooks, links,
settings). A replica writes them as they are, under sequence numbers of its own
(`replica_seqs` maps the server's), and a forget pulled runs the replica's own forget, so
its files lose the text as the server's did.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ..domain.errors import Conflict
from ..domain.model import Tombstone, normalize_text
from .rows import Row
from .session_base import SessionBase, marks
from .values import Changes, ReplicaState

# Columns a store keeps for itself: derived from the content, or the row's own number.
LOCAL_COLUMNS = frozenset({"workspace", "rowid", "norm_text", "tags_text", "search",
                           "search_counts", "search_length", "screened"})  # fmt: skip
CHUNK = 500  # ids per IN (...)


class ReplicaRows(SessionBase):
    """Sync's part of a store session: a server's side (changes_after) and a replica's."""

    # -- a server --------------------------------------------------------------------------

    def event_op_id(self, seq: int) -> str | None:
        """The operation id of event `seq` of this workspace, None if it has none."""
        row = self._row(
            "SELECT op_id FROM events WHERE workspace = ? AND seq = ?", (self.workspace, seq)
        )
        return str(row["op_id"]) if row else None

    def changes_after(self, seq: int, limit: int) -> Changes:
        """The rows this workspace's first `limit` events after `seq` made."""
        events = [
            _plain(row)
            for row in self._rows(
                "SELECT * FROM events WHERE workspace = ? AND seq > ? ORDER BY seq LIMIT ?",
                (self.workspace, seq, limit),
            )
        ]
        if not events:
            return Changes()
        last = int(events[-1]["seq"])
        span = (self.workspace, seq, last)
        made = self._rows(
            "SELECT * FROM memory_versions WHERE workspace = ? AND from_seq > ? "
            "AND from_seq <= ? ORDER BY from_seq, version",
            span,
        )
        changes = Changes(
            events=events,
            versions=[_until(_plain(row), last) for row in made],
            closed=self._closed("memory_versions", "memory_id", span),
            disputes=[
                _until(_plain(row), last)
                for row in self._rows(
                    "SELECT * FROM dispute_versions WHERE workspace = ? AND from_seq > ? "
                    "AND from_seq <= ? ORDER BY from_seq, version",
                    span,
                )
            ],
            disputes_closed=self._closed("dispute_versions", "dispute_id", span),
            vectors=self._vectors_of([int(row["rowid"]) for row in made]),
        )
        # A settings event targets the workspace itself: it has no rows of its own here.
        touched = sorted({str(event["target_id"]) for event in events
                          if event["target_type"] in ("memory", "notebook")})  # fmt: skip
        changes.memories = self._by_ids("memories", "id", touched)
        changes.notebooks = self._by_ids("notebooks", "id", touched)
        changes.notebook_tombstones = self._by_ids("notebook_tombstones", "id", touched)
        changes.links = self._links_of(touched)
        changes.link_ends = touched
        changes.settings = [
            _plain(row)
            for row in self._rows(
                "SELECT * FROM workspace_settings WHERE workspace = ? ORDER BY name",
                (self.workspace,),
            )
        ]
        return changes

    def _closed(self, table: str, id_column: str, span: tuple[str, int, int]) -> list[Any]:
        """Versions written before the span and replaced within it."""
        rows = self._rows(
            f"SELECT {id_column} AS id, version, to_seq FROM {table} WHERE workspace = ? "
            "AND to_seq > ? AND to_seq <= ? AND from_seq <= ? ORDER BY to_seq, version",
            (*span, span[1]),
        )
        return [(str(r["id"]), int(r["version"]), int(r["to_seq"])) for r in rows]

    def _vectors_of(self, rowids: Sequence[int]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for start in range(0, len(rowids), CHUNK):
            chunk = list(rowids[start : start + CHUNK])
            rows = self._rows(
                f"SELECT v.memory_id, v.version, mv.model, {self.VECTOR_OUT} AS vector "
                "FROM memory_vectors mv JOIN memory_versions v ON v.rowid = mv.version_rowid "
                f"WHERE mv.version_rowid IN ({marks(chunk)}) ORDER BY mv.version_rowid",
                chunk,
            )
            found += [
                {**dict(row), "vector": self._vector_from(row["vector"]).astype("<f4").tobytes()}
                for row in rows
            ]
        return found

    def _by_ids(self, table: str, column: str, ids: Sequence[str]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for start in range(0, len(ids), CHUNK):
            chunk = list(ids[start : start + CHUNK])
            found += [
                _plain(row)
                for row in self._rows(
                    f"SELECT * FROM {table} WHERE workspace = ? AND {column} IN ({marks(chunk)}) "
                    f"ORDER BY {column}",
                    [self.workspace, *chunk],
                )
            ]
        return found

    def _links_of(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ids), CHUNK):
            chunk = list(ids[start : start + CHUNK])
            for row in self._rows(
                f"SELECT * FROM links WHERE workspace = ? AND (source_id IN ({marks(chunk)}) "
                f"OR target_id IN ({marks(chunk)})) ORDER BY id",
                [self.workspace, *chunk, *chunk],
            ):
                found[str(row["id"])] = _plain(row)
        return list(found.values())

    # -- a replica -------------------------------------------------------------------------

    def replica_state(self) -> ReplicaState | None:
        row = self._row("SELECT * FROM replica_state WHERE workspace = ?", (self.workspace,))
        if row is None:
            return None
        return ReplicaState(
            row["server"], row["server_workspace"], int(row["position_seq"]),
            row["position_op_id"], row["role"], row["synced_at"], row["refused"], row["actor"],
        )  # fmt: skip

    def put_replica_state(self, state: ReplicaState) -> None:
        self.ensure_workspace()
        self._run(
            "INSERT INTO replica_state(workspace, server, server_workspace, position_seq, "
            "position_op_id, role, synced_at, refused, actor) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (workspace) DO UPDATE SET server = excluded.server, "
            "server_workspace = excluded.server_workspace, position_seq = excluded.position_seq, "
            "position_op_id = excluded.position_op_id, role = excluded.role, "
            "synced_at = excluded.synced_at, refused = excluded.refused, actor = excluded.actor",
            (self.workspace, state.server, state.server_workspace, state.position_seq,
             state.position_op_id, state.role, state.synced_at, state.refused, state.actor),
        )  # fmt: skip

    def apply_changes(self, changes: Changes, vector_model: str | None) -> dict[str, int]:
        """Write a server's changes as they are; returns how many events were new here.

        An event this replica holds already (a round applied before its answer was known)
        is left as it is, with everything it made: a round may be applied twice, never
        doubled. An event held under the same server number but of another operation is
        another history (a restored server): refused, never taken as held. Vectors of
        another model than `vector_model` are left out.
        """
        self.ensure_workspace()
        seqs: dict[int, int] = {}
        new: list[Row] = []
        for event in changes.events:
            server_seq = int(event["seq"])
            held = self._held_op_id(server_seq)
            if held == event["op_id"]:
                continue
            if held is not None:
                raise Conflict(
                    f"The server's event {server_seq} is not the one this replica holds under "
                    "that number: the server was restored from an export, or is another "
                    "server at the same address. Nothing was written; sync into a new store.",
                    field="since",
                )
            values = {k: v for k, v in event.items() if k != "seq"}
            values["workspace"] = self.workspace
            inserted = self._row(
                f"INSERT INTO events({', '.join(values)}) VALUES ({marks(values)}) RETURNING seq",
                tuple(values.values()),
            )
            assert inserted is not None
            seqs[server_seq] = int(inserted["seq"])
            self._run(
                "INSERT INTO replica_seqs(workspace, server_seq, local_seq) VALUES (?, ?, ?)",
                (self.workspace, server_seq, seqs[server_seq]),
            )
            new.append(event)
        if not new:
            return {"events": 0}

        def local(server_seq: int | None) -> int | None:
            if server_seq is None:
                return None
            if server_seq not in seqs:
                found = self._local_seq(server_seq)
                seqs[server_seq] = found if found is not None else 0
            return seqs[server_seq] or None

        for table, id_column, closed in (
            ("memory_versions", "memory_id", changes.closed),
            ("dispute_versions", "dispute_id", changes.disputes_closed),
        ):
            for ident, version, to_seq in closed:
                self._run(
                    f"UPDATE {table} SET to_seq = ? WHERE workspace = ? AND {id_column} = ? "
                    "AND version = ? AND to_seq IS NULL",
                    (local(to_seq), self.workspace, ident, version),
                )
        rowids = self._put_versions(changes.versions, local)
        for row in changes.disputes:
            values = {**row, "workspace": self.workspace}
            values["from_seq"], values["to_seq"] = local(row["from_seq"]), local(row["to_seq"])
            self._run(
                f"INSERT INTO dispute_versions({', '.join(values)}) VALUES ({marks(values)}) "
                "ON CONFLICT DO NOTHING",
                tuple(values.values()),
            )
        for vector in changes.vectors:
            rowid = rowids.get((vector["memory_id"], int(vector["version"])))
            if rowid is not None and vector["model"] == vector_model:
                import numpy as np

                self._put_vector_row(rowid, np.frombuffer(vector["vector"], dtype="<f4"),
                                     vector["model"])  # fmt: skip
        # Forgets first: a notebook forgotten gives up its name, which a later event of the
        # round may give another notebook.
        self._forget_as_pulled(new, changes, local)
        self._put_current(changes)
        return {"events": len(new)}

    def _held_op_id(self, server_seq: int) -> str | None:
        """The operation id of the event held here for the server's event `server_seq`."""
        row = self._row(
            "SELECT e.op_id FROM replica_seqs r JOIN events e ON e.workspace = r.workspace "
            "AND e.seq = r.local_seq WHERE r.workspace = ? AND r.server_seq = ?",
            (self.workspace, server_seq),
        )
        return str(row["op_id"]) if row else None

    def _local_seq(self, server_seq: int) -> int | None:
        row = self._row(
            "SELECT local_seq FROM replica_seqs WHERE workspace = ? AND server_seq = ?",
            (self.workspace, server_seq),
        )
        return int(row["local_seq"]) if row else None

    def _put_versions(self, versions: Iterable[Row], local: Any) -> dict[tuple[str, int], int]:
        """Insert the versions a round brought (those held already stay); their rows."""
        rowids: dict[tuple[str, int], int] = {}
        for row in versions:
            self._run(
                "INSERT INTO memories(id, workspace) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (row["memory_id"], self.workspace),
            )
            values = {**row, "workspace": self.workspace}
            values["from_seq"], values["to_seq"] = local(row["from_seq"]), local(row["to_seq"])
            scrubbed = bool(row["scrubbed"])
            if not scrubbed:
                tags = row["tags"]
                values["norm_text"] = _normalized(row["text"])
                values["tags_text"] = " ".join(_json_list(tags))
                values.update(self._search_values(values))
            inserted = self._row(
                f"INSERT INTO memory_versions({', '.join(values)}) VALUES ({marks(values)}) "
                "ON CONFLICT DO NOTHING RETURNING rowid",
                tuple(values.values()),
            )
            if inserted is None:
                continue
            rowid = int(inserted["rowid"])
            rowids[(str(row["memory_id"]), int(row["version"]))] = rowid
            if not scrubbed:
                self._indexed(rowid, values)
        return rowids

    def _put_current(self, changes: Changes) -> None:
        """The current rows of what the round's events touched: tombstones, notebooks,
        links (whole, for each id they touched) and the workspace's settings."""
        # Names are unique in a workspace, and current rows may run ahead of the events a
        # round holds: a name may still be held here by a notebook renamed or forgotten by
        # an event of a later round, or be swapped between two of this round's. Every
        # notebook of the round, and every holder of a name it brings, lets go of its name
        # (its id stands in until its own row or forget arrives) before any takes one.
        for column, held in (
            ("id", [str(row["id"]) for row in changes.notebooks]),
            ("name", [str(row["name"]) for row in changes.notebooks]),
        ):
            for start in range(0, len(held), CHUNK):
                chunk = held[start : start + CHUNK]
                self._run(
                    f"UPDATE notebooks SET name = id WHERE workspace = ? "
                    f"AND {column} IN ({marks(chunk)})",
                    [self.workspace, *chunk],
                )  # fmt: skip
        for row in changes.notebooks:
            values = {**row, "workspace": self.workspace}
            updates = ", ".join(f"{c} = excluded.{c}" for c in values if c != "id")
            self._run(
                f"INSERT INTO notebooks({', '.join(values)}) VALUES ({marks(values)}) "
                f"ON CONFLICT (id) DO UPDATE SET {updates}",
                tuple(values.values()),
            )
        for start in range(0, len(changes.link_ends), CHUNK):
            chunk = changes.link_ends[start : start + CHUNK]
            self._run(
                f"DELETE FROM links WHERE workspace = ? AND (source_id IN ({marks(chunk)}) "
                f"OR target_id IN ({marks(chunk)}))",
                [self.workspace, *chunk, *chunk],
            )
        for row in changes.links:
            values = {**row, "workspace": self.workspace}
            self._run(
                f"INSERT INTO links({', '.join(values)}) VALUES ({marks(values)}) "
                "ON CONFLICT DO NOTHING",
                tuple(values.values()),
            )
        self._run("DELETE FROM workspace_settings WHERE workspace = ?", (self.workspace,))
        for row in changes.settings:
            self._run(
                "INSERT INTO workspace_settings(workspace, name, value) VALUES (?, ?, ?)",
                (self.workspace, row["name"], row["value"]),
            )

    def _forget_as_pulled(self, new: list[Row], changes: Changes, local: Any) -> None:
        """Each forget among the new events, run here as the server ran it."""
        tombstones = {row["id"]: row for row in changes.memories if row["forgotten_at"]}
        gone = {row["id"]: row for row in changes.notebook_tombstones}
        for event in new:
            seq, target, op = local(event["seq"]), event["target_id"], event["op"]
            is_memory = event["target_type"] == "memory"
            if op == "forget" and is_memory and target in tombstones:
                row = tombstones[target]
                self.forget_memory(Tombstone(target, row["forgotten_at"], row["forgotten_by"],
                                             row["forget_reason"]), seq)  # fmt: skip
            elif op == "forget_version" and is_memory:
                version = _json_dict(event["data"]).get("version")
                if isinstance(version, int):
                    self.forget_version(target, version)
            elif op == "forget" and target in gone and self._not_forgotten_here(target):
                row = gone[target]
                self.forget_notebook(Tombstone(target, row["forgotten_at"], row["forgotten_by"],
                                               row["forget_reason"]), seq)  # fmt: skip
            elif op == "forget_field" and event["target_type"] == "notebook":
                name = _json_dict(event["data"]).get("field")
                if isinstance(name, str):
                    self.forget_notebook_field(target, name, seq)

    def _not_forgotten_here(self, notebook_id: str) -> bool:
        return (
            self._row(
                "SELECT 1 AS found FROM notebook_tombstones WHERE workspace = ? AND id = ?",
                (self.workspace, notebook_id),
            )
            is None
        )


def _plain(row: Row) -> dict[str, Any]:
    return {k: v for k, v in dict(row).items() if k not in LOCAL_COLUMNS}


def _until(row: dict[str, Any], last: int) -> dict[str, Any]:
    """A row whose span a later event closes is sent open: the round that holds that event
    closes it."""
    if row["to_seq"] is not None and int(row["to_seq"]) > last:
        row["to_seq"] = None
    return row


def _normalized(text: str | None) -> str | None:
    return normalize_text(text) if text is not None else None


def _json_list(value: Any) -> list[str]:
    found = json.loads(value) if isinstance(value, str) else value
    return [str(item) for item in found] if isinstance(found, list) else []


def _json_dict(value: Any) -> dict[str, Any]:
    found = json.loads(value) if isinstance(value, str) else value
    return found if isinstance(found, dict) else {}
