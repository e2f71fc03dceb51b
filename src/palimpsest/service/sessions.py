"""A coding agent's session, as its hooks see it: a brief at the start, a review at the end.

`session_start` answers orient's brief and notes where the session began (the last event
sequence, by session id; a resumed session keeps its first start). `session_end` lists the
memories written in the session's notebook since then and what is open, and asks the
agent, once per session id, to file what it learned: a second end of the same session
never asks again, so an agent's stop hook cannot loop. The notes are the hooks' bookkeeping
(table agent_sessions), not memory: they make no event, are not copied, and go after 30
days.
"""

from __future__ import annotations

from ..domain.errors import PalimpsestError
from ..domain.model import add_days
from ..screening.secrets import redact
from ..store import AgentSession, StoreReader
from ..store.orient_rows import FEEDBACK_OP
from .admin_answers import SessionEnded, SessionStart, WrittenLine, session_brief
from .orient import DEFAULT_BUDGET, OrientOps
from .served_record import BRIEF, REVIEW, session_key

KEPT_DAYS = 30
WRITTEN_SHOWN = 30  # memories listed as written this session, at most
OPEN_SHOWN = 10

ASK = (
    "Before you stop: file in Palimpsest what this session learned that a later session "
    "would need (remember, in notebook {notebook}): decisions and why, errors met and their "
    "fixes, debts left, open issues. Revise what turned out wrong instead of filing a "
    "contradiction. If nothing is worth keeping, say so and stop."
)


class SessionOps(OrientOps):
    def session_start(
        self,
        *,
        session_id: str | None,
        notebook: str | None = None,
        dir: str | None = None,
        budget: int = DEFAULT_BUDGET,
    ) -> SessionStart:
        """Orient's brief, and the note of where session `session_id` began (None: an agent
        that names no session gets the brief alone)."""
        if session_id is not None:
            session_id = session_key(session_id)
        served = (BRIEF, session_id)
        brief = session_brief(self._orient(notebook, dir, budget, must_exist=False, served=served))
        if session_id is None:
            return brief
        try:
            with self.store.write(self.workspace) as tx:
                now = self._now(tx)
                last = tx.last_event()
                found = tx.get_notebook(brief["notebook"]) if brief["notebook"] else None
                begun = AgentSession(session_id, found.id if found else None,
                                     last.seq if last else 0, now, None)  # fmt: skip
                kept = tx.start_agent_session(begun, prune_before=add_days(now, -KEPT_DAYS))
        except PalimpsestError as error:  # bookkeeping: the brief is what the agent needs
            brief.setdefault("warnings", []).append(
                f"The session's start could not be noted ({error.message}): its end will not "
                "know what it wrote."
            )
            return brief
        brief["session"] = {"id": session_id, "started_at": kept.started_at,
                            "resumed": kept.started_at != now}  # fmt: skip
        return brief

    def session_end(
        self,
        *,
        session_id: str | None,
        notebook: str | None = None,
        dir: str | None = None,
        stop_hook_active: bool = False,
    ) -> SessionEnded:
        """What session `session_id` wrote and what is open, and `ask`: the request to file
        what it learned, made once per session (None once asked, or while `stop_hook_active`
        says the agent is already continuing because of a stop hook). A session with no id
        cannot be asked once, so it is never asked."""
        session_id = session_key(session_id) if session_id is not None else None
        brief = self._orient(notebook, dir, 2_000, must_exist=False)
        with self.store.read(self.workspace) as tx:
            session = tx.agent_session(session_id) if session_id else None
            written = _written(tx, session.started_seq, brief["notebook"]) if session else []
        answer: SessionEnded = {
            "notebook": brief["notebook"],
            "session": {"id": session_id, "started_at": session.started_at if session else None},
            "written": written,
            "open": brief.get("open", [])[:OPEN_SHOWN],
            "disputes": len(brief.get("disputes", [])),
            "possibly_stale": len(brief.get("possibly_stale", [])),
            "ask": None,
        }
        if session_id is not None:  # the review shown: the end of the session's record
            shown = [(line["id"], None, None) for line in [*written, *answer["open"]]]
            self._record_served(REVIEW, {"notebook": brief["notebook"]}, shown,
                                session=session_id)  # fmt: skip
        if session_id is None:
            answer["note"] = "No session id: what was written is unknown, and nothing is asked."
            return answer
        if session is None:
            answer["note"] = (
                "The session-start hook did not run for this session: what it wrote is unknown."
            )
        if stop_hook_active:
            return answer
        try:
            first = self._first_ask(session, session_id)
        except PalimpsestError as error:  # unsure whether it asked before: never risk a loop
            answer["note"] = f"Could not note the ask ({error.message}): nothing is asked."
            return answer
        if not first:
            return answer
        answer["ask"] = ASK.format(notebook=brief["notebook"] or "the project's notebook")
        return answer

    def _first_ask(self, session: AgentSession | None, session_id: str) -> bool:
        """Whether this is the first ask of the session (noting it, atomically, if so)."""
        if session is not None and session.asked_at is not None:
            return False
        with self.store.write(self.workspace) as tx:
            now = self._now(tx)
            if session is None:  # begun without a start hook: noted now, written unknown
                last = tx.last_event()
                begun = AgentSession(session_id, None, last.seq if last else 0, now, None)
                tx.start_agent_session(begun, prune_before=add_days(now, -KEPT_DAYS))
            return tx.mark_session_asked(session_id, now)


def _written(tx: StoreReader, started_seq: int, notebook: str | None) -> list[WrittenLine]:
    """The memories written in `notebook` (None: anywhere) since `started_seq`, each once
    with its last operation; usefulness marks are not writes. Writers are not told apart
    (an agent's session id never reaches the server), so the notebook is what keeps another
    project's agent out of the list."""
    found = tx.get_notebook(notebook) if notebook is not None else None
    if notebook is not None and found is None:
        return []
    latest: dict[str, str] = {}
    for event in tx.memory_events_after(started_seq, found.id if found else None, 500):
        if event.op != FEEDBACK_OP:
            latest[event.target_id] = event.op
    shown: list[WrittenLine] = []
    for memory_id, op in list(latest.items())[-WRITTEN_SHOWN:]:
        memory = tx.get_memory(memory_id)
        if memory is not None:
            text = " ".join(redact(memory.text)[0].split())[:160]
            shown.append({"id": memory_id, "op": op, "kind": memory.kind, "text": text})
    return shown
