"""The parameters of the MCP tools: vocabularies, nested objects and shared descriptions.

The vocabularies are spelled out so each schema can list the allowed values; a test keeps
them equal to the model's tuples. Nested objects (`check`, `bindings`, anchors) refuse
unknown keys like the tools themselves do.
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
NotebookClearable = Literal["summary", "domain", "tags"]


@with_config(ConfigDict(extra="forbid"))
class CheckSpec(TypedDict, total=False):
    """A machine check: what must hold in a project directory for the memory to stand."""

    kind: Annotated[
        CheckKind,
        Field(
            description="path_exists: `path` exists. contains / absent: the file at `path` (or "
            "every file directly in that folder) does / does not contain `literal`. "
            "absent_all: none of `literals`. requires: all of `literals`. forbidden: commands "
            "that must not be run, as `literals`, no `path`."
        ),
    ]
    path: Annotated[str, Field(description="A path relative to the project directory.")]
    literal: Annotated[str, Field(description="The text for contains and absent.")]
    literals: Annotated[
        list[str], Field(description="The texts (or commands, for forbidden) of the others.")
    ]


@with_config(ConfigDict(extra="forbid"))
class BindingsSpec(TypedDict, total=False):
    """When a rule applies."""

    always: Annotated[bool, Field(description="True: it applies everywhere in its scope.")]
    moments: Annotated[list[Moment], Field(description="The moments it is checked at.")]
    targets: Annotated[list[str], Field(description="The paths or commands it is about.")]


@with_config(ConfigDict(extra="forbid"))
class AnchorSpec(TypedDict, total=False):
    path: Annotated[str, Field(description="A path relative to the project directory.")]
    hash: Annotated[str, Field(description="The file's content hash when last verified.")]


def describe(description: str) -> Any:
    return Field(description=description)


# -- parameters shared by several tools -----------------------------------------------------

MemoryId = Annotated[str | None, describe("A memory id (from remember, recall or inspect).")]
MemoryIds = Annotated[
    list[str] | None,
    describe("Several memory ids; targets that do not qualify come back unmatched."),
]
Title = Annotated[str | None, describe("A short label, up to 200 characters.")]
Why = Annotated[str | None, describe("Why it matters or why it was decided.")]
Tags = Annotated[
    list[str] | None,
    describe("Tags; on revise they replace the whole set (to remove them all, use `clear`)."),
]
Key = Annotated[
    str | None,
    describe(
        "A stable handle, unique among the notebook's active memories (a setting's name, say); "
        "recall finds it exactly."
    ),
]
OccurredAt = Annotated[
    str | None, describe("When it happened in the world: an RFC 3339 time or a date (2026-05-01).")
]
ExpiresAt = Annotated[
    str | None,
    describe(
        "When it stops being true (RFC 3339 or a date); after that it leaves recall on its own."
    ),
]
Source = Annotated[
    str | None, describe("Where it comes from: a file, URL, commit, ticket or conversation.")
]
Anchors = Annotated[
    list[str | AnchorSpec] | None,
    describe("Project-relative files it is about: paths, or {path, hash} objects."),
]
SeverityParam = Annotated[
    Severity | None, describe("For a rule: how bad breaking it is, weakest first.")
]
Falsifier = Annotated[
    str | None,
    describe(
        "For a rule or orientation (required there): the observation that would prove it wrong."
    ),
]
CheckParam = Annotated[CheckSpec | None, describe("A machine check, e.g. {kind, path, literal}.")]
BindingsParam = Annotated[BindingsSpec | None, describe("For a rule: when it applies.")]
ScopeParam = Annotated[
    Scope | None, describe("For a rule: its notebook only (default) or the whole workspace.")
]
Because = Annotated[
    str | None,
    describe("One sentence saying why; required to weaken or retire a rule. Kept in history."),
]
IdempotencyKey = Annotated[
    str | None,
    describe(
        "Any string unique to this request: a retry with the same key and request returns the "
        "first answer and writes nothing more."
    ),
]
DryRun = Annotated[bool, describe("Check everything and return what would change; write nothing.")]
