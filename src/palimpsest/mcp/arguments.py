"""Arguments the input schema refused, said in our words: the field, and what it takes.

pydantic's own text ("Input should be a valid list", "unable to parse string as an
integer") names the library's notions, and its locations carry the labels it gives a
union's alternatives (`anchors[0].AnchorSpec.file`). A caller needs the parameter's path as
it writes it and the shape that parameter takes; never the value it sent.
"""

from __future__ import annotations

from typing import Any

import pydantic

from ..service import shown_name
from .schema import ArgumentTooLong, allowed_values, relevant_errors

# What each of pydantic's type errors asks for, in the words of the tool list.
_WANTED = {
    "list_type": "a list",
    "string_type": "a string",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}
# The labels pydantic puts in a location for a union's alternatives: not part of the path.
_TYPE_LABELS = {"str", "int", "bool", "float", "dict", "list", "none"}


def argument_error(tool: str, error: pydantic.ValidationError) -> dict[str, Any]:
    """Name every argument at fault and what it should be, never echoing the value given."""
    errors = [{**e, "loc": _unlabelled(e["loc"])} for e in relevant_errors(error.errors())]
    errors = _shape_sent(errors)
    problems: dict[str, list[str]] = {}
    for item in errors:
        where = _where(item["loc"])
        problems.setdefault(where, []).append(_problem(tool, item))
    said = [_joined(where, found) for where, found in problems.items()]
    body: dict[str, Any] = {
        "error_class": "validation",
        "message": "; ".join(said) + ". See the tool's input schema.",
    }
    if errors and errors[0]["loc"]:
        body["field"] = short(str(errors[0]["loc"][0]))
    return body


def _problem(tool: str, item: Any) -> str:
    """What is wrong with one argument, without naming it (the caller adds its path)."""
    allowed = allowed_values(item)
    if allowed:
        return allowed
    kind = item["type"]
    if kind == "extra_forbidden":
        return f"is not a parameter of {tool}" if len(item["loc"]) == 1 else "is not a key it takes"
    if kind == "missing":
        return "is required"
    if isinstance(item.get("ctx", {}).get("error"), ArgumentTooLong):
        return f"!{item['ctx']['error']}"  # a whole sentence of its own
    return f"must be {_WANTED.get(kind, 'of another type')}"


def _joined(where: str, found: list[str]) -> str:
    """One argument's problems: a union's alternatives read "must be a string or an object"."""
    asks = [p.removeprefix("must be ") for p in found if p.startswith("must be ")]
    wants = list(dict.fromkeys(asks))
    others = [p for p in dict.fromkeys(found) if not p.startswith("must be ")]
    said = [f"`{where}` must be {' or '.join(wants)}"] if wants else []
    said += [p[1:] if p.startswith("!") else f"`{where}` {p}" for p in others]
    return "; ".join(said)


def _shape_sent(errors: list[Any]) -> list[Any]:
    """Drop "must be X" about a value the caller sent as an object or a list whose inner
    errors are listed too: those say what is wrong with the shape it chose."""
    deeper = {tuple(e["loc"][:n]) for e in errors for n in range(1, len(e["loc"]))}
    return [e for e in errors if not (e["type"] in _WANTED and tuple(e["loc"]) in deeper)]


def _unlabelled(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """A location without the labels of a union's alternatives (`str`, `AnchorSpec`)."""
    return tuple(
        p for p in loc if isinstance(p, int) or not (p in _TYPE_LABELS or p.endswith("Spec"))
    )


def _where(loc: tuple[Any, ...]) -> str:
    """An argument's path as a caller writes it: `check.kind`, `clear[0]`."""
    parts = [f"[{p}]" if isinstance(p, int) else f".{short(str(p))}" for p in loc]
    return "".join(parts).lstrip(".") or "arguments"


def short(name: str) -> str:
    """A name the caller sent, fit to repeat: short plain parts only, never a value."""
    return ".".join(part if part.isdigit() else shown_name(part) for part in name.split("."))
