"""Workspace settings, the same SQL on both stores: the chosen values only; a setting with
no row has its default."""

from __future__ import annotations

import json
from typing import Any

from .session_base import SessionBase


class SettingRows(SessionBase):
    """The settings' part of a store session."""

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
