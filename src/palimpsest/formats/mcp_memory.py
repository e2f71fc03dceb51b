"""The reference MCP memory server's `memory.jsonl` (modelcontextprotocol/servers, src/memory).

The file holds one JSON object per line, as that server's `saveGraph` writes them:

    {"type": "entity", "name": "Ana", "entityType": "person", "observations": ["..."]}
    {"type": "relation", "from": "Ana", "to": "Billing", "relationType": "works_on"}

How it maps (refs in brackets; each is stable for the same content):

    entity       a `reference` memory, title the name, text "NAME: an entity of type TYPE.",
                 the type as its tag                                       [entity:NAME]
    observation  a `fact` titled with its entity's name, text the observation, linked
                 `part_of` the entity's memory            [obs:NAME:sha256(text)[:16]]
    relation     a link from the `from` entity's memory to the `to` one's: its type when
                 relationType is one of ours ("depends_on", "depends on", "dependsOn",
                 "is part of"); otherwise `relates_to`, plus a `fact` "FROM VERB TO"
                 (titled FROM, `part_of` FROM) so that the verb is not lost
                                                [rel:sha256(from, verb, to)[:16]]
                 A relation of an entity to itself is only that fact: no link.

An entity named twice is merged, as the server treats names as unique (it refuses to
create a second one and adds observations to the first): the first line's type holds, a
different type on a later line is reported, and the observations of both are brought once
each. Repeated observations and relations are brought once, as the server keeps them.

What is reported (`Unmapped`, `where` "memory.jsonl:LINE") rather than brought: a line that
is not UTF-8, not JSON, not an object, longer than `MAX_LINE`, of another `type`, an entity
without a name, a relation missing a field or naming an entity the file does not define;
an entity's missing or wrong-typed `entityType` or `observations`, or an observation that
is not a non-empty string, is reported while the rest of the entity is brought.

The file is read line by line; only the entity names, the refs of what was brought and the
relations (resolved once every entity is known) are kept.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..domain.model import LINK_TYPES
from .mem0 import Tally, plain_name
from .records import Incoming, IncomingLink, Record, Records, Unmapped

MAX_LINE = 1_000_000  # bytes of one line: longer is no line the server writes
# The fields the server writes; any other (a fork's `createdAt`, say) is reported.
_KEYS = {"entity": frozenset({"type", "name", "entityType", "observations"}),
         "relation": frozenset({"type", "from", "to", "relationType"})}  # fmt: skip

# Words for a link type of ours that mean it plainly, once read as snake_case.
_SYNONYMS = {"related_to": "relates_to", "depends_upon": "depends_on"}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[\s\-]+")


def digest(*parts: str) -> str:
    """A short stable hash of `parts` for a ref (the parts are never shown)."""
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def link_type(verb: str) -> str | None:
    """The link type of ours that `verb` plainly names ("depends on", "dependsOn",
    "is_part_of"), or None."""
    name = _SEPARATORS.sub("_", _CAMEL.sub("_", verb.strip())).casefold().removeprefix("is_")
    name = _SYNONYMS.get(name, name)
    return name if name in LINK_TYPES else None


@dataclass(frozen=True)
class _Relation:
    line: int
    source: str
    target: str
    verb: str


def read(path: Path, notebook: str) -> Records:
    """Records for `path`, a memory.jsonl; everything goes to `notebook`."""
    entities: dict[str, tuple[int, str | None]] = {}  # name -> (its first line, its type)
    brought: set[str] = set()  # refs of observations already yielded
    relations: list[_Relation] = []
    left_out = {"entity": Tally("entity", "entities"), "relation": Tally("relation", "relations")}
    with path.open("rb") as handle:
        for number, raw in _lines(handle):
            where = f"{path.name}:{number}"
            item = _item(number, raw, where)
            if isinstance(item, Unmapped):
                yield item
                continue
            elif item is None:
                continue
            for key in sorted(set(item) - _KEYS[item["type"]], key=str):
                left_out[item["type"]].add(plain_name(key), where)
            if item["type"] == "entity":
                yield from _entity(item, number, where, notebook, entities, brought)
            else:
                relation = _relation(item, number)
                if relation is None:
                    yield Unmapped(
                        where,
                        f"the relation on line {number} lacks `from`, `to` or `relationType` "
                        "(each a non-empty string)",
                    )
                else:
                    relations.append(relation)
    yield from _relations(relations, path.name, notebook, set(entities))
    for kind, tally in left_out.items():
        article = "an" if kind == "entity" else "a"
        yield from tally.reports(f"a field of {article} {kind} with no place in Palimpsest",
                                 "(fields that are not plain words)")  # fmt: skip


def _lines(handle: IO[bytes]) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes), None for a line longer than MAX_LINE (skipped, never held)."""
    number = 0
    while raw := handle.readline(MAX_LINE + 1):
        number += 1
        if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = handle.readline(MAX_LINE + 1)
            yield number, None
        else:
            yield number, raw


def _item(number: int, raw: bytes | None, where: str) -> dict[str, Any] | Unmapped | None:
    """The line's object with a known `type`, None for a blank line, or why not."""
    if raw is None:
        return Unmapped(where, f"line {number} is longer than {MAX_LINE} bytes; not read")
    try:
        text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError:
        return Unmapped(where, f"line {number} is not UTF-8 text")
    if not text.strip():
        return None
    try:
        item = json.loads(text)
    except (ValueError, RecursionError):
        return Unmapped(where, f"line {number} is not JSON")
    if not isinstance(item, dict):
        return Unmapped(where, f"line {number} is not a JSON object")
    if item.get("type") not in ("entity", "relation"):
        return Unmapped(
            where, f"line {number} is neither an entity nor a relation (its `type`)", "type"
        )
    return item


def _entity(
    item: dict[str, Any],
    number: int,
    where: str,
    notebook: str,
    entities: dict[str, tuple[int, str | None]],
    brought: set[str],
) -> Iterator[Record]:
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        yield Unmapped(where, f"the entity on line {number} has no name", "name")
        return
    kind = item.get("entityType")
    if kind is not None and not isinstance(kind, str):
        yield Unmapped(where, f"the entity type on line {number} is not a string", "entityType")
    kind = kind.strip() if isinstance(kind, str) and kind.strip() else None
    ref = f"entity:{name}"
    if name not in entities:
        entities[name] = (number, kind)
        yield Incoming(ref, where, notebook, _entity_fields(name, kind))
    elif entities[name][1] != kind:
        first = entities[name][0]
        yield Unmapped(
            where,
            f"line {number} repeats the entity of line {first} with another type; "
            "the first type is kept and the observations are merged",
            "entityType",
        )
    observations = item.get("observations")
    if not isinstance(observations, list):
        yield Unmapped(
            where, f"the entity on line {number} has no list of observations", "observations"
        )
        return
    for index, text in enumerate(observations, 1):
        if not isinstance(text, str) or not text.strip():
            yield Unmapped(
                where,
                f"observation {index} of line {number} is not a non-empty string",
                "observations",
            )
            continue
        fact = f"obs:{name}:{digest(text)}"
        if fact not in brought:
            brought.add(fact)
            fields = {"kind": "fact", "title": name.strip(), "text": text}
            yield Incoming(fact, where, notebook, fields)
            yield IncomingLink(fact, ref, "part_of", where)


def _entity_fields(name: str, kind: str | None) -> dict[str, Any]:
    title = name.strip()
    if kind is None:
        return {"kind": "reference", "title": title, "text": f"{title}: an entity."}
    text = f"{title}: an entity of type {kind}."
    return {"kind": "reference", "title": title, "text": text, "tags": [kind]}


def _relation(item: dict[str, Any], number: int) -> _Relation | None:
    values = [item.get(name) for name in ("from", "to", "relationType")]
    strings = [v for v in values if isinstance(v, str) and v.strip()]
    if len(strings) != len(values):
        return None
    source, target, verb = strings
    return _Relation(number, source, target, verb.strip())


def _relations(
    relations: list[_Relation], name: str, notebook: str, defined: set[str]
) -> Iterator[Record]:
    seen: set[tuple[str, str, str]] = set()
    for relation in relations:
        where = f"{name}:{relation.line}"
        if relation.source not in defined or relation.target not in defined:
            yield Unmapped(
                where,
                f"the relation on line {relation.line} names an entity the file does not define",
            )
            continue
        triple = (relation.source, relation.verb, relation.target)
        if triple in seen:
            continue
        seen.add(triple)
        source, target = f"entity:{relation.source}", f"entity:{relation.target}"
        plain = link_type(relation.verb)
        if plain is None or source == target:
            fact = f"rel:{digest(*triple)}"
            text = f"{relation.source.strip()} {relation.verb} {relation.target.strip()}"
            fields = {"kind": "fact", "title": relation.source.strip(), "text": text}
            yield Incoming(fact, where, notebook, fields)
            yield IncomingLink(fact, source, "part_of", where)
        if source != target:
            yield IncomingLink(source, target, plain or "relates_to", where)
