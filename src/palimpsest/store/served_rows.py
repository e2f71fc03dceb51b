"""What each session was shown, the same SQL on both stores: one row per serving, what was
shown as compact JSON (id, version, score), so that keeping it is one INSERT."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..domain.model import now_utc
from .rows import Row
from .session_base import SessionBase
from .values import Served, ServedSession

SERVED_MARK = "served:"  # a forgotten session's scrub mark: `served:<session>`


class ServedRows(SessionBase):
    """The served record's part of a store session."""

    def served(
        self, session: str, since: str | None, limit: int, actor: str | None = None
    ) -> list[Served]:
        where, args = "workspace = ? AND session = ?", [self.workspace, session]
        if since is not None:
            where += " AND served_at >= ?"
            args.append(since)
        if actor is not None:
            where += " AND actor = ?"
            args.append(actor)
        rows = self._rows(
            f"SELECT * FROM served WHERE {where} ORDER BY served_at, id LIMIT ?", [*args, limit]
        )
        return [_served(row) for row in rows]

    def served_sessions(self, limit: int, actor: str | None = None) -> list[ServedSession]:
        where, args = "workspace = ?", [self.workspace]
        if actor is not None:
            where += " AND actor = ?"
            args.append(actor)
        rows = self._rows(
            "SELECT session, min(actor) AS actor, min(key_id) AS key_id, min(served_at) AS "
            f"first_at, max(served_at) AS last_at, count(*) AS servings FROM served WHERE {where}"
            " GROUP BY session ORDER BY max(served_at) DESC, session LIMIT ?",
            [*args, limit],
        )
        return [
            ServedSession(
                row["session"],
                row["actor"],
                row["key_id"],
                row["first_at"],
                row["last_at"],
                int(row["servings"]),
            )
            for row in rows
        ]

    def add_served(self, served: Sequence[Served], *, before: str) -> None:
        if served:  # one statement for the batch: a round trip, not one a row
            rows = ", ".join("(?, ?, ?, ?, ?, ?, ?, ?, ?)" for _ in served)
            values = [
                value
                for one in served
                for value in (one.id, self.workspace, one.session, one.actor, one.key_id,
                              one.served_at, one.what, _json(one.request), _json(one.shown))
            ]  # fmt: skip
            self._run(
                "INSERT INTO served(id, workspace, session, actor, key_id, served_at, what, "
                f"request, shown) VALUES {rows}",
                values,
            )
        self._run(
            "DELETE FROM served WHERE workspace = ? AND served_at < ?", (self.workspace, before)
        )

    def forget_served(self, session: str) -> int:
        rows = self._rows(
            "DELETE FROM served WHERE workspace = ? AND session = ? RETURNING id",
            (self.workspace, session),
        )
        if rows:
            self._mark_pending(SERVED_MARK + session, now_utc())
        return len(rows)


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def _served(row: Row) -> Served:
    shown = json.loads(row["shown"])
    return Served(
        id=row["id"],
        session=row["session"],
        actor=row["actor"],
        key_id=row["key_id"],
        served_at=row["served_at"],
        what=row["what"],
        request=json.loads(row["request"]),
        shown=tuple((str(i), v, s) for i, v, s in shown),
    )
