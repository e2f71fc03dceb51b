"""One sync round of a replica with its server (docs/sync.md): pull until the server has
nothing newer, each answer written here in one transaction (service/sync.py), so a round
stopped anywhere (the network, kill -9) leaves the replica at the last answer written and
the next round starts there.

The key goes in the `Authorization` header, as every client's; a server that refuses it
(revoked, expired, its user removed) stops the round at once, and the replica keeps why,
for `palimpsest sync --status`, doctor and the page.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
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


def sync_round(
    service: Service,
    server: str,
    key: str,
    *,
    progress: Progress | None = None,
    client: httpx2.Client | None = None,
) -> Round:
    """Pull from `server` until it has nothing newer; what was written stays if a later
    answer fails."""
    state = service.replica()
    since: dict[str, Any] | None = None
    if state is not None and state.position_seq:
        since = {"seq": state.position_seq, "op_id": state.position_op_id}
    events, role = 0, state.role if state else "viewer"
    position = state.position_seq if state else 0
    with client or httpx2.Client(timeout=TIMEOUT_SECONDS) as http:
        while True:
            answer = _pull(service, http, server, key, since)
            applied = service.apply_pulled(answer, server)
            events += applied["events"]
            since = dict(applied["position"])
            position, role = applied["position"]["seq"], applied["role"]
            if progress is not None:
                progress(events)
            if not answer.get("more"):
                break
    if state is not None and state.refused:
        service.note_refusal(None)
    return Round(server, events, position, role)


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
        raise Retryable(
            f"The server at {server} cannot be reached ({type(exc).__name__}); reads here go on "
            "from what was synced. Sync again once it is back."
        ) from None
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


def _refusal(service: Service, server: str, response: httpx2.Response) -> Exception:
    """The server's refusal as ours, with its message; a refused key is kept as the
    replica's state, so every read of it can say that sync stopped and why."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    said = body.get("message") if isinstance(body, dict) else None
    status = response.status_code
    if status in (401, 403):
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
