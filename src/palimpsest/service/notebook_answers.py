"""The shapes of what a person reads about notebooks (overview.py, activity.py): each
notebook with its counts, one notebook's rules and the commands the guard refused or asked
about there, and its events by day. Typed as answers.py's are, for the adapters to render."""

from __future__ import annotations

from typing import Required

from typing_extensions import TypedDict

from .admin_answers import SeenShown
from .answers import BindingsShown, CheckShown, NotebookShown


class NotebookListed(TypedDict):
    """A notebook with what it holds now."""

    notebook: NotebookShown
    memories: int  # its current memories, retired ones too
    active: int
    rules: int  # its active rules and orientations
    projects: list[str]  # the directories this process may read that are bound to it


class NotebookListAnswer(TypedDict):
    notebooks: list[NotebookListed]
    # Why `projects` may be short: bindings are files in project directories, and only the
    # directories this process may read are looked at.
    projects_note: str


class RuleShown(TypedDict):
    """A rule or orientation as a person checks it: what it says and what it binds."""

    id: str
    kind: str
    notebook: str  # its notebook's name
    title: str | None
    text: str
    severity: str | None
    scope: str  # notebook or workspace
    check: CheckShown | None
    bindings: BindingsShown | None  # None: it binds always
    guards: bool  # the guard refuses commands by it here (a forbidden check that applies)
    contested: bool  # kept as a note: its check was found too broad, it refuses nothing


class NotebookRulesAnswer(TypedDict, total=False):
    notebook: Required[NotebookShown]
    rules: Required[list[RuleShown]]  # its own, gravest first
    workspace_rules: Required[list[RuleShown]]  # other notebooks' workspace-wide ones
    capped: bool  # more rules than RULE_LIMIT in a list: its newest RULE_LIMIT are listed
    guarded: Required[list[SeenShown]]  # commands denied or asked about here, newest first
    guarded_days: Required[int]  # how far back the kept commands reach


class ActivityDay(TypedDict):
    day: str  # YYYY-MM-DD, a UTC day
    total: int
    ops: dict[str, int]  # events by operation (remember, revise, link...)


class ActivityAnswer(TypedDict):
    notebook: NotebookShown
    days: int
    activity: list[ActivityDay]  # every day of the span, oldest first, quiet ones at 0
    total: int
