"""What the contract suites write, made through the store's protocols alone (no SQL, no
service): model values with ids unique store-wide (the PostgreSQL store is shared by the
whole run) and times in order."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from palimpsest.domain.model import Event, Memory, Notebook
from palimpsest.store import StoreWriter


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def at(second: int, day: int = 1) -> str:
    """A stored time (RFC 3339, microseconds, UTC) on 2026-01-`day`, `second`s past 10:00."""
    return f"2026-01-{day:02d}T10:{second // 60:02d}:{second % 60:02d}.000000Z"


def notebook(workspace: str, name: str | None = None, **fields: Any) -> Notebook:
    return Notebook(new_id("nb"), workspace, name or new_id("name"), at(0), **fields)


def memory(workspace: str, notebook_id: str, text: str, **fields: Any) -> Memory:
    values: dict[str, Any] = {"kind": "fact", "version": 1, "recorded_at": at(1),
                              "author": "user:ann", "owner": "user:ann"} | fields  # fmt: skip
    return Memory(values.pop("id", None) or new_id("m"), workspace, notebook_id,
                  text=text, **values)  # fmt: skip


def event(op: str, target_id: str, **fields: Any) -> Event:
    values: dict[str, Any] = {"at": at(1), "actor": "user:ann", "target_type": "memory"} | fields
    return Event(values.pop("seq", 0), new_id("op"), op=op, target_id=target_id, **values)


def filed(tx: StoreWriter, m: Memory, op: str = "remember", **event_fields: Any) -> int:
    """Write `m` as a memory's version and its event, as the service does: the event's seq."""
    values = {"notebook_id": m.notebook_id, "version": m.version, "at": m.recorded_at}
    seq = tx.append_event(event(op, m.id, **(values | event_fields)))
    tx.put_memory(m, seq)
    return seq


def revised(tx: StoreWriter, m: Memory, **changes: Any) -> tuple[Memory, int]:
    """The next version of `m`, with `changes`, written: it and its event's seq."""
    following = replace(m, version=m.version + 1, **changes)
    return following, filed(tx, following, op="revise")
