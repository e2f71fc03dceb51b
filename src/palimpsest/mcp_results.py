"""The shapes of the MCP tools' answers, published as each tool's output schema.

The service's answers are plain dicts; these types only describe them. Every key is
optional and unknown keys pass through (`extra="allow"`), so the schema documents the
answer without ever dropping or rejecting part of it: a result that committed must reach
the client whole.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict

_OPEN = ConfigDict(extra="allow")

Items = list[dict[str, Any]]


def _(description: str) -> Any:
    return Field(description=description)


_SEQ = _("The sequence number of the event written (absent in a dry run).")
_REPLAYED = _("True when an `idempotency_key` was seen before: this is the first answer again.")
_DRY_RUN = _("True when nothing was written because `dry_run` was set.")


@with_config(_OPEN)
class RememberResult(TypedDict, total=False):
    """What remember filed (or found already filed)."""

    id: Annotated[str, _("The memory's id (the existing one for a duplicate).")]
    version: Annotated[int, _("Its version: 1 for a new memory.")]
    seq: Annotated[int, _SEQ]
    notebook: Annotated[str, _("The notebook's name.")]
    superseded: Annotated[
        Items, _("The memories retired by `supersedes`: {id, version, seq} each.")
    ]
    duplicate_of: Annotated[
        str, _("Set when the same text and kind were already active in the notebook.")
    ]
    written: Annotated[bool, _("False when nothing was written (a duplicate).")]
    memory: Annotated[dict[str, Any], _("In a dry run: the memory as it would be filed.")]
    dry_run: Annotated[bool, _DRY_RUN]
    replayed: Annotated[bool, _REPLAYED]


@with_config(_OPEN)
class RecallResult(TypedDict, total=False):
    """What recall found."""

    hits: Annotated[
        Items,
        _(
            "Best first: id, kind, notebook, title, text, tags, key, score, status, version, "
            "recorded_at, occurred_at, verified_at, possibly_stale, expired."
        ),
    ]
    rules: Annotated[
        Items,
        _(
            "Standing rules of the notebooks the hits come from (and workspace-wide ones): "
            "id, kind, text, severity, scope, check."
        ),
    ]
    as_of: Annotated[str | None, _("The past time answered from, or null for now.")]


@with_config(_OPEN)
class ReviseResult(TypedDict, total=False):
    """What revise changed, and what it left alone."""

    redacted: Annotated[
        Items, _("With `redact`: {field, kinds} for each credential replaced in the note.")
    ]
    results: Annotated[
        Items,
        _(
            "Per memory changed: id, version, seq, changed (field names); or unchanged: true. "
            "A supersede also gives `superseded`; a dry run gives `diff`."
        ),
    ]
    unmatched: Annotated[
        Items,
        _(
            "Targets that did not qualify and are unchanged: target, reason, and ids when "
            "several memories share the text."
        ),
    ]
    warnings: Annotated[list[str], _("Things to act on, such as unmatched targets.")]
    dry_run: Annotated[bool, _DRY_RUN]
    replayed: Annotated[bool, _REPLAYED]


@with_config(_OPEN)
class RevertResult(TypedDict, total=False):
    """What revert set back."""

    results: Annotated[
        Items, _("Per memory: id, version, seq, changed (field names); or unchanged: true.")
    ]
    dry_run: Annotated[bool, _DRY_RUN]
    replayed: Annotated[bool, _REPLAYED]


@with_config(_OPEN)
class ForgetResult(TypedDict, total=False):
    """What forget erased."""

    results: Annotated[
        Items,
        _("Per memory, version or notebook erased: id or notebook, forgotten, seq, versions."),
    ]
    scrub_pending: Annotated[
        bool, _("True until no file keeps the bytes (a reader, or PostgreSQL's rewrite).")
    ]
    dry_run: Annotated[bool, _DRY_RUN]
    replayed: Annotated[bool, _REPLAYED]


@with_config(_OPEN)
class InspectResult(TypedDict, total=False):
    """One memory whole, one notebook with its memories, or a tombstone."""

    memory: Annotated[dict[str, Any], _("Every field of the memory, as it is now.")]
    versions: Annotated[
        Items, _("Every version: version, seq, at, actor, op, memory (or scrubbed: true).")
    ]
    links: Annotated[Items, _("Links from or to it: id, source, target, type, created_at, actor.")]
    tombstone: Annotated[
        dict[str, Any],
        _("For a forgotten memory, all that remains: id, forgotten_at, actor, reason."),
    ]
    notebook: Annotated[dict[str, Any], _("The notebook: id, name, summary, domain, tags.")]
    memories: Annotated[
        Items, _("The notebook's memories: id, kind, status, version, key, title, text.")
    ]


@with_config(_OPEN)
class HistoryResult(TypedDict, total=False):
    """Events, or the difference between two versions of a memory."""

    events: Annotated[
        Items,
        _(
            "Oldest first: seq, op_id, at, actor, op, target_type, target_id, notebook_id, "
            "version, fields, note, data, and changes ({field: {old, new}}) while the content "
            "is on record."
        ),
    ]
    id: Annotated[str, _("With a diff: the memory compared.")]
    changes: Annotated[
        dict[str, Any], _("With a diff: {field: {old, new}} from `diff_from` to `diff_to`.")
    ]
    text_diff: Annotated[str, _("With a diff: a unified line diff of the text.")]


@with_config(_OPEN)
class NotebookResult(TypedDict, total=False):
    """Notebooks listed, the notebook created or edited, or the notebooks merged."""

    notebooks: Annotated[Items, _("list: id, name, summary, domain, tags, created_at.")]
    notebook: Annotated[dict[str, Any], _("create and edit: the notebook as it is now.")]
    seq: Annotated[int, _SEQ]
    unchanged: Annotated[bool, _("edit: true when it already said that.")]
    moved: Annotated[list[str], _("merge_domains: the names of the notebooks moved.")]
    redacted: Annotated[
        Items, _("With `redact`: {field, kinds} for each credential replaced in the summary.")
    ]
    domain: Annotated[str, _("merge_domains: the domain they are in now.")]
    dry_run: Annotated[bool, _DRY_RUN]
    replayed: Annotated[bool, _REPLAYED]


@with_config(_OPEN)
class LinkResult(TypedDict, total=False):
    """The link made or removed."""

    link: Annotated[dict[str, Any], _("id, source, target, type, created_at, actor.")]
    removed: Annotated[bool, _("True when the link was taken away.")]
    versions: Annotated[dict[str, int], _("The new version of each memory linked.")]
    unchanged: Annotated[bool, _("True when that link already existed.")]
    dry_run: Annotated[bool, _DRY_RUN]
    replayed: Annotated[bool, _REPLAYED]


@with_config(_OPEN)
class DoctorResult(TypedDict, total=False):
    """What needs a person's attention, each with the fix."""

    secrets: Annotated[
        Items,
        _(
            "Secrets stored before the gate: id and version (or notebook), fields with the "
            "kinds found, and `fix`, the forget that removes it. Never the secret itself."
        ),
    ]
    possibly_stale: Annotated[Items, _("Active memories not verified in time: id, kind, text.")]
    expired: Annotated[Items, _("Memories past expires_at but still active: id, kind, text.")]
    ownerless: Annotated[Items, _("Active memories without an owner: id, kind, text.")]
    scrub_pending: Annotated[bool, _("True when a forget's cleanup still waits.")]
    pending_scrubs: Annotated[
        Items, _("Forgets whose bytes are still in the files: id, since, fix (the command).")
    ]
