"""Who is signed in to the web page with a key, the same SQL on both stores: one row per
session, named by its cookie's sha256, so every process serving the store knows it."""

from __future__ import annotations

from .rows import Row
from .session_base import SessionBase
from .values import WebSession

_COLUMNS = "cookie_hash, workspace, key_id, created_at, used_at"


class WebSessionRows(SessionBase):
    """The web sessions' part of a store session."""

    def web_session(self, cookie_hash: str) -> WebSession | None:
        row = self._row(f"SELECT {_COLUMNS} FROM web_sessions WHERE cookie_hash = ?",
                        (cookie_hash,))  # fmt: skip
        return _session(row) if row else None

    def web_sessions(self, key_id: str) -> list[WebSession]:
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM web_sessions WHERE workspace = ? AND key_id = ? "
            "ORDER BY used_at DESC, created_at DESC, cookie_hash",
            (self.workspace, key_id),
        )
        return [_session(row) for row in rows]

    def open_web_session(self, session: WebSession, *, keep: int, idle_before: str) -> None:
        # Idle, revoked or expired: no request would be let in by them any more.
        self._run(
            "DELETE FROM web_sessions WHERE workspace = ? AND (used_at < ? OR key_id IN "
            "(SELECT id FROM access_keys WHERE workspace = ? AND (revoked_at IS NOT NULL "
            "OR expires_at <= ?)))",
            (self.workspace, idle_before, self.workspace, session.created_at),
        )
        self._run(
            f"INSERT INTO web_sessions({_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
            (session.cookie_hash, self.workspace, session.key_id, session.created_at,
             session.used_at),
        )  # fmt: skip
        # This one and the key's `keep - 1` most recently used others stay; the rest end.
        # This one is kept whatever its time says (another process's clock may be ahead).
        self._run(
            "DELETE FROM web_sessions WHERE workspace = ? AND key_id = ? AND cookie_hash <> ? "
            "AND cookie_hash NOT IN (SELECT cookie_hash FROM web_sessions WHERE workspace = ? "
            "AND key_id = ? AND cookie_hash <> ? "
            "ORDER BY used_at DESC, created_at DESC, cookie_hash LIMIT ?)",
            (self.workspace, session.key_id, session.cookie_hash, self.workspace,
             session.key_id, session.cookie_hash, max(0, keep - 1)),
        )  # fmt: skip

    def touch_web_session(self, cookie_hash: str, at: str) -> None:
        self._run(
            "UPDATE web_sessions SET used_at = ? WHERE workspace = ? AND cookie_hash = ? "
            "AND used_at < ?",
            (at, self.workspace, cookie_hash, at),
        )

    def end_web_session(self, cookie_hash: str) -> bool:
        rows = self._rows(
            "DELETE FROM web_sessions WHERE workspace = ? AND cookie_hash = ? "
            "RETURNING cookie_hash",
            (self.workspace, cookie_hash),
        )
        return bool(rows)

    def end_key_web_sessions(self, key_id: str) -> int:
        rows = self._rows(
            "DELETE FROM web_sessions WHERE workspace = ? AND key_id = ? RETURNING cookie_hash",
            (self.workspace, key_id),
        )
        return len(rows)


def _session(row: Row) -> WebSession:
    return WebSession(
        cookie_hash=row["cookie_hash"],
        workspace=row["workspace"],
        key_id=row["key_id"],
        created_at=row["created_at"],
        used_at=row["used_at"],
    )
