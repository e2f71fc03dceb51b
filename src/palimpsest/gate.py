"""The write gate: every string Palimpsest would store passes `screen` first.

It refuses what is too long, NUL characters, and secrets (`palimpsest.secrets` holds every
pattern): the refusal names the field and the kind of secret, never the secret itself.
Where a caller asks for it (summaries and notes), `screen_redacting` keeps the text with
each credential replaced by `[REDACTED:kind]` instead.
"""

from __future__ import annotations

from .errors import ValidationError
from .secrets import find_secrets, redact

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
    kinds = sorted({finding.kind for finding in find_secrets(value)})
    if kinds:
        raise ValidationError(
            f"`{field}` holds what looks like a secret ({', '.join(kinds)}); nothing was "
            "stored. Remove it and keep a pointer instead (the vault path or the name of the "
            "environment variable that holds it).",
            field=field,
        )
    return value


def screen_redacting(
    field: str, value: str, *, limit_name: str | None = None
) -> tuple[str, list[str]]:
    """Like `screen`, but credentials become `[REDACTED:kind]`; returns the kinds redacted."""
    check_length(field, value, limit_name=limit_name)
    cleaned, kinds = redact(value)
    return screen(field, cleaned, limit_name=limit_name), kinds
