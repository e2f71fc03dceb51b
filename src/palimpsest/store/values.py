"""The values the store's protocols speak besides the model's: queries, what a search
found before it is read, and the rows of access, sessions and upkeep."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .terms import query_terms


@dataclass(frozen=True)
class SearchQuery:
    text: str
    limit: int = 10
    notebook_ids: tuple[str, ...] | None = None
    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # a hit must carry every one
    statuses: tuple[str, ...] = ("active",)
    scopes: tuple[str, ...] = ()  # rules' scope: notebook or workspace
    since: str | None = None  # on occurred_at, else recorded_at
    until: str | None = None
    at_seq: int | None = None  # None: the current state
    alive_at: str | None = None  # leave out memories expired at this time
    without: frozenset[str] = frozenset()  # terms full text leaves out (recall's named authors)
    beside: bool = False  # full text lends and draws words of memories filed beside (bm25.py)

    def terms(self) -> list[str]:
        """The full-text terms of `text`, less `without` (all of them if none is left)."""
        terms = query_terms(self.text)
        return [term for term in terms if term not in self.without] or terms


class Found(NamedTuple):
    """A version a search matched, before its row is read: enough to rank it by (recall
    ranks a hundred or more candidates and shows ten; reading each row whole cost more
    than the search)."""

    id: str  # the memory's id
    rowid: int  # its version's row: `versions_of_rows` reads it
    borrowed: bool = False  # found by the words of the memory filed before it alone (bm25.py)


class RowFacts(NamedTuple):
    """Of a version, what recall ranks by besides its words and vector."""

    notebook_id: str
    day: str | None  # occurred_at as YYYY-MM-DD (a UTC day); None when it names none
    author: str


@dataclass(frozen=True)
class EventFilter:
    target_id: str | None = None
    notebook_id: str | None = None  # events of the notebook and of its memories
    actor: str | None = None
    since: str | None = None
    until: str | None = None
    limit: int = 100


class NotebookCounts(NamedTuple):
    """How many memories a notebook holds now: every current one (retired too), the active
    ones, and the active rules and orientations among them."""

    memories: int
    active: int
    rules: int


class DayCount(NamedTuple):
    """How many events of one operation a notebook's log holds on one UTC day."""

    day: str  # YYYY-MM-DD
    op: str
    events: int


@dataclass(frozen=True)
class PendingScrub:
    """A forget whose bytes may still be on disk outside the transaction's reach."""

    target_id: str
    at: str


@dataclass(frozen=True)
class Workspace:
    """A store's workspace: its id, which every row of it carries, and the name users give."""

    id: str
    name: str
    created_at: str


@dataclass(frozen=True)
class User:
    """Someone who may use the workspace, and what they may do (DESIGN section 6)."""

    name: str  # acts as `user:NAME`
    role: str  # viewer, editor or owner
    added_at: str


@dataclass(frozen=True)
class AccessKey:
    """A key for HTTP, without its secret (only a hash of that is kept)."""

    id: str
    holder: str  # `user:NAME` (acts with that user's role) or `agent:NAME`
    note: str | None
    created_at: str
    expires_at: str | None
    revoked_at: str | None


@dataclass(frozen=True)
class AgentSession:
    """Where a coding agent's session began (the hooks' bookkeeping, not memory)."""

    session_id: str
    notebook_id: str | None
    started_seq: int  # the last event when it began: what it wrote comes after
    started_at: str
    asked_at: str | None  # when the session-end hook asked it to file what it learned


@dataclass(frozen=True)
class Served:
    """One serving to a session: what it asked (filters; the query redacted) and what it
    was shown, as (memory id, version, score) lines, never the memories' text."""

    id: str
    session: str
    actor: str
    key_id: str | None  # the HTTP key it came through, if any
    served_at: str
    what: str  # recall, orient, brief or inspect
    request: dict[str, object]
    shown: tuple[tuple[str, int | None, float | None], ...]


@dataclass(frozen=True)
class ServedSession:
    """A session something was served to: who, its first and last serving, how many."""

    session: str
    actor: str
    key_id: str | None
    first_at: str
    last_at: str
    servings: int


@dataclass(frozen=True)
class WebSession:
    """A web page sign-in with a key: named by the sha256 of its cookie (never the cookie),
    its key by id (never the key)."""

    cookie_hash: str
    workspace: str
    key_id: str
    created_at: str
    used_at: str  # refreshed now and then, not at every request


@dataclass(frozen=True)
class Rewrite:
    """What a physical rewrite did: seconds each table was locked, and what still waits."""

    locked_seconds: dict[str, float]
    pending: int
    warning: str | None = None  # why what waits could not be finished by this run


@dataclass(frozen=True)
class StoredResponse:
    request_hash: str
    response: str  # JSON


@dataclass
class Changes:
    """What a server's events after a position made, as plain rows (server sequence
    numbers in every span); `closed` and `disputes_closed` are (id, version, to_seq)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    versions: list[dict[str, Any]] = field(default_factory=list)
    closed: list[tuple[str, int, int]] = field(default_factory=list)
    disputes: list[dict[str, Any]] = field(default_factory=list)
    disputes_closed: list[tuple[str, int, int]] = field(default_factory=list)
    vectors: list[dict[str, Any]] = field(default_factory=list)  # memory_id, version, model, vector
    memories: list[dict[str, Any]] = field(default_factory=list)
    notebooks: list[dict[str, Any]] = field(default_factory=list)
    notebook_tombstones: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    link_ends: list[str] = field(default_factory=list)  # ids whose links `links` gives whole
    settings: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ReplicaState:
    """What a replica knows of the server it follows."""

    server: str
    server_workspace: str
    position_seq: int
    position_op_id: str | None
    role: str
    synced_at: str | None = None
    refused: str | None = None
    actor: str | None = None  # who the key acts as there


@dataclass(frozen=True)
class QueuedWrite:
    """A write made on a replica, queued as a request for its server (docs/sync.md)."""

    id: str  # q_..., also the idempotency key it is sent with
    op: str  # the API operation, as `POST /api/v1/<op>`
    arguments: dict[str, Any]
    target_id: str | None  # the memory it changes, if one
    actor: str  # who wrote it here
    queued_at: str
    state: str  # pending, accepted, refused, conflict, dropped
    answer: dict[str, Any] | None = None  # the server's answer, refusal, or why dropped
    done_at: str | None = None
