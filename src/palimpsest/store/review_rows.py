"""What doctor lists, read where the rows are (the same SQL on both stores): current
memories past their freshness, expired or without an owner, the active ones of some kinds,
and the versions the secret detector has not yet read as it is now."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from ..domain.model import Memory
from .rows import memory_from_row
from .session_base import SessionBase, marks

ACTIVE_NOW = "v.to_seq IS NULL AND v.status = 'active'"


class ReviewRows(SessionBase):
    """The review part of a store session."""

    def possibly_stale(self, stale_before: Mapping[str, str]) -> list[Memory]:
        if not stale_before:
            return []
        windows = " OR ".join(
            ["(v.kind = ? AND COALESCE(v.verified_at, v.recorded_at) < ?)"] * len(stale_before)
        )
        params = [value for pair in stale_before.items() for value in pair]
        return self._current(f"({windows})", params)

    def expired_memories(self, at: str) -> list[Memory]:
        return self._current("v.expires_at IS NOT NULL AND v.expires_at <= ?", (at,))

    def ownerless_memories(self) -> list[Memory]:
        return self._current("v.owner IS NULL", ())

    def active_of_kinds(self, kinds: Collection[str]) -> list[Memory]:
        chosen = sorted(kinds)
        return self._current(f"v.kind IN ({marks(chosen)})", chosen) if chosen else []

    def unscreened_versions(self, screen: str) -> list[Memory]:
        rows = self._rows(
            "SELECT * FROM memory_versions v WHERE v.workspace = ? AND v.scrubbed = 0 "
            "AND (v.screened IS NULL OR v.screened <> ?) ORDER BY v.rowid",
            (self.workspace, screen),
        )
        return [memory_from_row(row) for row in rows]

    def mark_screened(self, versions: Sequence[tuple[str, int]], screen: str) -> None:
        for start in range(0, len(versions), 400):
            chunk = versions[start : start + 400]
            pairs = " OR ".join(["(memory_id = ? AND version = ?)"] * len(chunk))
            self._run(
                f"UPDATE memory_versions SET screened = ? WHERE workspace = ? AND ({pairs})",
                (screen, self.workspace, *(value for pair in chunk for value in pair)),
            )

    def _current(self, condition: str, params: Sequence[object]) -> list[Memory]:
        rows = self._rows(
            "SELECT * FROM memory_versions v WHERE v.workspace = ? "
            f"AND {ACTIVE_NOW} AND v.scrubbed = 0 AND {condition} ORDER BY v.memory_id",
            (self.workspace, *params),
        )
        return [memory_from_row(row) for row in rows]
