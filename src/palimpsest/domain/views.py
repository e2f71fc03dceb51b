"""How an answer is rendered for a reader: lean (nothing empty) and compact JSON, a text
diff, and a fix (a tool call) as the command a person types. Shared by the service and
every adapter; the shapes themselves are the
service's (service/answers.py, service/shown.py)."""

from __future__ import annotations

import difflib
import json
import shlex
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


def command_for(fix: Any) -> str:
    """A fix as the person types it: a tool call (`{tool, arguments}`) as the CLI command
    that makes the same call (an action is a subcommand, the id comes first, a list is an
    option repeated), a command as it is."""
    if not isinstance(fix, dict):
        return str(fix)
    arguments = dict(fix["arguments"])
    words = ["palimpsest", fix["tool"]]
    if "action" in arguments:
        words.append(str(arguments.pop("action")))
    for first in ("dispute", "id"):
        if first in arguments:
            words.append(str(arguments.pop(first)))
    for name, value in arguments.items():
        option = "--tag" if name == "tags" else f"--{name.replace('_', '-')}"
        for one in value if isinstance(value, list) else [value]:
            words += [option, str(one)]
    return shlex.join(words)
