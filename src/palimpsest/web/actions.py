"""A memory page's forms read into the service's calls: verify, revise, retire, revert and
forget, each with its reason.

Only reading happens here: a field left empty is none given (or, on the revise form, a
field to clear), a number is a number, and anything else goes to the service as it came, so
that the service refuses it with its own `error_class`, message and `field`. Who may, what
is valid and what a reason must be are the service's (service/reasoned.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..service import Service

Call = Callable[[], Any]
# The revise form's fields a person edits (text and kind cannot be cleared: the service
# says so if one comes empty).
EDITED = ("text", "title", "kind", "why")


def verify(service: Service, memory_id: str, form: dict[str, str]) -> Call:
    return functools.partial(service.revise_with_reason, id=memory_id, status="verified",
                             note=_given(form, "note"),
                             expected_version=_number(form, "expected_version"))  # fmt: skip


def revise(service: Service, memory_id: str, form: dict[str, str]) -> Call:
    changes: dict[str, Any] = {}
    cleared: list[str] = []
    for name in EDITED:
        if name in form:
            value = _lines(form[name])
            if value.strip():
                changes[name] = value
            else:
                cleared.append(name)
    if "tags" in form:
        tags = [t.strip() for t in form["tags"].split(",") if t.strip()]
        if tags:
            changes["tags"] = tags
        else:
            cleared.append("tags")
    if cleared:
        changes["clear"] = cleared
    return functools.partial(service.revise_with_reason, id=memory_id,
                             note=_given(form, "note"),
                             expected_version=_number(form, "expected_version"),
                             **changes)  # fmt: skip


def retire(service: Service, memory_id: str, form: dict[str, str]) -> Call:
    changes: dict[str, Any] = {}
    if _given(form, "superseded_by"):
        changes["superseded_by"] = _given(form, "superseded_by")
    return functools.partial(service.revise_with_reason, id=memory_id,
                             status=_given(form, "status") or "",
                             note=_given(form, "note"),
                             expected_version=_number(form, "expected_version"),
                             **changes)  # fmt: skip


def revert(service: Service, memory_id: str, form: dict[str, str]) -> Call:
    return functools.partial(service.revert_with_reason, id=memory_id,
                             version=_number(form, "version"),
                             note=_given(form, "note"))  # fmt: skip


def forget(service: Service, memory_id: str, form: dict[str, str]) -> tuple[Call, bool]:
    """The forget, and whether it is for real: only once its confirmation is ticked; until
    then a dry run, which names what it would erase and changes nothing. Both carry the
    version shown: what is confirmed is what was named."""
    confirmed = form.get("confirm") == "erase"
    call = functools.partial(service.forget, id=memory_id, because=_given(form, "because"),
                             expected_version=_number(form, "expected_version"),
                             dry_run=not confirmed)  # fmt: skip
    return call, confirmed


ACTIONS: dict[str, Callable[[Service, str, dict[str, str]], Call]] = {
    "verify": verify,
    "revise": revise,
    "retire": retire,
    "revert": revert,
}


def _given(form: dict[str, str], name: str) -> str | None:
    return form.get(name, "").strip() or None


def _number(form: dict[str, str], name: str) -> Any:
    """A whole number as one; empty as none; anything else as sent, for the service to
    refuse naming the field."""
    value = form.get(name, "").strip()
    if not value:
        return None
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 9 else value


def _lines(value: str) -> str:
    """A browser sends a textarea's line breaks as CRLF: the text's own are LF."""
    return value.replace("\r\n", "\n")
