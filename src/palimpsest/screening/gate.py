"""The write gate: every string Palimpsest would store passes `screen` first.

It refuses what is too long, what no store can hold (a NUL, a lone surrogate), and secrets
(`screening.secrets` reads each text as its screening copy: markers out, NFKC, no invisible
characters, Cyrillic and Greek look-alikes read as Latin letters; what was sent is stored as
it was): the refusal names the field and the kind of secret, never the secret itself. Where
a caller asks for it (summaries and notes), `screen_redacting` keeps the text with each
credential replaced by `[REDACTED:kind]` instead.

`screen_record` reads the fields of a record together (a title naming a credential whose
value is the text, half a key in each), and `check_actor` holds the one rule for actors.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from ..domain.errors import ValidationError
from .secrets import find_in_parts, find_secrets, redact

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


# Half of a UTF-16 pair: what a client that cuts text mid-emoji sends, and what Python makes
# of bytes that are not UTF-8 (a Latin-1 word on a command line). No store can encode one.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def check_storable(field: str, value: str) -> str:
    """Refuse characters no store holds as text (a NUL, a lone surrogate), naming the field.

    Refused before any store sees them, so both stores answer the same `validation`.
    """
    if "\x00" in value:
        raise ValidationError(f"`{field}` contains a NUL character; remove it.", field=field)
    if _LONE_SURROGATE.search(value):
        raise ValidationError(
            f"`{field}` is not valid Unicode text: it holds half of a character (bytes that "
            "are not UTF-8, or an emoji cut in two). Send it as UTF-8, whole characters only.",
            field=field,
        )
    return value


def screen(field: str, value: str, *, limit_name: str | None = None) -> str:
    """Return `value` if it may be stored in `field`, else refuse naming the field."""
    check_length(field, value, limit_name=limit_name)
    check_storable(field, value)
    kinds = sorted({finding.kind for finding in find_secrets(value)})
    if kinds:
        raise ValidationError(
            f"`{field}` holds what looks like a secret ({', '.join(kinds)}); nothing was "
            f"stored. {_KEEP_OUT}",
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


# The way out, short (every refusal costs the agent's context): a person keeps the value
# in the OS keychain (palimpsest.keychain) and the memory holds its name, which passes.
_KEEP_OUT = (
    "Store it with `palimpsest secret set NAME` (OS keychain; value on stdin) and write "
    "`secret:NAME` instead, or a vault path or env variable name."
)


def screen_record(fields: Sequence[tuple[str, str]], *, already: bool = False) -> None:
    """Refuse a record whose fields, read together, hold a secret (each alone may pass).

    `already`: the record held it before this change, so the way out is forget.
    """
    found = find_in_parts([value for _, value in fields])
    if not found:
        return
    kinds = ", ".join(sorted({kind for kind, _ in found}))
    names = sorted({fields[i][0] for _, touched in found for i in touched})
    where = " and ".join(f"`{name}`" for name in names)
    together = " together hold" if len(names) > 1 else " holds"
    if already:
        fix = (
            "This memory already held it before your change: forget it (or `forget` with its "
            "`version` for the versions that hold it) and file it again without the secret; "
            "retiring, re-tagging and verifying it still work."
        )
    else:
        fix = _KEEP_OUT
    raise ValidationError(
        f"{where}{together} what looks like a secret ({kinds}); nothing was stored. {fix}",
        field=names[0],
    )


def record_flagged(fields: Sequence[tuple[str, str]]) -> bool:
    """Whether `screen_record` would refuse these fields."""
    return bool(find_in_parts([value for _, value in fields]))


def screen_joint(field: str, head: str, tail: str) -> None:
    """Refuse `tail` added to `head` when a secret forms where they meet.

    The rest of a key appended to a text that holds its start is refused like the key.
    """
    kinds = sorted({kind for kind, touched in find_in_parts([head, tail]) if len(touched) > 1})
    if kinds:
        raise ValidationError(
            f"`{field}` completes what looks like a secret with the text it is added to "
            f"({', '.join(kinds)}); nothing was stored. {_KEEP_OUT}",
            field=field,
        )


MAX_ACTOR = 200
_ACTOR = re.compile(r"(user|agent):(\S(?:.*\S)?)", re.DOTALL)


def check_actor(actor: object) -> str:
    """Return `actor` if it may act and be stored: `user:NAME` or `agent:NAME`, screened.

    NAME may hold what login names hold (spaces, a domain, a backslash, an @), never a
    control or invisible character, and is bounded; the refusal never repeats it.
    """
    shape = (
        f"The actor must be `user:NAME` or `agent:NAME`, at most {MAX_ACTOR} characters, "
        "without control or invisible characters (`--actor user:ana`)."
    )
    if not isinstance(actor, str) or len(actor) > MAX_ACTOR:
        raise ValidationError(shape, field="actor")
    match = _ACTOR.fullmatch(actor)
    if match is None or any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in actor):
        raise ValidationError(shape, field="actor")
    if find_secrets(match[2]) or find_secrets(actor):
        raise ValidationError(
            "The actor holds what looks like a secret; it is stored in every event. Name the "
            "person or agent (`user:ana`, `agent:ci`) instead.",
            field="actor",
        )
    return actor


def shown_reference(value: str) -> str:
    """A reference a caller gave (an id, a notebook, an exact text), fit to repeat in an
    answer that it names nothing, or a stand-in when it holds what looks like a secret.

    A key pasted where an id goes is not written back out; a mistyped id still is.
    """
    return "(a reference not repeated: it looks like a secret)" if find_secrets(value) else value


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,39}")


def shown_name(name: object) -> str:
    """A caller's name (a field, an action) fit to repeat in a refusal, or a stand-in.

    Only a short plain identifier that holds no secret is repeated; anything else may be
    the very value that was refused.
    """
    if isinstance(name, str) and _PLAIN_NAME.fullmatch(name) and not find_secrets(name):
        return name
    return "(a name not repeated)"
