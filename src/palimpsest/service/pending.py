"""What reads show of a replica's queue (docs/sync.md): the writes made here that the
server has not taken yet, marked pending wherever they show (recall, inspect, orient), and
doctor's part, what the server did not take. Nothing here writes; a store that cannot be a
replica is not even read for it."""

from __future__ import annotations

from typing import Any

from ..store import QueuedWrite, Store

SHOWN_PENDING = 20  # pending writes an orient or an inspect lists


def queued_view(item: QueuedWrite) -> dict[str, Any]:
    """A queued write as answers show it: what, on what, by whom, and how it stands."""
    view: dict[str, Any] = {
        "queued": item.id,
        "op": item.op,
        "state": item.state,
        "queued_at": item.queued_at,
        "actor": item.actor,
    }
    if item.target_id:
        view["id"] = item.target_id
    if item.op == "remember" and isinstance(item.arguments.get("text"), str):
        view["text"] = item.arguments["text"]
        view["notebook"] = item.arguments.get("notebook")
    if item.answer is not None:
        view["answer"] = item.answer
    return view


def pending_into_hits(
    hits: list[dict[str, Any]], waiting: list[QueuedWrite], query: str
) -> list[dict[str, Any]]:
    """Mark each hit a waiting write changes (`pending`: the operations); answer the waiting
    remembers that share a word with `query`, as they will be filed."""
    by_target: dict[str, list[str]] = {}
    for item in waiting:
        if item.target_id:
            by_target.setdefault(item.target_id, []).append(item.op)
    for hit in hits:
        if hit.get("id") in by_target:
            hit["pending"] = by_target[hit["id"]]
    words = {w for w in query.casefold().split() if len(w) > 2}
    return [
        {**queued_view(item), "text": one.get("text"), "notebook": one.get("notebook")}
        for item in waiting
        if item.op == "remember"
        for one in _remembered(item)
        if words & set(str(one.get("text", "")).casefold().split())
    ]


def _remembered(item: QueuedWrite) -> list[dict[str, Any]]:
    """The memories a queued remember files: its own, or each of its `items` batch."""
    batch = item.arguments.get("items")
    if isinstance(batch, list):
        return [one for one in batch if isinstance(one, dict)]
    return [item.arguments]


def waiting_writes(store: Store, workspace: str) -> list[QueuedWrite]:
    """What reads show as pending: the writes the server has not answered yet, and those it
    accepted that no pull has brought back yet. None on a store that cannot be a replica (a
    server's reads pay nothing for it)."""
    if not store.replicates:
        return []
    with store.read(workspace) as tx:
        state = tx.replica_state()
        if state is None:
            return []
        items = tx.queued_writes(("pending", "accepted"), limit=SHOWN_PENDING * 10)
    synced = state.synced_at or ""
    return [i for i in items if i.state == "pending" or (i.done_at or "") > synced]


def sync_findings(store: Store, workspace: str) -> dict[str, Any]:
    """Doctor's part: a replica whose sync stopped, and its writes the server did not take
    (refused, or in conflict with a newer version there), each with the way out."""
    if not store.replicates:
        return {}
    with store.read(workspace) as tx:
        state = tx.replica_state()
        if state is None:
            return {}
        not_taken = tx.queued_writes(("refused", "conflict"))
        waiting = len(tx.queued_writes(("pending",)))
    found: dict[str, Any] = {}
    if state.refused:
        found["stopped"] = state.refused
    if not_taken:
        found["not_taken"] = [queued_view(item) for item in not_taken]
        found["fix"] = ("palimpsest sync --retry QUEUED (checked anew), or --drop QUEUED "
                        "--because WHY")  # fmt: skip
    if found:
        found["server"] = state.server
        found["waiting"] = waiting
    return found
