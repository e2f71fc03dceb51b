"""What a reader of another server's files yields, one record at a time.

    Incoming      a memory: its notebook and remember's fields (kind, text, title, ...)
    IncomingLink  a link between two Incoming records, named by their `ref`
    Unmapped      something the source holds that has no place here, and why
    Origin        the memory (and version) of a store of ours a record was exported from

`ref` is stable for the same content of the same source: the service derives the
memory's id from it, so importing the same file twice files nothing new the second time.
`where` says where in the source a record came from ("memory.jsonl:12",
"notes/auth.md"): reports name it, never the record's text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Origin:
    """The memory a note names as its own (our markdown export's front matter `id`, in the
    shape our ids have: trimmed, lower case), and its version when the note says: an
    import refuses a record whose origin was forgotten where it lands."""

    id: str
    version: int | None = None


@dataclass(frozen=True)
class Incoming:
    ref: str
    where: str
    notebook: str  # a notebook's name, created on import if missing
    fields: dict[str, Any]  # remember's fields: kind and text always, others as mapped
    author: str | None = None  # who wrote it in the source, when the source says
    status: str = "active"  # or "superseded" / "retracted" when the source retired it
    origin: Origin | None = None  # the memory it was exported from, when it says


@dataclass(frozen=True)
class IncomingLink:
    source_ref: str
    target_ref: str
    type: str  # one of palimpsest.domain.model.LINK_TYPES
    where: str


@dataclass(frozen=True)
class Unmapped:
    where: str
    reason: str  # what was not brought, and why; never the source's text itself
    field: str | None = None


Record = Incoming | IncomingLink | Unmapped
Records = Iterator[Record]
