"""What SQLite and PostgreSQL do alike: a workspace-bound session over the same schema,
one mixin per concept of the store's seam (store/protocols.py).

Each concept's SQL is in a module of its own (store/*_rows.py); they stand on
`SessionBase` (store/session_base.py), which says what a backend provides. A backend's
session subclasses `SqlSession` and fills that in.
"""

from __future__ import annotations

from .access_rows import AccessRows
from .answer_rows import AnswerRows
from .copy_rows import CopyRows
from .dispute_rows import DisputeRows
from .event_rows import EventRows
from .guard_rows import GuardRows
from .memory_rows import MemoryRows
from .notebook_rows import NotebookRows
from .orient_rows import OrientRows
from .queue_rows import QueueRows
from .replica_rows import ReplicaRows
from .review_rows import ReviewRows
from .search_rows import SearchRows
from .served_rows import ServedRows
from .setting_rows import SettingRows
from .vector_rows import VectorRows
from .web_session_rows import WebSessionRows


class SqlSession(
    MemoryRows, ReviewRows, EventRows, NotebookRows, DisputeRows, AccessRows, SettingRows,
    AnswerRows, OrientRows, GuardRows, ServedRows, WebSessionRows, SearchRows, VectorRows,
    CopyRows, ReplicaRows, QueueRows,
):  # fmt: skip
    """A view of the store bound to one workspace, inside one transaction: every concept's
    rows (abstract until a backend provides what `SessionBase` asks)."""
