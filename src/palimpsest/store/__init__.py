"""The store: what the service needs from a database, in model types only.

The seam is cut by concept in store/protocols.py (memories, events, notebooks and links,
disputes, access, settings, stored answers, orient, the guard, full text, vectors, copies),
each with a contract suite in tests/store/contract/; the values they speak are in
store/values.py. Implementations: `sqlite` (the embedded default) and `postgres`, over the
shared SQL of store/session.py. `open_store` opens the one a `--db` value names.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..domain.errors import ValidationError
from .protocols import (
    AccessReader,
    AccessWriter,
    AnswerReader,
    AnswerWriter,
    CopyReader,
    CopyWriter,
    DisputeReader,
    DisputeWriter,
    EventReader,
    EventWriter,
    GuardReader,
    GuardWriter,
    MemoryReader,
    MemoryWriter,
    NotebookReader,
    NotebookWriter,
    OrientReader,
    OrientWriter,
    QueueReader,
    QueueWriter,
    ReviewReader,
    ReviewWriter,
    SearchReader,
    ServedReader,
    ServedWriter,
    SettingReader,
    SettingWriter,
    Store,
    StoreReader,
    StoreWriter,
    SyncReader,
    SyncWriter,
    VectorReader,
    VectorWriter,
    WebSessionReader,
    WebSessionWriter,
)
from .values import (
    AccessKey,
    AgentSession,
    Changes,
    EventFilter,
    Found,
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

__all__ = [
    "AccessKey",
    "AccessReader",
    "AccessWriter",
    "AgentSession",
    "AnswerReader",
    "AnswerWriter",
    "Changes",
    "CopyReader",
    "CopyWriter",
    "DisputeReader",
    "DisputeWriter",
    "EventFilter",
    "EventReader",
    "EventWriter",
    "Found",
    "GuardReader",
    "GuardWriter",
    "MemoryReader",
    "MemoryWriter",
    "NotebookReader",
    "NotebookWriter",
    "OrientReader",
    "OrientWriter",
    "PendingScrub",
    "QueueReader",
    "QueueWriter",
    "QueuedWrite",
    "ReplicaState",
    "ReviewReader",
    "ReviewWriter",
    "Rewrite",
    "RowFacts",
    "SearchQuery",
    "SearchReader",
    "Served",
    "ServedReader",
    "ServedSession",
    "ServedWriter",
    "SettingReader",
    "SettingWriter",
    "Store",
    "StoreReader",
    "StoreWriter",
    "StoredResponse",
    "SyncReader",
    "SyncWriter",
    "User",
    "VectorReader",
    "VectorWriter",
    "WebSession",
    "WebSessionReader",
    "WebSessionWriter",
    "Workspace",
    "default_db_path",
    "open_store",
    "shown",
    "sqlite_path",
]  # fmt: skip


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
