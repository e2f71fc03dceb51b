"""What one memory becomes under a set of changes, and what changed.

`edit` applies a parsed `Changes` to a memory; it raises `Unmatched` when the memory does
not qualify (wrong status, a substring that is not there), which a caller reports rather
than applies.
"""

from __future__ import annotations

from typing import Any

from ..domain.errors import ValidationError
from ..domain.model import RETIRED, RULE_KINDS, Memory, to_json
from ..screening import gate
from .parse import Changes, check_rule_fields
from .screen import screen_revision


class Unmatched(Exception):
    """This target does not qualify for the change; it is reported, not applied."""

    def __init__(self, reason: str, *, status_related: bool = False, field: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.status_related = status_related
        self.field = field  # the parameter at fault, when one is


def edit(memory: Memory, changes: Changes, *, now: str, actor: str) -> Memory:
    """What `memory` becomes under `changes` (its version is raised by the caller).

    Raises Unmatched when this target does not qualify (wrong status, missing substring),
    ValidationError when the result would be invalid.
    """
    updated = memory.replace(**changes.sets, **{name: _empty(name) for name in changes.clear})
    check_rule_fields(updated.kind, changes.sets)
    if set(updated.tags) == set(memory.tags):  # a set: the same tags in another order
        updated = updated.replace(tags=memory.tags)
    text = updated.text
    if changes.append is not None:
        gate.screen_joint("append", text, changes.append)
        text = appended(text, changes.append)
    if changes.replace_from is not None:
        if changes.replace_from not in text:
            raise Unmatched(
                "the `replace_from` text is not in the memory's text", field="replace_from"
            )
        text = text.replace(changes.replace_from, changes.replace_to or "", 1)
    if changes.remove is not None:
        if changes.remove not in text:
            raise Unmatched("the `remove` text is not in the memory's text", field="remove")
        text = text.replace(changes.remove, "", 1).strip()
    if not text.strip():
        raise ValidationError("The edit would leave the text empty; to delete, use forget.")
    # Secrets in the new text are screen_revision's, read with the rest of the record.
    updated = updated.replace(text=gate.check_length("text", text))
    if changes.status is not None:
        updated = _with_status(updated, changes.status, changes.note, now)
    if changes.claim:
        if memory.owner is not None and memory.owner != actor:
            raise ValidationError(
                f"This memory is owned by {memory.owner}; `claim` only takes ownerless ones."
            )
        updated = updated.replace(owner=actor)
    validate(updated)
    screen_revision(memory, updated)
    return updated


def appended(text: str, addition: str) -> str:
    """`text` with `addition` at its end: on a new line when `addition` starts with one."""
    if addition.lstrip(" \t").startswith(("\n", "\r")):
        return text.rstrip() + addition.lstrip(" \t").rstrip()
    return f"{text.rstrip()} {addition.strip()}"


def _empty(name: str) -> Any:
    return () if name in ("tags", "anchors") else None


def _with_status(memory: Memory, status: str, note: str | None, now: str) -> Memory:
    if status == "verified":
        if memory.status != "active":
            raise Unmatched(
                f"it is {memory.status}; only active memories can be verified", status_related=True
            )
        return memory.replace(verified_at=now)
    if status in RETIRED:
        if memory.status != "active":
            raise Unmatched(
                f"it is already {memory.status}; only active memories retire", status_related=True
            )
        return memory.replace(status=status, status_note=note)
    if memory.status == "active":
        raise Unmatched(
            "it is already active; only retired memories can be reactivated", status_related=True
        )
    return memory.replace(status="active", status_note=note, superseded_by=None)


def validate(memory: Memory) -> None:
    """Rules that hold for any stored memory, whatever path produced it."""
    if memory.kind in RULE_KINDS and not memory.falsifier:
        raise ValidationError(
            f"A {memory.kind} needs a `falsifier`: the observation that would prove it wrong.",
            field="falsifier",
        )


def changed_fields(old: Memory, new: Memory) -> list[str]:
    skip = {"version"}
    return [
        name
        for name in Memory.__dataclass_fields__
        if name not in skip and getattr(old, name) != getattr(new, name)
    ]


def diff(old: Memory | None, new: Memory | None) -> dict[str, dict[str, Any]]:
    """Field by field, what changed from `old` to `new` (either may be absent)."""
    names = [n for n in Memory.__dataclass_fields__ if n not in ("version", "id", "workspace")]
    result = {}
    for name in names:
        before = getattr(old, name) if old else None
        after = getattr(new, name) if new else None
        if before != after:
            result[name] = {"old": to_json(before), "new": to_json(after)}
    return result
