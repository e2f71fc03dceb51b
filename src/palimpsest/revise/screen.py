"""The gate on a whole record: what a memory stores, read together as the gate reads it."""

from __future__ import annotations

from ..domain.errors import ValidationError
from ..domain.model import Memory
from ..screening import gate


def record_fields(memory: Memory) -> list[tuple[str, str]]:
    """The strings a memory stores, in reading order (a title or key before the text)."""
    fields = [
        (name, getattr(memory, name))
        for name in ("title", "key", "text", "why", "falsifier", "source")
        if getattr(memory, name)
    ]
    fields += [("tags", tag) for tag in memory.tags]
    if memory.check is not None:
        literals = (memory.check.literal, *memory.check.literals)
        fields += [("check", literal) for literal in literals if literal]
    if memory.bindings is not None:
        fields += [("bindings", target) for target in memory.bindings.targets]
    return fields


def screen_revision(old: Memory, new: Memory) -> None:
    """The gate on the whole record as it would stand after a change to `old`.

    A record the gate flags (one filed before it grew stricter) may still be retired,
    re-tagged or verified: those leave what it says as it was. Anything else is refused,
    pointing to forget.
    """
    fields, before = record_fields(new), record_fields(old)
    if fields == before:
        return
    try:
        gate.screen_record(fields)
    except ValidationError:
        if not gate.record_flagged(before):
            raise
        if _untagged(fields) == _untagged(before):
            return
        gate.screen_record(fields, already=True)


def screen_successor(successor: Memory, old: Memory) -> None:
    """A supersede files what `old` said as a new record: it passes the gate whole."""
    try:
        gate.screen_record(record_fields(successor))
    except ValidationError:
        if not gate.record_flagged(record_fields(old)):
            raise
        gate.screen_record(record_fields(successor), already=True)


def _untagged(fields: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, value) for name, value in fields if name != "tags"]


def screen_notes(record: Memory, **notes: str | None) -> None:
    """Refuse a note or reason that completes a secret with the record it is stored with.

    Each passed the gate alone when parsed. Read beside each field of the record (joined,
    and glued where they meet, as the gate reads a record), half a key in the text and half
    in the note is refused like the key. A record flagged before this change is no reason
    to refuse: only what the note adds counts.
    """
    fields = [value for _, value in record_fields(record)]
    for name, note in notes.items():
        for value in fields:
            if note:
                gate.screen_joint(name, value, note)
