"""Copying a whole workspace from one store to another (SQLite to PostgreSQL and back).

The copy is lossless: notebooks, every memory version (tombstones included), every event
with its actor, time and reason, links and idempotency answers. It reads one snapshot of
the source and writes the target in one transaction, so it lands whole or not at all.
"""

from __future__ import annotations

from typing import Any

from .errors import Conflict
from .store import Store


def copy_workspace(source: Store, target: Store, workspace: str) -> dict[str, Any]:
    """Copy `workspace` from `source` into `target`, where it must not exist yet."""
    with source.read(workspace) as reading, target.write(workspace) as writing:
        if not writing.is_empty():
            raise Conflict(
                f"Workspace {workspace!r} already holds memory in the target store; copy into "
                "an empty store (or workspace) so that nothing there is mixed or overwritten."
            )
        counts = writing.load(reading.dump())
    target.scrub(workspace)
    return {"workspace": workspace, "copied": counts}
