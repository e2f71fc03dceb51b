"""Export and import of a workspace (DESIGN section 2; the file format: formats/native.py).

    export        the workspace, or some notebooks, as canonical JSON lines, streamed
    import_file   a file of ours, or of another memory server (formats/), in two ways:

restore  into an empty workspace, a file of ours lands verbatim: every event with its
         actor and time, every version, tombstone, link and dispute, in one transaction.
merge    into a workspace that holds something (or from another server's files), each
         memory's current state is filed as a new event `import` by the importer, naming
         its source: nobody can write history in another's name.

The unit is a memory with its whole history: one refused (a secret, a damaged record,
an id another workspace holds, a tombstone here, a markdown note of a memory or version
forgotten here) is reported by line and field, never
echoed, and the rest goes on; `strict` refuses the whole file instead. The same id with
other content is a conflict; importing the same file again changes nothing. The file is
read once, into memory (importing.FileCopy), and every pass reads that copy: a restore
checks it whole before it loads it, a merge checks each memory as it files it, so a
refusal never leaves half a memory and what is written is what was checked, whatever
happens to the file on disk meanwhile.
Vectors are derived: after a restore `reindex` embeds in batches; a merge embeds each
batch before its transaction, as a batch remember does.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from ..domain.errors import Conflict, InternalError, NotFound, PalimpsestError, ValidationError
from ..domain.ids import new_id
from ..domain.model import KINDS, LINK_TYPES, STATUSES, Link, Memory, normalize_text
from ..formats import native
from ..formats.records import Incoming, IncomingLink, Origin, Record, Unmapped
from ..revise import Unmatched, check_rule_fields, parse_fields
from ..revise.decide import duplicate_of
from ..screening import gate
from ..store import EventFilter, StoreReader, StoreWriter
from ..store.rows import memory_from_row
from .admin_answers import Exported, ExportedMarkdown, Imported
from .base import ServiceBase, notebook_name
from .importing import FileCopy, Report, Steps, screened
from .restore_plan import RestorePlan
from .roles import check_owner, check_write
from .vectors import embedding_text, reindex

BATCH = 256  # memories filed per transaction of a merge
IMPORTED_ID = "m_"  # prefix of the ids derived from another server's references


@dataclass(frozen=True)
class Candidate:
    """A memory as a merge files it: its id, notebook's name and first version's fields."""

    where: str
    memory: Memory  # workspace, notebook and times are the importer's, set when filed
    notebook: str
    origin: Origin | None = None  # the memory of ours a note was exported from


class ForgottenHere(ValidationError):
    """A note names a memory (or version) forgotten in this workspace: refused, and
    reported by that id, which is one of ours (never a value the file made up)."""

    def __init__(self, message: str, memory_id: str):
        super().__init__(message, field="id")
        self.memory_id = memory_id


class TransferOps(ServiceBase):
    # -- export ---------------------------------------------------------------------------

    def export(self, out: TextIO, *, notebooks: list[str] | None = None) -> Exported:
        """Write the workspace (or the notebooks named) to `out` as JSON lines: a header,
        then every record. One read transaction: the file is one moment of the store."""
        check_owner("export", self.role)
        with self.store.read(self.workspace) as tx:
            chosen = self._chosen_notebooks(tx, notebooks)
            counts = Counter(native.PLURAL[kind] for kind, _ in _exported(tx, chosen))
            name = next((w.name for w in tx.workspaces() if w.id == self.workspace),
                        self.workspace)  # fmt: skip
            names = None if chosen is None else sorted(chosen.values())
            head = native.header({"id": self.workspace, "name": name}, names, counts,
                                 self.clock())  # fmt: skip
            out.write(native.line(head) + "\n")
            ranks = native.Ranks()
            for kind, row in _exported(tx, chosen):
                try:
                    out.write(native.line(native.record_of(kind, row, ranks)) + "\n")
                except LookupError:
                    raise InternalError(f"A {kind} names an event the export left out.") from None
        return {"workspace": name, "notebooks": names, "counts": dict(counts)}

    def export_markdown(self, directory: Path, *, notebooks: list[str] | None = None
                        ) -> ExportedMarkdown:  # fmt: skip
        """Write the notebooks' current memories (retired ones too) as markdown files in
        `directory`, a file per memory named by its id (formats/markdown_out.py)."""
        from ..formats.markdown_out import write_markdown

        check_owner("export", self.role)
        with self.store.read(self.workspace) as tx:
            chosen = self._chosen_notebooks(tx, notebooks)
            shown = [nb for nb in tx.list_notebooks() if chosen is None or nb.id in chosen]
            ids = {nb.id for nb in shown}
            memories = [m for m in tx.memories_at(None) if m.notebook_id in ids]
            counts = write_markdown(directory, shown, memories, tx.links)
        return {"directory": str(directory), "notebooks": counts["notebooks"],
                "memories": counts["memories"], "written": counts["written"],
                "unchanged": counts["unchanged"], "removed": counts["removed"]}  # fmt: skip

    def _chosen_notebooks(self, tx: StoreReader, refs: list[str] | None) -> dict[str, str] | None:
        if not refs:
            return None
        chosen = {}
        for ref in refs:
            found = tx.get_notebook(ref) or tx.get_notebook(notebook_name(ref))
            if found is None:
                raise NotFound(
                    f"No notebook {gate.shown_reference(ref)} in this workspace: "
                    "`palimpsest notebook list` lists them.",
                    field="notebook",
                )
            chosen[found.id] = found.name
        return chosen

    # -- import ---------------------------------------------------------------------------

    def import_file(
        self,
        path: Path,
        *,
        source_format: str = "palimpsest",
        notebook: str = "imported",
        dry_run: bool = False,
        strict: bool = False,
        progress: Steps | None = None,
    ) -> Imported:
        """Import `path` (a file of ours, or of another server: formats/). Answers what was
        imported, left unchanged, refused and found in conflict, by line, never by text."""
        check_write("import", self.role)
        if source_format != "palimpsest":
            return self._import_foreign(path, source_format, notebook_name(notebook), dry_run,
                                        strict, progress)  # fmt: skip
        copy = FileCopy.read(path)  # the only read of the file: every pass reads the copy
        try:
            head = native.read_header(next(copy.lines(), ""))
        except UnicodeDecodeError:
            raise ValidationError("The file is not UTF-8 text.", field="file") from None
        _check_complete(copy, head)
        _screen_header(head)
        source = {"format": native.FORMAT, "file": _shown_file(path),
                  "workspace": head.workspace["name"], "exported_at": head.exported_at}  # fmt: skip
        with self.store.read(self.workspace) as tx:
            empty = _restorable(tx)
        total = sum(head.counts.values())
        if empty:
            report = Report("restore", source, dry_run)
            return self._restore(copy, str(path), report, strict, total, progress)
        report = Report("merge", source, dry_run)
        candidates = functools.partial(_native_candidates, copy, report)
        links = functools.partial(_native_links, copy, report)
        answer = self._merge(candidates, links, report, strict, progress)
        if report.counts["unchanged"] and not dry_run:
            # The file is here already: a restore run again after it committed but before
            # its vectors landed (stopped, killed) finishes them now.
            embedding = None if progress is None else functools.partial(progress, "embedding")
            answer["vectors"] = reindex(self.store, self.workspace, self.vectors, embedding)
        return answer

    # -- restore: a file of ours, verbatim, into an empty workspace -------------------------

    def _restore(
        self,
        copy: FileCopy,
        file: str,
        report: Report,
        strict: bool,
        total: int,
        progress: Steps | None,
    ) -> Imported:
        plan = RestorePlan(report)
        for count, (number, text) in enumerate(copy.numbered(), start=1):
            plan.read(number, text)
            if progress is not None and count % 1000 == 0:
                progress("checking", count, total)
        with self.store.read(self.workspace) as tx:
            plan.check_held(tx, self.workspace)
        plan.finish()
        _refuse_if_strict(report, strict)
        if report.dry_run:
            report.counts.update(plan.would)
            return report.answer()

        def body(tx: StoreWriter, now: str, op_id: str) -> dict[str, Any]:
            del now, op_id  # a restore writes the file's own events, not new ones
            if not _restorable(tx):
                raise Conflict(
                    "Something was written to this workspace while the file was checked (an "
                    "import at the same time?): import again, and the file is merged.",
                    field="file",
                )
            counts = tx.load(plan.rows(copy, progress, total))
            return {"loaded": counts}

        loaded = self._write("import", {"file": file}, None, False, body)["loaded"]
        self.store.scrub(self.workspace)
        report.counts.update(_by_kind(loaded))
        answer = report.answer()
        embedding = None if progress is None else functools.partial(progress, "embedding")
        answer["vectors"] = reindex(self.store, self.workspace, self.vectors, embedding)
        return answer

    # -- merge: the current state, filed anew by the importer -------------------------------

    def _merge(
        self,
        candidates: Callable[[], Iterator[Candidate]],
        links: Callable[[], Iterator[tuple[str, IncomingLink]]],
        report: Report,
        strict: bool,
        progress: Steps | None,
    ) -> Imported:
        if strict or report.dry_run:  # everything checked before anything is written
            seen: dict[str, str] = {}
            for chunk in _chunks(candidates(), BATCH):
                with self.store.read(self.workspace) as tx:
                    for candidate in chunk:
                        self._plan_one(tx, candidate, seen, report)
            _refuse_if_strict(report, strict)
            if report.dry_run:
                self._links(links(), report, planned=seen)
                return report.answer()
            report.counts.clear()
            report.listed.clear()
        done = 0
        for chunk in _chunks(candidates(), BATCH):
            self._file_chunk(chunk, report)
            done += len(chunk)
            if progress is not None:
                progress("writing", done, 0)
        self._links(links(), report)
        return report.answer()

    def _plan_one(
        self, tx: StoreReader, candidate: Candidate, seen: dict[str, str], report: Report
    ) -> None:
        memory = candidate.memory
        digest = _content_digest(memory)
        if memory.id in seen:
            report.counts["unchanged" if seen[memory.id] == digest else "conflicts"] += 1
            return
        seen[memory.id] = digest
        try:
            outcome = self._outcome(tx, candidate)
        except PalimpsestError as exc:
            seen[memory.id] = "refused"
            report.refuse(candidate.where, exc, _refused_id(candidate, exc))
            return
        report.counts[outcome] += 1

    def _outcome(self, tx: StoreReader, candidate: Candidate) -> str:
        """`imported`, `unchanged` or `duplicates` for a candidate; a refusal raises."""
        memory = candidate.memory
        if candidate.origin is not None:
            _refuse_if_forgotten(tx, candidate.origin)
        if tx.get_tombstone(memory.id) is not None:
            raise ValidationError(
                f"{memory.id} was forgotten in this workspace; a forgotten memory never comes "
                "back.",
                field="id",
            )
        here = tx.get_memory(memory.id)
        if here is not None:
            if _content_digest(here) == _content_digest(memory):
                return "unchanged"
            raise Conflict(
                f"{memory.id} is here with other content: revise it here, or forget it here "
                "first, to take the file's.",
                field="id",
            )
        held = tx.ids_held("memories", "id", [memory.id])
        if held:
            raise Conflict(
                f"{memory.id} belongs to another workspace of this store: import into another "
                "store, or into that workspace.",
                field="id",
            )
        nb = tx.get_notebook(candidate.notebook)
        if nb is not None:
            text = normalize_text(memory.text)
            if duplicate_of(tx.find_by_text(nb.id, text), memory.kind) is not None:
                return "duplicates"
            if memory.status == "active" and memory.key is not None:
                holder = tx.key_holder(nb.id, memory.key)
                if holder is not None and holder.id != memory.id:
                    raise Conflict(
                        f"The key of {memory.id} is held by {holder.id} in notebook "
                        f"{nb.name}: revise one of them.",
                        field="key",
                    )
        return "imported"

    def _file_chunk(self, chunk: list[Candidate], report: Report) -> None:
        with self.store.read(self.workspace) as tx:  # embed only what will be filed
            new = [c for c in chunk if _quietly(self._outcome, tx, c) == "imported"]
        embedded = self.vectors.embedded([embedding_text(c.memory, None) for c in new])
        outcomes: list[tuple[Candidate, str | PalimpsestError]] = []

        def body(tx: StoreWriter, now: str, op_id: str) -> dict[str, Any]:
            outcomes.clear()
            for candidate in chunk:
                outcome: str | PalimpsestError
                try:
                    outcome = self._outcome(tx, candidate)
                    if outcome == "imported":
                        self._file_candidate(tx, candidate, now, op_id, report.source)
                except Unmatched as exc:
                    outcome = Conflict(f"Refused: {exc.reason}.", field="key")
                except PalimpsestError as exc:
                    outcome = exc
                outcomes.append((candidate, outcome))
            return {}

        with self.vectors.holding(embedded):
            self._write("import", {"chunk": [c.memory.id for c in chunk]}, None, False, body)
        for candidate, outcome in outcomes:
            if isinstance(outcome, PalimpsestError):
                report.refuse(candidate.where, outcome, _refused_id(candidate, outcome))
            else:
                report.counts[outcome] += 1

    def _file_candidate(
        self, tx: StoreWriter, candidate: Candidate, now: str, op_id: str, source: dict[str, Any]
    ) -> None:
        nb = self._open_notebook(tx, candidate.notebook, now, op_id)
        memory = candidate.memory.replace(workspace=self.workspace, notebook_id=nb.id,
                                          recorded_at=now)  # fmt: skip
        self._check_key(tx, None, memory)
        data = {"source": {**source, "where": candidate.where}}
        self._memory_event(tx, "import", op_id, now, None, memory, data=data)

    def _links(
        self,
        links: Iterable[tuple[str, IncomingLink]],
        report: Report,
        planned: dict[str, str] | None = None,
    ) -> None:
        """Each link whose two ends are here (or, in a dry run, would be): made once."""
        for chunk in _chunks(iter(links), BATCH):
            if planned is not None:
                with self.store.read(self.workspace) as tx:
                    for source_id, link in chunk:
                        ends = (source_id, link.target_ref)
                        if all(planned.get(e, "refused") != "refused" or tx.get_memory(e)
                               for e in ends):  # fmt: skip
                            report.counts["links"] += 1
                        else:
                            report.note("links_left_out", _link_gap(link))
                continue
            for link, outcome in self._link_chunk(chunk, report.source):
                if outcome == "left_out":
                    report.note("links_left_out", _link_gap(link))
                else:
                    report.counts[outcome] += 1

    def _link_chunk(
        self, chunk: list[tuple[str, IncomingLink]], source: dict[str, Any]
    ) -> list[tuple[IncomingLink, str]]:
        """One transaction's links, each `links`, `links_unchanged` or `left_out`."""
        outcomes: list[tuple[IncomingLink, str]] = []

        def body(tx: StoreWriter, now: str, op_id: str) -> dict[str, Any]:
            outcomes.clear()  # a retried transaction starts again
            for source_id, link in chunk:
                outcome = self._link_one(tx, source_id, link, now, op_id, source)
                outcomes.append((link, outcome))
            return {}

        self._write("import", {"links": len(chunk)}, None, False, body)
        return outcomes

    def _link_one(
        self,
        tx: StoreWriter,
        source_id: str,
        link: IncomingLink,
        now: str,
        op_id: str,
        source: dict[str, Any],
    ) -> str:
        first, second = tx.get_memory(source_id), tx.get_memory(link.target_ref)
        if first is None or second is None or first.id == second.id:
            return "left_out"
        if any((ln.source_id, ln.target_id, ln.type) == (source_id, link.target_ref, link.type)
               for ln in tx.links(source_id)):  # fmt: skip
            return "links_unchanged"
        made = Link(new_id("ln"), self.workspace, source_id, link.target_ref, link.type, now,
                    self.actor)  # fmt: skip
        tx.add_link(made)
        data = {"link": made.to_dict(), "source": {**source, "where": link.where}}
        for end in (first, second):
            self._memory_event(tx, "link", op_id, now, end, end.replace(version=end.version + 1),
                               None, data)  # fmt: skip
        return "links"

    # -- another server's files -------------------------------------------------------------

    def _import_foreign(
        self,
        path: Path,
        source_format: str,
        notebook: str,
        dry_run: bool,
        strict: bool,
        progress: Steps | None,
    ) -> Imported:
        reader = _reader(source_format)
        if not path.exists():
            raise NotFound(f"No file or folder {path}: check the path.", field="file")
        if path.is_dir() != (source_format == "markdown"):
            wanted = "a folder of notes" if source_format == "markdown" else "a file"
            raise ValidationError(f"`--from {source_format}` reads {wanted}; {path} is not.",
                                  field="file")  # fmt: skip
        source = {"format": source_format, "file": _shown_file(path)}
        report = Report("merge", source, dry_run)
        derived = functools.partial(_derived_id, self.workspace, source_format)

        # Read once: a strict import's check and its writing see the same records, even if
        # the file or folder changes meanwhile.
        read = list(reader(path, notebook))

        def records() -> Iterator[Record]:
            return iter(read)

        def candidates() -> Iterator[Candidate]:
            for record in records():
                where = _shown_where(record.where)
                if isinstance(record, Unmapped):
                    entry = {"where": where, "reason": record.reason}
                    report.note("unmapped", {**entry, "field": gate.shown_name(record.field)}
                                if record.field else entry)  # fmt: skip
                elif isinstance(record, Incoming):
                    try:
                        yield self._foreign_candidate(derived(record.ref),
                                                      replace(record, where=where))  # fmt: skip
                    except PalimpsestError as exc:
                        report.refuse(where, exc, derived(record.ref))

        def links() -> Iterator[tuple[str, IncomingLink]]:
            for record in records():
                if isinstance(record, IncomingLink):
                    where = _shown_where(record.where)
                    if record.type not in LINK_TYPES:
                        gap = {"where": where, "reason": "not a link type of ours"}
                        report.note("links_left_out", gap)
                        continue
                    target = derived(record.target_ref)
                    link = IncomingLink(record.source_ref, target, record.type, where)
                    yield derived(record.source_ref), link

        answer = self._merge(candidates, links, report, strict, progress)
        if report.counts["unmapped"] and report.counts.keys() <= {"unmapped", "links_left_out"}:
            first = report.listed["unmapped"][0]
            raise ValidationError(  # nothing was read, so nothing was written
                f"Nothing in {path.name} reads as `{source_format}` ({first['where']}: "
                f"{first['reason']}): check `--from`.",
                field="file",
            )
        return answer

    def _foreign_candidate(self, memory_id: str, record: Incoming) -> Candidate:
        values = parse_fields(record.fields)
        for required in ("kind", "text"):
            if required not in values:
                raise ValidationError(f"`{required}` is required.", field=required)
        check_rule_fields(values["kind"], values)
        if record.status not in STATUSES:
            raise ValidationError("`status` is not one of ours.", field="status")
        memory = Memory(
            id=memory_id,
            workspace=self.workspace,
            notebook_id="",
            version=1,
            recorded_at="",
            author=record.author or self.actor,
            owner=record.author,  # unknown author: ownerless, so `claim` applies
            status=record.status,
            **values,
        )
        screened(memory)
        return Candidate(record.where, memory, notebook_name(record.notebook), record.origin)


# -- what an export holds, and in which order ---------------------------------------------


def _exported(tx: StoreReader, chosen: dict[str, str] | None) -> Iterator[tuple[str, Any]]:
    """(record kind, row) for the whole workspace, or only `chosen` notebooks' memories
    with their events, links and disputes among them, and every notebook they were ever
    in (then no users, settings or workspace-wide events: those are the workspace's)."""
    if chosen is None:
        for kind, (table, _) in native.RECORDS.items():
            yield from ((kind, row) for row in tx.table_rows(table))
        return
    members, notebooks = _members(tx, set(chosen))
    for kind, (table, _) in native.RECORDS.items():
        for row in tx.table_rows(table):
            if _belongs(kind, row, notebooks, members):
                yield kind, row


def _members(tx: StoreReader, chosen: set[str]) -> tuple[set[str], set[str]]:
    """The memories that ever were in one of `chosen`, and every notebook they were in."""
    memories: dict[str, set[str]] = {}
    for row in tx.table_rows("memory_versions"):
        memories.setdefault(row["memory_id"], set()).add(row["notebook_id"])
    members = {m for m, notebooks in memories.items() if notebooks & chosen}
    notebooks = set().union(*(memories[m] for m in members)) | chosen
    return members, notebooks - {None}


def _belongs(kind: str, row: Any, notebooks: set[str], members: set[str]) -> bool:
    if kind == "notebook":
        return bool(row["id"] in notebooks)
    if kind == "memory":
        return bool(row["id"] in members)
    if kind == "event":
        return bool(row["target_id"] in (members if row["target_type"] == "memory" else notebooks))
    if kind == "version":
        return bool(row["memory_id"] in members)
    if kind == "link":
        return bool(row["source_id"] in members and row["target_id"] in members)
    if kind == "dispute":
        return bool(row["first_id"] in members and row["second_id"] in members)
    return False


# -- merge of a file of ours ----------------------------------------------------------------


def _native_candidates(copy: FileCopy, report: Report) -> Iterator[Candidate]:
    """The current version of each memory of the file, as a merge files it."""
    notebooks: dict[str, str] = {}
    forgotten: set[str] = set()
    memories: set[str] = set()  # the memory records read so far: each before its versions
    for number, text in copy.numbered():
        where = f"line {number}"
        try:
            record = native.parse_record(text)
        except ValidationError as exc:
            report.refuse(where, exc)
            continue
        kind = record["record"]
        if kind == "notebook":
            notebooks[record["id"]] = record["name"]
        elif kind == "memory":
            memories.add(record["id"])
            if record["forgotten_at"] is not None:
                forgotten.add(record["id"])
                report.counts["forgotten_in_source"] += 1
        elif kind == "version" and record["to_seq"] is None and not record["scrubbed"]:
            if record["memory_id"] in forgotten:
                continue
            try:
                if record["memory_id"] not in memories:
                    raise ValidationError("A version names a memory the file does not hold "
                                          "(before it).", field="memory_id")  # fmt: skip
                memory = memory_from_row({**native.row_of(record), "workspace": ""})
                if memory.kind not in KINDS or memory.status not in STATUSES:
                    raise ValidationError("A version's `kind` or `status` is not one of ours.",
                                          field="kind")  # fmt: skip
                screened(memory)
                name = notebooks.get(record["notebook_id"] or "")
                if name is None:
                    raise ValidationError("The version's notebook is not in the file.",
                                          field="notebook_id")  # fmt: skip
            except PalimpsestError as exc:
                report.refuse(where, exc, record["memory_id"])
                continue
            except (KeyError, TypeError, ValueError):
                report.refuse(where, ValidationError("A version's fields do not make a memory.",
                              field="version"), record["memory_id"])  # fmt: skip
                continue
            yield Candidate(where, memory.replace(version=1), name)
        elif kind in ("event", "dispute", "user", "setting", "notebook_tombstone"):
            report.counts[f"{native.PLURAL[kind]}_not_merged"] += 1


_LINK_OR_MEMORY = re.compile(r'"record"\s*:\s*"(link|memory)"')  # spaced, if written by hand


def _native_links(copy: FileCopy, report: Report) -> Iterator[tuple[str, IncomingLink]]:
    """The file's links; one to a memory the source forgot is counted, not made."""
    forgotten: set[str] = set()
    for number, text in copy.numbered():
        if not _LINK_OR_MEMORY.search(text):  # most lines: skipped unparsed
            continue
        try:
            record = native.parse_record(text)
        except ValidationError:
            continue
        if record["record"] == "memory" and record["forgotten_at"] is not None:
            forgotten.add(record["id"])
        elif record["record"] == "link" and {record["source_id"], record["target_id"]} & forgotten:
            report.counts["links_to_forgotten"] += 1
        elif record["record"] == "link" and record["type"] not in LINK_TYPES:
            gap = {"where": f"line {number}", "reason": "not a link type of ours"}
            report.note("links_left_out", gap)
        elif record["record"] == "link":
            yield (
                record["source_id"],
                IncomingLink(
                    record["source_id"], record["target_id"], record["type"], f"line {number}"
                ),
            )


# -- small parts ----------------------------------------------------------------------------


def _screen_header(head: native.Header) -> None:
    """The header's workspace is repeated in every answer and merged event: screened."""
    for part in ("id", "name"):
        gate.check_storable("workspace", head.workspace[part])
        gate.screen_record([("workspace", head.workspace[part])])


_MAKING = frozenset({"workspace.create", "workspace.rename"})  # a workspace's own making


def _restorable(tx: StoreReader) -> bool:
    """Whether a file of ours lands verbatim here: the workspace is empty, or holds only the
    events of its own making (`palimpsest workspace create team`, to restore into it)."""
    if tx.is_empty():
        return True
    if tx.list_notebooks():
        return False
    events = tx.events(EventFilter(limit=len(_MAKING) * 4))
    return len(events) < len(_MAKING) * 4 and all(e.op in _MAKING for e in events)


def _content_digest(memory: Memory) -> str:
    """What a memory says and where it stands: the same for the same content, wherever and
    whenever it was filed (times of filing, owner and version aside)."""
    content = {**memory.content(), "status": memory.status}
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=repr).encode()).hexdigest()


def _derived_id(workspace: str, source_format: str, ref: str) -> str:
    """A memory id made from another server's reference: the same reference imported into
    the same workspace, the same id (ids are unique store-wide, so the workspace counts)."""
    named = f"{workspace}\0{source_format}\0{ref}".encode()
    digest = int.from_bytes(hashlib.sha256(named).digest()[:13])
    alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
    chars = []
    for _ in range(20):
        digest, digit = divmod(digest, 32)
        chars.append(alphabet[digit])
    return IMPORTED_ID + "".join(chars)


def _quietly(outcome: Callable[[StoreReader, Candidate], str], tx: StoreReader,
             candidate: Candidate) -> str | None:  # fmt: skip
    """The outcome, or None where it is a refusal (the write reports it)."""
    try:
        return outcome(tx, candidate)
    except PalimpsestError:
        return None


def _refuse_if_forgotten(tx: StoreReader, origin: Origin) -> None:
    """Refuse a note exported from a memory forgotten here, or from a version of it
    forgotten here (`forget --version`): what is forgotten stays forgotten, even when a
    folder kept in git brings its text back under a new id."""
    if tx.get_tombstone(origin.id) is not None:
        raise ForgottenHere(
            f"The note is {origin.id}, forgotten in this workspace; a forgotten memory never "
            "comes back: delete the note (exporting again into the folder removes it).",
            origin.id,
        )
    if origin.version is None or tx.get_memory(origin.id) is None:
        return
    for past in tx.memory_versions(origin.id):
        if past.version == origin.version and past.memory is None:
            raise ForgottenHere(
                f"The note holds version {origin.version} of {origin.id}, a version forgotten "
                "in this workspace; it never comes back: delete the note (exporting again "
                "into the folder rewrites it).",
                origin.id,
            )


def _refused_id(candidate: Candidate, exc: PalimpsestError) -> str:
    """The id a refusal names: the forgotten one a note names, else the memory's."""
    return exc.memory_id if isinstance(exc, ForgottenHere) else candidate.memory.id


def _link_gap(link: IncomingLink) -> dict[str, Any]:
    return {"where": link.where, "reason": "an end of the link is not here (refused or missing)"}


def _check_complete(copy: FileCopy, head: native.Header) -> None:
    """Refuse a file that holds other records than its header counts (cut short, or
    changed by hand), before anything is read into the store."""
    found: Counter[str] = Counter()
    for number, text in copy.numbered():
        try:
            kind = native.loads(text).get("record")
        except (ValueError, AttributeError):
            continue  # a damaged line: the checks name it
        if kind not in native.PLURAL:
            raise ValidationError(f"Line {number} is not a record of this format.", field="file")
        found[native.PLURAL[kind]] += 1
    if found != Counter(head.counts):
        differ = sorted(
            k for k in set(found) | set(head.counts) if found[k] != head.counts.get(k, 0)
        )
        raise ValidationError(
            f"The file holds other {', '.join(differ)} than its header counts: it was cut "
            "short or changed. Nothing was imported; export the workspace again.",
            field="file",
        )


def _refuse_if_strict(report: Report, strict: bool) -> None:
    refused = report.counts["refused"] + report.counts["conflicts"]
    if strict and refused:
        first = (report.listed.get("refused") or report.listed.get("conflicts") or [{}])[0]
        raise ValidationError(
            f"{refused} records would be refused (the first at {first.get('where')}: "
            f"{first.get('message')}); with `strict` nothing was imported. Run a dry run "
            "to see each, or import without `strict` to bring the rest.",
            field=first.get("field"),
        )


def _by_kind(loaded: dict[str, int]) -> dict[str, int]:
    plural = {table: native.PLURAL[kind] for kind, (table, _) in native.RECORDS.items()}
    return {plural.get(table, table): n for table, n in loaded.items()}


def _shown_file(path: Path) -> str:
    """The file's name as answers and every merged event's source repeat it."""
    return _shown_where(path.name)


def _shown_where(where: str) -> str:
    """Where in a file or folder something was (a file name, a folder, a line), fit to
    repeat in an answer and to store in an event: a name holding a secret is not repeated,
    nor one no store can hold."""
    try:
        gate.check_storable("where", where)
    except ValidationError:
        return "(a name that is not text)"
    if gate.record_flagged([("where", where)]):
        return "(a name not repeated: it looks like a secret)"
    return where


def _chunks(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _reader(source_format: str) -> Callable[[Path, str], Iterator[Record]]:
    from ..formats import markdown_notes, mcp_memory, mem0

    readers = {"mcp-memory": mcp_memory.read, "markdown": markdown_notes.read, "mem0": mem0.read}
    if source_format not in readers:
        raise ValidationError(
            f"`from` must be one of palimpsest, {', '.join(readers)}.", field="from"
        )
    return readers[source_format]
