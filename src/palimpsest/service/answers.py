"""The shapes of the service's answers, where they are made: every adapter renders these.

Each operation's answer is a TypedDict that mypy checks where the service builds it: a key
added without being typed here fails the type check. `Required` keys are in every answer;
the rest only when they apply. MCP's output schemas are derived from these types
(mcp/schema.py), as the HTTP API's will be; the CLI's `--json` prints them whole.

Keys whose meaning the name does not say are explained in the comments, for whoever
maintains the service; an agent reads what they mean in the tool descriptions.

JSON-ready values only: str, int, float, bool, None, lists and these dicts. `Object` is a
value whose shape is open (a diff, a setting's value, the fields of a finding's fix).
"""

from __future__ import annotations

from typing import Any, Required

# typing_extensions' TypedDict: pydantic (which derives the MCP schemas) needs it on 3.11.
from typing_extensions import TypedDict

Object = dict[str, Any]

# Kept by an operation for its own use and dropped from its answer before it leaves the
# service (`base._write`): no schema lists them.
INTERNAL_KEYS = frozenset({"seq"})


# -- suggestions on write (service/suggest.py) ------------------------------------------------


class Suggested(TypedDict, total=False):
    """An active memory that a write may contradict, repeat or connect to."""

    id: Required[str]
    kind: Required[str]
    notebook: Required[str]
    text: Required[str]  # its start (suggest.SNIPPET)
    similarity: Required[float]
    sign: str  # a contradiction's: another number, a negation, the same key's other text


class RuleLine(TypedDict, total=False):
    """A rule that binds a memory's notebook, as a write's suggestion lists it."""

    id: Required[str]
    severity: str | None
    text: Required[str]


class Suggestions(TypedDict, total=False):
    """What a write suggests, each list absent when empty."""

    possible_contradicts: list[Suggested]
    possible_duplicates: list[Suggested]
    suggested_connections: list[Suggested]
    applicable_rules: list[RuleLine]


# -- a memory as shown ----------------------------------------------------------------------


class CheckShown(TypedDict, total=False):
    kind: Required[str]
    path: str
    literal: str
    literals: list[str]


class Anchor(TypedDict):
    path: str
    hash: str | None


class BindingsShown(TypedDict):
    always: bool
    moments: list[str]
    targets: list[str]


class MemoryShown(TypedDict, total=False):
    """A memory whole (shown.memory_view): its fields, and what holds of it now."""

    id: Required[str]
    notebook_id: Required[str]
    notebook: Required[str]  # the notebook's name
    kind: Required[str]
    text: Required[str]
    version: Required[int]
    recorded_at: Required[str]
    author: Required[str]
    owner: Required[str | None]
    status: Required[str]
    title: Required[str | None]
    why: Required[str | None]
    tags: Required[list[str]]
    key: Required[str | None]
    occurred_at: Required[str | None]
    expires_at: Required[str | None]
    status_note: Required[str | None]
    superseded_by: Required[str | None]
    verified_at: Required[str | None]
    source: Required[str | None]
    anchors: Required[list[Anchor]]
    severity: Required[str | None]
    falsifier: Required[str | None]
    check: Required[CheckShown | None]
    bindings: Required[BindingsShown | None]
    scope: Required[str | None]
    expired: Required[bool]
    possibly_stale: Required[bool]
    stale_reasons: list[str]
    disputed_with: list[str]  # the other memories of its open disputes


class Hit(TypedDict, total=False):
    """A memory recall found (shown.hit_view), with why it was found."""

    id: Required[str]
    kind: Required[str]
    notebook: Required[str]
    title: Required[str | None]
    text: Required[str]
    why: Required[str | None]
    tags: Required[list[str]]
    key: Required[str | None]
    score: Required[float]
    status: Required[str]
    version: Required[int]
    recorded_at: Required[str]
    occurred_at: Required[str | None]
    verified_at: Required[str | None]
    possibly_stale: bool
    expired: bool
    stale_reasons: list[str]
    disputed_with: list[str]
    matched: Required[str]  # words, meaning, both, context, id, key or filters (fusion.py)
    words: list[str]  # the query's words it holds
    similarity: float  # by meaning, 0 to 1
    below_floor: bool  # a near miss
    pending: list[str]  # on a replica: the writes to it not yet on the server


class Rule(TypedDict):
    """A rule that binds where recall found something (shown.rule_view)."""

    id: str
    kind: str
    text: str
    severity: str | None
    scope: str
    check: CheckShown | None


# -- writes -------------------------------------------------------------------------------


class Withdrawn(TypedDict, total=False):
    """An open dispute a write withdrew (its memory left it), as an event on the other."""

    id: Required[str]  # the other memory
    version: Required[int]
    seq: int
    dispute: Required[str]


class Step(TypedDict, total=False):
    """One memory's version a write made (base._write_step)."""

    id: Required[str]
    version: Required[int]
    seq: int
    disputes_withdrawn: list[Withdrawn]


class Written(TypedDict, total=False):
    """What every write's answer may say: whether it was only tried, or answered again."""

    dry_run: bool
    replayed: bool  # the answer stored under this `idempotency_key`, nothing written again


class Filed(Suggestions, Written, total=False):
    """A memory remember filed, or found filed already (`duplicate_of`, `written` false)."""

    id: Required[str]
    version: Required[int]
    notebook: Required[str]
    superseded: list[Step]  # the memories it retired
    duplicate_of: str
    written: bool
    warnings: list[str]
    kept_as_note: bool  # a rule whose forbidden check was too broad, filed as a note
    memory: MemoryShown  # a dry run's


class Batch(Written, total=False):
    """remember's answer to `items`: one answer per item, in order."""

    results: Required[list[Filed]]
    warnings: list[str]


Remembered = Filed | Batch


def revised(step: Step) -> Revised:
    """A step written as one target's answer of a revise (or a revert), to add to."""
    answer: Revised = {"id": step["id"], "version": step["version"]}
    if "seq" in step:
        answer["seq"] = step["seq"]
    if "disputes_withdrawn" in step:
        answer["disputes_withdrawn"] = step["disputes_withdrawn"]
    return answer


class Revised(Suggestions, total=False):
    """One memory a revise changed, or left as it was (`unchanged`)."""

    id: Required[str]
    version: Required[int]
    seq: int
    changed: list[str]  # the fields it changed
    unchanged: bool
    feedback: str  # a usefulness mark, no new version
    superseded: Step  # with `supersede`: the memory retired, `id` being its successor
    disputes_withdrawn: list[Withdrawn]
    kept_as_note: bool
    warnings: list[str]
    diff: dict[str, Object]  # a dry run's: per field, its old and new value
    would_erase: Object


class MissedTarget(TypedDict, total=False):
    """A target of a revise left unchanged (`unmatched`): how it was named, and why."""

    target: Required[str]  # how the caller named it
    reason: Required[str]
    ids: list[str]  # the memories with this text, when several have it


class Redacted(TypedDict):
    field: str
    kinds: list[str]


class ReviseAnswer(Written, total=False):
    results: Required[list[Revised]]
    unmatched: Required[list[MissedTarget]]
    redacted: list[Redacted]
    warnings: list[str]


class MergeAnswer(Written, total=False):
    """A merge: the memory kept (`id`, its version untouched) and each memory it retired as
    superseded by it, in the order named."""

    id: Required[str]
    version: Required[int]
    superseded: Required[list[Revised]]


class DuplicateMember(TypedDict, total=False):
    """A memory of a group of near-duplicates, on one line."""

    id: Required[str]
    version: Required[int]
    kind: Required[str]
    notebook: Required[str]
    key: str  # when it has one
    text: Required[str]  # its start, on one line (suggest.SNIPPET)
    owner: Required[str | None]
    updated_at: Required[str]  # when its current version was written


class DuplicateGroup(TypedDict, total=False):
    """Active memories that say the same thing, and why they were grouped."""

    memories: Required[list[DuplicateMember]]  # the most recently written first
    by: Required[str]  # text (the same normalised text) or meaning (vectors)
    similarity: Required[float]  # the lowest cosine (or word overlap) joining the group
    mixed: list[str]  # what differs among them that a merge may care about: kind, key


class DuplicatesAnswer(TypedDict, total=False):
    groups: Required[list[DuplicateGroup]]  # the largest first, then the most alike
    examined: Required[int]  # active memories compared
    by_meaning: Required[bool]  # false: the service has no embedder, words only
    more: bool  # groups were left out by `limit`
    warnings: list[str]


class Skipped(TypedDict, total=False):
    id: Required[str]
    reason: Required[str]


class RevertAnswer(Written, total=False):
    results: Required[list[Revised]]
    skipped: list[Skipped]  # a notebook's memories that cannot go back (forgotten, ...)


class Forgotten(TypedDict, total=False):
    """One memory (or version, or notebook field) a forget erased, or erased already."""

    id: str
    version: int
    notebook: str
    field: str
    forgotten: Required[bool]
    unchanged: bool
    versions: int  # how many it erased
    disputes_withdrawn: list[Withdrawn]
    would_erase: Object  # a dry run's: names and counts, never the content
    resumes_scrub: bool
    scrub_finished: bool  # an earlier forget's scrub, finished by this one


class ForgetAnswer(Written, total=False):
    results: Required[list[Forgotten]]
    scrub_pending: bool  # bytes wait for `palimpsest scrub` (PostgreSQL)


# -- reads ----------------------------------------------------------------------------------


class VersionShown(TypedDict, total=False):
    """A version as what changed from the one before (shown.version_views)."""

    version: Required[int]
    at: Required[str]
    actor: Required[str]
    op: Required[str]
    scrubbed: bool
    changed: Object
    cleared: list[str]


class LinkShown(TypedDict):
    id: str
    source: str
    target: str
    type: str
    created_at: str
    actor: str


class NotebookShown(TypedDict):
    id: str
    name: str
    summary: str | None
    domain: str | None
    tags: list[str]
    created_at: str


class TombstoneShown(TypedDict, total=False):
    id: Required[str]
    forgotten: Required[bool]
    forgotten_at: Required[str]
    actor: Required[str]
    reason: Required[str]


class MemoryLine(TypedDict, total=False):
    """A memory on one line: of a notebook (inspect), or named by a dispute."""

    id: Required[str]
    kind: str
    status: str
    version: int
    key: str | None
    title: str | None
    text: str
    forgotten: bool


class DisputeShown(TypedDict, total=False):
    """A dispute between two memories, each on a line."""

    id: Required[str]
    status: Required[str]
    version: Required[int]
    memories: Required[list[MemoryLine]]
    reason: Required[str | None]  # None once a forget scrubbed it
    opened_at: Required[str]
    opened_by: Required[str]
    ruling: Object


class InspectAnswer(TypedDict, total=False):
    memory: MemoryShown
    versions: list[VersionShown]
    links: list[LinkShown]
    disputes: list[DisputeShown]
    tombstone: TombstoneShown
    notebook: NotebookShown
    memories: list[MemoryLine]
    pending: list[dict[str, Any]]  # on a replica: its writes to it not yet on the server


class EventShown(TypedDict, total=False):
    key_id: str
    op_id: Required[str]
    at: Required[str]
    actor: Required[str]
    op: Required[str]
    target_type: Required[str]
    target_id: Required[str]
    notebook_id: Required[str | None]
    version: Required[int | None]
    fields: Required[list[str]]
    note: Required[str | None]
    data: Required[Object]
    changes: dict[str, Object]


HistoryAnswer = TypedDict(
    "HistoryAnswer",
    {
        "events": list[EventShown],
        "id": str,  # a diff's: the memory, the two versions, what changed between them
        "from": int,
        "to": int,
        "changes": dict[str, Object],
        "text_diff": str,
    },
    total=False,
)


class Recalled(TypedDict, total=False):
    hits: Required[list[Hit]]
    rules: Required[list[Rule]]
    as_of: Required[str | None]
    note: str  # no hit passes the floor: nothing answers
    left_out: list[str]  # ids of hits past `budget`, best first
    pending: list[dict[str, Any]]  # on a replica: remembers not yet on the server, matching


# -- notebooks and links ----------------------------------------------------------------------


class NotebookAnswer(Written, total=False):
    notebooks: list[NotebookShown]
    notebook: NotebookShown
    unchanged: bool
    diff: dict[str, Object]
    redacted: list[Redacted]
    moved: list[str]  # merge_domains: the notebooks moved
    domain: str


class LinkAnswer(Written, total=False):
    link: Required[LinkShown]
    unchanged: bool
    removed: bool
    versions: dict[str, int]  # each memory end's new version
    diff: dict[str, Object]


# -- disputes -------------------------------------------------------------------------------


class DisputeAnswer(Written, total=False):
    """A dispute opened, ruled on or undone (its id, status, each memory touched); or the
    list of disputes."""

    id: str  # the dispute's
    status: str  # open, ruled or withdrawn
    results: list[Step]
    holds: str
    superseded: str  # the loser, retired by the ruling
    loses: str  # the loser, when it was retired already and stays as it was
    disputes: list[DisputeShown]
    more: int  # disputes left out by `limit`
