"""The shapes of what doctor, check, orient and guard answer: findings, each with its fix,
the outcome of file checks, a brief, a decision on a command. TypedDicts mypy checks where
the service builds them, as those of answers.py; MCP's output schemas derive from them."""

from __future__ import annotations

from typing import Any, Required

from typing_extensions import TypedDict

from .answers import Object


class ToolCall(TypedDict):
    """A fix as the tool call that makes it; values in <angle brackets> are the caller's
    to fill in. The CLI prints it as a command."""

    tool: str
    arguments: dict[str, Any]


class Line(TypedDict):
    """A memory on one line of a report, its text cut and redacted."""

    id: str
    kind: str
    text: str


class SecretFound(TypedDict, total=False):
    """A secret stored before the gate refused it: where (never its value), and the forget
    that erases it."""

    id: str  # the memory's
    version: int
    notebook: str  # a notebook's name or summary, now or in the past
    fields: Required[dict[str, list[str]]]  # per field, the kinds of secret found
    fix: Required[ToolCall]


class Fixable(Line):
    fix: ToolCall


class Noisy(Line):
    helped: int
    noise: int
    fix: str  # a person's command


class FailingCheck(Line):
    severity: str | None
    fails: list[str]  # the first few failures, each on a line


class StaleByEvidence(Line):
    reasons: list[str]


class DisputeWaiting(TypedDict):
    id: str
    memories: list[str]
    opened_at: str
    fix: ToolCall


class OpenDisputes(TypedDict):
    count: int
    oldest: list[DisputeWaiting]


class StaleVectors(TypedDict):
    count: int  # versions recall cannot find by meaning
    fix: str


class FailedAuthentications(TypedDict):
    last_24_hours: int
    last_at: str | None
    fix: str


class PendingScrub(TypedDict):
    """A forget whose bytes still wait in the store's files for `palimpsest scrub`."""

    id: str  # what was forgotten
    since: str
    fix: str


class Evidence(TypedDict, total=False):
    """What a project's files say (doctor's, with no project known: `project` None)."""

    project: Required[str | None]  # the directory read
    failing_checks: list[FailingCheck]
    stale_by_evidence: list[StaleByEvidence]


class DoctorAnswer(Evidence, total=False):
    """What a person should look at, each finding with its fix."""

    secrets: Required[list[SecretFound]]
    possibly_stale: Required[list[Line]]
    expired: Required[list[Line]]
    ownerless: Required[list[Line]]
    noise: Required[list[Noisy]]  # memories marked noise more than helped
    rules_kept_as_notes: Required[list[Fixable]]  # contested: they refuse nothing
    scrub_pending: Required[bool]
    pending_scrubs: Required[list[PendingScrub]]
    stale_vectors: StaleVectors
    open_disputes: OpenDisputes
    failed_authentications: FailedAuthentications
    sync: dict[str, Any]  # on a replica: sync stopped, writes refused or in conflict


class CheckLine(TypedDict):
    id: str
    kind: str
    severity: str | None
    text: str
    check: str  # its kind


class Holds(CheckLine):
    files: int  # regular files read


class Fails(CheckLine, total=False):
    file: Required[str]
    reason: Required[str]
    literal: str
    line: int  # where a literal that must be absent was found


class CheckAnswer(TypedDict):
    dir: str
    notebook: str
    checked: int
    holds: list[Holds]
    fails: list[Fails]  # one per file and literal that fails
    gating: list[str]  # failing rules of severity irreversible or costly


class BriefRule(TypedDict):
    """A rule or orientation in the brief, beside it (its text is in the brief)."""

    id: str
    kind: str  # rule or orientation
    severity: str | None
    scope: str  # notebook or workspace


class BriefMemory(TypedDict, total=False):
    """An open issue or debt, a memory waiting for a check, or a recent one, beside the
    brief (its text is in the brief)."""

    id: Required[str]
    kind: Required[str]
    helped: int  # recent: how often it was marked helpful, and noise
    noise: int
    checked_at: str  # waiting for a check: when it last was
    stale_reasons: list[str]  # what its evidence says (none: it is only old)


class BriefDispute(TypedDict):
    id: str
    memories: list[str]  # the two memories' ids
    reason: str | None


class Oriented(TypedDict, total=False):
    """The brief, and its items by section, beside it, with their ids."""

    notebook: Required[str | None]
    project: Required[str | None]
    note: str  # why the brief holds only the workspace-wide rules
    budget: Required[int]
    used: Required[int]  # characters of `brief`
    brief: Required[str]
    rules: Required[list[BriefRule]]
    rules_left_out: Required[list[str]]  # binding rules past the budget: never dropped silently
    open: Required[list[BriefMemory]]
    disputes: Required[list[BriefDispute]]
    possibly_stale: Required[list[BriefMemory]]
    recent: Required[list[BriefMemory]]
    left_out: Required[dict[str, int]]  # per section, the items past the budget
    pending: list[dict[str, Any]]  # on a replica: writes not yet on the server


class GuardAnswer(TypedDict, total=False):
    decision: Required[str]  # allow, deny or ask
    reason: Required[str]
    # Each refusing rule: id, title (else its text's start), severity, the pattern it
    # matched and its own decision; shaped by guard/decide.py, whose hook answers the same.
    refused_by: Required[list[Object]]
    unreadable: str
    notebook: Required[str | None]
    project: str
    note: str
    warnings: list[str]
