"""The shapes of the MCP tools' answers, published as each tool's output schema.

The service's answers are plain dicts; these types only describe them. Every key is
optional and unknown keys pass through (`extra="allow"`), so the schema documents the
answer without ever dropping or rejecting part of it: a result that committed must reach
the client whole.

What is published is each key's name (`schema.lean_answer`). What a key means,
where its name does not say it, is in the tool's description, which every client shows
the model (many never show it an output schema); `dry_run` and `replayed`, common to
every write, are explained once in the server instructions. The comments below are for
whoever maintains the service's answers.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

_OPEN = ConfigDict(extra="allow")

Items = list[dict[str, Any]]


@with_config(_OPEN)
class RememberResult(TypedDict, total=False):
    id: str
    version: int
    notebook: str
    superseded: Items
    duplicate_of: str
    written: bool
    memory: dict[str, Any]
    results: Items  # a batch (`items`): one answer like the above per item, in order
    # Suggestions on write (service/suggest.py), each absent when empty; revise gives them
    # in each changed target of `results`.
    possible_contradicts: Items
    possible_duplicates: Items
    suggested_connections: Items
    applicable_rules: Items
    dry_run: bool
    replayed: bool


@with_config(_OPEN)
class RecallResult(TypedDict, total=False):
    hits: Items  # each with matched, words, similarity, and below_floor for a near miss
    rules: Items
    as_of: str | None
    note: str  # when no hit passes the floor: nothing answers
    left_out: list[str]  # ids of hits past `budget`, best first


@with_config(_OPEN)
class ReviseResult(TypedDict, total=False):
    redacted: Items
    results: Items
    unmatched: Items
    warnings: list[str]
    dry_run: bool
    replayed: bool


@with_config(_OPEN)
class RevertResult(TypedDict, total=False):
    results: Items
    dry_run: bool
    replayed: bool


@with_config(_OPEN)
class ForgetResult(TypedDict, total=False):
    results: Items
    scrub_pending: bool
    dry_run: bool
    replayed: bool


@with_config(_OPEN)
class InspectResult(TypedDict, total=False):
    memory: dict[str, Any]
    versions: Items
    links: Items
    tombstone: dict[str, Any]
    notebook: dict[str, Any]
    memories: Items


@with_config(_OPEN)
class HistoryResult(TypedDict, total=False):
    events: Items
    id: str
    changes: dict[str, Any]
    text_diff: str


@with_config(_OPEN)
class NotebookResult(TypedDict, total=False):
    notebooks: Items
    notebook: dict[str, Any]
    unchanged: bool
    moved: list[str]
    redacted: Items
    domain: str
    dry_run: bool
    replayed: bool


@with_config(_OPEN)
class LinkResult(TypedDict, total=False):
    link: dict[str, Any]
    removed: bool
    versions: dict[str, int]
    unchanged: bool
    dry_run: bool
    replayed: bool


@with_config(_OPEN)
class DoctorResult(TypedDict, total=False):
    secrets: Items
    possibly_stale: Items
    expired: Items
    ownerless: Items
    scrub_pending: bool
    pending_scrubs: Items
    stale_vectors: dict[str, Any]  # count and fix: versions recall cannot find by meaning
    project: str | None  # the directory read for the two lists below; None: none known
    failing_checks: Items
    stale_by_evidence: Items
    rules_kept_as_notes: Items


@with_config(_OPEN)
class CheckResult(TypedDict, total=False):
    dir: str
    notebook: str
    checked: int
    holds: Items
    fails: Items  # one per file and literal that fails
    gating: list[str]  # failing rules of severity irreversible or costly


@with_config(_OPEN)
class GuardResult(TypedDict, total=False):
    decision: str  # allow, deny or ask
    reason: str
    refused_by: Items
    notebook: str | None


@with_config(_OPEN)
class DisputeResult(TypedDict, total=False):
    id: str  # the dispute's
    status: str  # open, ruled or withdrawn
    results: Items  # per memory touched: id, version
    holds: str
    superseded: str
    loses: str  # the loser, when it was retired already and stays as it was
    disputes: Items  # list
    more: int  # list: disputes left out by `limit`
    dry_run: bool
    replayed: bool


@with_config(_OPEN)
class OrientResult(TypedDict, total=False):
    notebook: str | None
    project: str | None
    note: str  # why the brief holds only the workspace-wide rules
    budget: int
    used: int  # characters of `brief`
    brief: str
    rules: Items
    rules_left_out: list[str]  # ids of binding rules past the budget: never dropped silently
    open: Items
    disputes: Items
    possibly_stale: Items
    recent: Items
    left_out: dict[str, int]  # per section, the items past the budget
