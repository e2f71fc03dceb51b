"""The parameters of the MCP tools: vocabularies, nested objects and shared descriptions.

The vocabularies are spelled out so each schema can list the allowed values; a test keeps
them equal to the model's tuples. Nested objects (`check`, `bindings`, anchors) refuse
unknown keys, and take values in their JSON types, like the tools themselves do.

Every agent pays for the tool list before its first call, so what several tools share is
explained once: a field revise sets as remember does is published as `AS_IN_REMEMBER`
(its type only; validation still uses the full type), and the meaning of
`idempotency_key` and `dry_run` is in the server instructions.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict

Kind = Literal[
    "fact", "decision", "pattern", "error", "debt", "rule", "orientation",
    "note", "reference", "issue", "option", "assumption", "goal",
]  # fmt: skip
Status = Literal["active", "superseded", "retracted"]
ReviseStatus = Literal["superseded", "retracted", "active", "verified"]
Feedback = Literal["helped", "noise"]
Severity = Literal["house_style", "costly", "irreversible"]
Scope = Literal["notebook", "workspace"]
CheckKind = Literal["path_exists", "contains", "absent", "absent_all", "requires", "forbidden"]
Moment = Literal["before_command", "before_commit", "session_start", "before_edit"]
LinkType = Literal[
    "supersedes", "contradicts", "relates_to", "depends_on", "derived_from", "caused_by",
    "part_of",
]  # fmt: skip
Clearable = Literal[
    "anchors", "bindings", "check", "expires_at", "falsifier", "key", "occurred_at", "scope",
    "severity", "source", "tags", "title", "why",
]  # fmt: skip
NotebookAction = Literal["list", "create", "edit", "merge_domains"]
DisputeAction = Literal["open", "list", "rule", "undo"]
NotebookClearable = Literal["summary", "domain", "tags"]


@with_config(ConfigDict(extra="forbid", strict=True))
class CheckSpec(TypedDict, total=False):
    # What must hold in a project directory for the memory to stand. (No docstring: pydantic
    # would publish it beside the parameter's own description.)

    kind: Annotated[
        CheckKind,
        Field(
            description="path_exists: `path` exists. contains, absent: the file at `path` (or "
            "each file in that folder) has, lacks `literal`. absent_all: lacks all `literals`. "
            "requires: has all `literals`. forbidden: `literals` are commands never to run."
        ),
    ]
    path: Annotated[str, Field(description="Relative to the project directory.")]
    literal: Annotated[str, Field(description="For contains, absent.")]
    literals: Annotated[list[str], Field(description="For the others.")]


@with_config(ConfigDict(extra="forbid", strict=True))
class BindingsSpec(TypedDict, total=False):
    # When a rule applies (no docstring, as for CheckSpec).

    always: Annotated[bool, Field(description="Everywhere in its scope.")]
    moments: Annotated[list[Moment], Field(description="When it is checked.")]
    targets: Annotated[list[str], Field(description="Paths or commands it is about.")]


@with_config(ConfigDict(extra="forbid", strict=True))
class AnchorSpec(TypedDict, total=False):
    path: Annotated[str, Field(description="Relative to the project directory.")]
    # Stored as given and not compared with anything yet, so the tool list leaves it out.
    hash: Annotated[str, Field(description="Any digest of the file as last verified.")]


def describe(description: str) -> Any:
    return Field(description=description)


def _remembers(schema: dict[str, Any]) -> None:
    """Publish a field revise sets as remember files it by its JSON type alone: its meaning
    and shape are in remember's schema, and revise's description says so."""
    kinds = [schema.get("type")] + [option.get("type") for option in schema.get("anyOf", [])]
    schema.clear()
    schema["type"] = next((k for k in kinds if k not in (None, "null")), "object")


AS_IN_REMEMBER = Field(json_schema_extra=_remembers)


def _values_only(schema: dict[str, Any]) -> None:
    """A short list of allowed values, published on revise without remember's description:
    cheaper than a refusal and a retry when an agent guesses ("high" for a severity)."""
    values = next(o["enum"] for o in [schema, *schema.get("anyOf", [])] if "enum" in o)
    schema.clear()
    schema["enum"] = values


VALUES_ONLY = Field(json_schema_extra=_values_only)

# Times are read the same way everywhere (a bare date is midnight UTC).
TIME = "e.g. 2026-05-01"


def _one_or_many(schema: dict[str, Any]) -> None:
    """A filter taking one value or a list, published with its values listed once (or, for
    kinds, not at all: remember lists and defines them)."""
    values = next((o["enum"] for o in schema.get("anyOf", []) if "enum" in o), None)
    one: dict[str, Any] = {"enum": values} if values and len(values) < 5 else {"type": "string"}
    description = schema["description"]
    schema.clear()
    schema.update(anyOf=[one, {"type": "array", "items": one}], description=description)


KindFilter = Annotated[
    Kind | list[Kind] | None,
    Field(description="Only this kind, or these (see remember).", json_schema_extra=_one_or_many),
]
StatusFilter = Annotated[
    Status | list[Status] | None,
    Field(
        description="Only this status, or these (default: active).",
        json_schema_extra=_one_or_many,
    ),
]


# -- parameters shared by several tools -----------------------------------------------------

KIND_MEANINGS = (
    "fact: true now. decision: a choice and its reason. pattern: how things are done here. "
    "error: a mistake and its fix. debt: a shortcut to repay. rule: must or must not. "
    "orientation: softer guidance. note: anything else. reference: a person, system or "
    "organisation. issue: an open question or problem. option: an alternative weighed. "
    "assumption: a premise not yet checked. goal: an aim."
)
LINK_MEANINGS = (
    "supersedes: source replaces target. contradicts: both cannot hold. relates_to: same "
    "subject. depends_on: source holds only while target does. derived_from: source was "
    "worked out from target. caused_by: target led to source. part_of: source is a piece "
    "of target."
)
MemoryId = Annotated[str | None, describe("The memory's id.")]
MemoryIds = Annotated[list[str] | None, describe("Several ids, the same change to each.")]
Title = Annotated[str | None, describe("A short label, up to 200 characters.")]
Why = Annotated[str | None, describe("Why it matters, or why it was decided.")]
Tags = Annotated[list[str] | None, describe("Labels to filter by; on revise, the whole new set.")]
Key = Annotated[
    str | None,
    describe("A handle unique among the notebook's active memories; recall finds it exactly."),
]
OccurredAt = Annotated[str | None, describe(f"When it happened in the world, {TIME}.")]
ExpiresAt = Annotated[
    str | None, describe(f"When it stops being true, {TIME}; then it leaves recall.")
]
Source = Annotated[
    str | None, describe("Where it came from: a file, URL, commit, ticket or conversation.")
]


def _paths_or_objects(schema: dict[str, Any]) -> None:
    """Anchors, published without a separate definition of the two-key object."""
    description = schema["description"]
    schema.clear()
    schema.update(type="array", description=description)


Anchors = Annotated[
    list[str | AnchorSpec] | None,
    Field(
        description="Files it is about: paths relative to the project.",
        json_schema_extra=_paths_or_objects,
    ),
]
SeverityParam = Annotated[
    Severity | None, describe("For a rule: the cost of breaking it, mildest first.")
]
Falsifier = Annotated[
    str | None, describe("Required for a rule or orientation: what would prove it wrong.")
]
CheckParam = Annotated[CheckSpec | None, describe("For a rule: a machine check.")]
BindingsParam = Annotated[BindingsSpec | None, describe("For a rule: when it applies.")]
ScopeParam = Annotated[
    Scope | None, describe("For a rule: its notebook (default) or the whole workspace.")
]
# A forbidden check's trial (service/guard.py): shared by remember and revise.
AcceptRefusing = Annotated[
    list[str] | None,
    describe("Seen commands a too-broad forbidden check is meant to refuse; with `because`."),
]
KeepAsNote = Annotated[
    bool, describe("File a too-broad forbidden check anyway, tagged contested: it refuses nothing.")
]
Because = Annotated[str | None, describe("Why, in a sentence; required to weaken a rule.")]
# Explained once, in the server instructions.
IdempotencyKey = Annotated[str | None, Field()]
DryRun = Annotated[bool, Field()]
ExpectedVersion = Annotated[int | None, Field()]  # the instructions say what it means


# A project directory, for `check` and `doctor`: the CLI and a stdio server default to their
# working directory; an HTTP server reads only those its owner configured.
ProjectDir = Annotated[
    str | None,
    Field(description="The project directory."),
]
