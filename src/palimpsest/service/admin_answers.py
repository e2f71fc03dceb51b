"""The shapes of the answers of what a person runs from the command line: the workspace's
users and keys, workspaces, settings, sessions, kept commands, projects, scrubs, reindex,
export and import. As answers.py (the memory operations', which MCP publishes), these are
TypedDicts mypy checks where the service builds them; `Required` keys are in every answer.
"""

from __future__ import annotations

from typing import Any, Required

from typing_extensions import TypedDict

from .answers import EventShown, Object, Written
from .findings import BriefMemory, Oriented, PendingScrub

# -- users and keys ---------------------------------------------------------------------------


class UserShown(TypedDict):
    user: str  # user:NAME
    role: str
    added_at: str


class UserAdded(TypedDict):
    user: str
    role: str


class UserRemoved(TypedDict):
    user: str
    removed: bool
    revoked: list[str]  # the ids of their keys, revoked
    ownerless: list[str]  # the memories they owned, now anyone's to claim


class UsersAnswer(TypedDict):
    users: list[UserShown]


class KeyShown(TypedDict):
    """A key, never its secret."""

    id: str
    holder: str  # user:NAME or agent:NAME
    note: str | None
    created_at: str
    expires_at: str | None
    revoked_at: str | None


class KeyCreated(KeyShown):
    key: str  # the secret, shown this once


class KeyRevoked(KeyShown, total=False):
    unchanged: bool  # revoked already


class KeysAnswer(TypedDict):
    keys: list[KeyShown]


# -- workspaces -------------------------------------------------------------------------------


class WorkspaceShown(TypedDict, total=False):
    id: Required[str]
    name: Required[str]
    created_at: str | None  # None: the default workspace, before its first write
    current: bool  # the one this service acts in


class WorkspacesAnswer(TypedDict):
    workspaces: list[WorkspaceShown]


class WorkspaceAnswer(TypedDict, total=False):
    workspace: Required[WorkspaceShown]
    unchanged: bool
    renamed_from: str


# -- settings ---------------------------------------------------------------------------------


class SettingShown(TypedDict):
    value: Any
    default: Any
    chosen: bool  # set in this workspace, rather than its default
    about: str


class SettingChange(TypedDict):
    old: Any
    new: Any


class SettingsAnswer(Written, total=False):
    settings: Required[dict[str, SettingShown]]
    changes: dict[str, SettingChange]
    unchanged: bool


class SettingsHistory(TypedDict):
    events: list[EventShown]


# -- kept commands, scrubs, vectors ----------------------------------------------------------


class SeenShown(TypedDict):
    id: str
    seen_at: str
    command: str
    decision: str
    notebook_id: str | None
    session: str | None


class SeenAnswer(TypedDict):
    commands: list[SeenShown]


class ScrubAnswer(TypedDict, total=False):
    locked_seconds: Required[dict[str, float]]  # per table, how long it was locked
    scrub_pending: Required[bool]
    pending_scrubs: Required[list[PendingScrub]]
    warning: str


class ReindexAnswer(TypedDict, total=False):
    model: Required[str | None]
    reindexed: Required[int]
    stale: Required[int]  # versions whose vector another model (or none) made
    note: str  # the embedder is `none`: nothing to make


# -- projects and sessions --------------------------------------------------------------------


class ProjectShown(TypedDict, total=False):
    """A project directory and the notebook its `.palimpsest.toml` names."""

    dir: Required[str]
    file: Required[str]
    notebook: Required[str]
    notebook_id: Required[str | None]
    notebook_exists: Required[bool]
    note: str  # what is amiss with the binding, and the command that mends it
    created: bool  # bind: the notebook was made for it


class WrittenLine(TypedDict):
    """A memory the session wrote, on one line."""

    id: str
    op: str
    kind: str
    text: str


class SessionShown(TypedDict):
    id: str
    started_at: str
    resumed: bool  # the same session id started before: its start stays the first


class SessionStart(Oriented, total=False):
    """The session hook's brief: orient's, with the session it noted."""

    session: Required[SessionShown | None]  # None: it could not be noted
    warnings: list[str]


def session_brief(brief: Oriented) -> SessionStart:
    """Orient's `brief` as the session hook's answer, its session not noted yet."""
    started: SessionStart = {
        "notebook": brief["notebook"],
        "project": brief["project"],
        "budget": brief["budget"],
        "rules": brief["rules"],
        "rules_left_out": brief["rules_left_out"],
        "open": brief["open"],
        "disputes": brief["disputes"],
        "possibly_stale": brief["possibly_stale"],
        "recent": brief["recent"],
        "left_out": brief["left_out"],
        "used": brief["used"],
        "brief": brief["brief"],
        "session": None,
    }
    if "note" in brief:
        started["note"] = brief["note"]
    return started


class SessionEnded(TypedDict, total=False):
    """The session-end hook's answer: what the session wrote, and what to ask the agent."""

    notebook: Required[str | None]
    session: Required[Object]  # id, started_at (None: not known)
    written: Required[list[WrittenLine]]
    open: Required[list[BriefMemory]]  # the notebook's open issues and debts, as orient's
    disputes: Required[int]
    possibly_stale: Required[int]
    ask: Required[str | None]
    note: str


# -- export and import ------------------------------------------------------------------------


class Exported(TypedDict):
    workspace: str  # its name
    notebooks: list[str] | None  # None: every notebook
    counts: dict[str, int]  # records written, per kind


class ExportedMarkdown(TypedDict):
    """Files written as markdown: counts of notebooks and memories, and of files."""

    directory: str
    notebooks: int
    memories: int
    written: int
    unchanged: int
    removed: int


class Imported(TypedDict, total=False):
    """What an import did (or, in a dry run, would do), by line of the file, never by text.
    Each list holds the first entries only; `*_more` counts the rest."""

    mode: Required[str]  # restore (into an empty workspace) or merge
    source: Required[Object]  # the file: its format, name, workspace, time of export
    counts: Required[dict[str, int]]  # per outcome: imported, unchanged, refused, ...
    refused: list[Object]
    refused_more: int
    conflicts: list[Object]
    conflicts_more: int
    unmapped: list[Object]  # another server's records with no counterpart here
    unmapped_more: int
    links_left_out: list[Object]
    links_left_out_more: int
    dry_run: bool
    vectors: ReindexAnswer
