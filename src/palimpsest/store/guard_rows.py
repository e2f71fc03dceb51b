"""What the guard reads and keeps, the same SQL on both stores: the rules holding a
`forbidden` check, and the commands seen (for trials).

`read_forbidding_rules` reads a SQLite file with nothing but `sqlite3`, so that the guard's
hook answers before the rest of the store (numpy, the stemmer...) could even be imported.
"""

from __future__ import annotations

import sqlite3
from abc import abstractmethod
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..domain.model import Memory, SeenCommand, now_utc
from .rows import Row, memory_from_row

# The current, active rules and orientations with a forbidden check (the service decides
# which of them apply where); versions_current_kind serves it.
FORBIDDING_RULES = (
    "SELECT * FROM memory_versions v WHERE v.workspace = ? AND v.kind IN ('rule', 'orientation')"
    " AND v.to_seq IS NULL AND v.scrubbed = 0 AND v.status = 'active' AND v.check_json LIKE ?"
    " ORDER BY v.memory_id"
)
FORBIDDEN_CHECK = '%"forbidden"%'
NOTEBOOK = (
    "SELECT id, name FROM notebooks WHERE workspace = ? AND (id = ? OR name = ?) "
    "ORDER BY (id = ?) DESC"
)


class GuardRows:
    """The guard's part of a store session (mixed into `SqlSession`)."""

    workspace: str

    @abstractmethod
    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[Row]: ...

    @abstractmethod
    def _run(self, sql: str, params: Iterable[Any] = ()) -> None: ...

    @abstractmethod
    def _mark_pending(self, target_id: str, at: str) -> None: ...

    def forbidding_rules(self) -> list[Memory]:
        rows = self._rows(FORBIDDING_RULES, (self.workspace, FORBIDDEN_CHECK))
        return [memory_from_row(row) for row in rows]

    def seen_commands(self, since: str) -> list[SeenCommand]:
        rows = self._rows(
            "SELECT * FROM seen_commands WHERE workspace = ? AND seen_at >= ? ORDER BY seen_at",
            (self.workspace, since),
        )
        return [_seen(row) for row in rows]

    def add_seen_command(self, seen: SeenCommand, *, keep: int, before: str) -> None:
        """Keep `seen`, and drop what is older than `before` or past the newest `keep`."""
        self._run(
            "INSERT INTO seen_commands(id, workspace, seen_at, command, decision, notebook_id,"
            " session) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (seen.id, self.workspace, seen.seen_at, seen.command, seen.decision,
             seen.notebook_id, seen.session),
        )  # fmt: skip
        self._run(
            "DELETE FROM seen_commands WHERE workspace = ? AND (seen_at < ? OR seen_at < ("
            "SELECT seen_at FROM seen_commands WHERE workspace = ? "
            "ORDER BY seen_at DESC LIMIT 1 OFFSET ?))",
            (self.workspace, before, self.workspace, keep - 1),
        )

    def get_seen_command(self, seen_id: str) -> SeenCommand | None:
        rows = self._rows(
            "SELECT * FROM seen_commands WHERE workspace = ? AND id = ?", (self.workspace, seen_id)
        )
        return _seen(rows[0]) if rows else None

    def forget_seen_command(self, seen_id: str) -> None:
        """Delete the command; its bytes go at the next scrub, as a forgotten memory's do."""
        self._run(
            "DELETE FROM seen_commands WHERE workspace = ? AND id = ?", (self.workspace, seen_id)
        )
        self._mark_pending(seen_id, now_utc())


def _seen(row: Row) -> SeenCommand:
    return SeenCommand(
        id=row["id"],
        seen_at=row["seen_at"],
        command=row["command"],
        decision=row["decision"],
        notebook_id=row["notebook_id"],
        session=row["session"],
    )


def read_forbidding_rules(
    path: Path, workspace: str, refs: tuple[str, ...]
) -> tuple[tuple[str, str] | None, list[Memory]]:
    """From a SQLite file, read only (a WAL reader waits for no writer): the id and name of
    the notebook the first of `refs` to name one names (a binding's id, then its name; None
    when none does) and the forbidding rules."""
    if not path.is_file():
        raise FileNotFoundError(f"no store at {path}")
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1.0)
    conn.row_factory = sqlite3.Row
    try:
        found = None
        for ref in refs:
            row = conn.execute(NOTEBOOK, (workspace, ref, ref, ref)).fetchone()
            if row is not None:
                found = (row["id"], row["name"])
                break
        rows = conn.execute(FORBIDDING_RULES, (workspace, FORBIDDEN_CHECK)).fetchall()
        return found, [memory_from_row(row) for row in rows]
    finally:
        conn.close()
