"""What every import shares: its report, the lines of a file of ours, and the write gate
on a memory it would file.

    Report     what an import did or would do, by line and field, never by text
    FileCopy   a file of ours read once into memory: its lines and its numbered records
    screened   the gate as remember's, and on what a file brings that a caller does not
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from ..domain.errors import Conflict, NotFound, PalimpsestError, ValidationError
from ..domain.model import Memory
from ..revise.edit import validate
from ..revise.screen import record_fields
from ..screening import gate
from .admin_answers import Imported

# (step, done, total): steps are "checking", "writing" and "embedding"; total 0: unknown
Steps = Callable[[str, int, int], None]
LISTED = 100  # refusals, conflicts and unmapped parts listed one by one; the rest counted
MAX_LINE = 1_000_000  # characters of one line of ours (the longest record is far shorter)


# The lists an import answers, each of its first entries (`Imported`).
Section = Literal["refused", "conflicts", "unmapped", "links_left_out"]


@dataclass
class Report:
    """What an import did (or, in a dry run, would do)."""

    mode: str
    source: dict[str, Any]
    dry_run: bool
    counts: Counter[str] = field(default_factory=Counter)
    listed: dict[Section, list[dict[str, Any]]] = field(default_factory=dict)

    def note(self, section: Section, entry: dict[str, Any]) -> None:
        self.counts[section] += 1
        shown = self.listed.setdefault(section, [])
        if len(shown) < LISTED:
            shown.append(entry)

    def refuse(self, where: str, exc: PalimpsestError, memory_id: str | None = None) -> None:
        entry = {"where": where, **exc.to_dict()}
        section: Section = "conflicts" if isinstance(exc, Conflict) else "refused"
        self.note(section, {"id": memory_id, **entry} if memory_id else entry)

    def answer(self) -> Imported:
        body: Imported = {"mode": self.mode, "source": self.source,
                          "counts": dict(sorted(self.counts.items()))}  # fmt: skip
        if entries := self.listed.get("refused"):
            body["refused"] = entries
            if more := self.counts["refused"] - len(entries):
                body["refused_more"] = more
        if entries := self.listed.get("conflicts"):
            body["conflicts"] = entries
            if more := self.counts["conflicts"] - len(entries):
                body["conflicts_more"] = more
        if entries := self.listed.get("unmapped"):
            body["unmapped"] = entries
            if more := self.counts["unmapped"] - len(entries):
                body["unmapped_more"] = more
        if entries := self.listed.get("links_left_out"):
            body["links_left_out"] = entries
            if more := self.counts["links_left_out"] - len(entries):
                body["links_left_out_more"] = more
        if self.dry_run:
            body["dry_run"] = True
        return body


def screened(memory: Memory) -> None:
    """The write gate on a memory an import would file, as remember's, and on what a file
    brings that remember's caller does not: a status note, anchors, author and owner."""
    fields = record_fields(memory)
    if memory.status_note:
        fields.append(("status_note", memory.status_note))
    for anchor in memory.anchors:
        fields += [("anchors", part) for part in (anchor.path, anchor.hash) if part]
    if len(memory.tags) > gate.MAX_TAGS:
        raise ValidationError(f"At most {gate.MAX_TAGS} tags; the memory has "
                              f"{len(memory.tags)}.", field="tags")  # fmt: skip
    for name, value in fields:
        gate.check_storable(name, value)
        if name in gate.LIMITS or name in ("tags", "status_note"):
            limit = {"tags": "tag", "status_note": "note"}.get(name)
            gate.check_length(name, value, limit_name=limit)
    for actor in {memory.author, memory.owner} - {None}:
        gate.check_actor(actor)
    validate(memory)
    gate.screen_record(fields)


class FileCopy:
    """A file of ours read once, whole, into memory. Every pass of an import (the header,
    the counts, the checks, the load) reads these bytes, so what is loaded is what was
    checked even if the file is changed or swapped on disk meanwhile; a pipe such as
    /dev/stdin, which can be read once only, is read whole too. It costs the file's size
    in memory, held as the chunks it was read in (never joined: that would hold it twice)."""

    def __init__(self, chunks: list[bytes]):
        self.chunks = chunks

    @classmethod
    def read(cls, path: Path) -> FileCopy:
        try:
            with path.open("rb") as handle:
                return cls(_bounded_chunks(handle))
        except FileNotFoundError:
            raise NotFound(f"No file {path}: check the path.", field="file") from None
        except IsADirectoryError:
            raise ValidationError(
                f"{path} is a folder: give the export file.", field="file"
            ) from None
        except PermissionError:
            raise ValidationError(
                f"{path} cannot be read (no permission): give a file you may read.",
                field="file",
            ) from None

    def lines(self) -> Iterator[str]:
        """The file's lines, UTF-8, without their ends, each no longer than any record of
        ours (a line that is raises; one not UTF-8 raises UnicodeDecodeError)."""
        raw = io.BufferedReader(_ChunkReader(self.chunks))
        text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        number = 0
        while line := text.readline(MAX_LINE + 1):
            number += 1
            if len(line) > MAX_LINE:
                raise ValidationError(
                    f"Line {number} is longer than any record of ours ({MAX_LINE:,} "
                    "characters): the file was changed; nothing was imported.",
                    field="file",
                )
            yield line.rstrip("\r\n")

    def numbered(self) -> Iterator[tuple[int, str]]:
        """The records of an export file with their line numbers, the header skipped."""
        try:
            for number, text in enumerate(self.lines(), start=1):
                if number > 1 and text.strip():
                    yield number, text
        except UnicodeDecodeError:
            raise ValidationError("The file is not UTF-8 text.", field="file") from None


def _bounded_chunks(handle: BinaryIO) -> list[bytes]:
    """The handle's bytes, refused as soon as a line runs past any record of ours (in
    UTF-8, at most four bytes a character): a wrong file (/dev/zero, a disk image) is
    never held whole."""
    chunks: list[bytes] = []
    number, line = 1, 0  # the line being read, and its bytes so far
    while chunk := handle.read(1 << 20):
        end = chunk.rfind(b"\n")
        if end == -1:
            line += len(chunk)
        else:
            number += chunk.count(b"\n")
            line = len(chunk) - end - 1
        if line > MAX_LINE * 4:
            raise ValidationError(
                f"Line {number} is longer than any record of ours ({MAX_LINE:,} characters): "
                "this is not an export of ours, or it was changed; nothing was imported.",
                field="file",
            )
        chunks.append(chunk)
    return chunks


class _ChunkReader(io.RawIOBase):
    """A stream over a file's chunks, read in order, each from where the last read ended."""

    def __init__(self, chunks: list[bytes]):
        self.chunks = chunks
        self.index = self.offset = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self.index < len(self.chunks):
            chunk = memoryview(self.chunks[self.index])[self.offset :]
            if chunk:
                size = min(len(buffer), len(chunk))
                buffer[:size] = chunk[:size]
                self.offset += size
                return size
            self.index, self.offset = self.index + 1, 0
        return 0
