"""A revise request as a whole: how it names its targets, and the changes for each.

Refused here, before any memory is read: targets named two ways, options that act on one
memory given for several, a batch item that changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..domain.errors import Forbidden, PalimpsestError, ValidationError
from ..screening import gate
from .edit import Unmatched
from .parse import Changes, parse_changes

# What acts on one memory per call: a supersede files one successor, a successor named
# replaces one memory, a claim or an override is a decision about one owner.
ONE_MEMORY_ONLY = ("supersede", "superseded_by", "claim", "override_reason")
TARGET_FORMS = ("id", "ids", "texts", "items")

Plan = tuple[Changes, int | None]  # the changes, and the version they were made against


def check_version(version: Any, field: str = "version") -> None:
    """Refuse a version that is no version number (given as `field`)."""
    if version is not None and (
        not isinstance(version, int) or isinstance(version, bool) or version < 1
    ):
        raise ValidationError("A version is a whole number from 1.", field=field)


def parse_request(
    targets: Mapping[str, Any],
    changes: Mapping[str, Any],
    *,
    notebook: str | None,
    expected_version: int | None,
    redact: bool,
) -> tuple[str, list[Plan]]:
    """The form the targets are named in (`targets` maps each of TARGET_FORMS to its
    value), and one plan per batch item, or one plan for every target."""
    forms = [name for name in TARGET_FORMS if targets.get(name) is not None]
    if len(forms) != 1:
        raise ValidationError(
            "Name the targets one way: `id`, `ids`, `texts` (with `notebook`) or `items`.",
            field="id",
        )
    mode = forms[0]
    if mode in ("ids", "texts"):
        refuse_repeats(targets[mode], mode)
    if expected_version is not None and mode != "id":
        raise ValidationError(
            "`expected_version` goes with a single `id`, or on each batch item.",
            field="expected_version",
        )
    check_version(expected_version)
    if mode == "items":
        if changes:
            raise ValidationError(
                f"With `items`, put `{gate.shown_name(sorted(changes)[0])}` inside each item.",
                field="items",
            )
        plans = parse_items(targets["items"], redact)
    else:
        plans = [(_shared_changes(changes, mode, redact), expected_version)]
    if mode == "texts" and notebook is None:
        raise ValidationError(
            "`texts` match within one notebook: pass `notebook`.", field="notebook"
        )
    return mode, plans


def refuse_repeats(values: Any, name: str) -> None:
    """Refuse a memory named twice in one list: the caller meant two, or made a slip."""
    strings = isinstance(values, list) and all(isinstance(v, str) for v in values)
    if strings and len(set(values)) != len(values):
        raise ValidationError(f"`{name}` names the same memory twice; name each once.", field=name)


def in_item(error: PalimpsestError, index: int) -> PalimpsestError:
    """`error` said of batch item `index`. The names in it are keys of that item, not
    parameters, so they are quoted rather than backticked (which the CLI reads as flags)."""
    error.message = re.sub(r"`([a-z_]+)`", r'"\1"', error.message)
    return error.at_item(index)


def _shared_changes(raw: Mapping[str, Any], mode: str, redact: bool) -> Changes:
    """The one set of changes applied to each target named by `id`, `ids` or `texts`."""
    changes = parse_changes(raw, redact=redact)
    one_only = [name for name in ONE_MEMORY_ONLY if getattr(changes, name)]
    if mode != "id" and one_only:
        raise ValidationError(
            f"`{one_only[0]}` acts on one memory per call: pass a single `id`.",
            field=one_only[0],
        )
    if changes.is_empty:
        raise ValidationError(
            "Nothing to change: give a field to set, `clear`, `append`, "
            "`replace_from`/`replace_to`, `remove`, `status` or `move_to`."
        )
    return changes


def parse_items(items: Any, redact: bool) -> list[Plan]:
    """Each batch item's changes and expected version; a refusal names the item."""
    if not isinstance(items, list) or not items:
        raise ValidationError("`items` must be a non-empty list of {id, ...}.", field="items")
    plans = []
    for index, item in enumerate(items):
        try:
            plans.append(_parse_item(item, redact))
        except ValidationError as exc:
            raise in_item(exc, index) from None
    return plans


def _parse_item(item: Any, redact: bool) -> Plan:
    if not isinstance(item, dict) or not isinstance(item.get("id"), str):
        raise ValidationError("Each item is an object with an `id`.", field="id")
    fields = {k: v for k, v in item.items() if k not in ("id", "expected_version")}
    check_version(item.get("expected_version"))
    changes = parse_changes(fields, redact=redact)
    single = [name for name in ONE_MEMORY_ONLY if getattr(changes, name)]
    if single:
        raise ValidationError(
            f"`{single[0]}` is not allowed in a batch; revise that one memory on its own.",
            field=single[0],
        )
    if changes.is_empty:
        raise ValidationError("This item changes nothing.")
    return changes, item.get("expected_version")


def settle(mode: str, index: int, failure: Unmatched | PalimpsestError) -> str | PalimpsestError:
    """What a target that fails becomes: a reason listed in `unmatched`, or the refusal of
    the whole request.

    `ids` and `texts` apply to the targets that qualify and list the rest; a batch is all
    or nothing, and its refusal names the item; a single `id` lists only a status that
    does not fit it.
    """
    if isinstance(failure, Unmatched):
        if mode == "items" or (mode == "id" and not failure.status_related):
            error = ValidationError(f"Refused: {failure.reason}.", field=failure.field)
            return in_item(error, index) if mode == "items" else error
        return failure.reason
    if isinstance(failure, Forbidden) and mode not in ("id", "items"):
        return failure.message
    return in_item(failure, index) if mode == "items" else failure
