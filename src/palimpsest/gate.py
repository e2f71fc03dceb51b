"""The write gate: every string Palimpsest would store passes `screen` first.

For now it enforces size limits and refuses blank required values; secret detection
joins here (one place for every path in) with the write-gate issue.
"""

from __future__ import annotations

from .errors import ValidationError

LIMITS = {
    "text": 8_000,
    "title": 200,
    "why": 2_000,
    "falsifier": 1_000,
    "source": 1_000,
    "key": 200,
    "tag": 64,
    "note": 2_000,
    "because": 1_000,
    "summary": 4_000,
    "domain": 100,
    "notebook": 100,
    "literal": 1_000,
    "path": 1_000,
    "anchors": 1_000,
    "move_to": 100,
    "moment": 100,
    "target": 1_000,
}
MAX_TAGS = 50


def check_length(field: str, value: str, *, limit_name: str | None = None) -> str:
    """Refuse `value` if it is longer than `field` allows (for what is read, not stored)."""
    limit = LIMITS[limit_name or field.rsplit(".", 1)[-1]]
    if len(value) > limit:
        raise ValidationError(
            f"`{field}` is {len(value)} characters; the limit is {limit}. Shorten it "
            "(a memory should hold one idea; split longer material into several).",
            field=field,
        )
    return value


def screen(field: str, value: str, *, limit_name: str | None = None) -> str:
    """Return `value` if it may be stored in `field`, else refuse naming the field."""
    check_length(field, value, limit_name=limit_name)
    if "\x00" in value:
        raise ValidationError(f"`{field}` contains a NUL character; remove it.", field=field)
    return value
