"""What every operation shares: the transaction wrapper, the clock, events and lookups.

`_write` runs an operation's body in one store transaction and handles idempotency keys
and dry runs once for all writes.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Self, TypeVar, cast

from ..domain.errors import Conflict, NotFound, Retryable, ValidationError
from ..domain.ids import new_id
from ..domain.model import STATUSES, TIME_RANGE, Event, Memory, Notebook, now_utc
from ..domain.projects import NO_PLACES, Places
from ..domain.text import canonical
from ..embed import Embedder, default_embedder
from ..revise import Step, Unmatched, changed_fields, check_version, parse_fields
from ..screening import gate
from ..store import Store, StoredResponse, StoreReader, StoreWriter
from .answers import Redacted
from .answers import Step as StepAnswer
from .roles import Principal, check_write
from .served_record import WROTE, Line, ServedLog, Shown, record_served, session_key, written_in
from .vectors import VectorWriter
from .withdrawals import step_written

DEFAULT_WORKSPACE = "default"
MAX_LIMIT = 200
WRITE_ATTEMPTS = 3
EVERY_EVENT = sys.maxsize  # an EventFilter limit that leaves none out
MAX_ID = 100  # ours are 23 characters; anything far longer is no id, and not echoed

# A write's answer, of answers.py: `_write` adds the keys of `Written` to it.
A = TypeVar("A", bound=Mapping[str, Any])
Body = Callable[[StoreWriter, str, str], A]


BUDGET_RANGE = (500, 100_000)  # characters an answer with a `budget` may fill (orient, recall)


def checked_budget(budget: Any) -> int:
    """A character budget, refused outside BUDGET_RANGE."""
    low, high = BUDGET_RANGE
    if not isinstance(budget, int) or isinstance(budget, bool) or not low <= budget <= high:
        raise ValidationError(
            f"`budget` is a number of characters from {low:,} to {high:,}.", field="budget"
        )
    return budget


class ServiceBase:
    # The directories checks and anchors may read: none until an adapter says (domain/checks.py).
    places: Places = NO_PLACES

    def __init__(
        self,
        store: Store,
        *,
        actor: str = "user:local",
        workspace: str = DEFAULT_WORKSPACE,
        clock: Callable[[], str] = now_utc,
        may_override: bool = True,
        embedder: Embedder | None = None,
    ):
        self.store = store
        # The model itself loads on the first embed: opening a service costs nothing.
        self.embedder = embedder if embedder is not None else default_embedder()
        self.vectors = VectorWriter(self.embedder)
        self.actor = gate.check_actor(actor)
        self.workspace = workspace
        self.clock = clock
        # Whether the actor may override another's ownership with a reason: an editor or
        # owner of the workspace may; local use acts as the local owner (DESIGN §6).
        self.may_override = may_override
        self.role = "owner"  # whoever opens the store itself is its owner (roles.py)
        self.key_id: str | None = None  # the HTTP key this service acts through, if any
        # The session it serves, named by its adapter: what it is shown and writes is kept
        # (served.py); None (the CLI) keeps nothing.
        self.session: str | None = None
        self.served_log = ServedLog(store)  # shared by the copies serving sessions

    def acting_as(self, principal: Principal) -> Self:
        """This service acting as `principal` (a request's key), sharing store and model."""
        acting = copy.copy(self)
        acting.actor = gate.check_actor(principal.actor)
        acting.role = principal.role
        acting.key_id = principal.key_id
        acting.may_override = self.may_override and principal.role in ("editor", "owner")
        return acting.with_workspace(principal.workspace) if principal.workspace else acting

    def with_workspace(self, workspace: str) -> Self:
        """This service acting in another workspace of the same store."""
        moved = copy.copy(self)
        moved.workspace = workspace
        moved.places = self.places.within(workspace)  # a server's directories are per workspace
        return moved

    def with_actor(self, actor: str) -> Self:
        """This service acting as another actor of the same role (refused as any actor is)."""
        acting = copy.copy(self)
        acting.actor = gate.check_actor(actor)
        return acting

    def in_session(self, session: str | None) -> Self:
        """This service serving `session` (None: none, and nothing is recorded)."""
        serving = copy.copy(self)
        serving.session = session_key(session, "session") if session is not None else None
        return serving

    def _record_served(
        self,
        what: str,
        request: Mapping[str, Any],
        shown: Sequence[Line],
        *,
        session: str | None = None,
        keep_days: int | None = None,
    ) -> None:
        """Keep one serving of `session` (default: this service's), if there is one."""
        session = session or self.session
        if session is not None:
            who = (session, self.actor, self.key_id)
            record_served(self.served_log, self.workspace, who, what, request, shown,
                          clock=self.clock, keep_days=keep_days)  # fmt: skip

    def _write(
        self,
        op: str,
        request: dict[str, Any],
        idempotency_key: str | None,
        dry_run: bool,
        body: Body[A],
    ) -> A:
        """Run `body` in one transaction; replay or record idempotent answers; undo dry runs.

        A transient failure (a busy database, a serialization conflict) is retried a few
        times; one that may have committed is retried only under an idempotency key.
        """
        check_write(op, self.role)
        request_hash = hashlib.sha256(
            json.dumps(request, sort_keys=True, default=str).encode()
        ).hexdigest()
        if idempotency_key is not None:
            gate.screen("idempotency_key", idempotency_key, limit_name="key")
        written: Shown = []
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                result = self._transaction(
                    op, request_hash, idempotency_key, dry_run, body, written
                )
                break
            except Retryable as exc:
                if attempt == WRITE_ATTEMPTS or (exc.maybe_applied and not idempotency_key):
                    raise
                time.sleep(0.05 * 2**attempt)
        if op == "forget" and not dry_run:
            cast(dict[str, Any], result)["scrub_pending"] = not self.store.scrub(self.workspace)
        if written and self.session is not None:  # what the session changed, in its record
            who = (self.session, self.actor, self.key_id)
            record_served(self.served_log, self.workspace, who, WROTE, {"op": op}, written,
                          clock=self.clock)  # fmt: skip
        return cast(A, without_seq(result))

    def _transaction(
        self,
        op: str,
        request_hash: str,
        idempotency_key: str | None,
        dry_run: bool,
        body: Body[A],
        written: Shown,
    ) -> A:
        """One attempt of `_write`; the memories it wrote go into `written` when this
        service serves a session."""
        with self.store.write(self.workspace) as tx:
            tx.key_id = self.key_id  # every event it writes names the key (never its secret)
            if not dry_run and self.store.replicates:
                refuse_on_replica(tx, op)
            if idempotency_key and not dry_run:
                stored = tx.stored_response(self.actor, op, idempotency_key)
                if stored is not None:
                    if stored.request_hash != request_hash:
                        raise Conflict(
                            "This `idempotency_key` was already used for a different request; "
                            "use a new key for a new request.",
                            field="idempotency_key",
                        )
                    # ids and versions of the answer first given (`ids_only`): a part of it
                    return cast(A, {**json.loads(stored.response), "replayed": True})
            before = tx.last_event() if self.session is not None else None
            op_id = new_id("op")
            result = body(tx, self._now(tx), op_id)
            if self.session is not None and not dry_run:
                written[:] = written_in(tx, before.seq if before else 0, op_id)
            if dry_run:
                tx.discard()
                result = cast(A, {**result, "dry_run": True})
            elif idempotency_key:
                answer = StoredResponse(request_hash, json.dumps(ids_only(result)))
                tx.store_response(self.actor, op, idempotency_key, answer)
        return result

    def _now(self, tx: StoreReader) -> str:
        # Event times never go backwards, so `as_of` resolves through the sequence.
        now = self.clock()
        last = tx.last_event()
        return max(now, last.at) if last else now

    def _event(
        self,
        tx: StoreWriter,
        op: str,
        op_id: str,
        now: str,
        target: Memory | Notebook | tuple[str, str],
        *,
        version: int | None = None,
        fields: tuple[str, ...] = (),
        note: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> int:
        """Append one event by this actor about `target` (a memory, a notebook, or the type
        and id of something else: a user, a key, a workspace); returns its sequence number."""
        if isinstance(target, Memory):
            target_type, target_id, notebook_id = "memory", target.id, target.notebook_id
        elif isinstance(target, Notebook):
            target_type, target_id, notebook_id = "notebook", target.id, target.id
        else:
            (target_type, target_id), notebook_id = target, None
        event = Event(
            seq=0,
            op_id=op_id,
            at=now,
            actor=self.actor,
            op=op,
            target_type=target_type,
            target_id=target_id,
            notebook_id=notebook_id,
            version=version,
            fields=fields,
            note=note,
            data=data or {},
        )
        return tx.append_event(event)

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
        """The event that makes `new` the memory's next version, and that version itself."""
        fields = tuple(changed_fields(old, new)) if old else ("created",)
        seq = self._event(tx, op, op_id, now, new, version=new.version, fields=fields,
                          note=note, data=data)  # fmt: skip
        tx.put_memory(new, seq)
        self.vectors.write(tx, old, new, seq)
        return seq

    def _write_step(self, tx: StoreWriter, step: Step, op_id: str, now: str) -> StepAnswer:
        """Write a memory's step: every operation's steps pass here. A step that changes an
        existing memory, other than a dispute's own, may take it out of its open disputes
        (withdrawals.py)."""
        if step.old is None or step.op.startswith("dispute."):
            return self._write_version(tx, step, op_id, now)
        return step_written(self, tx, step, op_id, now)

    def _write_version(self, tx: StoreWriter, step: Step, op_id: str, now: str) -> StepAnswer:
        """Write the event that makes `step.new` the memory's next version: its id, version
        and seq (for the operation's own use: `_write` drops it from the answer)."""
        seq = self._memory_event(tx, step.op, op_id, now, step.old, step.new, step.note, step.data)
        return {"id": step.new.id, "version": step.new.version, "seq": seq}

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
        return self._event(tx, op, op_id, now, notebook, note=note, data=data)

    def _get(self, tx: StoreReader, memory_id: str, field: str = "id") -> Memory:
        """The memory `memory_id`; a refusal names the parameter `field` it came from."""
        memory = tx.get_memory(memory_id_arg(memory_id, field))
        if memory is not None:
            return memory
        tombstone = tx.get_tombstone(memory_id)
        memory_id = gate.shown_reference(memory_id)
        if tombstone is not None:
            raise NotFound(
                f"Memory {memory_id} was forgotten at {tombstone.forgotten_at} "
                f"({tombstone.reason}); only its tombstone remains.",
                field=field,
            )
        raise NotFound(
            f"No memory {memory_id} in this workspace; find ids with recall.", field=field
        )

    def _find_notebook(self, tx: StoreReader, ref: str) -> Notebook:
        if not isinstance(ref, str):
            raise ValidationError("`notebook` must be a notebook name or id.", field="notebook")
        gate.check_length("notebook", refuse_nul("notebook", ref))
        notebook = tx.get_notebook(ref)
        if notebook is None:
            raise NotFound(
                f"No notebook named or with id {gate.shown_reference(ref)!r}; list them with "
                "the `notebook` tool (`action` list) or `palimpsest notebook list`. A new "
                "notebook is made by the first `remember` into it.",
                field="notebook",
            )
        return notebook

    def _open_notebook(
        self, tx: StoreWriter, ref: str, now: str, op_id: str, domain: str | None = None
    ) -> Notebook:
        """The notebook named `ref`, created (with `domain`) if there is none yet."""
        name = notebook_name(ref)
        found = tx.get_notebook(ref) or tx.get_notebook(name)
        if found is not None:
            return found
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
                f"that key is held by the active memory {holder.id} in that notebook; "
                "revise that memory instead, or choose another key",
                status_related=False,
            )

    def _notebooks(self, tx: StoreReader) -> dict[str, Notebook]:
        return {nb.id: nb for nb in tx.list_notebooks()}


def memory_id_arg(value: Any, name: str = "id") -> str:
    """`value` if it can be a memory id, checked before any store looks it up."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ID:
        raise ValidationError(
            f"`{name}` must be a memory id: a string of at most {MAX_ID} characters.", field=name
        )
    return refuse_nul(name, value)


def refuse_nul(name: str, value: str) -> str:
    """`value`, unless it holds a NUL or a lone surrogate, which no store can take as text.

    Refusing here, before any lookup, makes both stores answer the same `validation`.
    """
    return gate.check_storable(name, value)


def id_list(values: Any, name: str) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):  # one id given as a string is a list of one
        values = [values]
    if not isinstance(values, list | tuple) or not all(isinstance(v, str) and v for v in values):
        raise ValidationError(f"`{name}` must be a list of non-empty strings.", field=name)
    if len(values) > 1000:
        raise ValidationError(f"`{name}` takes at most 1000 entries.", field=name)
    return list(dict.fromkeys(refuse_nul(name, v) for v in values))


def choices(value: str | list[str] | None, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list | tuple) or not all(isinstance(v, str) for v in values):
        raise ValidationError(f"`{name}` must be a string or a list of strings.", field=name)
    if name == "kind":
        return tuple(parse_fields({"kind": v})["kind"] for v in values)
    return tuple(canonical(v, STATUSES) or v for v in values) if name == "status" else tuple(values)


def parse_time_arg(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    try:
        parsed: str = parse_fields({"occurred_at": value})["occurred_at"]
    except ValidationError:
        raise ValidationError(
            f"`{name}` must be an RFC 3339 time (2026-05-01T12:00:00Z) or a date (2026-05-01), "
            f"within {TIME_RANGE}.",
            field=name,
        ) from None
    return parsed


check_version_arg = check_version  # the rule lives in revise; this name stays


def notebook_name(name: Any, field: str = "notebook") -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValidationError("A notebook name is a non-empty string.", field=field)
    return gate.screen(field, name.strip(), limit_name="notebook")


def notebook_fields(
    *,
    summary: str | None = None,
    domain: str | None = None,
    tags: list[str] | None = None,
    redact: bool = False,
) -> tuple[dict[str, Any], list[Redacted]]:
    """Checked notebook values, and what was redacted from the summary if `redact`."""
    values: dict[str, Any] = {}
    redacted: list[Redacted] = []
    for name, value in (("summary", summary), ("domain", domain)):
        if value is not None:
            if not isinstance(value, str) or not value.strip():
                raise ValidationError(f"`{name}` must be a non-empty string.", field=name)
            if redact and name == "summary":
                values[name], kinds = gate.screen_redacting(name, value.strip())
                redacted += [{"field": name, "kinds": kinds}] if kinds else []
            else:
                values[name] = gate.screen(name, value.strip())
    if tags is not None:
        values["tags"] = parse_fields({"tags": tags})["tags"]
    return values, redacted


def ids_only(result: Mapping[str, Any]) -> dict[str, Any]:
    """What an idempotent replay returns: ids and versions, never content."""
    keep = {  # never `target`, `reason` or a notebook's summary: they may quote content
        "id",
        "version",
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
        "ids",
        "removed",
        "status",  # a dispute's: open, ruled, withdrawn
        "holds",
        "loses",
    }

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k in keep}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return dict(strip(result))


def without_seq(value: Any) -> Any:
    """`value` without the events' sequence numbers, which a write's steps pass along: one
    sequence numbers the events of every workspace of the store, so showing it would show
    how much the others write. An answer lists events in their order instead."""
    if isinstance(value, dict):
        return {k: without_seq(v) for k, v in value.items() if k != "seq"}
    if isinstance(value, list):
        return [without_seq(v) for v in value]
    return value


# What a replica keeps of its own, not of its server's: what its sessions were shown.
KEPT_HERE = frozenset({"served.forget"})


def refuse_on_replica(tx: StoreReader, op: str) -> None:
    """A store that follows a server holds the server's history only: its own writes are
    queued as requests (queueing.py), and any other is made on the server."""
    state = tx.replica_state() if op not in KEPT_HERE else None
    if state is not None:
        raise Conflict(
            f"This store is a replica of {state.server}: {op} is made there, and the next "
            "sync brings it here. (remember, revise, revert, link, dispute and merge made "
            "here are queued for the server.)"
        )
