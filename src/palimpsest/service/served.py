"""What each session was shown, and what it wrote (issue 32: "what did the agent know when
it did that?").

A session is a coding agent's (its hooks send its id) or an MCP client's (over HTTP the MCP
session id, over stdio one per server process); an adapter names it (`in_session`), and a
service that names none (the CLI) records nothing. Each recall, orient, inspect, the
session-start brief and the session-end review keeps one row: the ids, versions and scores
of what was shown, never a memory's text, and the request's filters, its query redacted as
the write gate redacts (up to QUERY_KEPT characters: a longer one keeps only its sha256).
A write made through the session keeps the memories' new versions the same way.

Keeping it is best effort and after the answer is made: a busy store, a full disk or a
broken table never fails the recall. The record is kept `served.keep_days` days (pruned as
each serving is kept) and an owner forgets a session's record with `forget --served`.
"""

from __future__ import annotations

from ..domain.errors import NotFound, ValidationError
from ..domain.model import Event
from ..screening import gate
from ..store import EventFilter, Served, ServedSession, StoreReader, StoreWriter
from .base import ServiceBase, parse_time_arg
from .served_answers import (
    ServedAnswer,
    ServedEntry,
    ServedForgotten,
    ServedSessionShown,
    ShownLine,
)
from .served_record import BRIEF, KEEP_DAYS, KEEP_SETTING, REVIEW, session_key
from .shown import event_view

MAX_SERVED = 1_000  # steps `served` lists at most
SESSIONS_LISTED = 100
SPAN_EVENTS = 500  # a hook session's actor's events read at most
OP = "served.forget"


class ServedOps(ServiceBase):
    def served(
        self, *, session: str | None = None, since: str | None = None, limit: int = 100
    ) -> ServedAnswer:
        """What `session` was shown and what it wrote, in order (from `since` on, at most
        `limit` steps); without a session, the sessions recorded, the latest first. An
        owner reads every session; anyone else only their own."""
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_SERVED:
            raise ValidationError(f"`limit` must be from 1 to {MAX_SERVED}.", field="limit")
        since_t = parse_time_arg(since, "since")
        self.served_log.flush()  # what this process served is read too
        mine = None if self.role == "owner" else self.actor
        with self.store.read(self.workspace) as tx:
            keep_days = int(tx.settings().get(KEEP_SETTING, KEEP_DAYS))
            if session is None:
                found = tx.served_sessions(min(limit, SESSIONS_LISTED), mine)
                return {"sessions": [_session_view(s) for s in found], "keep_days": keep_days}
            key = session_key(session, "session")
            steps = tx.served(key, since_t, limit, mine)
            if not steps:
                raise NotFound(
                    f"No record of session {gate.shown_reference(session)}"
                    + ("" if mine is None else " served to you")
                    + f" (kept {keep_days} days); `palimpsest served` lists the sessions.",
                    field="session",
                )
            entries = [_step_view(step) for step in steps]
            entries += _span_events(tx, steps, since_t, limit)
        entries.sort(key=lambda entry: entry["at"])
        return {"session": key, "actor": steps[0].actor, "entries": entries[:limit],
                "keep_days": keep_days}  # fmt: skip

    def forget_served(
        self,
        *,
        session: str,
        because: str | None = None,
        dry_run: bool = False,
        idempotency_key: str | None = None,
    ) -> ServedForgotten:
        """Erase for good what `session` was shown (an owner's act, with a reason): one event
        says it was forgotten and why, never what it held."""
        key = session_key(session, "session")
        if not isinstance(because, str) or not because.strip():
            raise ValidationError(
                "`because` is required: say why this session's record must not stay on disk.",
                field="because",
            )
        gate.screen("because", because)
        self.served_log.flush()  # what waits to be written goes too

        def body(tx: StoreWriter, now: str, op_id: str) -> ServedForgotten:
            servings = len(tx.served(key, None, 1_000_000))
            if not servings:
                raise NotFound(
                    f"No record of session {gate.shown_reference(session)}; "
                    "`palimpsest served` lists the sessions.",
                    field="session",
                )
            tx.forget_served(key)
            self._event(tx, OP, op_id, now, ("session", key), note=because.strip(),
                        data={"servings": servings})  # fmt: skip
            return {"session": key, "forgotten": True, "servings": servings}

        request = {"session": key, "because": because}
        answer = self._write(OP, request, idempotency_key, dry_run, body)
        if not dry_run and not answer.get("replayed"):
            answer["scrub_pending"] = not self.store.scrub(self.workspace)
        return answer


def _session_view(found: ServedSession) -> ServedSessionShown:
    return {
        "session": found.session,
        "actor": found.actor,
        "key_id": found.key_id,
        "first_at": found.first_at,
        "last_at": found.last_at,
        "servings": found.servings,
    }


def _step_view(step: Served) -> ServedEntry:
    lines: list[ShownLine] = [{"id": i, "version": v, "score": s} for i, v, s in step.shown]
    return {"at": step.served_at, "what": step.what, "actor": step.actor,
            "request": dict(step.request), "shown": lines}  # fmt: skip


def _span_events(
    tx: StoreReader, steps: list[Served], since: str | None, limit: int
) -> list[ServedEntry]:
    """A hook's session writes through another (the agent's MCP connection), so what it
    filed is read from its actor's events between its brief and its review (or now, while
    it has not ended); an MCP session's own writes are recorded as it makes them."""
    briefs = [step.served_at for step in steps if step.what == BRIEF]
    if not briefs:
        return []
    ends = [step.served_at for step in steps if step.what == REVIEW]
    start = max(briefs[0], since or "")
    span = EventFilter(actor=steps[0].actor, since=start, until=ends[-1] if ends else None,
                       limit=min(limit, SPAN_EVENTS))  # fmt: skip
    return [_event_entry(event) for event in tx.events(span)]


def _event_entry(event: Event) -> ServedEntry:
    return {"at": event.at, "what": event.op, "event": event_view(event)}
