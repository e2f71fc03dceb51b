"""Keeping what a session was served (service/served.py reads it): one row per serving,
ids, versions and scores, the request's query redacted. No part of the service imports
another's here, so that every part (the write path of base.py too) may record."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..domain.errors import ValidationError
from ..domain.ids import new_id
from ..domain.model import add_days
from ..screening.secrets import redact
from ..store import Served, Store, StoreWriter

logger = logging.getLogger("palimpsest.served")

KEEP_SETTING = "served.keep_days"
KEEP_DAYS = 30  # its default
QUERY_KEPT = 200  # a query up to this long is kept redacted; a longer one only as its hash
SESSION_ID_CHARS = 200
FLUSH_SECONDS = 0.5  # where servings are written together: how late they may be
BATCH = 64  # and how many may wait
END_OF_TIME = "9999-12-31T23:59:59.999999Z"  # later than any time kept
BRIEF, REVIEW, WROTE = "brief", "review", "wrote"  # what a session-start hook, a
# session-end hook and a write through the session keep

Line = tuple[str, int | None, float | None]  # a memory shown: id, version, score
Shown = list[Line]


def session_key(value: Any, field: str = "session_id") -> str:
    """The id a session is kept by: the agent's own, or, when it is over-long or holds a
    credential, its hash (the same each time, and nothing of it stored)."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"`{field}` is required: the agent's session id.", field=field)
    given = value.strip()
    if "\x00" in given:
        raise ValidationError(f"`{field}` holds a NUL character: send the id itself.", field=field)
    if len(given) > SESSION_ID_CHARS or redact(given)[1]:
        return "sha256:" + hashlib.sha256(given.encode()).hexdigest()
    return given


def kept_query(query: str) -> dict[str, Any]:
    """What is kept of a query: its text redacted as the write gate redacts, or only its
    hash when it is long (a long query is pasted content more than a question)."""
    query = query.strip()
    if not query:
        return {}
    if len(query) > QUERY_KEPT:
        return {
            "query_sha256": hashlib.sha256(query.encode()).hexdigest(),
            "query_chars": len(query),
        }
    return {"query": redact(query)[0]}


def kept_value(value: Any) -> Any:
    """A filter's value as kept: strings redacted and cut, lists of them likewise."""
    if isinstance(value, str):
        return redact(value[:QUERY_KEPT])[0]
    if isinstance(value, list | tuple):
        return [kept_value(item) for item in value[:50]]
    return value


class ServedLog:
    """Servings on their way to the store, shared by a service and its copies. Where a
    commit is cheap (SQLite: its WAL is not synced at each commit) each serving is written
    at once; else (PostgreSQL waits for its WAL at each commit, about half a millisecond)
    they are written together by a thread of their own, at most FLUSH_SECONDS or BATCH
    servings late, and at the latest when the service reads the record or closes."""

    def __init__(self, store: Store):
        self.store = store
        self._lock = threading.Lock()
        self._waiting: list[tuple[str, Served, int | None]] = []
        self._timer: threading.Timer | None = None

    def add(self, workspace: str, served: Served, keep_days: int | None) -> None:
        if self.store.commits_cheaply:
            self._write([(workspace, served, keep_days)])
            return
        with self._lock:
            self._waiting.append((workspace, served, keep_days))
            full = len(self._waiting) >= BATCH
            if not full and self._timer is None:
                self._timer = threading.Timer(FLUSH_SECONDS, self.flush)
                self._timer.daemon = True
                self._timer.start()
        if full:
            self.flush()

    def flush(self) -> None:
        """Write what waits (never raises: what cannot be written is logged and dropped)."""
        with self._lock:
            waiting, self._waiting = self._waiting, []
            timer, self._timer = self._timer, None
        if timer is not None and timer is not threading.current_thread():
            timer.cancel()
        if waiting:
            self._write(waiting)

    def _write(self, waiting: list[tuple[str, Served, int | None]]) -> None:
        for workspace in dict.fromkeys(w for w, _, _ in waiting):
            mine = [(served, keep) for w, served, keep in waiting if w == workspace]
            try:
                with self.store.write(workspace) as tx:
                    keep_days = mine[-1][1]
                    if keep_days is None:
                        keep_days = int(tx.settings().get(KEEP_SETTING, KEEP_DAYS))
                    if keep_days:
                        newest = mine[-1][0].served_at
                        rows = [served for served, _ in mine]
                        tx.add_served(rows, before=add_days(newest, -keep_days))
                    else:  # 0 days keeps nothing, and drops what was kept before
                        tx.add_served([], before=END_OF_TIME)
            except Exception:  # best effort, by design: the answers were already given
                logger.warning("what was served to sessions could not be recorded", exc_info=True)


def record_served(
    log: ServedLog,
    workspace: str,
    who: tuple[str, str, str | None],
    what: str,
    request: Mapping[str, Any],
    shown: Sequence[Line],
    *,
    clock: Callable[[], str],
    keep_days: int | None = None,
) -> None:
    """Keep one serving to `who` (session, actor, key id); never raises: the answer was
    made, and it stands whatever happens here."""
    session, actor, key_id = who
    try:
        asked = {k: kept_value(v) for k, v in request.items() if k != "query"}
        asked |= kept_query(request.get("query") or "")
        served = Served(new_id("srv"), session, actor, key_id, clock(), what, asked, tuple(shown))
        log.add(workspace, served, keep_days)
    except Exception:  # best effort, by design: the answer was already given
        logger.warning("what was served to a session could not be recorded", exc_info=True)


def written_in(tx: StoreWriter, before: int, op_id: str) -> Shown:
    """The memories the write `op_id` gave a new version (read in its own transaction)."""
    events = tx.memory_events_after(before, None, 10_000)
    return [(e.target_id, e.version, None) for e in events if e.op_id == op_id]


def shown_of(items: Iterable[Mapping[str, Any]]) -> Shown:
    """(id, version, score) of each item an answer listed (a missing key: None)."""
    return [(item["id"], item.get("version"), item.get("score")) for item in items]
