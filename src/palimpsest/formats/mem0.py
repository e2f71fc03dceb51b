"""mem0's memories as JSON (mem0ai/mem0): what `Memory.get_all()` or the platform client
returns, saved to a file.

The file is `{"results": [MEMORY, ...]}` (mem0 1.1 and later, the platform client with
`count`, `next` and `previous` beside it; with the graph store, `relations` too) or, in
older versions, the bare list. A memory is
`{"id", "memory", "hash", "metadata", "categories", "created_at", "updated_at",
"user_id", "agent_id", "run_id", ...}`.

How a memory maps (ref `mem0:ID`, mem0's own id):

    memory           text
    metadata.kind    kind, when it is one of ours (not a rule or orientation: those need
                     a falsifier mem0 does not have); otherwise `fact`
    categories       tags
    created_at       occurred_at, when it is an ISO time
    expiration_date  expires_at, when it is an ISO time or date
    user_id          author `user:ID` and the notebook ID; else
    agent_id         author `agent:ID` and the notebook ID; else no author (the memory is
                     filed ownerless, for anyone to claim) in the caller's notebook

Reported rather than brought (`Unmapped`): an item that is not an object, has no id or
no text, or repeats an id; and, once per field name with a count (never per memory),
every field with no place here: hash, run_id, updated_at, role, actor_id, score,
metadata keys other than kind, an author or notebook name that cannot be one, and
the graph's `relations` (they join entities, not memories). A file that is one page of a
paginated listing (`next` set) is reported so. The file is read whole, up to `MAX_BYTES`.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..domain.model import KINDS, RULE_KINDS, format_time, parse_time
from .records import Incoming, Record, Records, Unmapped

MAX_BYTES = 256_000_000  # a file larger than this is refused, not read
MAX_ACTOR = 200  # what an actor may hold (gate.MAX_ACTOR), `user:` included
MAX_NOTEBOOK = 100  # what a notebook name may hold (gate.LIMITS["notebook"])
KINDS_OF_OURS = tuple(k for k in KINDS if k not in RULE_KINDS)

# Fields mapped or consumed; every other field of a memory is tallied as unmapped.
_MAPPED = frozenset({"id", "memory", "metadata", "categories", "created_at",
                     "expiration_date", "user_id", "agent_id"})  # fmt: skip
_TOP = frozenset({"results", "count", "next", "previous", "relations"})
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,39}")


def plain_name(name: object) -> str | None:
    """A source's key fit to name in a report's `field`: a short plain identifier."""
    return name if isinstance(name, str) and _PLAIN_NAME.fullmatch(name) else None


def actor(prefix: str, name: object) -> str | None:
    """`prefix:NAME` when NAME can be an actor (gate.check_actor's shape), else None."""
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        return None
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in name):
        return None
    made = f"{prefix}:{name}"
    return made if len(made) <= MAX_ACTOR else None


def iso_time(value: object) -> str | None:
    """`value` (text, or a date YAML made) as one of our times, or None if it is none."""
    if isinstance(value, datetime | date):
        value = value.isoformat()
    if not isinstance(value, str):
        return None
    try:
        return format_time(parse_time(value))
    except (ValueError, OverflowError):
        return None


@dataclass
class Tally:
    """What was left out, counted by field name: one report per name, where first seen.

    `one` and `many` name what is counted ("memory", "memories"); a name that is None
    stands for the fields whose names are not plain words (`plain_name`)."""

    one: str
    many: str
    counts: dict[str | None, list[Any]] = field(default_factory=dict)

    def add(self, name: str | None, where: str) -> None:
        entry = self.counts.setdefault(name, [0, where])
        entry[0] += 1

    def reports(self, reason: str, unnamed: str = "") -> Iterator[Unmapped]:
        for name, (count, where) in self.counts.items():
            counted = f"{count} {self.one if count == 1 else self.many}"
            shown = f" {unnamed}" if name is None and unnamed else ""
            yield Unmapped(where, f"{reason}{shown}, left out of {counted}; first here", name)


def read(path: Path, notebook: str) -> Records:
    """Records for `path`, mem0's JSON; memories without a user or agent go to `notebook`."""
    data = _load(path)
    if isinstance(data, Unmapped):
        yield data
        return
    if isinstance(data, list):
        items, label = data, ""
    elif isinstance(data, dict) and isinstance(data.get("results"), list):
        items, label = data["results"], "results"
        yield from _top(data, path.name)
    else:
        yield Unmapped(path.name, "neither a list of memories nor an object with `results`")
        return
    left_out = Tally("memory", "memories")
    invalid = Tally("memory", "memories")
    seen: dict[str, str] = {}
    for index, item in enumerate(items):
        where = f"{path.name}:{label}[{index}]"
        yield from _memory(item, where, notebook, seen, left_out, invalid)
    unnamed = "(fields whose names are not plain words)"
    yield from left_out.reports("a field with no place in Palimpsest", unnamed)
    yield from invalid.reports("a value that is not what the field takes")


def _load(path: Path) -> Any:
    if path.stat().st_size > MAX_BYTES:
        return Unmapped(path.name, f"the file is larger than {MAX_BYTES} bytes; not read")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        return Unmapped(path.name, "the file is not UTF-8 text")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return Unmapped(path.name, "the file is not JSON")


def _top(data: dict[str, Any], name: str) -> Iterator[Unmapped]:
    relations = data.get("relations")
    if isinstance(relations, list) and relations:
        yield Unmapped(
            name,
            f"{len(relations)} graph relations are not brought: they join entities mem0 "
            "extracted, not memories",
            "relations",
        )
    if data.get("next"):
        yield Unmapped(
            name, "the file is one page of a paginated listing; later pages are not in it",
            "next",
        )  # fmt: skip
    others = [key for key in data if key not in _TOP]
    if others:
        yield Unmapped(
            name, f"{len(others)} top-level fields beside `results` are not brought", None
        )


def _memory(
    item: Any,
    where: str,
    notebook: str,
    seen: dict[str, str],
    left_out: Tally,
    invalid: Tally,
) -> Iterator[Record]:
    if not isinstance(item, dict):
        yield Unmapped(where, "this item is not a JSON object")
        return
    ident, text = item.get("id"), item.get("memory")
    if not isinstance(ident, str) or not ident.strip():
        yield Unmapped(where, "this memory has no id (a non-empty string)", "id")
        return
    if not isinstance(text, str) or not text.strip():
        yield Unmapped(where, "this memory has no text (`memory`, a non-empty string)", "memory")
        return
    if ident in seen:
        yield Unmapped(where, f"this memory repeats the id of {seen[ident]}", "id")
        return
    seen[ident] = where
    for key, value in item.items():
        if key not in _MAPPED and value is not None:
            left_out.add(plain_name(key), where)
    fields: dict[str, Any] = {"kind": _kind(item.get("metadata"), where, left_out, invalid)}
    fields["text"] = text
    fields |= _tags(item.get("categories"), where, invalid)
    for source, target in (("created_at", "occurred_at"), ("expiration_date", "expires_at")):
        if item.get(source) is not None:
            moment = iso_time(item[source])
            if moment is None:
                invalid.add(source, where)
            else:
                fields[target] = moment
    author, home = _owner(item, where, left_out, invalid)
    yield Incoming(f"mem0:{ident}", where, home or notebook, fields, author=author)


def _kind(metadata: Any, where: str, left_out: Tally, invalid: Tally) -> str:
    if metadata is None:
        return "fact"
    if not isinstance(metadata, dict):
        invalid.add("metadata", where)
        return "fact"
    for key in metadata:
        if key != "kind":
            left_out.add(f"metadata.{key}" if plain_name(key) else None, where)
    wanted = metadata.get("kind")
    if wanted is None:
        return "fact"
    chosen = _canonical(wanted)
    if chosen is None:
        invalid.add("metadata.kind", where)
    return chosen or "fact"


def _canonical(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    wanted = value.strip().casefold().replace("-", "_")
    return next((k for k in KINDS_OF_OURS if k == wanted), None)


def _tags(categories: Any, where: str, invalid: Tally) -> dict[str, Any]:
    if categories is None:
        return {}
    if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
        invalid.add("categories", where)
        return {}
    tags = list(dict.fromkeys(c.strip() for c in categories if c.strip()))
    return {"tags": tags} if tags else {}


def _owner(
    item: dict[str, Any], where: str, left_out: Tally, invalid: Tally
) -> tuple[str | None, str | None]:
    """(author, notebook) from user_id, else agent_id; (None, None) when neither is given.

    With both, the user is the author and the agent is reported as left out."""
    found: tuple[str | None, str | None] = (None, None)
    for key, prefix in (("user_id", "user"), ("agent_id", "agent")):
        name = item.get(key)
        if name is None:
            continue
        author = actor(prefix, name) if isinstance(name, str) else None
        if author is None or not isinstance(name, str):
            invalid.add(key, where)
        elif found[0] is not None:
            left_out.add(key, where)
        elif len(name) <= MAX_NOTEBOOK:
            found = (author, name)
        else:  # too long for a notebook name: the caller's notebook
            invalid.add(key, where)
            found = (author, None)
    return found
