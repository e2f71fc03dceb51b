"""The decisions about one memory: the step a change makes, its operation, or the refusal.

A `Step` is one new version of a memory and what its event records; the service writes
it as it stands, inside the transaction in which it read the memory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..domain.errors import Conflict, ValidationError
from ..domain.model import CONTENT_FIELDS, RETIRED, RULE_KINDS, Memory, Notebook
from ..screening import gate
from .edit import edit, validate
from .parse import RULE_FIELDS, Changes, check_rule_fields
from .policy import check_ownership, require_because
from .screen import record_fields, screen_notes, screen_successor


@dataclass(frozen=True)
class Step:
    """One new version of a memory (`old` None: it is new) and what its event records."""

    op: str
    old: Memory | None
    new: Memory
    note: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


def event_reasons(note: str | None, because: str | None) -> tuple[str | None, dict[str, Any]]:
    """What an event keeps of a change's reasons: `note`, else `because`, as its note; and
    `because` in its data too when both are given (a rule's weakening keeps its reason)."""
    if note and because:
        return note, {"because": because}
    return note or because, {}


def check_expected_version(memory: Memory, expected: int | None) -> None:
    """Refuse (conflict) a change made against a version that is no longer current."""
    if expected is not None and expected != memory.version:
        raise Conflict(
            f"{memory.id} is at version {memory.version}, not {expected}: someone "
            f"changed it since you read it. Re-read it (inspect), then pass "
            f"`expected_version` {memory.version}.",
            field="expected_version",
        )


def qualifies(memory: Memory, status: str | None) -> bool:
    """Whether `memory` can take `status`: the tie-break between memories sharing a text."""
    if status in RETIRED or status == "verified":
        return memory.status == "active"
    if status == "active":
        return memory.status in RETIRED
    return True


def text_targets(matches: list[Memory], status: str | None) -> list[Memory]:
    """The memories an exact text names: when several share it, those that can take
    `status` (a retire picks the active one among retired copies); one means a target."""
    qualifying = [m for m in matches if qualifies(m, status)]
    return qualifying if len(matches) > 1 and qualifying else matches


def op_name(changes: Changes) -> str:
    """The operation an event of this revise records: the status change names it first."""
    if changes.status in RETIRED:
        return "retire"
    if changes.status == "active":
        return "reactivate"
    if changes.status == "verified":
        return "verify"
    if changes.move_to is not None:
        return "move"
    if changes.claim:
        return "claim"
    return "revise"


def refuse_kept_rule_fields(old: Memory, new: Memory) -> None:
    """A rule made into another kind would keep fields no other kind may hold: they are
    cleared in the same revise (their values stay in the history), or the kind stays."""
    if new.kind == old.kind or new.kind in RULE_KINDS:
        return
    evidence = new.check is not None and new.check.kind != "forbidden"  # any kind may hold it
    held = [
        name
        for name in RULE_FIELDS
        if getattr(new, name) is not None and not (name == "check" and evidence)
    ]
    if held:
        listed = ", ".join(f'"{name}"' for name in held)
        raise ValidationError(
            f"A {new.kind} holds none of a rule's fields: list {listed} in `clear` in the same "
            "revise (the history keeps their values), or keep the kind.",
            field="kind",
        )


def revision(
    old: Memory, new: Memory, changes: Changes, *, actor: str, may_override: bool
) -> Step | None:
    """The step that makes `new` (from `edit`) the next version of `old`; None: unchanged."""
    check_ownership(old, new, changes, actor=actor, may_override=may_override)
    require_because(old, new, changes.because)
    refuse_kept_rule_fields(old, new)
    if new == old:
        return None
    new = new.replace(version=old.version + 1)
    screen_notes(new, note=changes.note, because=changes.because,
                 override_reason=changes.override_reason)  # fmt: skip
    override = {"override_reason": changes.override_reason} if changes.override_reason else {}
    note, kept = event_reasons(changes.note, changes.because)
    return Step(op_name(changes), old, new, note, override | kept)


def check_move(destination: Notebook, domain: str | None, because: str | None) -> None:
    """A move into another domain needs a reason: rules and checks are scoped by domain."""
    if destination.domain != domain and not because:
        raise ValidationError(
            f"Moving into notebook {destination.name!r} changes the domain from {domain!r} "
            f"to {destination.domain!r}; give `because`.",
            field="because",
        )


def filed(
    values: Mapping[str, Any], *, id: str, workspace: str, notebook_id: str, now: str, actor: str
) -> Memory:
    """The first version of a memory filed with `values`, refused if no store may hold it."""
    check_rule_fields(values["kind"], values)
    memory = Memory(id=id, workspace=workspace, notebook_id=notebook_id, version=1,
                    recorded_at=now, author=actor, owner=actor, **values)  # fmt: skip
    validate(memory)
    gate.screen_record(record_fields(memory))
    return memory


def duplicate_of(matches: Iterable[Memory], kind: str) -> Memory | None:
    """The active memory of `kind` that already holds this text, if one does."""
    return next((m for m in matches if m.kind == kind and m.status == "active"), None)


def not_applied(same: Memory, values: Mapping[str, Any], supersedes: list[str]) -> list[str]:
    """What filing `values` again as `same` leaves unapplied; refused when it supersedes."""
    if supersedes:
        raise ValidationError(
            f"This text is already the active memory {same.id}, so nothing new would be filed "
            "to supersede those memories. Retire them with revise (status superseded), or "
            "change the text.",
            field="supersedes",
        )
    return sorted(
        name
        for name, value in values.items()
        if name not in ("text", "kind") and getattr(same, name) != value
    )


def not_supersedable(old: Memory) -> str:
    """Why `old` cannot be superseded, and what to do instead."""
    if old.status == "superseded" and old.superseded_by:
        return f"{old.id} is already superseded by {old.superseded_by}: supersede that one instead."
    return (
        f"{old.id} is {old.status}, so nothing active is left to replace: remember the new "
        "memory without `supersedes` (the old one stays retired), or make the old one active "
        "again first with revise (status active) if it should be replaced rather than dropped."
    )


def retirement(old: Memory, successor_id: str, *, note: str | None, because: str | None) -> Step:
    """`old` retired as superseded by `successor_id`: the first half of a supersede."""
    if old.status != "active":
        raise ValidationError(not_supersedable(old), field="supersedes")
    if old.id == successor_id:
        raise ValidationError("A memory cannot supersede itself.", field="supersedes")
    retired = old.replace(
        status="superseded", status_note=note, superseded_by=successor_id, version=old.version + 1
    )
    require_because(old, retired, because)
    screen_notes(retired, note=note, because=because)
    kept_note, kept = event_reasons(note, because)
    return Step("supersede", old, retired, kept_note, {"superseded_by": successor_id} | kept)


def superseding_content(old: Memory, changes: Changes, *, now: str, actor: str) -> Memory:
    """What a supersede's successor says: `old` edited, its status left to the retirement."""
    content_only = dataclasses.replace(changes, supersede=False, status=None)
    return edit(old, content_only, now=now, actor=actor)


def supersession(
    old: Memory, content: Memory, changes: Changes, *, id: str, notebook_id: str, now: str,
    actor: str,
) -> tuple[Step, Step]:  # fmt: skip
    """A supersede: `old` retires intact, and what `content` says is filed as memory `id`.

    Returns the retirement, then the filing of the successor (owned by `actor`).
    """
    values = {name: getattr(content, name) for name in CONTENT_FIELDS}
    successor = Memory(id=id, workspace=old.workspace, notebook_id=notebook_id, version=1,
                       recorded_at=now, author=actor, owner=actor, **values)  # fmt: skip
    screen_successor(successor, old)
    require_because(old, successor.replace(id=old.id), changes.because)
    retired = retirement(old, successor.id, note=changes.note, because=changes.because)
    screen_notes(successor, note=changes.note)
    return retired, Step("remember", None, successor, changes.note, {"supersedes": old.id})
