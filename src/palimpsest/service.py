"""The one API every adapter calls. It owns transactions, the clock, ids and every rule.

Each write runs in one store transaction with its events; `_write` handles idempotency
keys and dry runs once for all operations. Answers are JSON-ready dicts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import gate
from .errors import Conflict, NotFound, ValidationError
from .ids import new_id
from .model import (
    CONTENT_FIELDS,
    LINK_TYPES,
    RETIRED,
    STATUSES,
    Event,
    Link,
    Memory,
    Notebook,
    Tombstone,
    normalize_text,
    now_utc,
)
from .revise import (
    Changes,
    Unmatched,
    changed_fields,
    diff,
    edit,
    parse_changes,
    parse_fields,
    require_because,
    validate,
)
from .store import EventFilter, SearchQuery, Store, StoredResponse, StoreReader, StoreWriter
from .views import (
    event_view,
    hit_view,
    memory_view,
    notebook_line,
    rule_view,
    text_diff,
    version_view,
)

DEFAULT_WORKSPACE = "default"
MAX_LIMIT = 200

Body = Callable[[StoreWriter, str, str], dict[str, Any]]


@dataclass
class _Target:
    memory: Memory
    changes: Changes
    expected_version: int | None
    label: str  # how the caller named it, for `unmatched`


class Service:
    def __init__(
        self,
        store: Store,
        *,
        actor: str = "user:local",
        workspace: str = DEFAULT_WORKSPACE,
        clock: Callable[[], str] = now_utc,
    ):
        self.store = store
        self.actor = actor
        self.workspace = workspace
        self.clock = clock

    # -- plumbing ----------------------------------------------------------------------

    def _write(
        self,
        op: str,
        request: dict[str, Any],
        idempotency_key: str | None,
        dry_run: bool,
        body: Body,
    ) -> dict[str, Any]:
        """Run `body` in one transaction; replay or record idempotent answers; undo dry runs."""
        request_hash = hashlib.sha256(
            json.dumps(request, sort_keys=True, default=str).encode()
        ).hexdigest()
        if idempotency_key is not None:
            gate.screen("idempotency_key", idempotency_key, limit_name="key")
        with self.store.write(self.workspace) as tx:
            if idempotency_key and not dry_run:
                stored = tx.stored_response(self.actor, op, idempotency_key)
                if stored is not None:
                    if stored.request_hash != request_hash:
                        raise Conflict(
                            f"The idempotency_key {idempotency_key!r} was already used for a "
                            "different request; use a new key for a new request.",
                            field="idempotency_key",
                        )
                    return {**json.loads(stored.response), "replayed": True}
            result = body(tx, self._now(tx), new_id("op"))
            if dry_run:
                tx.discard()
                result["dry_run"] = True
            elif idempotency_key:
                answer = StoredResponse(request_hash, json.dumps(_ids_only(result)))
                tx.store_response(self.actor, op, idempotency_key, answer)
        if op == "forget" and not dry_run:
            result["scrub_pending"] = not self.store.scrub()
        return result

    def _now(self, tx: StoreReader) -> str:
        # Event times never go backwards, so `as_of` resolves through the sequence.
        now = self.clock()
        last = tx.last_event()
        return max(now, last.at) if last else now

    def _memory_event(
        self,
        tx: StoreWriter,
        op: str,
        op_id: str,
        now: str,
        old: Memory | None,
        new: Memory,
        note: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> int:
        fields = changed_fields(old, new) if old else ["created"]
        event = Event(
            seq=0,
            op_id=op_id,
            at=now,
            actor=self.actor,
            op=op,
            target_type="memory",
            target_id=new.id,
            notebook_id=new.notebook_id,
            version=new.version,
            fields=tuple(fields),
            note=note,
            data=data or {},
        )
        seq = tx.append_event(event)
        tx.put_memory(new, seq)
        return seq

    def _notebook_event(
        self,
        tx: StoreWriter,
        op: str,
        op_id: str,
        now: str,
        notebook: Notebook,
        data: dict[str, Any],
        note: str | None = None,
    ) -> int:
        event = Event(
            seq=0,
            op_id=op_id,
            at=now,
            actor=self.actor,
            op=op,
            target_type="notebook",
            target_id=notebook.id,
            notebook_id=notebook.id,
            note=note,
            data=data,
        )
        return tx.append_event(event)

    def _get(self, tx: StoreReader, memory_id: str) -> Memory:
        if not isinstance(memory_id, str) or not memory_id:
            raise ValidationError("`id` must be a memory id string.", field="id")
        memory = tx.get_memory(memory_id)
        if memory is not None:
            return memory
        tombstone = tx.get_tombstone(memory_id)
        if tombstone is not None:
            raise NotFound(
                f"Memory {memory_id} was forgotten at {tombstone.forgotten_at} "
                f"({tombstone.reason}); only its tombstone remains.",
                field="id",
            )
        raise NotFound(
            f"No memory {memory_id} in this workspace; find ids with recall.", field="id"
        )

    def _find_notebook(self, tx: StoreReader, ref: str) -> Notebook:
        notebook = tx.get_notebook(ref)
        if notebook is None:
            raise NotFound(
                f"No notebook named or with id {ref!r}; list them with `notebook list`.",
                field="notebook",
            )
        return notebook

    def _open_notebook(
        self, tx: StoreWriter, ref: str, now: str, op_id: str, domain: str | None = None
    ) -> Notebook:
        """The notebook named `ref`, created (with `domain`) if there is none yet."""
        found = tx.get_notebook(ref)
        if found is not None:
            return found
        name = _notebook_name(ref)
        notebook = Notebook(new_id("nb"), self.workspace, name, now, domain=domain)
        tx.put_notebook(notebook)
        self._notebook_event(
            tx, "notebook.create", op_id, now, notebook, {"name": name, "domain": domain}
        )
        return notebook

    def _check_key(self, tx: StoreReader, old: Memory | None, new: Memory) -> None:
        if new.status != "active" or new.key is None:
            return
        if old and (old.key, old.notebook_id, old.status) == (new.key, new.notebook_id, "active"):
            return
        holder = tx.key_holder(new.notebook_id, new.key)
        if holder is not None and holder.id != new.id:
            raise Unmatched(
                f"the key {new.key!r} is held by the active memory {holder.id} in that "
                "notebook; revise that memory instead, or choose another key",
                status_related=False,
            )

    def _notebooks(self, tx: StoreReader) -> dict[str, Notebook]:
        return {nb.id: nb for nb in tx.list_notebooks()}

    # -- remember ----------------------------------------------------------------------

    def remember(
        self,
        *,
        notebook: str,
        kind: str,
        text: str,
        supersedes: list[str] | None = None,
        because: str | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
        **fields: Any,
    ) -> dict[str, Any]:
        """File a new memory. `fields` are the optional memory fields (title, why, tags...)."""
        if not isinstance(notebook, str) or not notebook.strip():
            raise ValidationError(
                "`notebook` is required: a notebook name or id.", field="notebook"
            )
        values = parse_fields({"kind": kind, "text": text, **fields})
        for required in ("kind", "text"):
            if required not in values:
                raise ValidationError(f"`{required}` is required.", field=required)
        if because is not None:
            gate.screen("because", because)
        superseded_ids = _id_list(supersedes, "supersedes")
        request = {"notebook": notebook, "supersedes": superseded_ids, "because": because, **values}

        def body(tx: StoreWriter, now: str, op_id: str) -> dict[str, Any]:
            nb = self._open_notebook(tx, notebook, now, op_id)
            norm = normalize_text(values["text"])
            for same in tx.find_by_text(nb.id, norm):
                if same.kind == values["kind"] and same.status == "active":
                    return {
                        "id": same.id,
                        "version": same.version,
                        "duplicate_of": same.id,
                        "written": False,
                        "notebook": nb.name,
                    }
            memory = Memory(
                id=new_id("m"),
                workspace=self.workspace,
                notebook_id=nb.id,
                version=1,
                recorded_at=now,
                author=self.actor,
                owner=self.actor,
                **values,
            )
            validate(memory)
            retired = [
                self._retire_for(tx, self._get(tx, old_id), memory, now, op_id, None, because)
                for old_id in superseded_ids
            ]
            try:
                self._check_key(tx, None, memory)
            except Unmatched as exc:
                raise ValidationError(f"Refused: {exc.reason}.", field="key") from None
            seq = self._memory_event(tx, "remember", op_id, now, None, memory)
            for old_id in superseded_ids:
                tx.add_link(
                    Link(
                        new_id("ln"),
                        self.workspace,
                        memory.id,
                        old_id,
                        "supersedes",
                        now,
                        self.actor,
                    )
                )
            result: dict[str, Any] = {
                "id": memory.id,
                "version": 1,
                "seq": seq,
                "notebook": nb.name,
                "superseded": retired,
            }
            if dry_run:
                result["memory"] = memory_view(memory, {nb.id: nb}, now)
            return result

        return self._write("remember", request, idempotency_key, dry_run, body)

    def _retire_for(
        self,
        tx: StoreWriter,
        old: Memory,
        successor: Memory,
        now: str,
        op_id: str,
        note: str | None,
        because: str | None,
    ) -> dict[str, Any]:
        """Retire `old` as superseded by `successor`: the first half of a supersede."""
        if old.status != "active":
            raise ValidationError(
                f"{old.id} is {old.status}; only active memories can be superseded.",
                field="supersedes",
            )
        if old.id == successor.id:
            raise ValidationError("A memory cannot supersede itself.", field="supersedes")
        retired = old.replace(
            status="superseded",
            status_note=note,
            superseded_by=successor.id,
            version=old.version + 1,
        )
        require_because(old, retired, because)
        seq = self._memory_event(
            tx,
            "supersede",
            op_id,
            now,
            old,
            retired,
            because or note,
            {"superseded_by": successor.id},
        )
        return {"id": old.id, "version": retired.version, "seq": seq}

    # -- recall ------------------------------------------------------------------------

    def recall(
        self,
        *,
        query: str = "",
        notebook: str | None = None,
        domain: str | None = None,
        kind: str | list[str] | None = None,
        tags: list[str] | None = None,
        status: str | list[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = 10,
        include_retired: bool = False,
        as_of: str | None = None,
    ) -> dict[str, Any]:
        """Find memories by words and filters, in the current state or as of a past time."""
        if not isinstance(query, str):
            raise ValidationError("`query` must be a string.", field="query")
        gate.screen("query", query, limit_name="text")
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            raise ValidationError(f"`limit` must be from 1 to {MAX_LIMIT}.", field="limit")
        kinds = _choices(kind, "kind")
        statuses = _choices(status, "status") or (STATUSES if include_retired else ("active",))
        bad = [s for s in statuses if s not in STATUSES]
        if bad:
            raise ValidationError(
                f"`status` filters among {', '.join(STATUSES)}; got {bad[0]!r}.", field="status"
            )
        since_t = _parse_time_arg(since, "since")
        until_t = _parse_time_arg(until, "until")
        as_of_t = _parse_time_arg(as_of, "as_of")
        tag_filter = tuple(parse_fields({"tags": tags})["tags"]) if tags else ()
        with self.store.read(self.workspace) as tx:
            notebooks = self._notebooks(tx)
            scope: tuple[str, ...] | None = None
            if notebook is not None:
                scope = (self._find_notebook(tx, notebook).id,)
            if domain is not None:
                in_domain = tuple(nb.id for nb in notebooks.values() if nb.domain == domain)
                scope = in_domain if scope is None else tuple(set(scope) & set(in_domain))
            at = as_of_t or self.clock()
            at_seq = tx.seq_at(as_of_t) if as_of_t else None
            search = SearchQuery(
                text=query,
                limit=limit,
                notebook_ids=scope,
                kinds=kinds,
                tags=tag_filter,
                statuses=statuses,
                since=since_t,
                until=until_t,
                at_seq=at_seq,
                alive_at=None if include_retired else at,
            )
            found = tx.search(search)
            exact = self._exact(tx, query.strip(), at_seq, include_retired, at)
            hits = [(m, s) for m, s in found if m.id not in {e.id for e in exact}]
            ranked = [(m, max([s for _, s in found], default=0.0) + 1.0) for m in exact] + hits
            ranked = ranked[:limit]
            touched = {m.notebook_id for m, _ in ranked}
            rules = self._standing_rules(tx, touched, at_seq, at)
        return {
            "hits": [hit_view(m, s, notebooks, at) for m, s in ranked],
            "rules": [rule_view(r) for r in rules],
            "as_of": as_of_t,
        }

    def _exact(
        self, tx: StoreReader, query: str, at_seq: int | None, include_retired: bool, at: str
    ) -> list[Memory]:
        """Memories whose id or key is exactly the query: they rank first."""
        if not query or len(query) > 200:
            return []
        found = []
        memory = tx.get_memory(query) if at_seq is None else tx.memory_at(query, at_seq)
        if memory is not None:
            found.append(memory)
        found += [
            m for m in tx.memories_with_key(query, at_seq) if m.id not in {f.id for f in found}
        ]
        return [m for m in found if include_retired or (m.status == "active" and not m.expired(at))]

    def _standing_rules(
        self, tx: StoreReader, notebook_ids: set[str], at_seq: int | None, at: str
    ) -> list[Memory]:
        if not notebook_ids:
            return []
        search = SearchQuery(text="", limit=MAX_LIMIT, kinds=("rule",), at_seq=at_seq, alive_at=at)
        return [
            m
            for m, _ in tx.search(search)
            if m.scope == "workspace" or m.notebook_id in notebook_ids
        ]

    # -- revise ------------------------------------------------------------------------

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
        **changes: Any,
    ) -> dict[str, Any]:
        """Change memories losing nothing: one (`id`), several (`ids`, `texts`) or a batch."""
        forms = [
            name
            for name, v in (("id", id), ("ids", ids), ("texts", texts), ("items", items))
            if v is not None
        ]
        if len(forms) != 1:
            raise ValidationError(
                "Name the targets one way: `id`, `ids`, `texts` (with `notebook`) or `items`.",
                field="id",
            )
        mode = forms[0]
        if expected_version is not None and mode != "id":
            raise ValidationError(
                "`expected_version` goes with a single `id`, or on each batch item.",
                field="expected_version",
            )
        _check_version_arg(expected_version)
        if mode == "items":
            if changes:
                raise ValidationError(
                    f"With `items`, put `{sorted(changes)[0]}` inside each item.", field="items"
                )
            plans = self._parse_items(items)
        else:
            parsed = parse_changes(changes)
            if mode != "id" and (parsed.supersede or parsed.claim):
                raise ValidationError(
                    "`supersede` and `claim` act on one memory per call: pass a single `id`.",
                    field="supersede" if parsed.supersede else "claim",
                )
            if parsed.is_empty:
                raise ValidationError(
                    "Nothing to change: give a field to set, `clear`, `append`, "
                    "`replace_from`/`replace_to`, `remove`, `status` or `move_to`."
                )
            plans = [(parsed, expected_version)]
        if mode == "texts" and notebook is None:
            raise ValidationError(
                "`texts` match within one notebook: pass `notebook`.", field="notebook"
            )
        request = {
            "id": id,
            "ids": ids,
            "texts": texts,
            "notebook": notebook,
            "items": items,
            "expected_version": expected_version,
            "changes": changes,
        }

        def body(tx: StoreWriter, now: str, op_id: str) -> dict[str, Any]:
            targets, unmatched = self._resolve_targets(
                tx, mode, id, ids, texts, notebook, items, plans
            )
            results = []
            for index, target in enumerate(targets):
                try:
                    results.append(self._revise_one(tx, target, now, op_id, dry_run))
                except Unmatched as exc:
                    if mode == "items" or (mode == "id" and not exc.status_related):
                        error = ValidationError(f"Refused: {exc.reason}.")
                        raise error.at_item(index) if mode == "items" else error from None
                    unmatched.append({"target": target.label, "reason": exc.reason})
                except ValidationError as exc:
                    raise (exc.at_item(index) if mode == "items" else exc) from None
            answer: dict[str, Any] = {"results": results, "unmatched": unmatched}
            if unmatched:
                answer["warnings"] = [
                    "Everything listed in `unmatched` is unchanged: fix it and revise again."
                ]
            return answer

        return self._write("revise", request, idempotency_key, dry_run, body)

    def _parse_items(self, items: Any) -> list[tuple[Changes, int | None]]:
        if not isinstance(items, list) or not items:
            raise ValidationError("`items` must be a non-empty list of {id, ...}.", field="items")
        plans = []
        for index, item in enumerate(items):
            try:
                if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                    raise ValidationError("Each item is an object with an `id`.", field="id")
                fields = {k: v for k, v in item.items() if k not in ("id", "expected_version")}
                _check_version_arg(item.get("expected_version"))
                changes = parse_changes(fields)
                if changes.supersede or changes.claim:
                    raise ValidationError(
                        "`supersede` and `claim` are not allowed in a batch; revise that one "
                        "memory on its own.",
                        field="supersede",
                    )
                if changes.is_empty:
                    raise ValidationError("This item changes nothing.")
            except ValidationError as exc:
                raise exc.at_item(index) from None
            plans.append((changes, item.get("expected_version")))
        return plans

    def _resolve_targets(
        self,
        tx: StoreReader,
        mode: str,
        id: str | None,
        ids: list[str] | None,
        texts: list[str] | None,
        notebook: str | None,
        items: list[dict[str, Any]] | None,
        plans: list[tuple[Changes, int | None]],
    ) -> tuple[list[_Target], list[dict[str, Any]]]:
        unmatched: list[dict[str, Any]] = []
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
                except NotFound as exc:
                    raise exc.at_item(index) from None
                targets.append(_Target(memory, item_changes, item_expected, item["id"]))
        elif mode == "ids":
            for memory_id in _id_list(ids, "ids"):
                found = tx.get_memory(memory_id)
                if found is None:
                    unmatched.append({"target": memory_id, "reason": "no such memory"})
                else:
                    targets.append(_Target(found, changes, None, memory_id))
        else:
            assert notebook is not None
            nb = self._find_notebook(tx, notebook)
            for text in _id_list(texts, "texts"):
                matches = tx.find_by_text(nb.id, normalize_text(text))
                qualifying = [m for m in matches if _qualifies(m, changes.status)]
                pick = qualifying if len(matches) > 1 and qualifying else matches
                if len(pick) == 1:
                    targets.append(_Target(pick[0], changes, None, text))
                elif not pick:
                    unmatched.append({"target": text, "reason": "no memory has this exact text"})
                else:
                    unmatched.append(
                        {
                            "target": text,
                            "reason": "several memories have this text",
                            "ids": [m.id for m in pick],
                        }
                    )
        if len({t.memory.id for t in targets}) != len(targets):
            raise ValidationError("The same memory is named twice; name each once.", field=mode)
        return targets, unmatched

    def _revise_one(
        self, tx: StoreWriter, target: _Target, now: str, op_id: str, dry_run: bool
    ) -> dict[str, Any]:
        old, changes = target.memory, target.changes
        if target.expected_version is not None and target.expected_version != old.version:
            raise Conflict(
                f"{old.id} is at version {old.version}, not {target.expected_version}: someone "
                f"changed it since you read it. Re-read it (inspect), then pass "
                f"expected_version {old.version}.",
                field="expected_version",
            )
        if changes.supersede:
            return self._supersede(tx, old, changes, now, op_id, dry_run)
        new = edit(old, changes, now=now, actor=self.actor)
        if changes.move_to is not None:
            new = new.replace(notebook_id=self._move_target(tx, old, changes, now, op_id).id)
        require_because(old, new, changes.because)
        self._check_key(tx, old, new)
        if new == old:
            return {"id": old.id, "version": old.version, "unchanged": True}
        new = new.replace(version=old.version + 1)
        seq = self._memory_event(
            tx, _op_name(changes), op_id, now, old, new, changes.note or changes.because
        )
        result: dict[str, Any] = {
            "id": new.id,
            "version": new.version,
            "seq": seq,
            "changed": changed_fields(old, new),
        }
        if dry_run:
            result["diff"] = diff(old, new)
        return result

    def _move_target(
        self, tx: StoreWriter, old: Memory, changes: Changes, now: str, op_id: str
    ) -> Notebook:
        assert changes.move_to is not None
        source = tx.get_notebook(old.notebook_id)
        domain = source.domain if source else None
        destination = self._open_notebook(tx, changes.move_to, now, op_id, domain=domain)
        if destination.domain != domain and not changes.because:
            raise ValidationError(
                f"Moving into notebook {destination.name!r} changes the domain from {domain!r} "
                f"to {destination.domain!r}; give `because`.",
                field="because",
            )
        return destination

    def _supersede(
        self, tx: StoreWriter, old: Memory, changes: Changes, now: str, op_id: str, dry_run: bool
    ) -> dict[str, Any]:
        content = edit(
            old,
            Changes(**{**changes.__dict__, "supersede": False, "status": None}),
            now=now,
            actor=self.actor,
        )
        notebook_id = old.notebook_id
        if changes.move_to is not None:
            notebook_id = self._move_target(tx, old, changes, now, op_id).id
        successor = Memory(
            id=new_id("m"),
            workspace=self.workspace,
            notebook_id=notebook_id,
            version=1,
            recorded_at=now,
            author=self.actor,
            owner=self.actor,
            **{name: getattr(content, name) for name in CONTENT_FIELDS},
        )
        require_because(old, successor.replace(id=old.id), changes.because)
        retired = self._retire_for(tx, old, successor, now, op_id, changes.note, changes.because)
        self._check_key(tx, None, successor)
        seq = self._memory_event(
            tx, "remember", op_id, now, None, successor, changes.note, {"supersedes": old.id}
        )
        tx.add_link(
            Link(new_id("ln"), self.workspace, successor.id, old.id, "supersedes", now, self.actor)
        )
        result = {"id": successor.id, "version": 1, "seq": seq, "superseded": retired}
        if dry_run:
            result["diff"] = diff(old, successor)
        return result

    # -- revert ------------------------------------------------------------------------

    def revert(
        self,
        *,
        id: str | None = None,
        version: int | None = None,
        notebook: str | None = None,
        as_of: str | None = None,
        because: str | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Set a memory back to version N, or a notebook back to a past time, as new events."""
        if (id is None) == (notebook is None):
            raise ValidationError(
                "Pass `id` with `version`, or `notebook` with `as_of`.", field="id"
            )
        if id is not None and (version is None or as_of is not None):
            raise ValidationError("Reverting a memory takes `version`.", field="version")
        if notebook is not None and (as_of is None or version is not None):
            raise ValidationError("Reverting a notebook takes `as_of`.", field="as_of")
        _check_version_arg(version)
        if because is not None:
            gate.screen("because", because)
        as_of_t = _parse_time_arg(as_of, "as_of")
        request = {
            "id": id,
            "version": version,
            "notebook": notebook,
            "as_of": as_of_t,
            "because": because,
        }

        def body(tx: StoreWriter, now: str, op_id: str) -> dict[str, Any]:
            if id is not None:
                assert version is not None
                return {"results": [self._revert_memory(tx, id, version, because, now, op_id)]}
            assert notebook is not None and as_of_t is not None
            nb = self._find_notebook(tx, notebook)
            seq = tx.seq_at(as_of_t)
            results = []
            ids = {m.id for m in tx.memories_at(None, nb.id)} | {
                m.id for m in tx.memories_at(seq, nb.id)
            }
            for memory_id in sorted(ids):
                current = tx.get_memory(memory_id)
                if current is None:
                    continue
                then = tx.memory_at(memory_id, seq)
                if then is None:
                    target = current.replace(
                        status="retracted", status_note=f"notebook reverted to {as_of_t}"
                    )
                else:
                    target = current.replace(
                        **then.content(),
                        status=then.status,
                        status_note=then.status_note,
                        superseded_by=then.superseded_by,
                        notebook_id=then.notebook_id,
                    )
                results.append(
                    self._apply_revert(tx, current, target, because, now, op_id, {"as_of": as_of_t})
                )
            return {"results": results}

        return self._write("revert", request, idempotency_key, dry_run, body)

    def _revert_memory(
        self,
        tx: StoreWriter,
        memory_id: str,
        version: int,
        because: str | None,
        now: str,
        op_id: str,
    ) -> dict[str, Any]:
        current = self._get(tx, memory_id)
        versions = {v.version: v for v in tx.memory_versions(memory_id)}
        if version not in versions:
            raise NotFound(
                f"{memory_id} has versions 1 to {current.version}; there is no version {version}.",
                field="version",
            )
        then = versions[version].memory
        if then is None:
            raise ValidationError(
                f"Version {version} of {memory_id} was forgotten.", field="version"
            )
        target = current.replace(**then.content())
        return self._apply_revert(tx, current, target, because, now, op_id, {"to_version": version})

    def _apply_revert(
        self,
        tx: StoreWriter,
        current: Memory,
        target: Memory,
        because: str | None,
        now: str,
        op_id: str,
        data: dict[str, Any],
    ) -> dict[str, Any]:
        require_because(current, target, because)
        validate(target)
        try:
            self._check_key(tx, current, target)
        except Unmatched as exc:
            raise ValidationError(f"Refused: {exc.reason}.", field="key") from None
        if target == current:
            return {"id": current.id, "version": current.version, "unchanged": True}
        target = target.replace(version=current.version + 1)
        seq = self._memory_event(tx, "revert", op_id, now, current, target, because, data)
        return {
            "id": target.id,
            "version": target.version,
            "seq": seq,
            "changed": changed_fields(current, target),
        }

    # -- forget ------------------------------------------------------------------------

    def forget(
        self,
        *,
        id: str | None = None,
        ids: list[str] | None = None,
        version: int | None = None,
        because: str | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Remove a memory (or one version of it) for good, leaving only a tombstone."""
        targets = _id_list([id] if id is not None else ids, "ids")
        if (id is None) == (ids is None) or not targets:
            raise ValidationError("Pass `id` (or `ids`) of the memories to forget.", field="id")
        if not because or not isinstance(because, str):
            raise ValidationError(
                "`because` is required: say why this must not stay on disk. Forget is "
                "irreversible; to change or retire a memory, use revise.",
                field="because",
            )
        gate.screen("because", because)
        if version is not None and len(targets) != 1:
            raise ValidationError(
                "`version` scrubs one version of one memory: pass one `id`.", field="version"
            )
        _check_version_arg(version)
        request = {"ids": targets, "version": version, "because": because}

        def body(tx: StoreWriter, now: str, op_id: str) -> dict[str, Any]:
            results = []
            for memory_id in targets:
                memory = self._get(tx, memory_id)
                if version is not None:
                    results.append(self._forget_version(tx, memory, version, because, now, op_id))
                    continue
                event = Event(
                    0,
                    op_id,
                    now,
                    self.actor,
                    "forget",
                    "memory",
                    memory_id,
                    memory.notebook_id,
                    None,
                    (),
                    because,
                )
                seq = tx.append_event(event)
                tx.forget_memory(Tombstone(memory_id, now, self.actor, because), seq)
                results.append(
                    {"id": memory_id, "forgotten": True, "seq": seq, "versions": memory.version}
                )
            return {"results": results}

        return self._write("forget", request, idempotency_key, dry_run, body)

    def _forget_version(
        self, tx: StoreWriter, memory: Memory, version: int, because: str, now: str, op_id: str
    ) -> dict[str, Any]:
        if version == memory.version:
            raise ValidationError(
                f"Version {version} is the current one of {memory.id}. Revise it first (so a "
                "clean version is current), then forget this version; or forget the memory.",
                field="version",
            )
        if not 1 <= version < memory.version:
            raise NotFound(f"{memory.id} has no version {version}.", field="version")
        event = Event(
            0,
            op_id,
            now,
            self.actor,
            "forget_version",
            "memory",
            memory.id,
            memory.notebook_id,
            None,
            (),
            because,
            {"version": version},
        )
        seq = tx.append_event(event)
        tx.forget_version(memory.id, version)
        return {"id": memory.id, "version": version, "forgotten": True, "seq": seq}

    # -- inspect and history -----------------------------------------------------------

    def inspect(self, *, id: str | None = None, notebook: str | None = None) -> dict[str, Any]:
        """One memory whole (versions, links), or one notebook with all its memories."""
        if (id is None) == (notebook is None):
            raise ValidationError("Pass `id` (a memory) or `notebook`.", field="id")
        with self.store.read(self.workspace) as tx:
            at = self.clock()
            if notebook is not None:
                nb = self._find_notebook(tx, notebook)
                memories = tx.memories_at(None, nb.id)
                return {
                    "notebook": nb.to_dict(),
                    "memories": [notebook_line(m) for m in memories],
                    "links": [link.to_dict() for link in tx.links(nb.id)],
                }
            assert id is not None
            tombstone = tx.get_tombstone(id)
            if tombstone is not None:
                return {"tombstone": tombstone.to_dict()}
            memory = self._get(tx, id)
            return {
                "memory": memory_view(memory, self._notebooks(tx), at),
                "versions": [version_view(v) for v in tx.memory_versions(id)],
                "links": [link.to_dict() for link in tx.links(id)],
            }

    def history(
        self,
        *,
        id: str | None = None,
        notebook: str | None = None,
        actor: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = 100,
        diff_from: int | None = None,
        diff_to: int | None = None,
    ) -> dict[str, Any]:
        """Events by memory, notebook, actor or time; or the diff between two versions."""
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 1000:
            raise ValidationError("`limit` must be from 1 to 1000.", field="limit")
        with self.store.read(self.workspace) as tx:
            if diff_from is not None or diff_to is not None:
                return self._version_diff(tx, id, diff_from, diff_to)
            nb_id = self._find_notebook(tx, notebook).id if notebook is not None else None
            if id is not None and tx.get_memory(id) is None and tx.get_tombstone(id) is None:
                self._get(tx, id)
            query = EventFilter(
                target_id=id,
                notebook_id=nb_id,
                actor=actor,
                since=_parse_time_arg(since, "since"),
                until=_parse_time_arg(until, "until"),
                limit=limit,
            )
            events = tx.events(query)
            versions: dict[str, dict[int, Memory | None]] = {}
            views = []
            for event in events:
                changes = None
                if event.target_type == "memory" and event.version is not None:
                    if event.target_id not in versions:
                        versions[event.target_id] = {
                            v.version: v.memory for v in tx.memory_versions(event.target_id)
                        }
                    known = versions[event.target_id]
                    if known.get(event.version) is not None:
                        changes = diff(known.get(event.version - 1), known[event.version])
                views.append(event_view(event, changes))
        return {"events": views}

    def _version_diff(
        self, tx: StoreReader, id: str | None, old: int | None, new: int | None
    ) -> dict[str, Any]:
        if id is None or old is None or new is None:
            raise ValidationError(
                "A diff takes `id`, `diff_from` and `diff_to`.", field="diff_from"
            )
        current = self._get(tx, id)
        versions = {v.version: v.memory for v in tx.memory_versions(id)}
        for number, name in ((old, "diff_from"), (new, "diff_to")):
            if number not in versions:
                raise NotFound(f"{id} has versions 1 to {current.version}.", field=name)
            if versions[number] is None:
                raise ValidationError(f"Version {number} of {id} was forgotten.", field=name)
        before, after = versions[old], versions[new]
        assert before is not None and after is not None
        return {
            "id": id,
            "from": old,
            "to": new,
            "changes": diff(before, after),
            "text_diff": text_diff(before.text, after.text, f"v{old}", f"v{new}"),
        }

    # -- notebooks ---------------------------------------------------------------------

    def notebooks(self) -> dict[str, Any]:
        with self.store.read(self.workspace) as tx:
            return {"notebooks": [nb.to_dict() for nb in tx.list_notebooks()]}

    def create_notebook(
        self,
        *,
        name: str,
        summary: str | None = None,
        domain: str | None = None,
        tags: list[str] | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        values = _notebook_fields(summary=summary, domain=domain, tags=tags)
        name = _notebook_name(name)

        def body(tx: StoreWriter, now: str, op_id: str) -> dict[str, Any]:
            if tx.get_notebook(name) is not None:
                raise Conflict(
                    f"A notebook named {name!r} exists; pick another name.", field="name"
                )
            nb = Notebook(new_id("nb"), self.workspace, name, now, **values)
            tx.put_notebook(nb)
            seq = self._notebook_event(tx, "notebook.create", op_id, now, nb, nb.to_dict())
            return {"notebook": nb.to_dict(), "seq": seq}

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
    ) -> dict[str, Any]:
        """Rename (the id stays), or replace the summary, domain or tags of a notebook."""
        values: dict[str, Any] = _notebook_fields(summary=summary, domain=domain, tags=tags)
        if name is not None:
            values["name"] = _notebook_name(name)
        cleared = _id_list(clear, "clear")
        for field_name in cleared:
            if field_name not in ("summary", "domain", "tags"):
                raise ValidationError("`clear` takes summary, domain or tags.", field="clear")
            if field_name in values:
                raise ValidationError(f"`{field_name}` is both set and cleared.", field=field_name)
            values[field_name] = () if field_name == "tags" else None
        if not values:
            raise ValidationError("Nothing to change: give name, summary, domain, tags or clear.")

        def body(tx: StoreWriter, now: str, op_id: str) -> dict[str, Any]:
            nb = self._find_notebook(tx, notebook)
            if "name" in values and values["name"] != nb.name and tx.get_notebook(values["name"]):
                raise Conflict(f"A notebook named {values['name']!r} exists.", field="name")
            updated = nb.replace(**values)
            if updated == nb:
                return {"notebook": nb.to_dict(), "unchanged": True}
            tx.put_notebook(updated)
            before, after = nb.to_dict(), updated.to_dict()
            data = {k: [before[k], after[k]] for k in after if before[k] != after[k]}
            seq = self._notebook_event(tx, "notebook.edit", op_id, now, updated, data)
            return {"notebook": after, "seq": seq}

        request = {"notebook": notebook, **values}
        return self._write("notebook.edit", request, idempotency_key, dry_run, body)

    def merge_domains(
        self,
        *,
        source: str,
        target: str,
        because: str,
        dry_run: bool = False,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Move every notebook of domain `source` into domain `target`, one event each."""
        _notebook_fields(domain=source)
        _notebook_fields(domain=target)
        if not because or not isinstance(because, str):
            raise ValidationError("`because` is required to merge domains.", field="because")
        gate.screen("because", because)

        def body(tx: StoreWriter, now: str, op_id: str) -> dict[str, Any]:
            moved = [nb for nb in tx.list_notebooks() if nb.domain == source]
            if not moved:
                raise NotFound(f"No notebook is in domain {source!r}.", field="source")
            for nb in moved:
                tx.put_notebook(nb.replace(domain=target))
                self._notebook_event(
                    tx, "merge_domains", op_id, now, nb, {"domain": [source, target]}, because
                )
            return {"moved": [nb.name for nb in moved], "domain": target}

        request = {"source": source, "target": target, "because": because}
        return self._write("merge_domains", request, idempotency_key, dry_run, body)

    # -- links -------------------------------------------------------------------------

    def link(
        self,
        *,
        source: str,
        target: str,
        type: str,
        remove: bool = False,
        idempotency_key: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Link two memories (or two notebooks) with a typed edge, or remove that edge."""
        if type not in LINK_TYPES:
            raise ValidationError(f"`type` is one of {', '.join(LINK_TYPES)}.", field="type")
        if source == target:
            raise ValidationError("A link joins two different things.", field="target")
        request = {"source": source, "target": target, "type": type, "remove": remove}

        def body(tx: StoreWriter, now: str, op_id: str) -> dict[str, Any]:
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
                return {"link": existing[0].to_dict(), "unchanged": True}
            else:
                link = Link(new_id("ln"), self.workspace, source, target, type, now, self.actor)
                tx.add_link(link)
            op = "unlink" if remove else "link"
            data = {"link": link.to_dict()}
            versions = {}
            for end in ends:
                if isinstance(end, Memory):
                    bumped = end.replace(version=end.version + 1)
                    self._memory_event(tx, op, op_id, now, end, bumped, None, data)
                    versions[end.id] = bumped.version
                else:
                    self._notebook_event(tx, op, op_id, now, end, data)
            return {"link": link.to_dict(), "removed": remove, "versions": versions}

        return self._write("link", request, idempotency_key, dry_run, body)

    def _link_ends(self, tx: StoreReader, source: str, target: str) -> list[Memory | Notebook]:
        ends: list[Memory | Notebook] = []
        for ref, name in ((source, "source"), (target, "target")):
            if not isinstance(ref, str) or not ref:
                raise ValidationError(f"`{name}` must be an id.", field=name)
            memory = tx.get_memory(ref)
            notebook = None if memory else tx.get_notebook(ref)
            if memory is None and (notebook is None or notebook.id != ref):
                raise NotFound(f"No memory or notebook with id {ref}.", field=name)
            ends.append(memory or notebook)  # type: ignore[arg-type]
        if type(ends[0]) is not type(ends[1]):
            raise ValidationError("A link joins two memories or two notebooks, not one of each.")
        return ends


# -- small helpers ---------------------------------------------------------------------


def _qualifies(memory: Memory, status: str | None) -> bool:
    if status in RETIRED or status == "verified":
        return memory.status == "active"
    if status == "active":
        return memory.status in RETIRED
    return True


def _op_name(changes: Changes) -> str:
    if changes.status in RETIRED:
        return "retire"
    if changes.status == "active":
        return "reactivate"
    if changes.status == "verified":
        return "verify"
    if changes.move_to is not None:
        return "move"
    if changes.claim:
        return "claim"
    return "revise"


def _id_list(values: Any, name: str) -> list[str]:
    if values is None:
        return []
    if not isinstance(values, list | tuple) or not all(isinstance(v, str) and v for v in values):
        raise ValidationError(f"`{name}` must be a list of non-empty strings.", field=name)
    if len(values) > 1000:
        raise ValidationError(f"`{name}` takes at most 1000 entries.", field=name)
    return list(dict.fromkeys(values))


def _choices(value: str | list[str] | None, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list | tuple) or not all(isinstance(v, str) for v in values):
        raise ValidationError(f"`{name}` must be a string or a list of strings.", field=name)
    if name == "kind":
        for v in values:
            parse_fields({"kind": v})
    return tuple(values)


def _parse_time_arg(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    try:
        parsed: str = parse_fields({"occurred_at": value})["occurred_at"]
    except ValidationError:
        raise ValidationError(
            f"`{name}` must be an RFC 3339 time (2026-05-01T12:00:00Z) or a date.", field=name
        ) from None
    return parsed


def _check_version_arg(version: Any) -> None:
    if version is not None and (
        not isinstance(version, int) or isinstance(version, bool) or version < 1
    ):
        raise ValidationError("A version is a whole number from 1.", field="version")


def _notebook_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValidationError("A notebook name is a non-empty string.", field="notebook")
    return gate.screen("notebook", name.strip())


def _notebook_fields(
    *, summary: str | None = None, domain: str | None = None, tags: list[str] | None = None
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, value in (("summary", summary), ("domain", domain)):
        if value is not None:
            if not isinstance(value, str) or not value.strip():
                raise ValidationError(f"`{name}` must be a non-empty string.", field=name)
            values[name] = gate.screen(name, value.strip())
    if tags is not None:
        values["tags"] = parse_fields({"tags": tags})["tags"]
    return values


def _ids_only(result: dict[str, Any]) -> dict[str, Any]:
    """What an idempotent replay returns: ids, versions and sequences, never content."""
    keep = {
        "id",
        "version",
        "seq",
        "results",
        "superseded",
        "unmatched",
        "duplicate_of",
        "written",
        "unchanged",
        "forgotten",
        "versions",
        "notebook",
        "changed",
        "target",
        "reason",
        "ids",
        "warnings",
        "removed",
    }

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k in keep}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return dict(strip(result))
