"""Users and keys of a workspace, and the store's workspaces: the same SQL on both stores
(DESIGN section 6)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable
from typing import Any

from ..domain.model import Memory
from . import AccessKey, User, Workspace
from .rows import Row

_KEY_COLUMNS = "id, holder, note, created_at, expires_at, revoked_at"


class AccessRows:
    """The users' and keys' part of a store session (mixed into `SqlSession`)."""

    workspace: str

    @abstractmethod
    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[Row]: ...

    @abstractmethod
    def _run(self, sql: str, params: Iterable[Any] = ()) -> None: ...

    @abstractmethod
    def _versions(self, condition: str, params: Iterable[Any]) -> list[Memory]: ...

    def users(self) -> list[User]:
        rows = self._rows(
            "SELECT name, role, added_at FROM users WHERE workspace = ? ORDER BY name",
            (self.workspace,),
        )
        return [User(row["name"], row["role"], row["added_at"]) for row in rows]

    def put_user(self, user: User) -> None:
        self._run(
            "INSERT INTO users(workspace, name, role, added_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (workspace, name) DO UPDATE SET role = excluded.role",
            (self.workspace, user.name, user.role, user.added_at),
        )

    def access_keys(self) -> list[AccessKey]:
        rows = self._rows(
            f"SELECT {_KEY_COLUMNS} FROM access_keys WHERE workspace = ? ORDER BY created_at, id",
            (self.workspace,),
        )
        return [_key(row) for row in rows]

    def access_key(self, key_id: str) -> tuple[AccessKey, str] | None:
        """The key with this id in this workspace, and the sha256 of its secret."""
        rows = self._rows(
            f"SELECT {_KEY_COLUMNS}, secret_hash FROM access_keys WHERE workspace = ? AND id = ?",
            (self.workspace, key_id),
        )
        return (_key(rows[0]), rows[0]["secret_hash"]) if rows else None

    def has_access_keys(self) -> bool:
        """Whether any key was ever made in the store: from then on HTTP asks every request
        for one (a keyless request cannot tell which workspace it means)."""
        return bool(self._rows("SELECT 1 FROM access_keys LIMIT 1"))

    def key_workspace(self, key_id: str) -> str | None:
        rows = self._rows("SELECT workspace FROM access_keys WHERE id = ?", (key_id,))
        return str(rows[0]["workspace"]) if rows else None

    def drop_user(self, name: str) -> None:
        self._run("DELETE FROM users WHERE workspace = ? AND name = ?", (self.workspace, name))

    def owned_by(self, actor: str) -> list[Memory]:
        return self._versions("v.to_seq IS NULL AND v.owner = ?", (actor,))

    def add_failed_auth(self, workspace: str, hour: str, failures: int, at: str) -> None:
        self._run(
            "INSERT INTO failed_auth(workspace, hour, failures, last_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (workspace, hour) DO UPDATE SET "
            "failures = failed_auth.failures + excluded.failures, last_at = excluded.last_at",
            (workspace, hour, failures, at),
        )

    def failed_auth_since(self, hour: str, workspaces: tuple[str, ...]) -> tuple[int, str | None]:
        marks = ", ".join("?" * len(workspaces))
        rows = self._rows(
            "SELECT COALESCE(SUM(failures), 0) AS failures, MAX(last_at) AS last_at "
            f"FROM failed_auth WHERE hour >= ? AND workspace IN ({marks})",
            (hour, *workspaces),
        )
        return int(rows[0]["failures"]), rows[0]["last_at"]

    def workspaces(self) -> list[Workspace]:
        rows = self._rows("SELECT id, name, created_at FROM workspaces ORDER BY created_at, id")
        return [Workspace(row["id"], row["name"] or row["id"], row["created_at"]) for row in rows]

    def name_workspace(self, name: str) -> None:
        self._run("UPDATE workspaces SET name = ? WHERE id = ?", (name, self.workspace))

    def put_access_key(self, key: AccessKey, secret_hash: str) -> None:
        self._run(
            "INSERT INTO access_keys(id, workspace, secret_hash, holder, note, created_at, "
            "expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (key.id, self.workspace, secret_hash, key.holder, key.note, key.created_at,
             key.expires_at, key.revoked_at),
        )  # fmt: skip

    def revoke_access_key(self, key_id: str, at: str) -> None:
        self._run(
            "UPDATE access_keys SET revoked_at = ? WHERE workspace = ? AND id = ?",
            (at, self.workspace, key_id),
        )


def _key(row: Row) -> AccessKey:
    return AccessKey(
        id=row["id"],
        holder=row["holder"],
        note=row["note"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        revoked_at=row["revoked_at"],
    )
