"""Notebooks and links, the same SQL on both stores; a forgotten notebook leaves a tombstone."""

from __future__ import annotations

import json
from typing import Any

from ..domain.model import Link, Notebook, Tombstone, now_utc
from .rows import Row, link_from_row, notebook_from_row
from .session_base import SessionBase
from .values import NotebookCounts


class NotebookRows(SessionBase):
    """The notebooks' and links' part of a store session."""

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

    def notebook_counts(self) -> dict[str, NotebookCounts]:
        rows = self._rows(
            "SELECT notebook_id, count(*) AS held, "
            "sum(CASE WHEN status = 'active' THEN 1 ELSE 0 END) AS active, "
            "sum(CASE WHEN status = 'active' AND kind IN ('rule', 'orientation') "
            "THEN 1 ELSE 0 END) AS rules "
            "FROM memory_versions WHERE workspace = ? AND to_seq IS NULL AND scrubbed = 0 "
            "GROUP BY notebook_id",
            (self.workspace,),
        )
        return {
            row["notebook_id"]: NotebookCounts(int(row["held"]), int(row["active"]),
                                               int(row["rules"]))
            for row in rows
        }  # fmt: skip

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


def _values(value: Any) -> set[str]:
    """The names an event's `name` holds: one (a creation) or a pair (a rename)."""
    listed = value if isinstance(value, list) else [value]
    return {v for v in listed if isinstance(v, str)}
