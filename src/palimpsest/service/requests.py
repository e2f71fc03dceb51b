"""The shapes of what remember and revise take beyond their targets, for mypy: a caller
that names a field wrongly, or gives it the wrong type, fails the type check. At run time
the service still reads every name it is given, and refuses one it does not know with a
`validation` error naming it (revise/parse.py), as every adapter relies on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import TypedDict

# A file anchor: a path relative to the project, or {path, hash}.
AnchorGiven = str | Mapping[str, Any]


class MemoryFields(TypedDict, total=False):
    """A memory's optional fields, as remember takes them (and revise sets them)."""

    title: str | None
    why: str | None
    tags: list[str] | None
    key: str | None
    occurred_at: str | None
    expires_at: str | None
    source: str | None
    anchors: list[AnchorGiven] | None
    severity: str | None  # a rule's: house_style, costly, irreversible
    falsifier: str | None
    check: Mapping[str, Any] | None  # {kind, path, literal, literals}
    bindings: Mapping[str, Any] | None  # {always, moments, targets}
    scope: str | None  # notebook or workspace


class Revision(MemoryFields, total=False):
    """What a revise changes, besides which memories (`id`, `ids`, `texts`, `items`)."""

    kind: str | None
    text: str | None
    clear: list[str] | None  # fields to empty
    append: str | None
    replace_from: str | None
    replace_to: str | None
    remove: str | None
    status: str | None  # superseded, retracted, active, verified
    feedback: str | None  # helped or noise: a mark, no new version
    note: str | None
    because: str | None
    move_to: str | None
    supersede: bool | None
    superseded_by: str | None
    claim: bool | None
    override_reason: str | None
    override_confirm: bool | None


class DisputeRequest(TypedDict, total=False):
    """What `dispute` takes besides its `action`; which of these each action takes is the
    service's rule (disputes.ACTIONS), refused by name."""

    ids: list[str] | None  # open: the two memories; list: disputes naming one of these
    dispute: str | None  # rule, undo: the dispute's id
    holds: str | None
    reason: str | None
    evidence: str | None
    because: str | None
    include_closed: bool | None
    limit: int | None
    idempotency_key: str | None
    dry_run: bool | None
