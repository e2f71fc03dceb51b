"""The MCP tools: each one takes DESIGN section 7's parameters and calls the service.

A tool parses nothing itself beyond what its signature declares; every rule lives in the
service, which refuses with the errors `mcp_server` turns into tool results. Parameters a
caller leaves out (None, or a flag left false) are not passed on, so "omit keeps" holds.
Each parameter carries its description here; each tool's description is in
`mcp_descriptions`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar, cast

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict

from .errors import ValidationError
from .mcp_results import (
    ForgetResult,
    HistoryResult,
    InspectResult,
    LinkResult,
    NotebookResult,
    RecallResult,
    RememberResult,
    RevertResult,
    ReviseResult,
)
from .service import Service

R = TypeVar("R")

# The model's vocabularies, spelled out so the schema can list them (a test keeps them equal
# to the model's tuples).
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


def _opt(description: str) -> Any:
    return Field(description=description)


# -- parameters shared by several tools -----------------------------------------------------

MemoryId = Annotated[str | None, _opt("A memory id (from remember, recall or inspect).")]
MemoryIds = Annotated[
    list[str] | None, _opt("Several memory ids; targets that do not qualify come back unmatched.")
]
Title = Annotated[str | None, _opt("A short label, up to 200 characters.")]
Why = Annotated[str | None, _opt("Why it matters or why it was decided.")]
Tags = Annotated[
    list[str] | None,
    _opt("Tags; on revise they replace the whole set (to remove them all, use `clear`)."),
]
Key = Annotated[
    str | None,
    _opt(
        "A stable handle, unique among the notebook's active memories (a setting's name, say); "
        "recall finds it exactly."
    ),
]
OccurredAt = Annotated[
    str | None, _opt("When it happened in the world: an RFC 3339 time or a date (2026-05-01).")
]
ExpiresAt = Annotated[
    str | None,
    _opt("When it stops being true (RFC 3339 or a date); after that it leaves recall on its own."),
]
Source = Annotated[
    str | None, _opt("Where it comes from: a file, URL, commit, ticket or conversation.")
]
Anchors = Annotated[
    list[str | AnchorSpec] | None,
    _opt("Project-relative files it is about: paths, or {path, hash} objects."),
]
SeverityParam = Annotated[
    Severity | None, _opt("For a rule: how bad breaking it is, weakest first.")
]
Falsifier = Annotated[
    str | None,
    _opt("For a rule or orientation (required there): the observation that would prove it wrong."),
]
CheckParam = Annotated[CheckSpec | None, _opt("A machine check, e.g. {kind, path, literal}.")]
BindingsParam = Annotated[BindingsSpec | None, _opt("For a rule: when it applies.")]
ScopeParam = Annotated[
    Scope | None, _opt("For a rule: its notebook only (default) or the whole workspace.")
]
Because = Annotated[
    str | None,
    _opt("One sentence saying why; required to weaken or retire a rule. Kept in history."),
]
IdempotencyKey = Annotated[
    str | None,
    _opt(
        "Any string unique to this request: a retry with the same key and request returns the "
        "first answer and writes nothing more."
    ),
]
DryRun = Annotated[bool, _opt("Check everything and return what would change; write nothing.")]


def _given(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments a caller gave: None and false flags mean "not given" to the service."""
    return {k: v for k, v in arguments.items() if k != "self" and v is not None and v is not False}


class PalimpsestTools:
    """The tools, bound to one service. `mcp_server` registers each public method."""

    def __init__(self, service: Service):
        self.service = service

    @staticmethod
    def _answer(_shape: type[R], result: dict[str, Any]) -> R:
        return cast(R, result)

    def remember(
        self,
        notebook: Annotated[
            str, _opt("The notebook's name or id; a new name creates the notebook.")
        ],
        kind: Annotated[Kind, _opt("What sort of knowledge this is.")],
        text: Annotated[str, _opt("The memory itself: one idea, up to 8,000 characters.")],
        title: Title = None,
        why: Why = None,
        tags: Tags = None,
        key: Key = None,
        occurred_at: OccurredAt = None,
        expires_at: ExpiresAt = None,
        source: Source = None,
        anchors: Anchors = None,
        supersedes: Annotated[
            list[str] | None,
            _opt("Ids of active memories this one replaces; they retire as superseded."),
        ] = None,
        severity: SeverityParam = None,
        falsifier: Falsifier = None,
        check: CheckParam = None,
        bindings: BindingsParam = None,
        scope: ScopeParam = None,
        because: Because = None,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> RememberResult:
        return self._answer(RememberResult, self.service.remember(**_given(locals())))

    def recall(
        self,
        query: Annotated[
            str,
            _opt("Words to search for, a memory id, or a key. Empty: filter only."),
        ] = "",
        notebook: Annotated[str | None, _opt("Only this notebook (name or id).")] = None,
        domain: Annotated[str | None, _opt("Only notebooks of this domain.")] = None,
        kind: Annotated[Kind | list[Kind] | None, _opt("Only this kind, or these kinds.")] = None,
        tags: Annotated[
            list[str] | None, _opt("Only memories carrying every one of these.")
        ] = None,
        status: Annotated[
            Status | list[Status] | None,
            _opt("Only these statuses (default: active; with include_retired: all)."),
        ] = None,
        since: Annotated[
            str | None, _opt("Only what occurred (else was recorded) at or after this time.")
        ] = None,
        until: Annotated[
            str | None, _opt("Only what occurred (else was recorded) at or before this time.")
        ] = None,
        limit: Annotated[int | None, _opt("At most this many hits, 1 to 200 (default 10).")] = None,
        include_retired: Annotated[
            bool, _opt("Also return superseded and retracted memories.")
        ] = False,
        as_of: Annotated[
            str | None,
            _opt("Answer from the state recorded at this past time (RFC 3339 or a date)."),
        ] = None,
    ) -> RecallResult:
        return self._answer(RecallResult, self.service.recall(**_given(locals())))

    def revise(
        self,
        id: MemoryId = None,
        ids: MemoryIds = None,
        texts: Annotated[
            list[str] | None, _opt("Exact texts of memories in `notebook` (instead of ids).")
        ] = None,
        notebook: Annotated[str | None, _opt("The notebook `texts` are matched in.")] = None,
        items: Annotated[
            list[dict[str, Any]] | None,
            _opt(
                "A batch, all or nothing: [{id, expected_version?, ...any change below}]. "
                "Not combined with other targets or changes."
            ),
        ] = None,
        kind: Annotated[Kind | None, _opt("Change the kind.")] = None,
        text: Annotated[
            str | None, _opt("Replace the whole text (not with append/replace/remove).")
        ] = None,
        title: Title = None,
        why: Why = None,
        tags: Tags = None,
        key: Key = None,
        occurred_at: OccurredAt = None,
        expires_at: ExpiresAt = None,
        source: Source = None,
        anchors: Anchors = None,
        severity: SeverityParam = None,
        falsifier: Falsifier = None,
        check: CheckParam = None,
        bindings: BindingsParam = None,
        scope: ScopeParam = None,
        clear: Annotated[
            list[Clearable] | None, _opt('Fields to empty, e.g. ["expires_at", "tags"].')
        ] = None,
        append: Annotated[str | None, _opt("Text added to the end of the current text.")] = None,
        replace_from: Annotated[
            str | None, _opt("Replace the first occurrence of this (must be in the text)...")
        ] = None,
        replace_to: Annotated[str | None, _opt("...with this.")] = None,
        remove: Annotated[
            str | None, _opt("Delete the first occurrence of this from the text.")
        ] = None,
        status: Annotated[ReviseStatus | None, _opt("Retire, reactivate or verify.")] = None,
        note: Annotated[str | None, _opt("Why the status changes; kept in history.")] = None,
        because: Because = None,
        move_to: Annotated[
            str | None, _opt("Move to this notebook (name or id; created if new).")
        ] = None,
        supersede: Annotated[
            bool, _opt("File the result as a new memory and retire this one (one `id`).")
        ] = False,
        claim: Annotated[bool, _opt("Make an ownerless memory yours (one `id`).")] = False,
        expected_version: Annotated[
            int | None,
            _opt("The version you read (with one `id`); a newer one makes this a conflict."),
        ] = None,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> ReviseResult:
        return self._answer(ReviseResult, self.service.revise(**_given(locals())))

    def revert(
        self,
        id: MemoryId = None,
        version: Annotated[int | None, _opt("The version of `id` to go back to.")] = None,
        notebook: Annotated[
            str | None, _opt("A notebook to revert as a whole (with `as_of`).")
        ] = None,
        as_of: Annotated[
            str | None, _opt("The past time the notebook goes back to (RFC 3339 or a date).")
        ] = None,
        because: Because = None,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> RevertResult:
        return self._answer(RevertResult, self.service.revert(**_given(locals())))

    def forget(
        self,
        id: Annotated[str | None, _opt("The memory to erase.")] = None,
        ids: Annotated[list[str] | None, _opt("Several memories to erase.")] = None,
        version: Annotated[
            int | None, _opt("Erase only this earlier version of `id`, not the memory.")
        ] = None,
        because: Annotated[
            str | None,
            _opt("Required: why it must not stay on disk. Kept in the tombstone; no secrets."),
        ] = None,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> ForgetResult:
        return self._answer(ForgetResult, self.service.forget(**_given(locals())))

    def inspect(
        self,
        id: Annotated[str | None, _opt("The memory to show.")] = None,
        notebook: Annotated[
            str | None, _opt("Or a notebook (name or id) to show with all its memories.")
        ] = None,
    ) -> InspectResult:
        return self._answer(InspectResult, self.service.inspect(**_given(locals())))

    def history(
        self,
        id: Annotated[str | None, _opt("Events of this memory.")] = None,
        notebook: Annotated[str | None, _opt("Events of this notebook and its memories.")] = None,
        actor: Annotated[str | None, _opt("Only events by this actor, e.g. user:ana.")] = None,
        since: Annotated[str | None, _opt("Events at or after this time.")] = None,
        until: Annotated[str | None, _opt("Events at or before this time.")] = None,
        limit: Annotated[int | None, _opt("The latest this many events, 1 to 1000 (100).")] = None,
        diff_from: Annotated[
            int | None, _opt("With `id` and `diff_to`: compare from this version...")
        ] = None,
        diff_to: Annotated[int | None, _opt("...to this one.")] = None,
    ) -> HistoryResult:
        return self._answer(HistoryResult, self.service.history(**_given(locals())))

    def notebook(
        self,
        action: Annotated[NotebookAction, _opt("What to do; see the tool description.")],
        name: Annotated[
            str | None, _opt("create: the new notebook's name. edit: its new name.")
        ] = None,
        notebook: Annotated[str | None, _opt("edit: the notebook to change (name or id).")] = None,
        summary: Annotated[str | None, _opt("create, edit: what the notebook is about.")] = None,
        domain: Annotated[
            str | None, _opt("create, edit: the broad area it belongs to (e.g. infra).")
        ] = None,
        tags: Annotated[
            list[str] | None, _opt("create, edit: its tags (edit replaces the whole set).")
        ] = None,
        clear: Annotated[list[NotebookClearable] | None, _opt("edit: fields to empty.")] = None,
        from_domain: Annotated[
            str | None, _opt("merge_domains: the domain whose notebooks move.")
        ] = None,
        to_domain: Annotated[str | None, _opt("merge_domains: where they move to.")] = None,
        because: Annotated[str | None, _opt("merge_domains (required): why.")] = None,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> NotebookResult:
        given = _given(locals())
        del given["action"]
        call, required, optional = self._notebook_actions()[action]
        for name in sorted(set(given) - required - optional - {"idempotency_key", "dry_run"}):
            takes = ", ".join(sorted(required | optional)) or "no other parameter"
            raise ValidationError(
                f"`{name}` does not go with action {action!r}, which takes {takes}.", field=name
            )
        for name in sorted(required - set(given)):
            raise ValidationError(f"Action {action!r} needs `{name}`.", field=name)
        return self._answer(NotebookResult, call(**given))

    def _notebook_actions(
        self,
    ) -> dict[str, tuple[Callable[..., dict[str, Any]], set[str], set[str]]]:
        """Per action: the service call, the parameters it needs, and those it may take."""

        def merge(from_domain: str, to_domain: str, **rest: Any) -> dict[str, Any]:
            return self.service.merge_domains(source=from_domain, target=to_domain, **rest)

        def listing(**_: Any) -> dict[str, Any]:
            return self.service.notebooks()

        return {
            "list": (listing, set(), set()),
            "create": (self.service.create_notebook, {"name"}, {"summary", "domain", "tags"}),
            "edit": (
                self.service.edit_notebook,
                {"notebook"},
                {"name", "summary", "domain", "tags", "clear"},
            ),
            "merge_domains": (merge, {"from_domain", "to_domain", "because"}, set()),
        }

    def link(
        self,
        source: Annotated[str, _opt("The id the edge starts from (a memory or a notebook).")],
        target: Annotated[str, _opt("The id the edge points to (same sort as `source`).")],
        type: Annotated[LinkType, _opt("What the edge means: source <type> target.")],
        remove: Annotated[bool, _opt("Take this edge away instead of adding it.")] = False,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> LinkResult:
        return self._answer(LinkResult, self.service.link(**_given(locals())))


TOOL_NAMES = (
    "remember", "recall", "revise", "revert", "forget", "inspect", "history", "notebook", "link",
)  # fmt: skip
