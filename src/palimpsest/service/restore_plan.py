"""The first reading of a file of ours to restore verbatim (service/transfer.py): every
record checked as the store and the write gate would check it, and what a refusal takes
with it (a memory's events, versions, links and disputes; a notebook's memories); then
the second reading of the same copy of the file, the rows a restore loads.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..domain.errors import Conflict, PalimpsestError, ValidationError
from ..domain.model import DISPUTE_STATES, KINDS, LINK_TYPES, STATUSES
from ..formats import native
from ..screening import gate
from ..store import StoreReader
from ..store.rows import memory_from_row
from .importing import FileCopy, Report, Steps, screened
from .roles import ROLES

# The gate's limit of a column whose name is not its limit's (gate.LIMITS), by record kind.
_LIMIT_OF = {("memory", "forget_reason"): "because", ("notebook_tombstone", "forget_reason"):
             "because", ("dispute", "reason"): "note", ("dispute", "ruling_reason"): "note",
             ("dispute", "evidence"): "note", ("version", "status_note"): "note",
             ("user", "name"): "key", ("notebook", "name"): "notebook",
             ("notebook", "tags"): "tag", ("version", "tags"): "tag"}  # fmt: skip


class RestorePlan:
    """The first reading of a file to restore: every record checked, and what a refusal
    takes with it (a memory's events, versions, links and disputes; a notebook's memories)."""

    def __init__(self, report: Report):
        self.report = report
        self.refused_memories: set[str] = set()
        self.refused_notebooks: set[str] = set()
        self.dropped: set[int] = set()  # lines left out on their own (a user, a link...)
        self.event_targets: dict[int, str] = {}  # an event's number in the file -> target
        self.in_notebook: dict[str, set[str]] = {}
        self.ids: dict[str, list[tuple[str, int]]] = {"memories": [], "notebooks": [],
                                                      "links": [], "disputes": []}  # fmt: skip
        self.would: Counter[str] = Counter()
        self.actors: set[str] = set()  # those checked already: a file names few, often
        self.memories: set[str] = set()  # the memory and notebook records read so far
        self.notebooks: set[str] = set()
        self.forgotten: set[str] = set()  # memories the file holds as tombstones
        self.unique: dict[str, set[Any]] = {}  # what the store holds once, as read so far
        # memory -> its versions: (version, from_seq, to_seq, scrubbed, line)
        self.histories: dict[str, list[tuple[int, int, int | None, int, int]]] = {}

    def read(self, number: int, text: str) -> None:
        where = f"line {number}"
        try:
            record = native.parse_record(text)
        except ValidationError as exc:
            owners = _owners(text)
            if not owners:
                raise ValidationError(
                    f"Line {number} of the file is damaged and names no memory ({exc.message}) "
                    "nothing was imported: export the workspace again.",
                    field="file",
                ) from None
            for owner in owners:
                self._refuse_memory(owner, where, exc)
            return
        kind = record["record"]
        if kind == "event":
            if record["seq"] <= max(self.event_targets, default=0):
                raise ValidationError(
                    f"Line {number}: the events are not numbered in order; the file was "
                    "changed by hand: export the workspace again.",
                    field="seq",
                )
            self.event_targets[record["seq"]] = record["target_id"]
        try:
            self._check(kind, record)
        except PalimpsestError as exc:
            self._refuse_record(kind, record, number, exc)
            return
        missing = _owners_of(kind, record) - self.memories if kind != "memory" else set()
        if missing:
            refusal = ValidationError(f"A {kind} names a memory the file does not hold.",
                                      field="memory_id")  # fmt: skip
            self._refuse_record(kind, record, number, refusal)
            return
        for what, unique in _unique_keys(kind, record):
            seen = self.unique.setdefault(what, set())
            if unique in seen:
                twice = ValidationError(f"The file holds {what} twice (the second at "
                                        f"line {number}); a store holds it once.",
                                        field=kind)  # fmt: skip
                self._refuse_record(kind, record, number, twice)
                return
            seen.add(unique)
        if kind == "memory":
            self.memories.add(record["id"])
            if record["forgotten_at"] is not None:
                self.forgotten.add(record["id"])
        elif kind == "notebook":
            self.notebooks.add(record["id"])
        elif kind == "version" and record["notebook_id"] not in self.notebooks | {None}:
            refusal = ValidationError("A version's notebook is not in the file.",
                                      field="notebook_id")  # fmt: skip
            self._refuse_memory(record["memory_id"], where, refusal)
        self.would[native.PLURAL[kind]] += 1
        if kind == "version":
            self.in_notebook.setdefault(record["memory_id"], set()).add(record["notebook_id"])
            span = (record["version"], record["from_seq"], record["to_seq"], record["scrubbed"])
            self.histories.setdefault(record["memory_id"], []).append((*span, number))
            for span in (record["from_seq"], record["to_seq"]):
                if span is not None and self._event_target(span) != record["memory_id"]:
                    wrong = "A version names an event that is not its memory's."
                    refusal = ValidationError(wrong, field="from_seq")
                    self._refuse_memory(record["memory_id"], where, refusal)
        elif kind == "dispute":
            ends = (record["first_id"], record["second_id"])
            if any(s is not None and self._event_target(s) not in ends
                   for s in (record["from_seq"], record["to_seq"])):  # fmt: skip
                wrong = "A dispute names an event that is not its memories'."
                self._refuse_record(kind, record, number, ValidationError(wrong, field="from_seq"))
        held = {"memory": "memories", "notebook": "notebooks", "link": "links"}.get(kind)
        if held:
            self.ids[held].append((record["id"], number))
        elif kind == "dispute":
            self.ids["disputes"].append((record["dispute_id"], number))

    def _event_target(self, rank: int) -> str | None:
        return self.event_targets.get(rank)

    def _check(self, kind: str, record: dict[str, Any]) -> None:
        check_content(kind, record, self.actors)

    def _refuse_record(self, kind: str, record: dict[str, Any], number: int,
                       exc: PalimpsestError) -> None:  # fmt: skip
        where = f"line {number}"
        owners = _owners_of(kind, record)
        if kind == "notebook":
            self.refused_notebooks.add(record["id"])
            self.report.refuse(where, exc)
        elif owners and kind not in ("link", "dispute"):
            for owner in owners:
                self._refuse_memory(owner, where, exc)
        else:
            self.dropped.add(number)
            self.report.refuse(where, exc)

    def _refuse_memory(self, memory_id: str, where: str, exc: PalimpsestError) -> None:
        if memory_id not in self.refused_memories:
            self.refused_memories.add(memory_id)
            self.report.refuse(where, exc, memory_id)

    def check_held(self, tx: StoreReader, workspace: str) -> None:
        """Ids are unique store-wide: one another workspace holds refuses its record."""
        columns = {
            "memories": ("memories", "id"),
            "notebooks": ("notebooks", "id"),
            "links": ("links", "id"),
            "disputes": ("dispute_versions", "dispute_id"),
        }
        for name, listed in self.ids.items():
            table, column = columns[name]
            held = tx.ids_held(table, column, [i for i, _ in listed])
            for found_id, number in listed:
                if found_id in held and held[found_id] != workspace:
                    exc = Conflict(f"{found_id} belongs to another workspace of this store: "
                                   "restore into another store.", field="id")  # fmt: skip
                    if name == "memories":
                        self._refuse_memory(found_id, f"line {number}", exc)
                    elif name == "notebooks":
                        self.refused_notebooks.add(found_id)
                        self.report.refuse(f"line {number}", exc)
                    else:
                        self.dropped.add(number)
                        self.report.refuse(f"line {number}", exc)

    def finish(self) -> None:
        """A refused notebook takes every memory that was ever in it, and a memory whose
        versions do not make one history (numbered 1..n, each span ending where the next
        begins, the last current, or all without content when it was forgotten) is refused:
        restored, it would show a state its events never made."""
        for memory_id, notebooks in self.in_notebook.items():
            if notebooks & self.refused_notebooks:
                self._refuse_memory(memory_id, "notebook", ValidationError(
                    "Its notebook was refused.", field="notebook_id"))  # fmt: skip
        self.in_notebook.clear()
        for memory_id in sorted(self.memories - self.refused_memories):
            versions = sorted(self.histories.get(memory_id, []))
            problem = _history_problem(versions, memory_id in self.forgotten)
            if problem is not None:
                where = f"line {versions[-1][4]}" if versions else "memory"
                self._refuse_memory(memory_id, where, ValidationError(problem, field="version"))
        self.histories.clear()

    def rows(
        self, copy: FileCopy, progress: Steps | None, total: int
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """The second reading, of the copy the first one checked: what is kept, as rows
        `load` replays."""
        kept_events: set[int] = set()
        for count, (number, text) in enumerate(copy.numbered(), start=1):
            if progress is not None and count % 1000 == 0:
                progress("writing", count, total)
            if number in self.dropped:
                continue
            try:
                record = native.parse_record(text)
            except ValidationError:
                continue  # its memories were refused by the first reading
            kind = record["record"]
            owners = _owners_of(kind, record)
            if (
                owners & self.refused_memories
                or (
                    kind in ("notebook", "notebook_tombstone")
                    and record["id"] in self.refused_notebooks
                )
                or (kind == "event" and record["target_id"] in self.refused_notebooks)
            ):
                continue
            if kind == "dispute" and not all(
                s is None or s in kept_events for s in (record["from_seq"], record["to_seq"])
            ):
                continue
            row = native.row_of(record)
            if kind == "event":
                kept_events.add(record["seq"])
            elif kind in ("version", "dispute"):
                row["rowid"] = number  # a row's name in this file: `load` maps it to its own
            yield native.RECORDS[kind][0], row
        if progress is not None:
            progress("writing", total, total)


def _check_setting(name: str, value: str) -> None:
    """A setting as the store keeps it: one of ours, its value JSON as `settings change`
    would have stored it (every read of the workspace reads the settings)."""
    from .settings import SETTINGS

    if name not in SETTINGS:
        raise ValidationError("A setting this Palimpsest does not have.", field="name")
    try:
        chosen = json.loads(value)
        ok = SETTINGS[name].read(chosen) == chosen
    except (ValueError, TypeError, RecursionError):
        ok = False
    if not ok:
        raise ValidationError(f"The value of setting `{name}` is not one it takes "
                              "(`palimpsest settings` lists what each takes).",
                              field="value")  # fmt: skip


def _unique_keys(kind: str, record: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """What a record holds that a store holds once (its unique columns): (what, value)."""
    if kind in ("notebook", "notebook_tombstone"):  # a notebook is alive or forgotten
        yield "a notebook's id", record["id"]
    elif kind in ("memory", "link"):
        yield f"a {kind}'s id", record["id"]
    if kind == "notebook":
        yield "a notebook's name", record["name"]
    elif kind == "link":
        yield "a link", (record["source_id"], record["target_id"], record["type"])
    elif kind == "version":
        yield "a version of a memory", (record["memory_id"], record["version"])
        if record["to_seq"] is None and record["status"] == "active" and record["key"]:
            yield "an active memory's key in a notebook", (record["notebook_id"], record["key"])
    elif kind == "dispute":
        yield "a version of a dispute", (record["dispute_id"], record["version"])
        if record["to_seq"] is None and record["status"] == "open":
            yield "an open dispute", (record["first_id"], record["second_id"])
    elif kind in ("setting", "user"):
        yield f"a {kind}", record["name"]


def _history_problem(versions: list[tuple[int, int, int | None, int, int]],
                     forgotten: bool) -> str | None:  # fmt: skip
    """Why a memory's versions (version, from_seq, to_seq, scrubbed, line), in order, are
    not one history; None when they are."""
    if not versions:
        return None if forgotten else "A memory of the file has no version."
    if [v[0] for v in versions] != list(range(1, len(versions) + 1)):
        return "A memory's versions are not numbered 1, 2, 3... without a gap."
    for (_, start, end, _, _), following in zip(versions, [*versions[1:], None], strict=True):
        if end is not None and end <= start:
            return "A version's span ends before it begins."
        if following is not None and end != following[1]:
            return "A version's span does not end where the next version's begins."
    _, _, last_end, last_scrubbed, _ = versions[-1]
    if forgotten:
        if last_end is None or any(not v[3] for v in versions):
            return "A memory forgotten in the file still has content or a current version."
    elif last_end is not None or last_scrubbed:
        return "A memory's last version is not its current one (or has no content)."
    return None


def _owners_of(kind: str, record: dict[str, Any]) -> set[str]:
    """The memories a record belongs to: refusing one of them leaves the record out."""
    if kind == "memory":
        return {record["id"]}
    if kind == "version":
        return {record["memory_id"]}
    if kind == "event":
        return {record["target_id"]} if record["target_type"] == "memory" else set()
    if kind == "link":
        return {record["source_id"], record["target_id"]}
    if kind == "dispute":
        return {record["first_id"], record["second_id"]}
    return set()


def _owners(text: str) -> set[str]:
    """The memories a line that failed its checks still names, if it is JSON at all."""
    try:
        value = native.loads(text)
    except ValueError:
        return set()
    if not isinstance(value, dict) or value.get("record") not in native.RECORDS:
        return set()
    found = set()
    for column in ("memory_id", "source_id", "target_id", "first_id", "second_id", "id"):
        candidate = value.get(column)
        if not isinstance(candidate, str) or not native.ID_SHAPE.fullmatch(candidate):
            continue
        if column == "id" and value["record"] != "memory":
            continue  # a notebook's or a link's own id
        if column == "target_id" and value.get("target_type", "memory") != "memory":
            continue
        found.add(candidate)
    return found


def check_content(kind: str, record: dict[str, Any], actors: set[str]) -> None:
    """What an import checks in a record beyond its shape: its actors (`actors`: those
    checked already), the write gate on its texts, and what its kind may hold."""
    for actor in native.actors(record):
        if actor not in actors:
            gate.check_actor(actor)
            actors.add(actor)
    texts = list(native.strings(record))
    for column, text in texts:
        gate.check_storable(column, text)
        limit = _LIMIT_OF.get((kind, column), column if column in gate.LIMITS else None)
        if limit is not None:
            gate.check_length(column, text, limit_name=limit)
    gate.screen_record(texts)  # together: half a key in each of two fields is one key
    if kind == "version" and not record["scrubbed"]:
        if record["notebook_id"] is None:
            raise ValidationError("A version with content needs its `notebook_id`.",
                                  field="notebook_id")  # fmt: skip
        if record["kind"] not in KINDS or record["status"] not in STATUSES:
            raise ValidationError("A version's `kind` or `status` is not one of ours.",
                                  field="kind")  # fmt: skip
        try:
            memory = memory_from_row({**native.row_of(record), "workspace": ""})
        except (KeyError, TypeError, ValueError):
            raise ValidationError("A version's fields do not make a memory.",
                                  field="version") from None  # fmt: skip
        screened(memory)  # the gate as remember's: bounds, a rule's falsifier, secrets
    elif kind == "link" and record["type"] not in LINK_TYPES:
        raise ValidationError("A link's `type` is not one of ours.", field="type")
    elif kind == "dispute" and record["status"] not in DISPUTE_STATES:
        raise ValidationError("A dispute's `status` is not one of ours.", field="status")
    elif kind == "user" and record["role"] not in ROLES:
        raise ValidationError("A user's `role` is not one of ours.", field="role")
    elif kind == "setting":
        _check_setting(record["name"], record["value"])
