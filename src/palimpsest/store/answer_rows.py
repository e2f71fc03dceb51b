"""Stored answers of requests with an idempotency key, the same SQL on both stores, and the
ids each names, so that a forget of one drops the answers naming it."""

from __future__ import annotations

import json
from typing import Any

from .session_base import SessionBase
from .values import StoredResponse


class AnswerRows(SessionBase):
    """The stored answers' part of a store session."""

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


# Where a stored answer names a memory or notebook (ids_only keeps nothing else as text).
ID_KEYS = frozenset({"id", "ids", "duplicate_of", "superseded", "notebook"})


def named_ids(value: Any, under_id_key: bool = False) -> set[str]:
    """Every id a stored answer names: the strings under `ID_KEYS`, at any depth."""
    if isinstance(value, str):
        return {value} if under_id_key else set()
    if isinstance(value, dict):
        return set().union(*(named_ids(v, k in ID_KEYS) for k, v in value.items()))
    if isinstance(value, list):
        return set().union(*(named_ids(v, under_id_key) for v in value))
    return set()
