"""The domain: notebooks, memories, links and events as frozen dataclasses. No I/O here.

Times are RFC 3339 strings in UTC with microseconds and a four-digit year
(`2026-11-30T04:17:30.123456Z`, `0999-01-01T00:00:00.000000Z`), so they compare correctly
as text in every store; years outside 0001-9999 are refused.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

KINDS = (
    "fact", "decision", "pattern", "error", "debt", "rule", "orientation",
    "note", "reference", "issue", "option", "assumption", "goal",
)  # fmt: skip
RULE_KINDS = frozenset({"rule", "orientation"})
STATUSES = ("active", "superseded", "retracted")
RETIRED = frozenset({"superseded", "retracted"})
SEVERITIES = ("house_style", "costly", "irreversible")  # weakest first
SCOPES = ("notebook", "workspace")
CHECK_KINDS = ("path_exists", "contains", "absent", "absent_all", "requires", "forbidden")
MOMENTS = ("before_command", "before_commit", "session_start", "before_edit")
LINK_TYPES = (
    "supersedes", "contradicts", "relates_to", "depends_on", "derived_from", "caused_by",
    "part_of",
)  # fmt: skip

# How long a memory of each kind stays fresh without a `verify`; past it, recall flags it
# possibly stale. Kinds not listed (rules, goals, references...) do not go stale by age.
# These are the defaults: a workspace changes them with its `freshness_days.KIND` settings.
FRESHNESS_DAYS: Mapping[str, int | None] = {
    "fact": 90, "decision": 180, "pattern": 180, "error": 365, "debt": 90,
    "issue": 60, "assumption": 30, "option": 180, "note": 180,
}  # fmt: skip

# Fields that say what a memory asserts: revise sets them, revert restores them.
CONTENT_FIELDS = (
    "kind", "text", "title", "why", "tags", "key", "occurred_at", "expires_at", "source",
    "anchors", "severity", "falsifier", "check", "bindings", "scope",
)  # fmt: skip


# What a four-digit year holds, in UTC: every stored time sorts correctly as text.
TIME_RANGE = "years 0001 to 9999 (UTC)"
MAX_COMMAND = 100_000  # characters of a command the guard judges: longer is no command typed


def now_utc() -> str:
    return format_time(datetime.now(UTC))


def format_time(moment: datetime) -> str:
    """RFC 3339 in UTC with microseconds and always four digits of year.

    Not `strftime("%Y")`: it writes year 999 as `999`, which sorts after `2026` as text.
    """
    utc = moment.astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds") + "Z"


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 time or a bare date (taken as midnight UTC); naive times are UTC.

    Raises ValueError for anything else, including a time outside `TIME_RANGE` in UTC.
    """
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # an offset that carries it past year 1 or 9999
        raise ValueError(f"outside {TIME_RANGE}") from None


def add_days(time: str, days: int) -> str:
    return format_time(parse_time(time) + timedelta(days=days))


def normalize_text(text: str) -> str:
    """The one normaliser for matching memories by exact text: NFC, trimmed, casefolded."""
    return unicodedata.normalize("NFC", text).strip().casefold()


@dataclass(frozen=True)
class Check:
    kind: str
    path: str | None = None
    literal: str | None = None
    literals: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": self.kind}
        if self.path is not None:
            body["path"] = self.path
        if self.literal is not None:
            body["literal"] = self.literal
        if self.literals:
            body["literals"] = list(self.literals)
        return body


@dataclass(frozen=True)
class Anchor:
    path: str
    hash: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "hash": self.hash}


@dataclass(frozen=True)
class Bindings:
    always: bool = False
    moments: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()

    def covers(self, other: Bindings) -> bool:
        """True when these bindings keep every binding of `other` (nothing was removed)."""
        return (
            (self.always or not other.always)
            and set(other.moments) <= set(self.moments)
            and set(other.targets) <= set(self.targets)
        )

    def to_dict(self) -> dict[str, Any]:
        return {"always": self.always, "moments": list(self.moments), "targets": list(self.targets)}


@dataclass(frozen=True)
class Memory:
    id: str
    workspace: str
    notebook_id: str
    kind: str
    text: str
    version: int
    recorded_at: str
    author: str
    owner: str | None
    status: str = "active"
    title: str | None = None
    why: str | None = None
    tags: tuple[str, ...] = ()
    key: str | None = None
    occurred_at: str | None = None
    expires_at: str | None = None
    status_note: str | None = None
    superseded_by: str | None = None
    verified_at: str | None = None
    source: str | None = None
    anchors: tuple[Anchor, ...] = ()
    severity: str | None = None
    falsifier: str | None = None
    check: Check | None = None
    bindings: Bindings | None = None
    scope: str | None = None

    def replace(self, **changes: Any) -> Memory:
        return dataclasses.replace(self, **changes)

    def expired(self, at: str) -> bool:
        return self.expires_at is not None and self.expires_at <= at

    def possibly_stale(self, at: str, freshness: Mapping[str, int | None] = FRESHNESS_DAYS) -> bool:
        """Not verified within its kind's window (`freshness`: the workspace's settings)."""
        days = freshness.get(self.kind)
        if days is None or self.status != "active":
            return False
        return add_days(self.verified_at or self.recorded_at, days) < at

    def content(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in CONTENT_FIELDS}

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            body[f.name] = to_json(value)
        return body


def to_json(value: Any) -> Any:
    """Render model values (dataclasses with to_dict, tuples) as JSON-ready values."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    return value


@dataclass(frozen=True)
class Notebook:
    id: str
    workspace: str
    name: str
    created_at: str
    summary: str | None = None
    domain: str | None = None
    tags: tuple[str, ...] = ()

    def replace(self, **changes: Any) -> Notebook:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "summary": self.summary,
            "domain": self.domain,
            "tags": list(self.tags),
            "created_at": self.created_at,
        }


@dataclass(frozen=True)
class Link:
    id: str
    workspace: str
    source_id: str
    target_id: str
    type: str
    created_at: str
    actor: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source_id,
            "target": self.target_id,
            "type": self.type,
            "created_at": self.created_at,
            "actor": self.actor,
        }


@dataclass(frozen=True)
class Event:
    """One entry of the append-only history.

    For a memory, the content the event produced is the memory's version `version`
    (kept by the store beside the event); `fields` names what changed from the version
    before. For notebooks and links, `data` holds the old and new values.
    """

    seq: int
    op_id: str
    at: str
    actor: str
    op: str
    target_type: str  # "memory", "notebook" or "link"
    target_id: str
    notebook_id: str | None = None
    version: int | None = None
    fields: tuple[str, ...] = ()
    note: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    key_id: str | None = None  # the HTTP key the actor came through (issue 12), if any

    def to_dict(self) -> dict[str, Any]:
        through = {"key_id": self.key_id} if self.key_id else {}
        return through | {
            "op_id": self.op_id,
            "at": self.at,
            "actor": self.actor,
            "op": self.op,
            "target_type": self.target_type,
            "target_id": self.target_id,
            "notebook_id": self.notebook_id,
            "version": self.version,
            "fields": list(self.fields),
            "note": self.note,
            "data": self.data,
        }


@dataclass(frozen=True)
class Tombstone:
    """What is left of a forgotten memory: who removed it, when and why."""

    id: str
    forgotten_at: str
    actor: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "forgotten": True,
            "forgotten_at": self.forgotten_at,
            "actor": self.actor,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class MemoryVersion:
    """One version of a memory with the event that made it; `memory` is None if scrubbed."""

    version: int
    seq: int
    at: str
    actor: str
    op: str
    memory: Memory | None


# A dispute is open until ruled; `withdrawn` when one of its memories was forgotten.
DISPUTE_STATES = ("open", "ruled", "withdrawn")


@dataclass(frozen=True)
class Ruling:
    """Which memory of a dispute holds, why, on what evidence, and what the ruling changed.

    `retired_version` is the loser's version the ruling made when it retired the loser
    (None: the loser was already retired); `linked` says whether the ruling added the
    `supersedes` link. An undo takes back exactly these.
    """

    holds: str
    loses: str
    reason: str | None  # None once a forget scrubbed it
    evidence: str | None
    at: str
    actor: str
    retired_version: int | None = None
    linked: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "holds": self.holds,
            "loses": self.loses,
            "reason": self.reason,
            "evidence": self.evidence,
            "at": self.at,
            "actor": self.actor,
        }


@dataclass(frozen=True)
class Dispute:
    """Two memories said to contradict each other, and where the review of it stands.

    Each step (open, rule, undo, withdraw) makes a new version; the versions keep the
    past, as a memory's do, so `as_of` answers which disputes were open then.
    """

    id: str
    workspace: str
    memory_ids: tuple[str, str]  # in id order: the pair names the dispute, not who came first
    reason: str | None  # why they were said to contradict; None once scrubbed
    opened_at: str
    opened_by: str
    version: int = 1
    status: str = "open"
    ruling: Ruling | None = None

    def replace(self, **changes: Any) -> Dispute:
        return dataclasses.replace(self, **changes)

    def other(self, memory_id: str) -> str:
        first, second = self.memory_ids
        return second if memory_id == first else first

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "version": self.version,
            "memories": list(self.memory_ids),
            "reason": self.reason,
            "opened_at": self.opened_at,
            "opened_by": self.opened_by,
        }
        if self.ruling is not None:
            body["ruling"] = self.ruling.to_dict()
        return body


@dataclass(frozen=True)
class SeenCommand:
    """A command the guard was asked about, kept (credentials redacted) so that a new
    `forbidden` check can be tried against what agents really run (DESIGN: trials)."""

    id: str
    seen_at: str
    command: str
    decision: str  # what the guard answered: allow, deny or ask
    notebook_id: str | None = None  # the project's notebook, when the command ran in one
    session: str | None = None  # the agent's session id, when it sent one

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
