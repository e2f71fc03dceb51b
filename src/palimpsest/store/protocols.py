"""The store's seam, cut by concept: what the service needs from a database, in model types.

Each concept is a reader protocol (what a `read()` snapshot answers) and a writer protocol
(what a `write()` transaction adds). `StoreReader` and `StoreWriter` are their sums. Each
protocol's docstring says what a store must keep true; tests/store/contract/ holds one
suite per concept that checks it on SQLite and PostgreSQL alike.

What every concept keeps: a session is bound to one workspace, and nothing it returns or
changes crosses that boundary. States are versions over a span of events: the version
written by event `seq` is current from `seq` until the event that replaces it, so "as of
event N" is exact. A forget takes the content out of every version and event for good.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

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
from .values import (
    AccessKey,
    AgentSession,
    Changes,
    DayCount,
    EventFilter,
    Found,
    NotebookCounts,
    PendingScrub,
    QueuedWrite,
    ReplicaState,
    Rewrite,
    RowFacts,
    SearchQuery,
    Served,
    ServedSession,
    StoredResponse,
    User,
    WebSession,
    Workspace,
)

if TYPE_CHECKING:  # numpy is imported by the stores that search vectors, when they do
    from .vector_search import Vectors


class MemoryReader(Protocol):
    """Memories and their versions.

    - `get_memory` gives the current version; `memory_at(id, seq)` the version current at
      event `seq` (written at or before it, not yet replaced), None before the first.
    - `memory_versions` lists every version in order, with the event that wrote it; a
      forgotten version is listed with `memory` None (its event's facts stay).
    - A forgotten memory has a tombstone, no current version, no version at any time, and
      is absent from `all_versions` and every lookup; `pending_scrubs` names it until the
      store's `scrub` has finished it.
    - `key_holder` and `find_by_text` read current versions only; `key_holder` active ones.
    """

    def get_memory(self, memory_id: str) -> Memory | None: ...
    def get_tombstone(self, memory_id: str) -> Tombstone | None: ...
    def memory_versions(self, memory_id: str) -> list[MemoryVersion]: ...
    def memory_at(self, memory_id: str, seq: int) -> Memory | None: ...
    def memories_at(self, seq: int | None, notebook_id: str | None = None) -> list[Memory]:
        """Every memory as of event `seq` (None: now), of one notebook if named, by id."""
        ...

    def all_versions(self) -> Iterator[Memory]:
        """Every version of every memory still on disk (not scrubbed), oldest first."""
        ...

    def find_by_text(self, notebook_id: str, norm_text: str) -> list[Memory]: ...
    def key_holder(self, notebook_id: str, key: str) -> Memory | None: ...
    def memories_with_key(self, key: str, at_seq: int | None) -> list[Memory]: ...
    def pending_scrubs(self) -> list[PendingScrub]:
        """Forgets of this workspace whose bytes may still be on disk, oldest first."""
        ...


class MemoryWriter(MemoryReader, Protocol):
    """Writing memories: a new version ends the current one at its event.

    - `put_memory(m, seq)` makes `m` current from event `seq`; the version it replaces
      stays readable as of any event before `seq`.
    - Two current active memories of a notebook never share a key: the write that would
      make them raises `Conflict` (when the transaction ends, at the latest).
    - `forget_memory` scrubs every version and the content of its events, drops stored
      answers naming it and the text of disputes naming it, and leaves a tombstone.
    - `forget_version` scrubs one version only; the others stay as they were.
    """

    def put_memory(self, memory: Memory, seq: int) -> None:
        """Make `memory` the current state, as the version written by event `seq`."""
        ...

    def forget_memory(self, tombstone: Tombstone, seq: int) -> None: ...
    def forget_version(self, memory_id: str, version: int) -> None: ...


class ReviewReader(Protocol):
    """What doctor lists, read in the store rather than over every memory.

    - `possibly_stale`, `expired_memories`, `ownerless_memories` and `active_of_kinds` read
      current active memories (by id): `possibly_stale` those of each kind in `stale_before`
      last verified (else filed) before that kind's time; `expired_memories` those whose
      `expires_at` is at or before `at`.
    - `unscreened_versions(screen)` gives every version on disk, oldest first, that the
      detector `screen` has not marked (`mark_screened`) as holding no secret.
    """

    def possibly_stale(self, stale_before: Mapping[str, str]) -> list[Memory]: ...
    def expired_memories(self, at: str) -> list[Memory]: ...
    def ownerless_memories(self) -> list[Memory]: ...
    def active_of_kinds(self, kinds: Collection[str]) -> list[Memory]: ...
    def unscreened_versions(self, screen: str) -> list[Memory]: ...


class ReviewWriter(ReviewReader, Protocol):
    def mark_screened(self, versions: Sequence[tuple[str, int]], screen: str) -> None:
        """Mark these (memory id, version) as read by the detector `screen` and found to hold
        no secret (derived data: no event is written)."""
        ...


class EventReader(Protocol):
    """The log: every change of a workspace is an event, numbered by one store-wide sequence.

    - `events` answers the newest `limit` events passing the filter, oldest first;
      `notebook_id` matches the notebook's own events and those of its memories.
    - `seq_at(time)` is the last event at or before `time` (0 before any);
      `last_event` the newest.
    - `event_days(notebook_id, since)` counts the events `notebook_id` matches (as in
      `events`) at or after `since`, by UTC day and operation, oldest day first.
    """

    def events(self, query: EventFilter) -> list[Event]: ...
    def seq_at(self, time: str) -> int: ...
    def last_event(self) -> Event | None: ...
    def event_days(self, notebook_id: str, since: str) -> list[DayCount]: ...


class EventWriter(EventReader, Protocol):
    """Appending to the log.

    - `append_event` ignores the event's `seq` and returns a new one, greater than every
      event's before it in the store (whatever the workspace).
    - An event keeps the key it came through: its own `key_id`, else the session's.
    """

    key_id: str | None  # the HTTP key this session's writes came through

    def append_event(self, event: Event) -> int:
        """Store the event (its `seq` is ignored) and return the sequence number it got."""
        ...


class NotebookReader(Protocol):
    """Notebooks, and the links between notebooks and memories.

    - `get_notebook(ref)` finds by id or by name, the id first; `list_notebooks` by name.
    - `notebook_counts` counts each notebook's current memories (a forgotten one is none),
      by notebook id; a notebook holding none is absent.
    - `links(id)` lists the links from or to `id`, oldest first.
    - A forgotten notebook has a tombstone and no row, name or link left.
    """

    def get_notebook(self, ref: str) -> Notebook | None: ...
    def list_notebooks(self) -> list[Notebook]: ...
    def notebook_counts(self) -> dict[str, NotebookCounts]: ...
    def get_notebook_tombstone(self, notebook_id: str) -> Tombstone | None: ...
    def links(self, object_id: str) -> list[Link]: ...


class NotebookWriter(NotebookReader, Protocol):
    """Writing notebooks and links.

    - `put_notebook` makes or replaces the notebook of that id (its creation time stays).
    - `forget_notebook_field` erases every value a field had from the notebook's earlier
      events; `forget_notebook` removes the (empty) notebook and its links for good.
      Both leave the forget pending until the store's scrub.
    """

    def put_notebook(self, notebook: Notebook) -> None: ...
    def add_link(self, link: Link) -> None: ...
    def remove_link(self, link_id: str) -> None: ...
    def forget_notebook_field(self, notebook_id: str, field: str, seq: int) -> None: ...
    def forget_notebook(self, tombstone: Tombstone, seq: int) -> None: ...


class DisputeReader(Protocol):
    """Disputes between two memories (DESIGN section 2), versioned over events as memories
    are: each read gives the disputes as they stood at event `at_seq` (None: now).

    - `disputed_with` names, for each memory in an open dispute, the other memories of its
      open disputes; a dispute naming a forgotten memory is left out at every time.
    """

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


class DisputeWriter(DisputeReader, Protocol):
    """`put_dispute(d, seq)` makes `d` current from event `seq`, the version it replaces
    kept for reads as of earlier events."""

    def put_dispute(self, dispute: Dispute, seq: int) -> None:
        """Make `dispute` the current state, as the version written by event `seq`."""
        ...


class AccessReader(Protocol):
    """Who may use a workspace (DESIGN section 6): users, HTTP keys, the store's workspaces.

    - Keys keep only a hash of their secret. `has_access_keys`, `key_workspace` and
      `workspaces` see the whole store (HTTP picks the workspace by the key); the rest
      this workspace only.
    """

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

    def workspaces(self) -> list[Workspace]: ...
    def failed_auth_since(self, hour: str, workspaces: tuple[str, ...]) -> tuple[int, str | None]:
        """Failed authentications counted in `workspaces` from `hour` on, and the last one."""
        ...


class AccessWriter(AccessReader, Protocol):
    """Changing access. A workspace's row is made by its first write; two workspaces never
    share a name (`name_workspace` raises `Conflict`)."""

    def put_user(self, user: User) -> None: ...
    def drop_user(self, name: str) -> None: ...
    def put_access_key(self, key: AccessKey, secret_hash: str) -> None: ...
    def revoke_access_key(self, key_id: str, at: str) -> None: ...
    def add_failed_auth(self, workspace: str, hour: str, failures: int, at: str) -> None: ...
    def name_workspace(self, name: str) -> None:
        """Give this session's workspace `name` (the row is made on the first write)."""
        ...


class SettingReader(Protocol):
    """Workspace settings a person chose; a setting with no value keeps its default."""

    def settings(self) -> dict[str, Any]:
        """The workspace settings a person chose (name -> value); the rest keep defaults."""
        ...


class SettingWriter(SettingReader, Protocol):
    """`put_setting` replaces the value (any JSON value); `drop_setting` forgets it."""

    def put_setting(self, name: str, value: Any) -> None: ...
    def drop_setting(self, name: str) -> None:
        """The setting goes back to its default."""
        ...


class AnswerReader(Protocol):
    """Stored answers of requests made with an idempotency key, by (actor, op, key)."""

    def stored_response(self, actor: str, op: str, key: str) -> StoredResponse | None: ...


class AnswerWriter(AnswerReader, Protocol):
    """An answer is kept by (actor, op, key), in its workspace; one naming a memory or
    notebook that is then forgotten goes with it (its request may hold the forgotten text)."""

    def store_response(self, actor: str, op: str, key: str, stored: StoredResponse) -> None: ...


class OrientReader(Protocol):
    """What orient, usefulness and the session hooks read (store/orient_rows.py).

    - Usefulness marks are `feedback` events: counted per memory as (helped, noise).
    - `unverified_since` and `with_evidence` read current active memories only, the least
      recently verified first.
    - `memory_events_after(seq)` gives the memory events after `seq`, oldest first.
    """

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


class OrientWriter(OrientReader, Protocol):
    """The hooks' bookkeeping: a session's start is noted once, and asked once."""

    def start_agent_session(self, session: AgentSession, prune_before: str) -> AgentSession:
        """Note where a session began, unless it was noted already (a resumed session keeps
        its start); sessions begun before `prune_before` go. Returns the session as kept."""
        ...

    def mark_session_asked(self, session_id: str, at: str) -> bool:
        """Note that the session was asked to file what it learned; False if it was already."""
        ...


class GuardReader(Protocol):
    """The guard (store/guard_rows.py): the current active rules and orientations holding a
    `forbidden` check, and the commands it has seen since a time (oldest first)."""

    def forbidding_rules(self) -> list[Memory]: ...
    def seen_commands(self, since: str) -> list[SeenCommand]: ...
    def get_seen_command(self, seen_id: str) -> SeenCommand | None: ...


class GuardWriter(GuardReader, Protocol):
    """Seen commands are kept a while and a number: the oldest go first."""

    def add_seen_command(self, seen: SeenCommand, *, keep: int, before: str) -> None:
        """Keep `seen`; drop the seen commands older than `before` or past the newest `keep`."""
        ...

    def forget_seen_command(self, seen_id: str) -> None: ...


class ServedReader(Protocol):
    """What each session was shown (store/served_rows.py): ids, versions and scores, never
    a memory's text.

    - `served` gives a session's servings from `since` on, oldest first, at most `limit`;
      `actor` (when given) keeps only that actor's.
    - `served_sessions` lists the sessions with servings, the most recently served first,
      at most `limit`; `actor` as above.
    """

    def served(
        self, session: str, since: str | None, limit: int, actor: str | None = None
    ) -> list[Served]: ...
    def served_sessions(self, limit: int, actor: str | None = None) -> list[ServedSession]: ...


class ServedWriter(ServedReader, Protocol):
    """The record is appended to, kept a while, and forgotten by session."""

    def add_served(self, served: Sequence[Served], *, before: str) -> None:
        """Keep `served`; drop the servings older than `before`."""
        ...

    def forget_served(self, session: str) -> int:
        """Delete every serving of `session` (its bytes go at the next scrub, as a forgotten
        memory's do); how many there were."""
        ...


class WebSessionReader(Protocol):
    """Who is signed in to the web page with a key (store/web_session_rows.py), seen by
    every process serving the store. `web_session` finds a session by its cookie's hash
    whatever this session's workspace (a request names no workspace before it is found);
    `web_sessions` lists this workspace's of one key, the most recently used first."""

    def web_session(self, cookie_hash: str) -> WebSession | None: ...
    def web_sessions(self, key_id: str) -> list[WebSession]: ...


class WebSessionWriter(WebSessionReader, Protocol):
    """A key holds at most `keep` sessions: opening one past that ends its least recently
    used. Writes serialise per workspace, so the bound holds across processes."""

    def open_web_session(self, session: WebSession, *, keep: int, idle_before: str) -> None:
        """Keep `session` (in this workspace); end its key's least recently used past
        `keep`, and every session of this workspace last used before `idle_before` or whose
        key is revoked or expired by then."""
        ...

    def touch_web_session(self, cookie_hash: str, at: str) -> None:
        """Note that the session was used at `at`."""
        ...

    def end_web_session(self, cookie_hash: str) -> bool:
        """End the session of this workspace named so; False if there was none."""
        ...

    def end_key_web_sessions(self, key_id: str) -> int:
        """End every session of a key of this workspace (its revocation); how many."""
        ...


class SearchReader(Protocol):
    """Full text over every version (so the past is searched too), ranked by BM25.

    - Only versions passing every filter of the query are found, as of `at_seq`; never a
      forgotten one, never another workspace's. Best first, at most `query.limit`.
    - Text with no terms answers the newest versions passing the filters.
    - Both stores index the same terms (store/terms.py) and rank alike (store/bm25.py).
    Writing indexes: `put_memory` indexes the version it writes, a forget unindexes.
    """

    def search(self, query: SearchQuery) -> list[tuple[Memory, float]]: ...
    def search_found(self, query: SearchQuery) -> list[tuple[Found, float]]:
        """`search`, the versions not read yet."""
        ...

    def versions_of_rows(self, rowids: Sequence[int]) -> dict[int, Memory]:
        """The versions a `Found` names, by row (in this transaction: each is there)."""
        ...

    def facts_of_rows(self, rowids: Sequence[int]) -> dict[int, RowFacts]:
        """What recall's episodes and named people read of the versions `Found`s name,
        by row, in one statement."""
        ...

    def filed_beside(
        self, memory_ids: Sequence[str], span: int, at_seq: int | None
    ) -> dict[str, list[tuple[str, int]]]:
        """For each of `memory_ids`, the memories filed just before and after it in the
        notebook it was filed in, up to `span` each side (as of event `at_seq`, None:
        now), each with its distance: -1 the one filed just before, 1 just after. Only
        memories filed on the same day (occurred_at) count as beside."""
        ...


class VectorReader(Protocol):
    """Vectors for recall by meaning: at most one per version, tagged with its model.

    - `nearest` filters as `search` does and ranks by cosine similarity, exactly, best
      first; only vectors tagged `model` count.
    - A version is stale for a model when it has content and no vector of that model.
    """

    def nearest(
        self, vector: Vectors, query: SearchQuery, model: str
    ) -> list[tuple[Memory, float]]:
        """The memories passing every filter of `query` (as `search`; its text is ignored)
        whose vector tagged `model` is nearest `vector`: best cosine similarity first, at
        most `query.limit`. Exact, whatever the store's indexes."""
        ...

    def nearest_found(
        self, vector: Vectors, query: SearchQuery, model: str
    ) -> list[tuple[Found, float]]:
        """`nearest`, the versions not read yet."""
        ...

    def vector_of(self, memory_id: str, version: int, model: str) -> Vectors | None:
        """The stored vector of that version, if it has one tagged `model`."""
        ...

    def current_vectors(self, model: str, notebook_id: str | None = None) -> dict[str, Vectors]:
        """By memory id, the vector tagged `model` of the current version of every active
        memory (of one notebook if named) that has one; expired ones included."""
        ...

    def stale_vector_count(self, model: str) -> int: ...
    def stale_vectors(self, model: str, limit: int) -> list[Memory]:
        """Versions with content whose vector is missing or not tagged `model`, oldest
        first, at most `limit` (what `reindex` makes anew)."""
        ...


class VectorWriter(VectorReader, Protocol):
    """A vector belongs to one version; a forget of the version takes its vector."""

    def put_vector(self, memory_id: str, seq: int, vector: Vectors, model: str) -> None:
        """Store the vector of the version of `memory_id` that event `seq` wrote (replacing
        any it had), tagged with the `model` that made it."""
        ...

    def reindexed_vectors(self, vectors: list[tuple[Memory, Vectors]], model: str) -> None:
        """Replace the vectors of these versions (derived data: no event is written)."""
        ...


class CopyReader(Protocol):
    """A whole workspace as rows, for a lossless copy to another store."""

    def is_empty(self) -> bool: ...
    def dump(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every row of the workspace, table by table, for a lossless copy."""
        ...

    def table_rows(self, table: str) -> Iterator[Mapping[str, Any]]:
        """The workspace's rows of one table, in copy order, streamed (an export's)."""
        ...

    def ids_held(self, table: str, column: str, ids: Sequence[str]) -> dict[str, str]:
        """Which of `ids` the store holds in `column` of `table`, each with its workspace."""
        ...


class CopyWriter(CopyReader, Protocol):
    """`load(dump())` into an empty workspace gives the same memories, versions, events and
    vectors; sequence numbers are handed out anew, in the same order."""

    def load(self, records: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        """Write `dump` records into this empty workspace; returns rows per table."""
        ...


class SyncReader(Protocol):
    """A server's side of sync, and what a replica knows of its server (docs/sync.md).

    - `changes_after(seq, limit)` gives the rows the workspace's first `limit` events after
      `seq` made, in sequence order; spans closed after the last of them are given open.
    - `event_op_id` names the operation of event `seq` of this workspace (None if none):
      how a replica's position is checked against the server's history.
    """

    def event_op_id(self, seq: int) -> str | None: ...
    def changes_after(self, seq: int, limit: int) -> Changes: ...
    def replica_state(self) -> ReplicaState | None: ...


class SyncWriter(SyncReader, Protocol):
    """A replica writing a server's changes: `apply_changes` writes them under sequence
    numbers of its own, once (an event held already is skipped with what it made); a
    forget among them scrubs here as the forget does. The state and the rows land in the
    caller's one transaction."""

    def apply_changes(self, changes: Changes, vector_model: str | None) -> dict[str, int]: ...
    def put_replica_state(self, state: ReplicaState) -> None: ...


class QueueReader(Protocol):
    """A replica's writes queued for its server: `queued_writes` lists those in the states
    asked, the oldest first; an item keeps its id, op and arguments as queued."""

    def queued_writes(self, states: Collection[str], limit: int = 1000) -> list[QueuedWrite]: ...
    def queued_write(self, item_id: str) -> QueuedWrite | None: ...


class QueueWriter(QueueReader, Protocol):
    """`settle_queued` changes an item's state and answer; an accepted item's arguments
    are emptied (the server holds the write; a forget there must leave no text here), as
    are, by `empty_queued`, those of a write on a memory forgotten there. Nothing is
    deleted."""

    def queue_write(self, item: QueuedWrite) -> None: ...
    def settle_queued(
        self, item_id: str, state: str, answer: dict[str, object] | None, at: str
    ) -> None: ...
    def empty_queued(self, item_id: str) -> None: ...


class StoreReader(
    MemoryReader, ReviewReader, EventReader, NotebookReader, DisputeReader, AccessReader,
    SettingReader, AnswerReader, OrientReader, GuardReader, ServedReader, WebSessionReader,
    SearchReader, VectorReader, CopyReader, SyncReader, QueueReader, Protocol,
):  # fmt: skip
    """A consistent snapshot of one workspace: every concept's reads."""

    workspace: str


class StoreWriter(
    StoreReader, MemoryWriter, ReviewWriter, EventWriter, NotebookWriter, DisputeWriter,
    AccessWriter, SettingWriter, AnswerWriter, OrientWriter, GuardWriter, ServedWriter,
    WebSessionWriter, VectorWriter, CopyWriter, SyncWriter, QueueWriter, Protocol,
):  # fmt: skip
    """One transaction of one workspace: every state change and its event land together or
    not at all."""

    def discard(self) -> None:
        """Roll the whole transaction back when it ends (a dry run)."""
        ...


class Store(Protocol):
    """A database: sessions over it, its schema, and the upkeep of forgets.

    - `read` gives a snapshot that later commits do not change; `write` one transaction,
      committed when the block ends, rolled back on an exception or after `discard`.
    - `scrub` answers False while a forget still waits (then `pending_scrubs` names it);
      where `scrubs_in_place`, it finishes every forget itself, else only `rewrite` does.
    """

    url: str

    def read(self, workspace: str) -> AbstractContextManager[StoreReader]: ...
    def write(self, workspace: str) -> AbstractContextManager[StoreWriter]: ...

    def schema_version(self) -> int: ...

    # Whether a small write commits in well under a millisecond (SQLite: its WAL is not
    # synced at each commit), so a log written after each answer needs no batching.
    commits_cheaply: bool

    # Whether `scrub` erases forgotten bytes by itself (SQLite: a checkpoint), or only a
    # deliberate `rewrite` can (PostgreSQL: it locks tables, so a server never runs it).
    scrubs_in_place: bool

    # Whether it may follow a server as a replica (SQLite: a store of one machine). Only
    # such a store reads its queue of writes for the server (service/queueing.py).
    replicates: bool

    def scrub(self, workspace: str | None = None) -> bool:
        """Finish what the store can finish now; False while a forget of `workspace` (any
        workspace if None) still waits."""
        ...

    def rewrite(self) -> Rewrite:
        """Physically rewrite what held forgotten content, briefly locking one table at a time."""
        ...

    def close(self) -> None: ...
