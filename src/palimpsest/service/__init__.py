"""The one API every adapter calls. It owns transactions, the clock, ids and every rule.

Answers are JSON-ready dicts; refusals are the errors of `palimpsest.domain.errors`. The
operations are grouped by concept in the modules beside this one.

Adapters reach the write gate's rules through here, not the gate, so they refuse as the
service does: `LIMITS`, `check_actor`, `shown_name` (a caller's name fit to repeat in a
refusal) and `prepare_screening` (the secret patterns compiled ahead of the first write).
"""

from __future__ import annotations

from ..embed import DEFAULT_EMBEDDER, EMBEDDERS, Embedder, load_embedder
from ..screening.gate import LIMITS, check_actor, shown_name
from ..screening.secrets import prepare as prepare_screening
from .access import AccessOps
from .activity import ActivityOps
from .admin_answers import ReindexAnswer
from .base import DEFAULT_WORKSPACE
from .checks import CheckOps
from .disputes import DisputeOps
from .doctor import DoctorOps
from .duplicates import DuplicateOps
from .guard import GuardOps
from .history import HistoryOps
from .memories import MemoryOps
from .merging import MergeOps
from .notebooks import NotebookOps
from .overview import OverviewOps
from .queueing import QueueOps
from .reasoned import ReasonedOps
from .recall import RecallOps
from .served import ServedOps
from .sessions import SessionOps
from .settings import SettingsOps
from .stores import copy_between, default_store_path, open_store_for, store_label
from .sync import SyncOps
from .transfer import TransferOps
from .vectors import Progress, reindex
from .web_sessions import WebSessionOps
from .workspaces import WorkspaceOps

__all__ = [
    "DEFAULT_EMBEDDER",
    "DEFAULT_WORKSPACE",
    "EMBEDDERS",
    "LIMITS",
    "Service",
    "check_actor",
    "copy_between",
    "default_store_path",
    "load_embedder",
    "open_service",
    "prepare_screening",
    "shown_name",
    "store_label",
]


class Service(
    WebSessionOps,  # the web page's sign-ins, on AccessOps (it admits a key by its id)
    AccessOps,
    WorkspaceOps,
    CheckOps,
    MergeOps,
    ReasonedOps,
    MemoryOps,
    RecallOps,
    HistoryOps,
    NotebookOps,
    DoctorOps,
    DuplicateOps,
    SettingsOps,
    DisputeOps,
    SessionOps,
    ServedOps,
    GuardOps,
    TransferOps,
    OverviewOps,
    ActivityOps,
    SyncOps,
    QueueOps,
):
    """remember, recall, revise, duplicates, merge, revert, forget, inspect, history,
    notebooks, links, doctor, settings, disputes, projects, checks, orient, the session
    hooks and what each session was served, guard, the workspace's users, keys and
    workspaces, the web page's sessions, export and import, and what a person reads of a
    notebook (its rules, the commands refused there, its activity); sync, a server's side and
    a replica's."""

    def schema_version(self) -> int:
        """The store's schema version (opening it migrated it to the newest this code knows)."""
        return self.store.schema_version()

    def reindex(self, progress: Progress | None = None) -> ReindexAnswer:
        """Make anew the vectors another model or recipe made (derived data: no event)."""
        return reindex(self.store, self.workspace, self.vectors, progress)

    def close(self) -> None:
        self.served_log.flush()  # what sessions were served, written before the store goes
        self.store.close()


def open_service(
    location: str, *, actor: str, create: bool = True, embedder: Embedder | None = None
) -> Service:
    """The service over the store a user named: a SQLite file path or a postgresql:// URL.
    Without `create`, a SQLite file that does not exist is `not_found`, and not made.
    `embedder` None: the default embedder (its model loads on the first embed)."""
    store = open_store_for(location, actor, create=create)
    return Service(store, actor=actor, embedder=embedder)
