"""Sync between a Palimpsest server and a replica (docs/sync.md), both ends.

    sync_pull      a server's answer: the rows its workspace's events made after a position
    apply_pulled   a replica writing such an answer, as it is, in one transaction
    replica        what a replica knows of its server (None for a store that follows none)

The protocol is versioned (`PROTOCOL`). A position is the server's sequence number of the
last event a replica holds and that event's operation id: a server whose event at that
number has another operation id (or none) has another history than the one the replica
followed (a restore from an export renumbers events), and says so (`PositionUnknown`)
rather than answering from a number that means something else there.

The records are those of the export format (formats/native.py), spans in the server's
sequence numbers, checked on arrival as an import checks a file's lines.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, NotRequired, TypeGuard

# typing_extensions' TypedDict: pydantic (which derives the API's schemas) needs it on 3.11.
from typing_extensions import TypedDict

from ..domain.errors import Conflict, ValidationError
from ..domain.model import now_utc
from ..formats import native
from ..screening.gate import check_actor
from ..store import Changes, ReplicaState
from .base import ServiceBase
from .restore_plan import check_content

PROTOCOL = 1
DEFAULT_LIMIT, MAX_LIMIT = 1000, 5000  # events per answer
ROLES = ("viewer", "editor", "owner", "agent")  # agent: a workspace key's


class Position(TypedDict):
    seq: int
    op_id: NotRequired[str]


class SyncPulled(TypedDict):
    """One answer of `sync_pull`."""

    protocol: int
    workspace: dict[str, str]  # the server's id and name of the workspace followed
    role: str  # the caller's role there
    actor: str  # who the caller acts as there: a replica checks its writes as that actor
    since: Position  # the position these events follow (the `since` asked for)
    position: Position  # where the next pull starts (where this one started, if empty)
    more: bool  # whether more events wait after these
    records: list[dict[str, Any]]  # export-format records, spans in server sequence numbers
    closed: list[list[Any]]  # [memory id, version, to_seq]: versions these events replaced
    disputes_closed: list[list[Any]]  # [dispute id, version, to_seq]
    vectors: list[dict[str, Any]]  # memory_id, version, model, vector (float32, base64)
    link_ends: list[str]  # the ids whose links `records` holds whole


class Applied(TypedDict):
    server: str
    position: Position
    events: int  # new events applied by this round
    role: str
    scrub_pending: NotRequired[bool]  # a forget pulled is not yet erased from the files


class PositionUnknown(Conflict):
    """The server's history does not hold the replica's position."""


class SyncOps(ServiceBase):
    # -- a server -------------------------------------------------------------------------

    def sync_pull(
        self, *, since: Mapping[str, Any] | None = None, limit: int | None = None
    ) -> SyncPulled:
        """The rows this workspace's events after `since` made, at most `limit` events."""
        seq, op_id = _position(since)
        count = _limit(limit)
        with self.store.read(self.workspace) as tx:
            if seq and tx.event_op_id(seq) != op_id:
                raise PositionUnknown(
                    "This server's history does not hold the position given in `since` "
                    "(the server was restored from an export, or is another server): sync "
                    "into a new store, from the start (without `since`).",
                    field="since",
                )
            changes = tx.changes_after(seq, count)
            name = next((w.name for w in tx.workspaces() if w.id == self.workspace), None)
        events = changes.events
        last = events[-1] if events else None
        return {
            "protocol": PROTOCOL,
            "workspace": {"id": self.workspace, "name": name or self.workspace},
            "role": self.role,
            "actor": self.actor,
            "since": _position_answer(seq, op_id),
            "position": (
                {"seq": int(last["seq"]), "op_id": str(last["op_id"])}
                if last
                else _position_answer(seq, op_id)
            ),
            "more": len(events) == count,
            "records": _records(changes),
            "closed": [list(item) for item in changes.closed],
            "disputes_closed": [list(item) for item in changes.disputes_closed],
            "vectors": [
                {**row, "vector": base64.b64encode(row["vector"]).decode()}
                for row in changes.vectors
            ],
            "link_ends": changes.link_ends,
        }

    # -- a replica ------------------------------------------------------------------------

    def replica(self) -> ReplicaState | None:
        """What this store knows of the server it follows; None if it follows none."""
        with self.store.read(self.workspace) as tx:
            return tx.replica_state()

    def apply_pulled(self, answer: Mapping[str, Any], server: str) -> Applied:
        """Write one `sync_pull` answer of `server` here, in one transaction with the new
        position; a store that holds memories of its own, or follows another server or
        workspace, is refused and left as it is."""
        if not self.store.replicates:
            raise Conflict(
                "A replica is a SQLite store of this machine: sync into one (`--db` a file).",
                field="db",
            )
        pulled = _checked_answer(answer)
        workspace = pulled["workspace"]["id"]
        with self.store.write(self.workspace) as tx:
            state = tx.replica_state()
            if state is None and not tx.is_empty():
                raise Conflict(
                    "This store holds memories of its own, so it cannot become a replica: sync "
                    "into a new store (`--db`), or first move them to the server (`palimpsest "
                    "export`, then `palimpsest import` there).",
                    field="db",
                )
            if state is not None and not _same_server(state, server, workspace, pulled["since"]):
                raise Conflict(
                    f"This store follows workspace {state.server_workspace!r} of {state.server}; "
                    "a replica follows one server's workspace: sync another into a new store.",
                    field="server",
                )
            _refuse_a_gap(pulled["since"], state)
            changes = pulled["changes"]
            counts = tx.apply_changes(changes, self.vectors.model if self.vectors.enabled else None)
            position = pulled["position"]
            if state is not None and position["seq"] < state.position_seq:
                # An answer retried late holds nothing new: the position stays where it was.
                position = _position_answer(state.position_seq, state.position_op_id)
            tx.put_replica_state(
                ReplicaState(
                    server=server,
                    server_workspace=workspace,
                    position_seq=position["seq"],
                    position_op_id=position.get("op_id"),
                    role=pulled["role"],
                    synced_at=now_utc(),
                    actor=pulled["actor"],
                )
            )
        applied: Applied = {"server": server, "position": position, "events": counts["events"],
                            "role": pulled["role"]}  # fmt: skip
        forgets = any(e["op"].startswith("forget") for e in changes.events)
        # As a forget says: a reader holding the file open keeps the old pages a while.
        if forgets and not self.store.scrub(self.workspace):
            applied["scrub_pending"] = True
        return applied

    def note_refusal(self, why: str | None) -> None:
        """Keep why the last round was refused (a revoked key...), or clear it."""
        with self.store.write(self.workspace) as tx:
            state = tx.replica_state()
            if state is not None and state.refused != why:
                tx.put_replica_state(
                    ReplicaState(state.server, state.server_workspace, state.position_seq,
                                 state.position_op_id, state.role, state.synced_at, why,
                                 state.actor)
                )  # fmt: skip


def _same_server(state: ReplicaState, server: str, workspace: str, since: Position) -> bool:
    """Whether an answer comes from the server this replica follows: the same workspace,
    at the address it knows, or at another one (a new port, a new name) that answered
    from the position it holds, so that holds its history."""
    if state.server_workspace != workspace:
        return False
    return state.server == server or (
        state.position_seq > 0
        and since.get("seq") == state.position_seq
        and since.get("op_id") == state.position_op_id
    )


class _Seqs:
    """Sequence numbers as they are: a sync round speaks the server's own."""

    @staticmethod
    def add(seq: int) -> int:
        return seq

    @staticmethod
    def rank(seq: int | None) -> int | None:
        return seq


def _by_kind(changes: Changes) -> dict[str, list[dict[str, Any]]]:
    """The rows of `changes` under the export format's record kinds, in the order a file
    holds them (what a row refers to first)."""
    return {
        "notebook": changes.notebooks,
        "notebook_tombstone": changes.notebook_tombstones,
        "memory": changes.memories,
        "event": changes.events,
        "version": changes.versions,
        "link": changes.links,
        "dispute": changes.disputes,
        "setting": changes.settings,
    }


def _records(changes: Changes) -> list[dict[str, Any]]:
    seqs: Any = _Seqs()
    tables = _by_kind(changes)
    return [native.record_of(kind, row, seqs) for kind, rows in tables.items() for row in rows]


def _position(since: Mapping[str, Any] | None) -> tuple[int, str | None]:
    if since is None:
        return 0, None
    seq = since.get("seq") if isinstance(since, Mapping) else None
    op_id = since.get("op_id") if isinstance(since, Mapping) else None
    named = isinstance(op_id, str) and native.ID_SHAPE.fullmatch(op_id)
    if not _whole(seq) or (seq and not named):
        raise ValidationError(
            "`since` is the `position` a pull answered: its `seq` (a whole number) and, past "
            "0, its `op_id`.",
            field="since",
        )
    return int(seq or 0), op_id


def _refuse_a_gap(since: Position, state: ReplicaState | None) -> None:
    """An answer follows a position this replica has reached: one that starts further on
    would leave the events between out, silently. (One that starts before is a retry or
    an overlap: the events it holds already are checked as held, one by one.)"""
    reached = state.position_seq if state is not None else 0
    if since["seq"] > reached:
        raise Conflict(
            f"The server's answer follows its event {since['seq']}, but this replica has "
            f"reached {reached} only: pull again from this replica's position, "
            "so that no event is left out.",
            field="since",
        )


def _position_answer(seq: int, op_id: str | None) -> Position:
    return {"seq": seq, "op_id": op_id} if op_id else {"seq": seq}


def _limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if not _whole(limit) or not 1 <= limit <= MAX_LIMIT:
        raise ValidationError(f"`limit` is a number of events from 1 to {MAX_LIMIT:,}.",
                              field="limit")  # fmt: skip
    return limit


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63


def _checked_answer(answer: Mapping[str, Any]) -> dict[str, Any]:
    """A server's answer checked before anything of it is written: its protocol, its
    records (as an import checks a file's lines), spans and vectors."""
    if not isinstance(answer, Mapping) or answer.get("protocol") != PROTOCOL:
        raise ValidationError(
            f"The server answered with another sync protocol than {PROTOCOL}: upgrade "
            "Palimpsest here or there so both speak the same.",
            field="protocol",
        )
    workspace, role = answer.get("workspace"), answer.get("role")
    if not (isinstance(workspace, Mapping) and isinstance(workspace.get("id"), str)
            and isinstance(workspace.get("name"), str)) or role not in ROLES:  # fmt: skip
        raise _damaged("workspace")
    actor = answer.get("actor")
    try:
        actor = check_actor(actor) if isinstance(actor, str) else None
    except ValidationError:
        actor = None
    if actor is None:
        raise _damaged("actor")
    seq, op_id = _position(answer.get("position"))
    after, after_op_id = _position(answer.get("since"))
    changes = Changes()
    into = _by_kind(changes)
    records = answer.get("records")
    if not isinstance(records, list):
        raise _damaged("records")
    actors: set[str] = set()
    for record in records:
        checked = native.checked_record(record)
        try:  # what an import checks: the gate, the bounds, the actors
            check_content(checked["record"], checked, actors)
        except ValidationError as exc:
            raise ValidationError(
                f"The server's sync answer holds a {checked['record']} this store refuses "
                f"({exc.message}); nothing of it was written.",
                field=exc.field,
            ) from None
        row = native.row_of(checked)
        row.pop("norm_text", None)
        row.pop("tags_text", None)
        into[checked["record"]].append(row)
    changes.closed = _spans(answer.get("closed"), "closed")
    changes.disputes_closed = _spans(answer.get("disputes_closed"), "disputes_closed")
    changes.vectors = _vectors(answer.get("vectors"))
    ends = answer.get("link_ends")
    if not isinstance(ends, list) or not all(
        isinstance(e, str) and native.ID_SHAPE.fullmatch(e) for e in ends
    ):
        raise _damaged("link_ends")
    changes.link_ends = ends
    events = [int(e["seq"]) for e in changes.events]
    if events != sorted(set(events)) or (events and events[-1] != seq):
        raise _damaged("position")
    return {
        "workspace": dict(workspace),
        "role": role,
        "actor": actor,
        "since": _position_answer(after, after_op_id),
        "position": _position_answer(seq, op_id),
        "changes": changes,
    }


def _spans(value: Any, field: str) -> list[tuple[str, int, int]]:
    if not isinstance(value, list):
        raise _damaged(field)
    spans = []
    for item in value:
        ok = isinstance(item, list) and len(item) == 3 and isinstance(item[0], str)
        if not (ok and native.ID_SHAPE.fullmatch(item[0]) and _whole(item[1]) and _whole(item[2])):
            raise _damaged(field)
        spans.append((item[0], int(item[1]), int(item[2])))
    return spans


def _vectors(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise _damaged("vectors")
    found = []
    for item in value:
        try:
            raw = base64.b64decode(item["vector"], validate=True)
            ok = (isinstance(item["memory_id"], str) and _whole(item["version"])
                  and isinstance(item["model"], str) and raw and len(raw) % 4 == 0)  # fmt: skip
        except (KeyError, TypeError, ValueError):
            ok = False
        if not ok:
            raise _damaged("vectors")
        found.append({"memory_id": item["memory_id"], "version": int(item["version"]),
                      "model": item["model"], "vector": raw})  # fmt: skip
    return found


def _damaged(field: str) -> ValidationError:
    return ValidationError(
        f"The server's sync answer is damaged (`{field}`); nothing of it was written. Sync "
        "again; if it stays so, the server is not one this Palimpsest can follow.",
        field=field,
    )
