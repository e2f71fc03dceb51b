"""Writes on a replica, queued as requests for its server (docs/sync.md).

A store that follows a server holds the server's history, as pulled, and nothing else: a
write made here is not written as an event here. It is checked here as the server would
check it (a dry run against what was pulled, with the key's role there: the gate, the
fields, the versions), then queued with the arguments it was given; each sync round sends
the queue, in order, to the server's API under each item's id as its idempotency key, and
writes down the answer. Until the server has accepted a write and a pull has brought its
events back, what shows the memory says it is pending.

The operations that queue are those an agent or a person makes on memories (QUEUED); any
other write on a replica (forget, settings, users, keys, notebooks' own business) is
refused with what to do instead.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar, cast

from typing_extensions import TypedDict

from ..domain.errors import Conflict, NotFound, ValidationError
from ..domain.ids import new_id
from ..domain.model import now_utc
from ..screening import gate
from ..store import QueuedWrite, ReplicaState, StoreReader
from .base import ServiceBase, ids_only
from .pending import queued_view
from .roles import check_write

P = ParamSpec("P")
R = TypeVar("R")

QUEUED = frozenset({"remember", "revise", "revert", "link", "dispute", "merge"})
OPEN = ("pending", "conflict", "refused")  # what a person may still act on, or waits
QUEUE_SCANNED = 10_000  # queued writes a round looks through for a forgotten memory's
FORGOTTEN = {"error_class": "not_found", "message": "A memory this write names was forgotten "
             "on the server: the write was not sent, and nothing of it is kept here."}  # fmt: skip
ANSWER_ID_CHARS = 200  # an id, a notebook's name or a status in an accepted answer
MESSAGE_CHARS = 2000  # a refusal's message kept for a person
ID_CHARS = 64  # a queued write's id is q_ and a few dozen characters: a longer one is none


class Queued(TypedDict, total=False):
    """What a write made on a replica answers: it waits for the server."""

    queued: str  # the item's id
    pending: bool
    server: str
    note: str


class QueueAnswer(TypedDict):
    writes: list[dict[str, Any]]


def queued_on_replica(op: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Make the service method `op` (one of QUEUED) queue its write when the store follows
    a server; a dry run, a read (`dispute` list) and a store that follows none run it as it
    is."""
    assert op in QUEUED

    def wrap(method: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(method)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            service = cast("QueueOps", args[0])
            if len(args) > 1 or _is_a_read(kwargs.get("action")):
                return method(*args, **kwargs)
            state = service.replica_state_now()
            if state is None:
                return method(*args, **kwargs)
            if kwargs.get("dry_run"):  # answered as the write itself would be checked
                check_write(op, service.role)
                return method(service.as_key_holder(state), **kwargs)  # type: ignore[arg-type]
            return cast(R, service.queue(op, method, kwargs, state))

        return run

    return wrap


def _is_a_read(action: Any) -> bool:
    """Whether a dispute's `action` is `list`, spelled as `dispute` reads it (any case)."""
    return isinstance(action, str) and action.strip().lower() == "list"


class QueueOps(ServiceBase):
    def replica_state_now(self) -> ReplicaState | None:
        """What this store knows of the server it follows (None: it follows none)."""
        if not self.store.replicates:
            return None
        with self.store.read(self.workspace) as tx:
            return tx.replica_state()

    def queue(
        self,
        op: str,
        method: Callable[..., Any],
        arguments: Mapping[str, Any],
        state: ReplicaState,
        replacing: QueuedWrite | None = None,
    ) -> Queued:
        """Check `op` here as the server would, with the key's role there, then queue it
        (in place of `replacing`, a refused write sent again, settled in the same
        transaction: two retries at once queue it once)."""
        check_write(op, self.role)  # the caller here may write, as the key's holder there
        given = _plain_arguments(arguments)
        # A revise or a revert of one memory pins the version it was made on (a change made
        # there since: a conflict): the one here, checked by the dry run, plus one for each
        # revise or revert of the memory that waits before it, which the server will have
        # written first.
        pinned = op in ("revise", "revert") and "id" in given and "expected_version" not in given
        if pinned:
            given["expected_version"] = self._current_version(given["id"])
        method(self.as_key_holder(state), **given, dry_run=True)  # the server's own rules
        if replacing is None and isinstance(given.get("idempotency_key"), str):
            held = self._queued_under(op, given, {"expected_version"} if pinned else set())
            if held is not None:  # the caller's retry: queued once, as the server writes once
                return self._answer(held.id, state)
        if pinned and isinstance(given["expected_version"], int):
            given["expected_version"] += self._versions_waiting(given["id"])
        item_id = new_id("q")
        item = QueuedWrite(
            id=item_id,
            op=op,
            arguments={**given, "idempotency_key": given.get("idempotency_key") or item_id},
            target_id=given.get("id") if isinstance(given.get("id"), str) else None,
            actor=self.actor,
            queued_at=now_utc(),
            state="pending",
        )
        with self.store.write(self.workspace) as tx:
            if replacing is not None:
                self._open_item(replacing.id, (replacing.state,), tx)
                tx.settle_queued(replacing.id, "dropped",
                                 {"because": f"sent again as {item_id}"}, now_utc())  # fmt: skip
            tx.queue_write(item)
        return self._answer(item_id, state)

    @staticmethod
    def _answer(item_id: str, state: ReplicaState) -> Queued:
        return {
            "queued": item_id,
            "pending": True,
            "server": state.server,
            "note": "Queued for the server this store follows: written there at the next "
            "sync, and shown pending here until then.",
        }

    def _queued_under(self, op: str, given: dict[str, Any], ours: set[str]) -> QueuedWrite | None:
        """The open write queued under the caller's `idempotency_key` in `given`, if it is
        this request (`ours`: arguments set here, not by the caller, left out of the
        comparison); refused at once if that key was given to another request."""
        with self.store.read(self.workspace) as tx:
            items = tx.queued_writes(OPEN, limit=QUEUE_SCANNED)
        for item in items:
            if item.arguments.get("idempotency_key") != given["idempotency_key"]:
                continue
            same = {k: v for k, v in item.arguments.items() if k not in ours} == {
                k: v for k, v in given.items() if k not in ours
            }
            if item.op == op and item.actor == self.actor and same:
                return item
            raise Conflict(
                "This `idempotency_key` was already used for a different request; use a new "
                "key for a new request.",
                field="idempotency_key",
            )
        return None

    def as_key_holder(self, state: ReplicaState) -> QueueOps:
        """This service acting as the replica's key's holder on the server, with the key's
        role there: what a write is checked as here."""
        acting = self.with_actor(state.actor) if state.actor else copy.copy(self)
        acting.role = state.role
        acting.may_override = self.may_override and state.role in ("editor", "owner")
        return acting

    def _versions_waiting(self, memory_id: str) -> int:
        """The revises and reverts of `memory_id` that wait to be sent: each is a version
        the server writes before a write queued now."""
        waiting = self.pending_writes()
        return sum(1 for i in waiting if i.target_id == memory_id and i.op in ("revise", "revert"))

    def _current_version(self, memory_id: Any) -> int | None:
        with self.store.read(self.workspace) as tx:
            memory = tx.get_memory(memory_id) if isinstance(memory_id, str) else None
        return memory.version if memory is not None else None

    # -- the queue ------------------------------------------------------------------------

    def queued_writes(self, *, states: tuple[str, ...] = OPEN) -> QueueAnswer:
        """The writes queued here in `states`, the oldest first."""
        with self.store.read(self.workspace) as tx:
            items = tx.queued_writes(states)
        return {"writes": [queued_view(item) for item in items]}

    def pending_writes(self) -> list[QueuedWrite]:
        """The writes the server has not answered yet, in the order they go."""
        with self.store.read(self.workspace) as tx:
            return tx.queued_writes(("pending",))

    def settle(self, item_id: str, state: str, answer: dict[str, Any] | None) -> None:
        """The server's answer to a queued write (a sync round's)."""
        with self.store.write(self.workspace) as tx:
            tx.settle_queued(item_id, state, answer, now_utc())

    def forget_queued_of_forgotten(self) -> int:
        """Empty the arguments of every write queued here that names a memory forgotten on
        the server (a sync round's, after its pull): a refused revise, a dropped one, one
        sent again, or one still waiting (refused here: the server would refuse it) must
        keep none of the text the forget took off the server. How many were emptied."""
        with self.store.read(self.workspace) as tx:
            items = tx.queued_writes((*OPEN, "dropped"), limit=QUEUE_SCANNED)
            touched = [
                item
                for item in items
                if item.arguments and any(tx.get_tombstone(i) for i in _named_ids(item))
            ]
        if not touched:
            return 0
        with self.store.write(self.workspace) as tx:
            for item in touched:
                tx.empty_queued(item.id)
                if item.state == "pending":
                    tx.settle_queued(item.id, "refused", dict(FORGOTTEN), now_utc())
        self.store.scrub(self.workspace)  # the old pages leave the files, as a forget's do
        return len(touched)

    def retry_queued(self, *, id: str) -> Queued:
        """Send a refused or conflicting write again, checked anew against what was pulled
        since (a revise on the version now current: the person has seen both)."""
        check_write("sync.retry", self.role)  # before anything is read: a viewer's is refused
        item = self._open_item(id, ("conflict", "refused"))
        check_write(item.op, self.role)
        if not item.arguments:
            raise Conflict(
                "This write names a memory forgotten on the server: nothing of it was kept "
                "here to send again. Drop it (`--drop QUEUED --because WHY`).",
                field="id",
            )
        state = self.replica_state_now()
        if state is None:
            raise Conflict("This store follows no server: nothing is queued here.")
        # on the version now current (the person has seen both): pinned anew by `queue`
        given = {k: v for k, v in item.arguments.items()
                 if k not in ("idempotency_key", "expected_version")}  # fmt: skip
        return self.queue(item.op, getattr(type(self), item.op), given, state, item)

    def drop_queued(self, *, id: str, because: str | None = None) -> QueueAnswer:
        """Give up a queued write, with why; it stays listed as dropped."""
        check_write("sync.drop", self.role)
        if not isinstance(because, str) or not because.strip():
            raise ValidationError("Say why the write is dropped (`because`).", field="because")
        gate.screen("because", because)
        with self.store.write(self.workspace) as tx:  # read and settled at once: a round
            item = self._open_item(id, OPEN, tx)  # settling it meanwhile is not overwritten
            tx.settle_queued(item.id, "dropped", {"because": because}, now_utc())
        return self.queued_writes(states=("dropped",))

    def still_pending(self, item_id: str) -> bool:
        """Whether a queued write still waits (a round asks before it sends each: a person
        may have dropped it since the round began)."""
        with self.store.read(self.workspace) as tx:
            item = tx.queued_write(item_id)
        return item is not None and item.state == "pending"

    def _open_item(
        self, item_id: Any, states: tuple[str, ...], tx: StoreReader | None = None
    ) -> QueuedWrite:
        if not isinstance(item_id, str) or len(item_id) > ID_CHARS:
            raise ValidationError("`id` names a queued write (q_...).", field="id")
        if tx is not None:
            item = tx.queued_write(item_id)
        else:
            with self.store.read(self.workspace) as reading:
                item = reading.queued_write(item_id)
        if item is None or item.state not in states:
            raise NotFound(
                f"No queued write {gate.shown_reference(item_id)} waits for that here; list "
                "them with `palimpsest sync --status`.",
                field="id",
            )
        return item


def _plain_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as JSON carries them to the server (None and false flags left out, as
    the adapters leave them out); refused if some value cannot travel."""
    given = {k: v for k, v in arguments.items() if v is not None and v is not False}
    given.pop("dry_run", None)
    try:
        return cast(dict[str, Any], json.loads(json.dumps(given)))
    except (TypeError, ValueError, RecursionError):  # nested past what JSON can carry
        raise ValidationError(
            "A write on a replica must be plain JSON to be queued for the server."
        ) from None


def _named_ids(item: QueuedWrite) -> set[str]:
    """The memories' ids a queued write names: its target, and every memory id among its
    arguments (supersedes, a link's ends, a dispute's memories, a merge's)."""
    found = {item.target_id} if item.target_id else set()

    def walk(value: Any) -> None:
        if isinstance(value, str) and value.startswith("m_") and len(value) <= ID_CHARS:
            found.add(value)
        elif isinstance(value, list):
            for part in value:
                walk(part)
        elif isinstance(value, dict):
            for part in value.values():
                walk(part)

    walk(item.arguments)
    return found


def kept_answer(settled: str, status: int, answer: Any) -> dict[str, Any]:
    """What of the server's answer to a pushed write the replica keeps (sync/client.py): an
    accepted write's ids (never the suggestions' texts a remember answers: a forget on the
    server must find them nowhere here), a refusal's class, field and message, cut short;
    nothing else a server sends, and no secret it quotes."""
    if not isinstance(answer, dict):
        return {
            "message": f"The server answered {status}, with no answer read (not a JSON "
            "object, or over a megabyte)."
        }
    if settled == "accepted":
        ids: dict[str, Any] = _screened(ids_only(answer))
        return {**ids, **({"replayed": True} if answer.get("replayed") is True else {})}
    kept: dict[str, Any] = {}
    for name, chars in (("error_class", 40), ("field", 200), ("message", MESSAGE_CHARS)):
        if isinstance(answer.get(name), str):  # a secret quoted by a server is not kept
            kept[name] = shown_text(answer[name], chars)
    if isinstance(answer.get("item"), int):
        kept["item"] = answer["item"]
    return kept


def _screened(value: Any) -> Any:
    """An accepted write's ids as kept: each string cut to an id's length, and one that
    looks like a secret (a server's, not ours) replaced by a stand-in."""
    if isinstance(value, str):
        return shown_text(value, ANSWER_ID_CHARS)
    if isinstance(value, list):
        return [_screened(part) for part in value]
    if isinstance(value, dict):
        return {name: _screened(part) for name, part in value.items()}
    return value


def shown_text(text: str, chars: int) -> str:
    """A server's text as kept or shown here: cut to `chars`, without control characters
    (a terminal's escapes, a right-to-left override), and a stand-in if it looks like it
    holds a secret."""
    return gate.shown_reference("".join(c for c in text[:chars] if c.isprintable()))
