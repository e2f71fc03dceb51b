"""Palimpsest's own export format: a workspace as JSON lines (docs/export.md).

The first line is the header (format, version, workspace, counts); every other line is
one row of the workspace, `{"record": KIND, ...columns}`, in an order an import can
replay: notebooks, tombstones, memories, then the event log, the versions each event
made, links, disputes, settings and users. Key hashes, vectors (derived: the importer
embeds anew), idempotency answers and the guard's seen commands are left out.

Sequence numbers are store-local, so a file numbers its events 1, 2, 3... in their order
and every span (`from_seq`, `to_seq`) names events by that number. Lines are canonical:
keys sorted, no spaces, UTF-8 as is. So exporting, importing into a fresh store and
exporting again gives the same lines; only the header's `exported_at` differs.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..domain.errors import ValidationError
from ..domain.model import normalize_text, parse_time

FORMAT = "palimpsest-export"
VERSION = 1

# record kind -> (table, columns). A column is written under its own name; those in
# JSON_COLUMNS hold JSON as text in the store and are written as JSON values here.
RECORDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "notebook": ("notebooks", ("id", "name", "summary", "domain", "tags", "created_at")),
    "notebook_tombstone": (
        "notebook_tombstones", ("id", "forgotten_at", "forgotten_by", "forget_reason")
    ),
    "memory": ("memories", ("id", "forgotten_at", "forgotten_by", "forget_reason")),
    "event": ("events", (
        "seq", "op_id", "at", "actor", "op", "target_type", "target_id", "notebook_id",
        "version", "fields", "note", "data", "key_id",
    )),
    "version": ("memory_versions", (
        "memory_id", "version", "from_seq", "to_seq", "scrubbed", "notebook_id", "kind",
        "status", "text", "title", "why", "tags", "key", "occurred_at", "recorded_at",
        "expires_at", "status_note", "superseded_by", "verified_at", "owner", "author",
        "source", "anchors", "severity", "falsifier", "check_json", "bindings", "scope",
    )),
    "link": ("links", ("id", "source_id", "target_id", "type", "created_at", "actor")),
    "dispute": ("dispute_versions", (
        "dispute_id", "version", "from_seq", "to_seq", "first_id", "second_id", "status",
        "reason", "opened_at", "opened_by", "holds", "ruling_reason", "evidence", "ruled_at",
        "ruled_by", "retired_version", "linked", "scrubbed",
    )),
    "setting": ("workspace_settings", ("name", "value")),
    "user": ("users", ("name", "role", "added_at")),
}  # fmt: skip
# How reports count each kind of record.
PLURAL = {"notebook": "notebooks", "notebook_tombstone": "notebook_tombstones",
          "memory": "memories", "event": "events", "version": "versions", "link": "links",
          "dispute": "disputes", "setting": "settings", "user": "users"}  # fmt: skip
JSON_COLUMNS = frozenset({"tags", "fields", "data", "anchors", "check_json", "bindings"})
MAX_INT = 2**31 - 1  # a version or a rank in the file: what every store's columns hold
INT_COLUMNS = frozenset({"seq", "from_seq", "to_seq", "version", "scrubbed", "retired_version",
                         "linked"})  # fmt: skip
# Columns that may be empty (NULL); the rest are always given.
REQUIRED: dict[str, frozenset[str]] = {
    "notebook": frozenset({"id", "name", "tags", "created_at"}),
    "notebook_tombstone": frozenset({"id", "forgotten_at", "forgotten_by", "forget_reason"}),
    "memory": frozenset({"id"}),
    "event": frozenset({"seq", "op_id", "at", "actor", "op", "target_type", "target_id",
                        "fields", "data"}),
    "version": frozenset({"memory_id", "version", "from_seq", "scrubbed"}),
    "link": frozenset({"id", "source_id", "target_id", "type", "created_at", "actor"}),
    "dispute": frozenset({"dispute_id", "version", "from_seq", "first_id", "second_id",
                          "status", "opened_at", "opened_by", "linked", "scrubbed"}),
    "setting": frozenset({"name", "value"}),
    "user": frozenset({"name", "role", "added_at"}),
}  # fmt: skip
ID_SHAPE = re.compile(r"[a-z]{1,8}_[0-9a-z]{1,40}")  # what every id of ours looks like
TIME_SHAPE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z")
# Columns that hold an id, a time or a word of ours are checked for that shape, so no
# text (nor a secret) can hide in them; actors are checked as every actor is. The gate
# then reads only the columns left: the free texts.
SHAPES = {
    **dict.fromkeys(("id", "memory_id", "dispute_id", "source_id", "first_id", "second_id",
                     "notebook_id", "superseded_by", "op_id", "key_id", "holds"), ID_SHAPE),
    **dict.fromkeys(("at", "created_at", "forgotten_at", "recorded_at", "occurred_at",
                     "expires_at", "verified_at", "opened_at", "ruled_at", "added_at"),
                    TIME_SHAPE),
    **dict.fromkeys(("op", "target_type", "kind", "status", "type", "role", "severity",
                     "scope"), re.compile(r"[a-z][a-z_.]{0,39}")),
}  # fmt: skip
ACTORS = frozenset({"actor", "forgotten_by", "opened_by", "ruled_by", "owner", "author"})


MAX_DEPTH = 32  # how deep a record's JSON may nest (ours nest 4 deep at most)


def loads(text: str) -> Any:
    """A line's JSON value; ValueError for what is not JSON, or nests deeper than any record
    of ours (a line nested thousands deep exhausts the parser's recursion)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("nested too deep") from None
    pending, depth = [value], 0
    while pending:  # breadth first, a level at a time: no recursion of our own
        depth += 1
        if depth > MAX_DEPTH:
            raise ValueError("nested too deep")
        pending = [item for node in pending if isinstance(node, (dict, list))
                   for item in (node.values() if isinstance(node, dict) else node)]  # fmt: skip
    return value


def line(record: Mapping[str, Any]) -> str:
    """One record as its canonical line (no newline)."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def header(workspace: Mapping[str, str], notebooks: list[str] | None, counts: Mapping[str, int],
           exported_at: str) -> dict[str, Any]:  # fmt: skip
    return {
        "record": "header",
        "format": FORMAT,
        "version": VERSION,
        "workspace": dict(workspace),
        "notebooks": notebooks,
        "counts": dict(counts),
        "exported_at": exported_at,
    }


class Ranks:
    """Sequence numbers -> their rank among the events written so far (1, 2, ...).

    Events arrive in sequence order, so the seqs seen stay sorted: a bisect finds a rank
    in a list of ints, not a dict of every event.
    """

    def __init__(self) -> None:
        self._seqs: list[int] = []

    def add(self, seq: int) -> int:
        self._seqs.append(seq)
        return len(self._seqs)

    def rank(self, seq: int | None) -> int | None:
        if seq is None:
            return None
        at = bisect_left(self._seqs, seq)
        if at == len(self._seqs) or self._seqs[at] != seq:
            raise LookupError(seq)
        return at + 1


def record_of(kind: str, row: Mapping[str, Any], ranks: Ranks) -> dict[str, Any]:
    """A store row as the record of `kind` a file holds."""
    _, columns = RECORDS[kind]
    record: dict[str, Any] = {"record": kind}
    for column in columns:
        value = row[column]
        if column in JSON_COLUMNS and value is not None:
            value = json.loads(value)
        elif column in INT_COLUMNS and value is not None:
            value = int(value)
        record[column] = value
    if kind == "event":
        record["seq"] = ranks.add(int(row["seq"]))
    elif "from_seq" in record:
        record["from_seq"] = ranks.rank(record["from_seq"])
        record["to_seq"] = ranks.rank(record["to_seq"])
    return record


@dataclass(frozen=True)
class Header:
    workspace: dict[str, str]
    notebooks: list[str] | None
    counts: dict[str, int]
    exported_at: str


def read_header(first: str) -> Header:
    """The file's first line, refused unless it is a header of a version this code reads."""
    try:
        value = loads(first)
    except ValueError:
        value = None
    if not isinstance(value, dict) or value.get("record") != "header":
        raise ValidationError(
            "This file does not start with a Palimpsest export header: give a file that "
            "`palimpsest export` wrote, or name its format with `--from`.",
            field="file",
        )
    if value.get("format") != FORMAT or value.get("version") != VERSION:
        named, number = value.get("format"), value.get("version")
        shown = repr(named) if isinstance(named, str) and _FORMAT_NAME.fullmatch(named) else "?"
        numbered = number if isinstance(number, int) and 0 <= number < 10**6 else "?"
        raise ValidationError(
            f"This file is {shown} version {numbered}; this Palimpsest reads {FORMAT!r} "
            f"version {VERSION}: upgrade Palimpsest to read it.",
            field="file",
        )
    workspace, counts = value.get("workspace"), value.get("counts")
    notebooks = value.get("notebooks")
    if (
        not isinstance(workspace, dict)
        or not all(isinstance(workspace.get(k), str) for k in ("id", "name"))
        or not isinstance(counts, dict)
        or not all(isinstance(v, int) for v in counts.values())
        or not (
            notebooks is None
            or (isinstance(notebooks, list) and all(isinstance(n, str) for n in notebooks))
        )
        or not isinstance(value.get("exported_at"), str)
        or not TIME_SHAPE.fullmatch(value["exported_at"])
    ):
        raise ValidationError(
            "The export header is damaged (workspace, counts, notebooks or exported_at): "
            "export the workspace again.",
            field="file",
        )
    return Header(workspace, notebooks, counts, value["exported_at"])


_COLUMN_NAME = re.compile(r"[a-z][a-z_]{0,39}")  # what our columns look like
_FORMAT_NAME = re.compile(r"[a-z][a-z0-9.-]{0,39}")


def parse_record(text: str) -> dict[str, Any]:
    """One line checked against its record's columns and their types; refusals name the
    column (never its value)."""
    try:
        record = loads(text)
    except ValueError:
        raise ValidationError("The line is not JSON (or nests too deep).", field="line") from None
    return checked_record(record)


def checked_record(record: Any) -> dict[str, Any]:
    """A record's JSON value (a line's, or one a sync round carries) checked as
    `parse_record` checks a line: its columns, their types and shapes."""
    if not isinstance(record, dict) or record.get("record") not in RECORDS:
        raise ValidationError(
            f"The line is not a record of this format (one of {', '.join(RECORDS)}).",
            field="record",
        )
    kind = record["record"]
    _, columns = RECORDS[kind]
    unknown = sorted(set(record) - {"record", *columns})
    if unknown:  # named only when it has a column's shape: a key may be the secret pasted
        named = unknown[0] if _COLUMN_NAME.fullmatch(unknown[0]) else None
        shown = f"`{named}`" if named else "(a name not repeated)"
        raise ValidationError(f"A {kind} record has no column {shown}.", field=named or kind)
    for column in columns:
        value = record.get(column)
        if value is None:
            if column in REQUIRED[kind]:
                raise ValidationError(f"A {kind} record needs `{column}`.", field=column)
            record[column] = None
            continue
        if column in INT_COLUMNS:
            ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_INT
        elif column in JSON_COLUMNS:
            ok = isinstance(value, list if column in ("tags", "fields", "anchors") else dict)
        else:
            ok = isinstance(value, str)
        if not ok:
            raise ValidationError(f"`{column}` of a {kind} record has the wrong type.",
                                  field=column)  # fmt: skip
    for column, shape in SHAPES.items():
        value = record.get(column)
        if isinstance(value, str) and not shape.fullmatch(value):
            raise ValidationError(f"`{column}` of a {kind} record is not what it holds "
                                  "(an id, a time or a word of ours).", field=column)  # fmt: skip
        if isinstance(value, str) and shape is TIME_SHAPE:
            try:
                parse_time(value)  # the 30th of February has the shape of a time
            except ValueError:
                raise ValidationError(f"`{column}` of a {kind} record is no moment of the "
                                      "calendar (or lies outside the years a store holds).",
                                      field=column) from None  # fmt: skip
    target = record.get("target_id") if record.get("target_type") in ("memory", "notebook") else ""
    if kind == "event" and target and not ID_SHAPE.fullmatch(target):
        raise ValidationError("`target_id` of an event is not an id.", field="target_id")
    return record


def row_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """A parsed record as the row `SqlSession.load` replays (spans still in file ranks)."""
    row = {k: v for k, v in record.items() if k != "record"}
    for column in JSON_COLUMNS & set(row):
        if row[column] is not None:
            row[column] = json.dumps(row[column])
    if record["record"] == "version":
        text, tags = row["text"], record["tags"]
        row["norm_text"] = normalize_text(text) if text is not None else None
        row["tags_text"] = " ".join(tags) if tags is not None else None
    return row


def strings(record: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """The free texts a record carries, with their columns, for the secret gate (JSON
    walked), in the order of the table's columns (the order the write paths screen them
    in: a name before its summary, a reason before its evidence, a note before its data);
    the columns of SHAPES were checked for their shape, actors are not here."""
    for column in RECORDS[record["record"]][1]:
        value = record.get(column)
        if column in SHAPES or column in ACTORS:
            continue
        if column == "target_id" and record.get("target_type") in ("memory", "notebook"):
            continue
        yield from ((column, text) for text in _texts(value))


def actors(record: Mapping[str, Any]) -> Iterator[str]:
    """The actors a record names (each checked by the gate's `check_actor`)."""
    return (record[c] for c in ACTORS if isinstance(record.get(c), str))


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        # the values first and side by side, so a key split between a note and a value
        # (or two values) is read whole; the keys after them
        for item in value.values():
            yield from _texts(item)
        yield from (str(key) for key in value)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
