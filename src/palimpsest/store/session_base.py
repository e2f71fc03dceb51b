"""What every concept's SQL stands on: a session bound to one workspace in one transaction.

The SQL is written once with `?` placeholders; a backend runs it through `_rows`, `_row`
and `_run`, and fills in what differs: how full text is indexed and searched, how a tag
filter reads the JSON tags, how a vector is written and read, and how to keep the planner
on the right index. Each concept's rows (store/*_rows.py) are a mixin of `SessionBase`;
what one concept asks of another is declared here, so no mixin depends on the order the
session lists them in.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ..domain.errors import Conflict
from ..domain.model import Event, Memory, Notebook, Tombstone, now_utc
from . import bm25
from .rows import Row
from .values import Found, SearchQuery

if TYPE_CHECKING:  # numpy is imported where a vector is read (see sqlite_vectors.py)
    from .vector_search import Vectors


class SessionBase(ABC):
    """A view of the store bound to one workspace, inside one transaction."""

    # Prefix that keeps a column's index out of the planner's choice ("+" in SQLite),
    # where a lookup by memory id must use the unique (memory_id, version) index.
    UNINDEXED: ClassVar[str] = ""

    def __init__(self, workspace: str):
        self.workspace = workspace
        self.discarded = False
        self.key_id: str | None = None  # the HTTP key of the writes in this session, if any

    # -- what a backend provides ---------------------------------------------------------

    @abstractmethod
    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[Row]: ...

    @abstractmethod
    def _run(self, sql: str, params: Iterable[Any] = ()) -> None: ...

    @abstractmethod
    def _cursor(self, sql: str, params: Iterable[Any] = ()) -> Iterator[Row]:
        """Rows one at a time, for scans too large to hold in memory."""

    @abstractmethod
    def search_found(self, query: SearchQuery) -> list[tuple[Found, float]]: ...

    @abstractmethod
    def nearest_found(
        self, vector: Vectors, query: SearchQuery, model: str
    ) -> list[tuple[Found, float]]: ...

    @abstractmethod
    def _version_matches(
        self, where: list[str], args: list[Any], terms: list[str]
    ) -> list[bm25.Match]:
        """The versions passing `where` (alias v) as bm25.py scores them for `terms`."""

    @abstractmethod
    def _tag_condition(self) -> str:
        """SQL true when the JSON tags of version `v` hold the tag given as parameter."""

    def _search_values(self, columns: dict[str, Any]) -> dict[str, Any]:
        """Columns stored beside a version's content to search it (PostgreSQL's tsvector)."""
        return {}

    def _indexed(self, rowid: int, columns: Row) -> None:
        """A version row was inserted (its columns and `_search_values`): index its text in
        a table of its own (SQLite's), or count it (PostgreSQL's statistics)."""
        return None

    @abstractmethod
    def _reindexed(self, row: Row) -> None:
        """Index an existing version row anew, by the rules of store/terms.py."""

    def _unindexed(self, row: Row) -> None:
        """A version row is about to lose its content: drop it from the text index."""
        return None

    def _after_scrub(self) -> None:
        """Content was scrubbed: make the text index forget it physically too."""
        return None

    # How a SELECT reads a vector (of memory_vectors, alias mv) and how an INSERT writes one.
    VECTOR_OUT: ClassVar[str] = "mv.vector"
    VECTOR_IN: ClassVar[str] = "?"

    @abstractmethod
    def _vector_value(self, vector: Vectors) -> Any:
        """A vector as the parameter VECTOR_IN takes."""

    @abstractmethod
    def _vector_from(self, value: Any) -> Vectors:
        """A vector read through VECTOR_OUT, as float32."""

    def _row(self, sql: str, params: Iterable[Any] = ()) -> Row | None:
        found = self._rows(sql, params)
        return found[0] if found else None

    # -- sessions ------------------------------------------------------------------------

    def discard(self) -> None:
        """Roll the transaction back at the end instead of committing (dry runs)."""
        self.discarded = True

    def ensure_workspace(self) -> None:
        self._run(
            "INSERT INTO workspaces(id, name, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            (self.workspace, self.workspace, now_utc()),
        )

    # -- what one concept's rows ask of another's (each is defined once, in its mixin) ---

    @abstractmethod
    def _versions(self, condition: str, params: Iterable[Any]) -> list[Memory]: ...

    @abstractmethod
    def _mark_pending(self, target_id: str, at: str) -> None: ...

    @abstractmethod
    def _drop_responses_naming(self, target_id: str) -> None: ...

    @abstractmethod
    def _forget_disputes(self, memory_id: str) -> None: ...

    @abstractmethod
    def forget_memory(self, tombstone: Tombstone, seq: int) -> None: ...

    @abstractmethod
    def forget_version(self, memory_id: str, version: int) -> None: ...

    @abstractmethod
    def forget_notebook(self, tombstone: Tombstone, seq: int) -> None: ...

    @abstractmethod
    def forget_notebook_field(self, notebook_id: str, field: str, seq: int) -> None: ...

    @abstractmethod
    def vector_generation(self) -> int: ...

    @abstractmethod
    def _next_vector_generation(self) -> None: ...

    @abstractmethod
    def _put_vector_row(self, rowid: int, vector: Vectors, model: str) -> None: ...

    @abstractmethod
    def _read_found(self, found: list[tuple[Found, float]]) -> list[tuple[Memory, float]]: ...

    @abstractmethod
    def filters(self, query: SearchQuery) -> tuple[list[str], list[Any]]: ...

    @abstractmethod
    def filed_beside(
        self, memory_ids: Sequence[str], span: int, at_seq: int | None
    ) -> dict[str, list[tuple[str, int]]]: ...

    @abstractmethod
    def get_notebook(self, ref: str) -> Notebook | None: ...

    @abstractmethod
    def list_notebooks(self) -> list[Notebook]: ...

    @abstractmethod
    def last_event(self) -> Event | None: ...


def name_race() -> Conflict:
    """The unique name index refused a workspace's name: another took it meanwhile."""
    return Conflict("Another workspace took that name meanwhile: choose another name.",
                    field="name")  # fmt: skip


def key_race() -> Conflict:
    """The unique key index refused a write: another writer took the key meanwhile."""
    return Conflict(
        "Another active memory of this notebook took the same key meanwhile; "
        "re-read and choose another key, or revise that memory instead."
    )


def marks(values: Any) -> str:
    return ", ".join("?" for _ in values)


def current_at(seq: int | None) -> tuple[str, list[Any]]:
    """The condition for the version rows (alias v) current at event `seq` (None: now)."""
    if seq is None:
        return "v.to_seq IS NULL", []
    return "v.from_seq <= ? AND (v.to_seq IS NULL OR v.to_seq > ?)", [seq, seq]
