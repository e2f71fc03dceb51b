"""The shapes of `served`'s answers (service/served.py): what a session was shown and what
it wrote, in order. TypedDicts mypy checks where the service builds them, as the other
answer modules'; `Required` keys are in every answer."""

from __future__ import annotations

from typing import Any, Required

from typing_extensions import TypedDict

from .answers import EventShown, Written


class ShownLine(TypedDict):
    """One memory a serving showed: its id, the version shown, its score (None: a list,
    not a ranking, as the brief's). Never its text."""

    id: str
    version: int | None
    score: float | None


class ServedEntry(TypedDict, total=False):
    """One step of a session, in order: a serving (`what`: recall, orient, brief, review,
    inspect), a write made through the session (`what`: wrote, `op` and the memories'
    new versions in `shown`), or an event of its actor in its span (`event`)."""

    at: Required[str]
    what: Required[str]
    # Whose serving or write it was: a session's id is its agent's to choose, and another
    # actor's agent may send the same one (the session's `actor` is its first step's).
    actor: str
    request: dict[str, Any]  # the filters; the query redacted, or only its hash
    shown: list[ShownLine]
    event: EventShown  # a write of the session's actor between its start and its end


class ServedSessionShown(TypedDict):
    session: str
    actor: str
    key_id: str | None
    first_at: str
    last_at: str
    servings: int


class ServedAnswer(TypedDict, total=False):
    """`served` with a session: its steps in order; without one: the sessions recorded,
    the most recently served first."""

    session: str
    actor: str | None
    entries: list[ServedEntry]
    sessions: list[ServedSessionShown]
    keep_days: Required[int]  # how long the record is kept (`served.keep_days`)
    note: str


class ServedForgotten(Written, total=False):
    """A session's record forgotten: how many servings went (an event says so, and why)."""

    session: Required[str]
    forgotten: Required[bool]
    servings: Required[int]
    scrub_pending: bool  # bytes wait for a scrub (PostgreSQL: `palimpsest scrub`)
