"""Filing and changing memories: remember, and revise with all its forms."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar, overload

from typing_extensions import Unpack

from ..domain.errors import NotFound, PalimpsestError, Retryable, ValidationError
from ..domain.ids import new_id
from ..domain.model import Link, Memory, Notebook, normalize_text
from ..revise import (
    Changes,
    Plan,
    Unmatched,
    changed_fields,
    check_expected_version,
    check_move,
    check_rule_fields,
    diff,
    duplicate_of,
    edit,
    filed,
    in_item,
    not_applied,
    parse_fields,
    parse_request,
    retirement,
    revision,
    settle,
    superseding_content,
    supersession,
    text_targets,
)
from ..revise.parse import parse_acceptance
from ..screening import gate
from ..store import EventFilter, SearchQuery, StoreReader, StoreWriter
from .answers import (
    Batch,
    Filed,
    MissedTarget,
    Remembered,
    ReviseAnswer,
    Revised,
    Suggestions,
    revised,
)
from .base import EVERY_EVENT, ServiceBase, id_list
from .batch import SUGGEST_ITEMS, Item, parse_items
from .checks import hashed_on_write
from .guard import tried
from .queueing import queued_on_replica
from .requests import MemoryFields, Revision
from .roles import check_write
from .shown import memory_view
from .suggest import CANDIDATES, suggestions
from .usefulness import write_mark
from .vectors import embedding_text

# An answer that suggestions are added to (`_suggested`).
W = TypeVar("W", Filed, Batch, ReviseAnswer)


@dataclass
class _Target:
    memory: Memory
    changes: Changes
    expected_version: int | None
    label: str  # how the caller named it, for `unmatched`


class MemoryOps(ServiceBase):
    @overload
    def remember(
        self,
        *,
        notebook: str | None = None,
        kind: str | None = None,
        text: str | None = None,
        items: None = None,
        supersedes: list[str] | None = None,
        because: str | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
        accept_refusing: list[str] | None = None,
        keep_as_note: bool = False,
        **fields: Unpack[MemoryFields],
    ) -> Filed: ...
    @overload
    def remember(
        self,
        *,
        notebook: str | None = None,
        items: list[dict[str, Any]],
        idempotency_key: str | None = None,
        dry_run: bool = False,
    ) -> Batch: ...

    @queued_on_replica("remember")
    def remember(
        self,
        *,
        notebook: str | None = None,
        kind: str | None = None,
        text: str | None = None,
        items: list[dict[str, Any]] | None = None,
        supersedes: list[str] | None = None,
        because: str | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
        accept_refusing: list[str] | None = None,
        keep_as_note: bool = False,
        **fields: Unpack[MemoryFields],
    ) -> Remembered:
        """File a new memory. `fields` are the optional memory fields (title, why, tags...).

        With `items`, file a batch (remember_batch): each item holds the same fields. A
        forbidden check is tried first (service/guard.py): `accept_refusing` and
        `keep_as_note` answer a trial that finds it too broad.
        """
        check_write("remember", self.role)  # before the gate's scans and the model run
        if items is not None:
            given = {
                "kind": kind,
                "text": text,
                "supersedes": supersedes,
                "because": because,
                "accept_refusing": accept_refusing,
                "keep_as_note": keep_as_note or None,
            }
            extra = [name for name, value in {**given, **fields}.items() if value is not None]
            if extra:
                raise ValidationError(
                    f"`{extra[0]}` goes inside each item when `items` is given; only "
                    "`notebook` (the notebook of items that name none) goes beside it.",
                    field=extra[0],
                )
            return self.remember_batch(
                items, notebook=notebook, idempotency_key=idempotency_key, dry_run=dry_run
            )
        if not isinstance(notebook, str) or not notebook.strip():
            raise ValidationError(
                "`notebook` is required: a notebook name or id.", field="notebook"
            )
        values = parse_fields({"kind": kind, "text": text, **fields})
        for required in ("kind", "text"):
            if required not in values:
                raise ValidationError(f"`{required}` is required.", field=required)
        check_rule_fields(values["kind"], values)  # before a duplicate could pass it over
        if because is not None:
            if not isinstance(because, str):
                raise ValidationError("`because` is a sentence saying why.", field="because")
            gate.screen("because", because)
        superseded_ids = id_list(supersedes, "supersedes")
        accepted, as_note = parse_acceptance(accept_refusing, keep_as_note, because)
        request = {"notebook": notebook, "supersedes": superseded_ids, "because": because,
                   "accept_refusing": accepted, "keep_as_note": as_note, **values}  # fmt: skip

        def body(tx: StoreWriter, now: str, op_id: str) -> Filed:
            nb = self._open_notebook(tx, notebook, now, op_id)
            same = duplicate_of(
                tx.find_by_text(nb.id, normalize_text(values["text"])), values["kind"]
            )
            if same is not None:
                return _duplicate(same, nb.name, not_applied(same, values, superseded_ids))
            memory = filed(values, id=new_id("m"), workspace=self.workspace, notebook_id=nb.id,
                           now=now, actor=self.actor)  # fmt: skip
            memory, notes = hashed_on_write(tx, self.places, memory, verifying=False)
            memory, kept_as_note = tried(tx, None, memory, now, accepted, as_note)
            retired = []
            for old_id in superseded_ids:
                old = self._get(tx, old_id, field="supersedes")
                step = retirement(old, memory.id, note=None, because=because)
                retired.append(self._write_step(tx, step, op_id, now))
            try:
                self._check_key(tx, None, memory)
            except Unmatched as exc:
                raise ValidationError(f"Refused: {exc.reason}.", field="key") from None
            trial = {"accept_refusing": list(accepted)} if accepted else None
            self._memory_event(tx, "remember", op_id, now, None, memory,
                               note=because if accepted else None, data=trial)  # fmt: skip
            for old_id in superseded_ids:
                self._link_supersedes(tx, memory.id, old_id, now)
            result: Filed = {
                "id": memory.id,
                "version": 1,
                "notebook": nb.name,
                "superseded": retired,
            }
            if notes:
                result["warnings"] = notes
            if kept_as_note:
                result["kept_as_note"] = True
            if dry_run:
                result["memory"] = memory_view(memory, {nb.id: nb}, now)
                _suggest_into(result, self._suggest(tx, memory, now))
            return result

        self.vectors.warm_filed(values, self.workspace, self.actor)  # the model runs unlocked
        answer = self._write("remember", request, idempotency_key, dry_run, body)
        return self._suggested(answer, [answer])

    def remember_batch(
        self,
        items: list[dict[str, Any]],
        *,
        notebook: str | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
    ) -> Batch:
        """File many new memories at once, all or nothing: each item holds remember's fields
        (`notebook` may be given once for the items that name none). Every item is checked
        before the model runs, the texts are embedded together (cheaper per text than
        one by one) before the write lock, and all are written in one transaction, each
        memory its own event under one operation. Answers `results`, one per item in order
        (a text already filed answers `duplicate_of`, as remember does)."""
        check_write("remember", self.role)  # before the gate's scans and the model run
        parsed = parse_items(items, notebook)
        drafts = []  # each refused here, naming the item, before the model runs
        for index, item in enumerate(parsed):
            try:
                draft = filed(item.values, id=new_id("m"), workspace=self.workspace,
                              notebook_id="", now=self.clock(), actor=self.actor)  # fmt: skip
                drafts.append(draft)
            except PalimpsestError as exc:
                raise in_item(exc, index) from None
        request = {"notebook": notebook, "items": items}
        embedded = self.vectors.embedded([embedding_text(draft, None) for draft in drafts])

        def body(tx: StoreWriter, now: str, op_id: str) -> Batch:
            notebooks: dict[str, Notebook] = {}
            results: list[Filed] = []
            for index, (item, draft) in enumerate(zip(parsed, drafts, strict=True)):
                try:
                    results.append(self._file_item(tx, item, draft, notebooks, now, op_id))
                except Unmatched as exc:
                    refusal = ValidationError(f"Refused: {exc.reason}.", field="key")
                    raise in_item(refusal, index) from None
                except PalimpsestError as exc:
                    raise in_item(exc, index) from None
            if dry_run and len(results) <= SUGGEST_ITEMS:
                for result in results:
                    memory = tx.get_memory(result["id"])
                    if memory is not None and result.get("written") is not False:
                        by_id = {nb.id: nb for nb in notebooks.values()}
                        result["memory"] = memory_view(memory, by_id, now)
                        _suggest_into(result, self._suggest(tx, memory, now))
            return {"results": results}

        with self.vectors.holding(embedded):  # the write takes these, not the model
            answer = self._write("remember", request, idempotency_key, dry_run, body)
        if len(parsed) > SUGGEST_ITEMS:
            answer.setdefault("warnings", []).append(
                f"No suggestions: a batch of more than {SUGGEST_ITEMS} items is filed without them."
            )
            return answer
        return self._suggested(answer, answer["results"])

    def _file_item(
        self,
        tx: StoreWriter,
        item: Item,
        draft: Memory,
        notebooks: dict[str, Notebook],
        now: str,
        op_id: str,
    ) -> Filed:
        """One batch item written in the batch's transaction (its notebook opened once)."""
        nb = notebooks.get(item.notebook)
        if nb is None:
            nb = notebooks[item.notebook] = self._open_notebook(tx, item.notebook, now, op_id)
            notebooks[nb.name] = nb
        same = duplicate_of(tx.find_by_text(nb.id, normalize_text(draft.text)), draft.kind)
        if same is not None:
            return _duplicate(same, nb.name, not_applied(same, item.values, []))
        memory = draft.replace(notebook_id=nb.id, recorded_at=now)
        memory, notes = hashed_on_write(tx, self.places, memory, verifying=False)
        tried(tx, None, memory, now, (), False)  # a too-broad forbidden check refuses the batch
        self._check_key(tx, None, memory)
        self._memory_event(tx, "remember", op_id, now, None, memory)
        filed: Filed = {"id": memory.id, "version": 1, "notebook": nb.name}
        if notes:
            filed["warnings"] = notes
        return filed

    def _link_supersedes(self, tx: StoreWriter, successor_id: str, old_id: str, now: str) -> None:
        link = Link(
            new_id("ln"), self.workspace, successor_id, old_id, "supersedes", now, self.actor
        )
        tx.add_link(link)

    @queued_on_replica("revise")
    def revise(
        self,
        *,
        id: str | None = None,
        ids: list[str] | None = None,
        texts: list[str] | None = None,
        notebook: str | None = None,
        items: list[dict[str, Any]] | None = None,
        expected_version: int | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
        redact: bool = False,
        accept_refusing: list[str] | None = None,
        keep_as_note: bool = False,
        **changes: Unpack[Revision],
    ) -> ReviseAnswer:
        """Change memories losing nothing: one (`id`), several (`ids`, `texts`) or a batch.

        With `redact`, credentials in a `note` become `[REDACTED:kind]` (listed in the
        answer's `redacted`) instead of refusing the request.
        """
        check_write("revise", self.role)  # before the gate's scans and the model run
        named = {"id": id, "ids": ids, "texts": texts, "items": items}
        trial = parse_acceptance(accept_refusing, keep_as_note, changes.get("because"))
        mode, plans = parse_request(named, changes, notebook=notebook,
                                    expected_version=expected_version, redact=redact)  # fmt: skip
        request = {**named, "notebook": notebook, "expected_version": expected_version,
                   "changes": changes, "redact": redact, "trial": trial}  # fmt: skip

        def body(tx: StoreWriter, now: str, op_id: str) -> ReviseAnswer:
            targets, unmatched = self._resolve_targets(
                tx, mode, id, ids, texts, notebook, items, plans
            )
            results: list[Revised] = []
            for index, target in enumerate(targets):
                try:
                    results.append(self._revise_one(tx, target, now, op_id, dry_run, trial))
                except (Unmatched, PalimpsestError) as exc:
                    outcome = settle(mode, index, exc)
                    if not isinstance(outcome, str):
                        raise outcome from None
                    unmatched.append({"target": target.label, "reason": outcome})
            answer: ReviseAnswer = {"results": results, "unmatched": unmatched}
            redacted = sorted({kind for changes, _ in plans for kind in changes.redacted})
            if redacted:
                answer["redacted"] = [{"field": "note", "kinds": redacted}]
            if unmatched:
                answer["warnings"] = [
                    "Everything listed in `unmatched` is unchanged: fix it and revise again."
                ]
            return answer

        answer = self._write("revise", request, idempotency_key, dry_run, body)
        return self._suggested(answer, answer["results"])

    def _resolve_targets(
        self,
        tx: StoreReader,
        mode: str,
        id: str | None,
        ids: list[str] | None,
        texts: list[str] | None,
        notebook: str | None,
        items: list[dict[str, Any]] | None,
        plans: list[Plan],
    ) -> tuple[list[_Target], list[MissedTarget]]:
        unmatched: list[MissedTarget] = []
        targets: list[_Target] = []
        changes, expected = plans[0]
        if mode == "id":
            assert id is not None
            targets.append(_Target(self._get(tx, id), changes, expected, id))
        elif mode == "items":
            assert items is not None
            for index, (item, (item_changes, item_expected)) in enumerate(
                zip(items, plans, strict=True)
            ):
                try:
                    memory = self._get(tx, item["id"])
                except (NotFound, ValidationError) as exc:
                    raise in_item(exc, index) from None
                targets.append(_Target(memory, item_changes, item_expected, item["id"]))
        elif mode == "ids":
            for memory_id in id_list(ids, "ids"):
                gate.check_length("ids", memory_id, limit_name="key")
                found = tx.get_memory(memory_id)
                if found is None:
                    shown = gate.shown_reference(memory_id)
                    unmatched.append({"target": shown, "reason": "no such memory"})
                else:
                    targets.append(_Target(found, changes, None, memory_id))
        else:
            assert notebook is not None
            nb = self._find_notebook(tx, notebook)
            for text in id_list(texts, "texts"):
                gate.check_length("texts", text, limit_name="text")  # longer than any memory
                matches = tx.find_by_text(nb.id, normalize_text(text))
                pick = text_targets(matches, changes.status)
                shown = gate.shown_reference(text)
                if len(pick) == 1:
                    targets.append(_Target(pick[0], changes, None, shown))
                elif not pick:
                    unmatched.append({"target": shown, "reason": "no memory has this exact text"})
                else:
                    unmatched.append(
                        {
                            "target": shown,
                            "reason": "several memories have this text",
                            "ids": [m.id for m in pick],
                        }
                    )
        if len({t.memory.id for t in targets}) != len(targets):
            raise ValidationError("The same memory is named twice; name each once.", field=mode)
        return targets, unmatched

    def _revise_one(
        self,
        tx: StoreWriter,
        target: _Target,
        now: str,
        op_id: str,
        dry_run: bool,
        trial: tuple[tuple[str, ...], bool] = ((), False),
    ) -> Revised:
        old, changes = target.memory, target.changes
        check_expected_version(old, target.expected_version)
        if changes.feedback is not None:  # a usefulness mark: no new version
            return write_mark(self, tx, old, changes.feedback, changes.note, now, op_id)
        if changes.supersede:
            return self._supersede(tx, old, changes, now, op_id, dry_run, trial)
        new = edit(old, changes, now=now, actor=self.actor)
        successor = None  # the memory filed already that replaces `old`, when one is named
        if changes.superseded_by is not None:
            successor = self._successor(tx, old, changes.superseded_by).id
            new = new.replace(superseded_by=successor)
        if changes.move_to is not None:
            new = new.replace(notebook_id=self._move_target(tx, old, changes, now, op_id).id)
        notes: list[str] = []
        if changes.status == "verified" or "anchors" in changes.sets:
            verifying = changes.status == "verified"
            new, notes = hashed_on_write(tx, self.places, new, verifying=verifying)
        accepted, as_note = trial
        new, kept_as_note = tried(tx, old, new, now, accepted, as_note)
        step = revision(old, new, changes, actor=self.actor, may_override=self.may_override)
        if step is None:
            return {"id": old.id, "version": old.version, "unchanged": True}
        if accepted:
            step = replace(step, data={**step.data, "accept_refusing": list(accepted)})
        if successor is not None:  # as a supersede's retirement records it
            step = replace(step, data={**step.data, "superseded_by": successor})
        self._check_key(tx, old, step.new)
        result = revised(self._write_step(tx, step, op_id, now))
        if successor is not None and not any(
            (link.source_id, link.type) == (successor, "supersedes") for link in tx.links(old.id)
        ):
            self._link_supersedes(tx, successor, old.id, now)
        if kept_as_note:
            result["kept_as_note"] = True
        result["changed"] = changed_fields(old, step.new)
        if notes:
            result["warnings"] = notes
        if dry_run:
            result["diff"] = self._readable_diff(tx, old, step.new, op_id)
            if _says_something_new(result):
                _suggest_into(result, self._suggest(tx, step.new, now))
        return result

    def _successor(self, tx: StoreReader, old: Memory, successor_id: str) -> Memory:
        """The active memory that `superseded_by` names as replacing `old`."""
        successor = self._get(tx, successor_id, field="superseded_by")
        if successor.id == old.id or successor.status != "active":
            raise ValidationError(
                "`superseded_by` must name another memory that is active: the one that "
                "replaces this one.",
                field="superseded_by",
            )
        return successor

    def _suggested(self, answer: W, written: Sequence[Filed] | Sequence[Revised]) -> W:
        """`answer` with the suggestions for each memory it wrote anew (of `written`, its
        own parts), looked for once the write has committed: out of the write lock, where
        the vector cache catches up. (A dry run's are looked for in its transaction, the only
        place its memories exist.)"""
        if answer.get("dry_run") or answer.get("replayed"):
            return answer
        targets = [t for t in written if _says_something_new(t)]
        if not targets:
            return answer
        try:
            with self.store.read(self.workspace) as tx:
                for target in targets:
                    memory = tx.get_memory(target["id"])
                    if memory is not None:
                        _suggest_into(target, self._suggest(tx, memory, self.clock()))
        except Retryable:  # the write committed: its answer must reach the caller whole
            note = "The write is done; its suggestions were left out: the store was busy."
            answer.setdefault("warnings", []).append(note)
        return answer

    def _suggest(self, tx: StoreReader, memory: Memory, now: str) -> Suggestions:
        """The suggestions on writing `memory` (service/suggest.py); nothing is written.
        By meaning when the service embeds: the vector this write stored is the query."""
        model = self.vectors.model
        vector = tx.vector_of(memory.id, memory.version, model) if self.vectors.enabled else None
        if vector is None:
            return suggestions(tx, memory, now)
        query = SearchQuery(text="", limit=CANDIDATES, alive_at=now)
        return suggestions(tx, memory, now, tx.nearest(vector, query, model))

    def _readable_diff(
        self, tx: StoreReader, old: Memory, new: Memory, op_id: str
    ) -> dict[str, Any]:
        """A dry run's diff, a move shown by notebook names: the id of a notebook the move
        would create is made up for the dry run and means nothing afterwards."""
        shown = diff(old, new)
        if "notebook_id" not in shown:
            return shown
        del shown["notebook_id"]
        source, destination = tx.get_notebook(old.notebook_id), tx.get_notebook(new.notebook_id)
        assert source is not None and destination is not None
        shown["notebook"] = {"old": source.name, "new": destination.name}
        if _created_by(tx, destination.id, op_id):
            shown["notebook"]["created"] = True
        return shown

    def _move_target(
        self, tx: StoreWriter, old: Memory, changes: Changes, now: str, op_id: str
    ) -> Notebook:
        assert changes.move_to is not None
        source = tx.get_notebook(old.notebook_id)
        domain = source.domain if source else None
        destination = self._open_notebook(tx, changes.move_to, now, op_id, domain=domain)
        check_move(destination, domain, changes.because)
        return destination

    def _supersede(
        self,
        tx: StoreWriter,
        old: Memory,
        changes: Changes,
        now: str,
        op_id: str,
        dry_run: bool,
        trial: tuple[tuple[str, ...], bool] = ((), False),
    ) -> Revised:
        content = superseding_content(old, changes, now=now, actor=self.actor)
        notebook_id = old.notebook_id
        if changes.move_to is not None:
            notebook_id = self._move_target(tx, old, changes, now, op_id).id
        where = content.replace(notebook_id=notebook_id)  # the successor's project, if moved
        hashed, notes = hashed_on_write(tx, self.places, where, verifying=False, refresh=True)
        content = content.replace(anchors=hashed.anchors)
        retire, file = supersession(old, content, changes, id=new_id("m"),
                                    notebook_id=notebook_id, now=now, actor=self.actor)  # fmt: skip
        successor, kept_as_note = tried(tx, old, file.new, now, *trial)
        file = replace(file, new=successor)
        retired = self._write_step(tx, retire, op_id, now)
        self._check_key(tx, None, file.new)
        result = revised(self._write_step(tx, file, op_id, now))
        result["superseded"] = retired
        if notes:
            result["warnings"] = notes
        if kept_as_note:
            result["kept_as_note"] = True
        self._link_supersedes(tx, file.new.id, old.id, now)
        if dry_run:
            result["diff"] = self._readable_diff(tx, old, file.new, op_id)
            _suggest_into(result, self._suggest(tx, file.new, now))
        return result


# What, changed by a revise, may change what a memory connects to, repeats or contradicts
# (a verify or a retag does not): `notebook_id` by a move, `status` by a reactivation.
_SAYING = frozenset({"text", "kind", "key", "notebook_id", "status"})


def _says_something_new(result: Filed | Revised) -> bool:
    """Whether a write's answer (remember's, or one target's of revise) filed a memory or
    changed what it says: then it gets suggestions (a retired one gets none)."""
    if result.get("unchanged") or result.get("written") is False:
        return False
    changed: object = result.get("changed")  # a revise's target only
    return not isinstance(changed, list) or bool(_SAYING & set(changed))


def _created_by(tx: StoreReader, notebook_id: str, op_id: str) -> bool:
    """Whether the notebook is created by operation `op_id` (the one being run)."""
    events = tx.events(EventFilter(target_id=notebook_id, limit=EVERY_EVENT))
    return any(e.op == "notebook.create" and e.op_id == op_id for e in events)


def _suggest_into(target: Suggestions, found: Suggestions) -> None:
    """Add the suggestions `found` to the answer `target` (a memory filed or revised):
    through their common type, the only one whose `update` mypy takes them in."""
    target.update(found)


def _duplicate(same: Memory, notebook: str, unapplied: list[str]) -> Filed:
    """The answer to filing what is already there: nothing is written, nothing ignored."""
    answer: Filed = {"id": same.id, "version": same.version, "duplicate_of": same.id,
                              "written": False, "notebook": notebook}  # fmt: skip
    if unapplied:
        answer["warnings"] = [
            f"{same.id} already holds this text; what you gave for {', '.join(unapplied)} was "
            "not applied: use revise to change it."
        ]
    return answer
