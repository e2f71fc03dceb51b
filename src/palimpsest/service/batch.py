"""What a batch remember is given, checked whole before anything is embedded or written.

    MAX_ITEMS       the most memories one call files
    SUGGEST_ITEMS   the largest batch whose memories each get suggestions
    parse_items     each item as memory values and its notebook; a refusal names the item

A batch is an import: its suggestions cost one nearest-memory query and a rules search per
item after the commit (milliseconds each), which for hundreds of items would cost more than
filing them, and an answer of hundreds of suggestion lists is more than an agent reads.
So only small batches, the size an agent files at the end of a task, get them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..domain.errors import PalimpsestError, ValidationError
from ..revise import check_rule_fields, in_item, parse_fields
from .base import notebook_name

MAX_ITEMS = 500
SUGGEST_ITEMS = 20
# Fields of a single remember that act on other memories: a batch files new ones only.
SINGLE_ONLY = ("supersedes", "because", "idempotency_key", "dry_run", "items")


@dataclass(frozen=True)
class Item:
    notebook: str  # as the caller named it: a name or an id
    values: dict[str, Any]  # parsed memory fields, kind and text among them


def parse_items(items: Any, notebook: str | None) -> list[Item]:
    """`items` checked: each a memory's fields, its notebook its own or `notebook`."""
    if not isinstance(items, list) or not items:
        raise ValidationError(
            "`items` must be a non-empty list of {kind, text, ...}.", field="items"
        )
    if len(items) > MAX_ITEMS:
        raise ValidationError(
            f"`items` holds {len(items)} memories; a batch takes at most {MAX_ITEMS}: split it.",
            field="items",
        )
    if notebook is not None:
        notebook = notebook_name(notebook)
    parsed = []
    for index, item in enumerate(items):
        try:
            parsed.append(_parse_item(item, notebook))
        except PalimpsestError as exc:
            raise in_item(exc, index) from None
    return parsed


def _parse_item(item: Any, notebook: str | None) -> Item:
    if not isinstance(item, dict):
        raise ValidationError("Each item is an object: {kind, text, ...}.", field="items")
    fields = dict(item)
    single = next((name for name in SINGLE_ONLY if name in fields), None)
    if single is not None:
        raise ValidationError(
            f"`{single}` is not allowed in a batch item; remember that memory on its own.",
            field=single,
        )
    named = fields.pop("notebook", None)
    if named is None and notebook is None:
        raise ValidationError(
            "`notebook` is required: in the item, or beside `items` for all of them.",
            field="notebook",
        )
    values = parse_fields(fields)
    for required in ("kind", "text"):
        if required not in values:
            raise ValidationError(f"`{required}` is required.", field=required)
    check_rule_fields(values["kind"], values)
    return Item(notebook_name(named) if named is not None else str(notebook), values)
