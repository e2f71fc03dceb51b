"""Notebooks (create, rename, edit, merge domains) and typed links."""

from __future__ import annotations

from typing import Any

from ..domain.errors import Conflict, NotFound, ValidationError
from ..domain.ids import new_id
from ..domain.model import LINK_TYPES, Link, Memory, Notebook, Tombstone
from ..domain.text import canonical
from ..screening import gate
from ..store import EventFilter, StoreReader, StoreWriter
from .answers import ForgetAnswer, Forgotten, LinkAnswer, NotebookAnswer
from .base import (
    EVERY_EVENT,
    MAX_ID,
    ServiceBase,
    id_list,
    notebook_fields,
    notebook_name,
    refuse_nul,
)
from .queueing import queued_on_replica
from .roles import check_forget, check_owner
from .shown import link_view, notebook_view

# The notebook fields that can hold personal data and so can be forgotten.
FORGETTABLE_FIELDS = ("summary", "name")


class NotebookOps(ServiceBase):
    def notebooks(self) -> NotebookAnswer:
        with self.store.read(self.workspace) as tx:
            return {"notebooks": [notebook_view(nb) for nb in tx.list_notebooks()]}

    def create_notebook(
        self,
        *,
        name: str,
        summary: str | None = None,
        domain: str | None = None,
        tags: list[str] | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
        redact: bool = False,
    ) -> NotebookAnswer:
        """Create a notebook; with `redact`, credentials in the summary become placeholders."""
        values, redacted = notebook_fields(summary=summary, domain=domain, tags=tags, redact=redact)
        name = notebook_name(name, "name")
        _screen_notebook(name, values.get("summary"))

        def body(tx: StoreWriter, now: str, op_id: str) -> NotebookAnswer:
            if tx.get_notebook(name) is not None:
                raise Conflict(
                    f"A notebook named {name!r} exists; pick another name.", field="name"
                )
            nb = Notebook(new_id("nb"), self.workspace, name, now, **values)
            tx.put_notebook(nb)
            self._notebook_event(tx, "notebook.create", op_id, now, nb, nb.to_dict())
            answer: NotebookAnswer = {"notebook": notebook_view(nb)}
            if redacted:
                answer["redacted"] = redacted
            return answer

        request = {"name": name, **values}
        return self._write("notebook.create", request, idempotency_key, dry_run, body)

    def edit_notebook(
        self,
        *,
        notebook: str,
        name: str | None = None,
        summary: str | None = None,
        domain: str | None = None,
        tags: list[str] | None = None,
        clear: list[str] | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
        redact: bool = False,
    ) -> NotebookAnswer:
        """Rename (the id stays), or replace the summary, domain or tags of a notebook."""
        values, redacted = notebook_fields(summary=summary, domain=domain, tags=tags, redact=redact)
        if name is not None:
            values["name"] = notebook_name(name, "name")
        cleared = id_list(clear, "clear")
        for field_name in cleared:
            if field_name not in ("summary", "domain", "tags"):
                raise ValidationError("`clear` takes summary, domain or tags.", field="clear")
            if field_name in values:
                raise ValidationError(f"`{field_name}` is both set and cleared.", field=field_name)
            values[field_name] = () if field_name == "tags" else None
        if not values:
            raise ValidationError("Nothing to change: give name, summary, domain, tags or clear.")

        def body(tx: StoreWriter, now: str, op_id: str) -> NotebookAnswer:
            nb = self._find_notebook(tx, notebook)
            if "name" in values and values["name"] != nb.name and tx.get_notebook(values["name"]):
                raise Conflict(f"A notebook named {values['name']!r} exists.", field="name")
            updated = nb.replace(**values)
            if updated.domain != nb.domain:  # a domain groups a workspace's notebooks
                check_owner("notebook.domain", self.role)
            if "name" in values or values.get("summary"):
                _screen_notebook(updated.name, updated.summary)
            if updated == nb:
                return {"notebook": notebook_view(nb), "unchanged": True}
            tx.put_notebook(updated)
            before, after = nb.to_dict(), updated.to_dict()
            data = {k: [before[k], after[k]] for k in after if before[k] != after[k]}
            self._notebook_event(tx, "notebook.edit", op_id, now, updated, data)
            answer: NotebookAnswer = {"notebook": notebook_view(updated)}
            if dry_run:
                answer["diff"] = _changes(data)
            if redacted:
                answer["redacted"] = redacted
            return answer

        request = {"notebook": notebook, **values}
        return self._write("notebook.edit", request, idempotency_key, dry_run, body)

    def merge_domains(
        self,
        *,
        source: str,
        target: str,
        because: str | None = None,  # required, but checked here so that omitting it is refused
        dry_run: bool = False,
        idempotency_key: str | None = None,
    ) -> NotebookAnswer:
        """Move every notebook of domain `source` into domain `target`, one event each."""
        for value, name in ((source, "from_domain"), (target, "to_domain")):
            if not isinstance(value, str) or not value.strip():
                raise ValidationError(f"`{name}` must be a non-empty string.", field=name)
            gate.screen(name, value, limit_name="domain")
        if not because or not isinstance(because, str):
            raise ValidationError("`because` is required to merge domains.", field="because")
        gate.screen("because", because)

        def body(tx: StoreWriter, now: str, op_id: str) -> NotebookAnswer:
            moved = [nb for nb in tx.list_notebooks() if nb.domain == source]
            if not moved:
                raise NotFound(f"No notebook is in domain {source!r}.", field="source")
            for nb in moved:
                tx.put_notebook(nb.replace(domain=target))
                self._notebook_event(
                    tx, "merge_domains", op_id, now, nb, {"domain": [source, target]}, because
                )
            answer: NotebookAnswer = {"moved": [nb.name for nb in moved], "domain": target}
            if dry_run:
                change = {"domain": {"old": source, "new": target}}
                answer["diff"] = {nb.name: change for nb in moved}
            return answer

        request = {"source": source, "target": target, "because": because}
        return self._write("merge_domains", request, idempotency_key, dry_run, body)

    def _forget_notebook(
        self,
        notebook: str,
        field: str | None,
        because: str,
        idempotency_key: str | None,
        dry_run: bool,
    ) -> ForgetAnswer:
        """Scrub a field's values from a notebook's history, or remove the empty notebook."""
        check_forget(self.role, self.actor, None)
        field = canonical(field, FORGETTABLE_FIELDS) or field
        if field is not None and field not in FORGETTABLE_FIELDS:
            raise ValidationError(
                "`field` is summary or name; leave it out to forget the (empty) notebook whole.",
                field="field",
            )
        request = {"notebook": notebook, "field": field, "because": because}

        def body(tx: StoreWriter, now: str, op_id: str) -> ForgetAnswer:
            nb = self._find_notebook(tx, notebook)
            if field is not None:
                return self._forget_notebook_field(tx, nb, field, because, now, op_id, dry_run)
            held = tx.memories_at(None, nb.id)
            if held:
                raise ValidationError(
                    f"Notebook {nb.id} still holds {len(held)} "
                    f"{'memory' if len(held) == 1 else 'memories'}: move or forget "
                    f"{'it' if len(held) == 1 else 'them'} first, or forget one of its fields "
                    "with `field`.",
                    field="notebook",
                )
            seq = self._notebook_event(tx, "forget", op_id, now, nb, {}, because)
            tx.forget_notebook(Tombstone(nb.id, now, self.actor, because), seq)
            return {"results": [{"notebook": nb.id, "forgotten": True}]}

        return self._write("forget", request, idempotency_key, dry_run, body)

    def _forget_notebook_field(
        self,
        tx: StoreWriter,
        nb: Notebook,
        field: str,
        because: str,
        now: str,
        op_id: str,
        dry_run: bool,
    ) -> ForgetAnswer:
        """Every past value of `field` leaves the history; a summary is cleared too (a name
        is needed, so the current one stays: rename first if it must go as well)."""
        if field == "summary" and not _ever_summarised(tx, nb):
            return {"results": [{"notebook": nb.id, "field": field, "forgotten": False,
                                 "unchanged": True}]}  # fmt: skip
        # names and counts only, never the values themselves
        would_erase = {"field": field, "values": len(_erased_values(tx, nb, field))}
        if field == "summary" and nb.summary is not None:
            nb = nb.replace(summary=None)
            tx.put_notebook(nb)
        seq = self._notebook_event(tx, "forget_field", op_id, now, nb, {"field": field}, because)
        tx.forget_notebook_field(nb.id, field, seq)
        item: Forgotten = {"notebook": nb.id, "field": field, "forgotten": True}
        if dry_run:
            item["would_erase"] = would_erase
        return {"results": [item]}

    @queued_on_replica("link")
    def link(
        self,
        *,
        source: str,
        target: str,
        type: str,
        remove: bool = False,
        idempotency_key: str | None = None,
        dry_run: bool = False,
    ) -> LinkAnswer:
        """Link two memories (or two notebooks) with a typed edge, or remove that edge."""
        chosen = canonical(type, LINK_TYPES)
        if chosen is None:
            raise ValidationError(f"`type` must be one of {', '.join(LINK_TYPES)}.", field="type")
        type = chosen
        if source == target:
            raise ValidationError("A link joins two different things.", field="target")
        request = {"source": source, "target": target, "type": type, "remove": remove}

        def body(tx: StoreWriter, now: str, op_id: str) -> LinkAnswer:
            ends = self._link_ends(tx, source, target)
            existing = [
                ln
                for ln in tx.links(source)
                if (ln.source_id, ln.target_id, ln.type) == (source, target, type)
            ]
            if remove:
                if not existing:
                    raise NotFound(f"There is no {type} link from {source} to {target}.")
                tx.remove_link(existing[0].id)
                link = existing[0]
            elif existing:
                return {"link": link_view(existing[0]), "unchanged": True}
            else:
                link = Link(new_id("ln"), self.workspace, source, target, type, now, self.actor)
                tx.add_link(link)
            op = "unlink" if remove else "link"
            data = {"link": link.to_dict()}
            versions: dict[str, int] = {}
            for end in ends:
                if isinstance(end, Memory):
                    bumped = end.replace(version=end.version + 1)
                    self._memory_event(tx, op, op_id, now, end, bumped, None, data)
                    versions[end.id] = bumped.version
                else:
                    self._notebook_event(tx, op, op_id, now, end, data)
            answer: LinkAnswer = {"link": link_view(link), "removed": remove, "versions": versions}
            if dry_run:
                ends_of_link = (link.to_dict(), None) if remove else (None, link.to_dict())
                answer["diff"] = {"link": dict(zip(("old", "new"), ends_of_link, strict=True))}
            return answer

        return self._write("link", request, idempotency_key, dry_run, body)

    def _link_ends(self, tx: StoreReader, source: str, target: str) -> list[Memory | Notebook]:
        ends: list[Memory | Notebook] = []
        for ref, name in ((source, "source"), (target, "target")):
            if not isinstance(ref, str) or not 0 < len(ref) <= MAX_ID:
                raise ValidationError(f"`{name}` must be an id.", field=name)
            refuse_nul(name, ref)
            end: Memory | Notebook | None = tx.get_memory(ref)
            if end is None:
                notebook = tx.get_notebook(ref)
                end = notebook if notebook is not None and notebook.id == ref else None
            if end is None:
                shown = gate.shown_reference(ref)
                raise NotFound(f"No memory or notebook with id {shown}.", field=name)
            ends.append(end)
        if type(ends[0]) is not type(ends[1]):
            raise ValidationError("A link joins two memories or two notebooks, not one of each.")
        return ends


def _screen_notebook(name: str, summary: str | None) -> None:
    """A notebook's name and summary read together, like a memory's title over its text."""
    gate.screen_record([("name", name), ("summary", summary)] if summary else [("name", name)])


def _changes(data: dict[str, list[Any]]) -> dict[str, dict[str, Any]]:
    """An edit event's [before, after] pairs, shaped as revise's diff."""
    return {name: {"old": old, "new": new} for name, (old, new) in data.items()}


def _ever_summarised(tx: StoreReader, nb: Notebook) -> bool:
    """Whether the notebook has, or ever had, a summary: else there is nothing to erase."""
    if nb.summary is not None:
        return True
    events = tx.events(EventFilter(target_id=nb.id, limit=EVERY_EVENT))
    return any(_held(event.data.get("summary")) for event in events)


def _erased_values(tx: StoreReader, nb: Notebook, field: str) -> set[str]:
    """The values of `field` a forget of it erases: every one the notebook's history holds
    (and its summary now); a name's current value stays."""
    events = tx.events(EventFilter(target_id=nb.id, limit=EVERY_EVENT))
    values: set[str] = set()
    for event in events:
        held = event.data.get(field)
        values.update(v for v in (held if isinstance(held, list) else [held]) if v is not None)
    if field == "summary" and nb.summary is not None:
        values.add(nb.summary)
    return values - {nb.name} if field == "name" else values


def _held(value: Any) -> bool:
    """An event's `summary`: a value (a creation) or an [old, new] pair (an edit)."""
    values = value if isinstance(value, list) else [value]
    return any(v is not None for v in values)
