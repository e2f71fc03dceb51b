"""A request body read as a tool's arguments: one JSON object, read strictly.

Refused here, each as `validation` and without repeating any of the body (it may hold the
very secret the write gate would refuse):
- what is not UTF-8 JSON (nested deeper than the parser's stack goes, too), or is JSON
  but no object (a list, a string, a number);
- a name given twice in one object: JSON parsers disagree on which one wins, so a proxy
  or a log could read another request than the one that runs;
- NaN and Infinity, which JSON does not have (nor 1e999, Infinity by another name).

Everything else about the values (types, lengths, nesting, unpaired surrogates) is the
tool's and the service's to refuse, naming the argument, as they do for MCP.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..domain.errors import ValidationError


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
        raise _refused("the body is not JSON, in UTF-8, nested as deep as a parser goes") from None
    if not isinstance(parsed, dict):
        raise _refused("the body must be one JSON object: the operation's arguments by name")
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
