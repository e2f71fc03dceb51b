"""The store interface: what the service needs from a database, in model types only.

A session is bound to one workspace; nothing it returns crosses that boundary. `read()`
gives a consistent snapshot; `write()` gives one transaction in which every state change
and its event land together or not at all. Implementations: `sqlite` (the embedded
default) and, later, PostgreSQL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..domain.errors import ValidationError
from ..domain.model import (
    Dispute,
    Event,
    Link,
    Memory,
    MemoryVersion,
    Notebook,
    SeenCommand,
    Tombstone,
)
from .terms import query_terms

if TYPE_CHECKING:  # numpy is imported by the stores that search vectors, when they do
    from .vector_search import Vectors


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
class Rewrite:
    """What a physical rewrite did: seconds each table was locked, and what still waits."""

    locked_seconds: dict[str, float]
    pending: int
    warning: str | None = None  # why what waits could not be finished by this run


@dataclass(frozen=True)
class StoredResponse:
    request_hash: str
    response: str  # JSON


class StoreReader(Protocol):
    workspace: str

    def get_memory(self, memory_id: str) -> Memory | None: ...
    def get_tombstone(self, memory_id: str) -> Tombstone | None: ...
    def memory_versions(self, memory_id: str) -> list[MemoryVersion]: ...
    def memory_at(self, memory_id: str, seq: int) -> Memory | None: ...
    def memories_at(self, seq: int | None, notebook_id: str | None = None) -> list[Memory]: ...
    def all_versions(self) -> Iterator[Memory]:
        """Every version of every memory still on disk (not scrubbed), oldest first."""
        ...

    def find_by_text(self, notebook_id: str, norm_text: str) -> list[Memory]: ...
    def key_holder(self, notebook_id: str, key: str) -> Memory | None: ...
    def memories_with_key(self, key: str, at_seq: int | None) -> list[Memory]: ...
    def get_notebook(self, ref: str) -> Notebook | None: ...
    def list_notebooks(self) -> list[Notebook]: ...
    def search(self, query: SearchQuery) -> list[tuple[Memory, float]]: ...
    def search_found(self, query: SearchQuery) -> list[tuple[Found, float]]:
        """`search`, the versions not read yet."""
        ...

    def nearest_found(
        self, vector: Vectors, query: SearchQuery, model: str
    ) -> list[tuple[Found, float]]:
        """`nearest`, the versions not read yet."""
        ...

    def versions_of_rows(self, rowids: Sequence[int]) -> dict[int, Memory]:
        """The versions a `Found` names, by row (in this transaction: each is there)."""
        ...

    def facts_of_rows(self, rowids: Sequence[int]) -> dict[int, RowFacts]:
        """What recall's episodes and named people read of the versions `Found`s name,
        by row, in one statement."""
        ...

    def nearest(
        self, vector: Vectors, query: SearchQuery, model: str
    ) -> list[tuple[Memory, float]]:
        """The memories passing every filter of `query` (as `search`; its text is ignored)
        whose vector tagged `model` is nearest `vector`: best cosine similarity first, at
        most `query.limit`. Exact, whatever the store's indexes."""
        ...

    def vector_of(self, memory_id: str, version: int, model: str) -> Vectors | None:
        """The stored vector of that version, if it has one tagged `model`."""
        ...

    def stale_vector_count(self, model: str) -> int: ...
    def stale_vectors(self, model: str, limit: int) -> list[Memory]:
        """Versions with content whose vector is missing or not tagged `model`, oldest
        first, at most `limit` (what `reindex` makes anew)."""
        ...

    def filed_beside(
        self, memory_ids: Sequence[str], span: int, at_seq: int | None
    ) -> dict[str, list[tuple[str, int]]]:
        """For each of `memory_ids`, the memories filed just before and after it in the
        notebook it was filed in, up to `span` each side (as of event `at_seq`, None:
        now), each with its distance: -1 the one filed just before, 1 just after."""
        ...

    def events(self, query: EventFilter) -> list[Event]: ...
    def links(self, object_id: str) -> list[Link]: ...
    def seq_at(self, time: str) -> int: ...
    def last_event(self) -> Event | None: ...
    def stored_response(self, actor: str, op: str, key: str) -> StoredResponse | None: ...
    def pending_scrubs(self) -> list[PendingScrub]: ...
    def get_notebook_tombstone(self, notebook_id: str) -> Tombstone | None: ...
    def is_empty(self) -> bool: ...
    def settings(self) -> dict[str, Any]:
        """The workspace settings a person chose (name -> value); the rest keep defaults."""
        ...

    def dump(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every row of the workspace, table by table, for a lossless copy."""
        ...

    def table_rows(self, table: str) -> Iterator[Mapping[str, Any]]:
        """The workspace's rows of one table, in copy order, streamed (an export's)."""
        ...

    def ids_held(self, table: str, column: str, ids: Sequence[str]) -> dict[str, str]:
        """Which of `ids` the store holds in `column` of `table`, each with its workspace."""
        ...

    # Disputes (DESIGN section 2): each as it stood at event `at_seq` (None: now).
    def get_dispute(self, dispute_id: str) -> Dispute | None: ...
    def disputes(
        self, memory_id: str | None = None, statuses: tuple[str, ...] = (),
        at_seq: int | None = None,
    ) -> list[Dispute]: ...  # fmt: skip
    def disputed_with(
        self, memory_ids: Iterable[str], at_seq: int | None = None
    ) -> dict[str, list[str]]:
        """For each memory named in an open dispute, the other memories of its disputes."""
        ...

    # Orient, usefulness and the session hooks (store/orient_rows.py).
    def feedback_counts(self, memory_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        """(helped, noise) marks of each of `memory_ids` that has any."""
        ...

    def all_feedback_counts(self) -> dict[str, tuple[int, int]]: ...
    def unverified_since(
        self, notebook_ids: tuple[str, ...] | None, cutoffs: dict[str, str], limit: int
    ) -> list[Memory]:
        """Current active memories of each kind in `cutoffs` last verified (else recorded)
        before that kind's cutoff time: the oldest first, at most `limit`."""
        ...

    def with_evidence(self, notebook_ids: tuple[str, ...] | None, limit: int) -> list[Memory]:
        """Current active memories with anchors, or a check that is evidence (not a rule's),
        the least recently verified first, at most `limit`."""
        ...

    def memory_events_after(
        self, seq: int, notebook_id: str | None, limit: int
    ) -> list[Event]: ...  # fmt: skip
    def agent_session(self, session_id: str) -> AgentSession | None: ...
    def users(self) -> list[User]: ...
    def access_keys(self) -> list[AccessKey]: ...
    def access_key(self, key_id: str) -> tuple[AccessKey, str] | None:
        """The key of that id in this workspace, and the sha256 of its secret."""
        ...

    def has_access_keys(self) -> bool:
        """Whether the store holds any key, in any workspace (HTTP then asks for one)."""
        ...

    def key_workspace(self, key_id: str) -> str | None:
        """The workspace the key of that id belongs to, whichever this session's is."""
        ...

    def owned_by(self, actor: str) -> list[Memory]:
        """The current version of every memory `actor` owns, in this workspace."""
        ...

    # The store's workspaces, whichever this session's is (store/access_rows.py).
    def workspaces(self) -> list[Workspace]: ...
    def failed_auth_since(self, hour: str, workspaces: tuple[str, ...]) -> tuple[int, str | None]:
        """Failed authentications counted in `workspaces` from `hour` on, and the last one."""
        ...

    # The guard (store/guard_rows.py): the active rules and orientations holding a
    # forbidden check, and the commands it has seen since a time (oldest first).
    def forbidding_rules(self) -> list[Memory]: ...
    def seen_commands(self, since: str) -> list[SeenCommand]: ...
    def get_seen_command(self, seen_id: str) -> SeenCommand | None: ...


class StoreWriter(StoreReader, Protocol):
    key_id: str | None  # the HTTP key this session's writes came through, recorded on each event

    def append_event(self, event: Event) -> int:
        """Store the event (its `seq` is ignored) and return the sequence number it got."""
        ...

    def put_memory(self, memory: Memory, seq: int) -> None:
        """Make `memory` the current state, as the version written by event `seq`."""
        ...

    def put_vector(self, memory_id: str, seq: int, vector: Vectors, model: str) -> None:
        """Store the vector of the version of `memory_id` that event `seq` wrote (replacing
        any it had), tagged with the `model` that made it."""
        ...

    def reindexed_vectors(self, vectors: list[tuple[Memory, Vectors]], model: str) -> None:
        """Replace the vectors of these versions (derived data: no event is written)."""
        ...

    def put_notebook(self, notebook: Notebook) -> None: ...
    def add_link(self, link: Link) -> None: ...
    def remove_link(self, link_id: str) -> None: ...
    def forget_memory(self, tombstone: Tombstone, seq: int) -> None: ...
    def forget_version(self, memory_id: str, version: int) -> None: ...
    def forget_notebook_field(self, notebook_id: str, field: str, seq: int) -> None: ...
    def forget_notebook(self, tombstone: Tombstone, seq: int) -> None: ...
    def store_response(self, actor: str, op: str, key: str, stored: StoredResponse) -> None: ...
    def put_setting(self, name: str, value: Any) -> None: ...
    def put_dispute(self, dispute: Dispute, seq: int) -> None:
        """Make `dispute` the current state, as the version written by event `seq`."""
        ...

    def add_seen_command(self, seen: SeenCommand, *, keep: int, before: str) -> None:
        """Keep `seen`; drop the seen commands older than `before` or past the newest `keep`."""
        ...

    def forget_seen_command(self, seen_id: str) -> None: ...

    def drop_setting(self, name: str) -> None:
        """The setting goes back to its default."""
        ...

    def put_user(self, user: User) -> None: ...
    def put_access_key(self, key: AccessKey, secret_hash: str) -> None: ...
    def revoke_access_key(self, key_id: str, at: str) -> None: ...
    def drop_user(self, name: str) -> None: ...
    def add_failed_auth(self, workspace: str, hour: str, failures: int, at: str) -> None: ...
    def name_workspace(self, name: str) -> None:
        """Give this session's workspace `name` (the row is made on the first write)."""
        ...

    def start_agent_session(self, session: AgentSession, prune_before: str) -> AgentSession:
        """Note where a session began, unless it was noted already (a resumed session keeps
        its start); sessions begun before `prune_before` go. Returns the session as kept."""
        ...

    def mark_session_asked(self, session_id: str, at: str) -> bool:
        """Note that the session was asked to file what it learned; False if it was already."""
        ...

    def load(self, records: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        """Write `dump` records into this empty workspace; returns rows per table."""
        ...

    def discard(self) -> None:
        """Roll the whole transaction back when it ends (a dry run)."""
        ...


class Store(Protocol):
    url: str

    def read(self, workspace: str) -> AbstractContextManager[StoreReader]: ...
    def write(self, workspace: str) -> AbstractContextManager[StoreWriter]: ...

    def schema_version(self) -> int: ...

    # Whether `scrub` erases forgotten bytes by itself (SQLite: a checkpoint), or only a
    # deliberate `rewrite` can (PostgreSQL: it locks tables, so a server never runs it).
    scrubs_in_place: bool

    def scrub(self, workspace: str | None = None) -> bool:
        """Finish what the store can finish now; False while a forget of `workspace` (any
        workspace if None) still waits."""
        ...

    def rewrite(self) -> Rewrite:
        """Physically rewrite what held forgotten content, briefly locking one table at a time."""
        ...

    def close(self) -> None: ...


# A password in any form a store's name may take: `user:secret@` in a URL (of any scheme,
# one slash or two), and `password=`, `sslpassword=` or `passfile=` in a query or a libpq
# key=value string.
_SECRET_PARTS = (
    (re.compile(r"(/[^\s:/@]*):(\S*)@"), r"\1:***@"),  # to the last @: a password may hold @
    (re.compile(r"(?i)\b((?:ssl)?password|passfile)(\s*=\s*)('[^']*'|[^&\s;]*)"), r"\1\2***"),
)


def shown(url: str) -> str:
    """A store's name safe to print: a password never shows, whatever form it was given in,
    and a name that cannot be parsed is masked the same way, never refused here."""
    for pattern, replacement in _SECRET_PARTS:
        url = pattern.sub(replacement, url)
    return url


def default_db_path(home: Path) -> Path:
    return home / "palimpsest.db"


_LIBPQ_KEYWORDS = re.compile(r"(?i)(^|\s)(host|hostaddr|dbname|user|password|port|sslmode)\s*=")


def sqlite_path(url: str) -> Path | None:
    """The SQLite file a `--db` value names; None for a PostgreSQL URL."""
    if url.startswith(("postgresql://", "postgres://")):
        return None
    if _LIBPQ_KEYWORDS.search(url):
        raise ValidationError(  # not repeated: it may hold a password
            "The store named is a key=value connection string; write it as a URL instead, "
            "as in postgresql://user@host:5432/db."
        )
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]+:", url):  # a mistyped URL (a drive letter is 1 char)
        raise ValidationError(  # not repeated: a URL may hold a password
            "The store named is neither a SQLite file path nor a postgresql:// URL; check the "
            "URL's scheme, as in postgresql://user@host/db."
        )
    return Path(url).expanduser()


def open_store(url: str) -> Store:
    """Open the store a `--db` value names: a `postgresql://` URL or a SQLite file path."""
    path = sqlite_path(url)
    if path is None:
        from .postgres import PostgresStore

        return PostgresStore(url)
    from .sqlite import SqliteStore

    return SqliteStore(path)
