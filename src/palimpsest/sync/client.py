"""One sync round of a replica with its server (docs/sync.md): push the writes queued here,
in order, then pull until the server has nothing newer.

A queued write is sent to the server's API as the operation it is, under its own id as the
idempotency key: a push repeated after a crash (the server had answered, the replica had not
written the answer down) is answered with the first answer, never applied twice. Each
answer is written down here as it comes: accepted, refused (the server's refusal, kept for
a person), or a conflict (the memory moved on there). Each pull answer is written in one
transaction (service/sync.py), so a round stopped anywhere leaves the replica at the last
answer written and the next round starts there.

The key goes in the `Authorization` header, as every client's; a server that refuses it
(revoked, expired, its user removed) stops the round at once, and the replica keeps why,
for `palimpsest sync --status`, doctor and the page.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import httpx2

from ..domain.errors import Conflict, Forbidden, NotFound, Retryable, ValidationError
from ..service import Service

PULL = "/api/v1/sync_pull"
BATCH = 1000  # events an answer holds
TIMEOUT_SECONDS = 60.0
Progress = Callable[[int], None]  # events pulled so far in this round


@dataclass(frozen=True)
class Round:
    server: str
    events: int  # new events written here
    position: int  # the server's sequence number reached
    role: str  # the key's role on the server
    pushed: dict[str, int] = field(default_factory=dict)  # queued writes, by how answered


def sync_round(
    service: Service,
    server: str,
    key: str,
    *,
    progress: Progress | None = None,
    client: httpx2.Client | None = None,
) -> Round:
    """Send the writes queued here to `server`, then pull from it until it has nothing
    newer; what was written stays if a later answer fails."""
    state = service.replica()
    pulled = 0
    with nullcontext(client) if client else httpx2.Client(timeout=TIMEOUT_SECONDS) as http:
        if state is not None and state.server != server:
            # Another address: its queue goes there only once it proved, by answering from
            # this replica's position, that it holds the history the queue was checked on.
            pulled += _pull_all(service, http, server, key, progress)
        pushed = _push(service, http, server, key)
        pulled += _pull_all(service, http, server, key, progress)
    if state is not None and state.refused:
        service.note_refusal(None)
    after = service.replica()
    assert after is not None, "a pull made this store a replica"
    return Round(server, pulled, after.position_seq, after.role, pushed)


def _pull_all(
    service: Service, http: httpx2.Client, server: str, key: str, progress: Progress | None
) -> int:
    """Pull until the server has nothing newer; the count of new events written here."""
    events = 0
    while True:
        state = service.replica()
        since = None
        if state is not None and state.position_seq:
            since = {"seq": state.position_seq, "op_id": state.position_op_id}
        answer = _pull(service, http, server, key, since)
        events += service.apply_pulled(answer, server)["events"]
        if progress is not None:
            progress(events)
        if not answer.get("more"):
            return events


# How the server's answer to a pushed write is written down, by HTTP status.
SETTLED = {200: "accepted", 409: "conflict", 400: "refused", 403: "refused", 404: "refused",
           413: "refused", 422: "refused"}  # fmt: skip


def _push(service: Service, http: httpx2.Client, server: str, key: str) -> dict[str, int]:
    """Send the queued writes in order; stop at the first the server cannot answer now."""
    counts: dict[str, int] = {}
    for item in service.pending_writes():
        try:
            response = http.post(
                f"{server}/api/v1/{item.op}",
                content=json.dumps(item.arguments).encode(),
                headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            )
        except httpx2.HTTPError as exc:
            raise _unreachable(server, exc) from None
        settled = SETTLED.get(response.status_code)
        if settled is None:  # the key refused (401), or the server busy: stop here
            raise _refusal(service, server, response)
        try:
            answer = response.json()
        except ValueError:
            answer = {"message": "the server's answer was not JSON"}
        service.settle(item.id, settled, answer if isinstance(answer, dict) else {})
        counts[settled] = counts.get(settled, 0) + 1
    return counts


def _pull(
    service: Service, http: httpx2.Client, server: str, key: str, since: dict[str, Any] | None
) -> dict[str, Any]:
    body = {"since": since, "limit": BATCH} if since else {"limit": BATCH}
    try:
        response = http.post(
            server + PULL,
            content=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
    except httpx2.HTTPError as exc:
        raise _unreachable(server, exc) from None
    if response.status_code == 200:
        try:
            found = response.json()
        except ValueError:
            found = None
        if isinstance(found, dict):
            return found
        raise ValidationError(f"The server at {server} did not answer with JSON: is it a "
                              "Palimpsest server?", field="server")  # fmt: skip
    raise _refusal(service, server, response)


def _unreachable(server: str, exc: Exception) -> Retryable:
    return Retryable(
        f"The server at {server} cannot be reached ({type(exc).__name__}); reads here go on "
        "from what was synced, and writes wait in the queue. Sync again once it is back."
    )


def _refusal(service: Service, server: str, response: httpx2.Response) -> Exception:
    """The server's refusal as ours, with its message; a refused key is kept as the
    replica's state, so every read of it can say that sync stopped and why."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    said = body.get("message") if isinstance(body, dict) else None
    status = response.status_code
    if status == 401:
        why = (
            f"The server at {server} refused the replica's key ({status}): it was revoked, "
            "expired or mistyped, or its user was removed. Sync stopped; ask the server's "
            "owner for a key (`palimpsest key create`) and set `sync.key`."
        )
        service.note_refusal(why)
        return Forbidden(why)
    if status == 404:
        return NotFound(
            f"{server} answers no sync: check `sync.server` (it names a Palimpsest server's "
            "address, as `serve --http` prints it); a server older than sync answers 404 too.",
            field="server",
        )
    if status == 409 and isinstance(body, dict) and body.get("field") == "since":
        return Conflict(
            f"{said} This replica's history is not the server's any more: nothing here was "
            "changed. Keep this store as it is (export it if in doubt) and sync into a new "
            "store (`--db`).",
            field="server",
        )
    if status == 429 or status >= 500:
        return Retryable(f"The server at {server} answered {status}: {said or 'busy'} Sync "
                         "again in a moment.")  # fmt: skip
    return ValidationError(f"The server at {server} refused the pull ({status}): {said}",
                           field="server")  # fmt: skip
