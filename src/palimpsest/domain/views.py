"""How an answer is rendered for a reader: lean (nothing empty) and compact JSON, and a
text diff. Shared by the service and every adapter; the shapes themselves are the
service's (service/answers.py, service/shown.py)."""

from __future__ import annotations

import difflib
import json
from typing import Any


def lean(value: Any) -> Any:
    """`value` with every empty member (None, "", [], {}) of every object left out, at any
    depth: what an agent reads of an answer (false and 0 say something and stay)."""
    if isinstance(value, dict):
        kept = {key: lean(member) for key, member in value.items()}
        return {key: member for key, member in kept.items() if not _empty(member)}
    if isinstance(value, list):
        return [lean(member) for member in value]
    return value


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)


def compact(value: Any) -> str:
    """`value` as JSON without spaces, as an agent reads an answer."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def text_diff(old: str, new: str, old_label: str, new_label: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), old_label, new_label, lineterm=""
    )
    return "\n".join(lines)
