"""A request body read as a tool's arguments: one JSON object, read strictly.

Refused, each as `validation` and without repeating any of the body (it may hold the very
secret the write gate would refuse):
- what is not UTF-8 JSON, or is JSON but no object (a list, a string, a number);
- a name given twice in one object: JSON parsers disagree on which one wins, so a proxy
  or a log could read another request than the one that runs;
- NaN and Infinity, which JSON does not have (nor 1e999, Infinity by another name);
- a string with an unpaired surrogate escape (`\\ud800`), which no store can keep (the
  MCP transport's parser refuses these too);
- objects and lists nested deeper than MAX_DEPTH: no argument goes past a few levels, and
  a deeper body would only cost the server its stack.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..domain.errors import ValidationError

MAX_DEPTH = 32


class _Unreadable(ValueError):
    """Why the body is refused, in words that quote none of it."""


def arguments_of(body: bytes) -> dict[str, Any]:
    """The arguments `body` holds, or ValidationError saying what is wrong with it."""
    try:
        parsed = json.loads(
            body.decode("utf-8"),
            object_pairs_hook=_no_repeats,
            parse_constant=_no_constants,
            parse_float=_finite,
        )
    except _Unreadable as exc:
        raise _refused(str(exc)) from None
    except (UnicodeDecodeError, ValueError, RecursionError):  # JSONDecodeError is a ValueError
        raise _refused(f"the body is not JSON (UTF-8, nested at most {MAX_DEPTH} deep)") from None
    if not isinstance(parsed, dict):
        raise _refused("the body must be one JSON object: the operation's arguments by name")
    try:
        _within_bounds(parsed)
    except _Unreadable as exc:
        raise _refused(str(exc)) from None
    return parsed


def _refused(why: str) -> ValidationError:
    return ValidationError(
        f"{why[:1].upper()}{why[1:]}. Send a JSON object with Content-Type: application/json "
        "(`{}` for no arguments); the OpenAPI document at /api/v1/openapi.json lists each "
        "operation's arguments."
    )


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise _Unreadable("an object in the body names the same key twice")
    return dict(pairs)


def _no_constants(name: str) -> Any:
    raise _Unreadable("NaN and Infinity are not JSON numbers")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):  # 1e999: Infinity by another name
        raise _Unreadable("a number in the body is past a float's range")
    return number


def _within_bounds(value: Any) -> None:
    """Depth and unpaired surrogates, walked without recursion (the depth is the point)."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, str):
            _encodable(item)
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            raise _Unreadable(f"the body nests objects and lists more than {MAX_DEPTH} deep")
        members = list(item.items()) if isinstance(item, dict) else [(None, m) for m in item]
        for name, member in members:
            if name is not None:
                _encodable(name)
            pending.append((member, depth + 1))


def _encodable(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _Unreadable("a string in the body holds an unpaired surrogate escape") from None
