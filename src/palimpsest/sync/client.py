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
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import httpx2

try:
    import fcntl
except ImportError:  # Windows: rounds of two processes are not kept apart
    fcntl = None  # type: ignore[assignment]

from ..domain.errors import Conflict, Forbidden, NotFound, Retryable, ValidationError
from ..service import Service
from ..service.queueing import MESSAGE_CHARS, kept_answer, shown_text

PULL = "/api/v1/sync_pull"
BATCH = 1000  # events an answer holds
TIMEOUT_SECONDS = 60.0  # connecting, or waiting for the next bytes
ANSWER_SECONDS = 300.0  # an answer whole, from sending to its last byte
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
    newer; what was written stays if a later answer fails. One round at a time per store:
    `palimpsest sync` run while `serve` keeps the replica waits for the round under way, so
    no write is sent twice and the position never moves back."""
    with _one_round_at_a_time(service):
        return _round(service, server, key, progress, client)


def _round(
    service: Service,
    server: str,
    key: str,
    progress: Progress | None,
    client: httpx2.Client | None,
) -> Round:
    state = service.replica()
    state = service.replica()
    # Plain http is for this machine only (config): never through a proxy the environment
    # names (HTTP_PROXY), which would read the key in the clear; https may go through one.
    trust_env = server.startswith("https://")
    pulled = 0
    opened: AbstractContextManager[httpx2.Client] = (
        nullcontext(client)  # a client given stays open: its caller's to close
        if client is not None
        else httpx2.Client(timeout=TIMEOUT_SECONDS, trust_env=trust_env)
    )
    with opened as http:
        if state is not None and state.server != server:
            # Another address: its queue goes there only once it proved, by answering from
            # this replica's position, that it holds the history the queue was checked on.
            pulled += _pull_all(service, http, server, key, progress)
        pushed, stopped = _push(service, http, server, key)
        pulled += _pull_all(service, http, server, key, progress)
    service.forget_queued_of_forgotten()  # a forget pulled: no text of it left in the queue
    if state is not None and state.refused:  # the key was taken: the stop is over
        service.note_refusal(None)
    if stopped is not None:  # a write the server could not take now: said after the pull
        raise stopped
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
        applied = service.apply_pulled(answer, server)
        events += applied["events"]
        if answer.get("more") and since is not None and applied["position"] == since:
            raise ValidationError(  # asked again, it would answer the same: for ever
                f"The server at {server} says more events wait but sent none after "
                f"position {since.get('seq')}: is it a Palimpsest server? What was "
                "pulled is kept; sync again later.",
                field="server",
            )
        if progress is not None:
            progress(events)
        if not answer.get("more"):
            return events


_LOCKS: dict[str, threading.Lock] = {}  # a store's rounds in this process, by its path
_LOCKS_HELD = threading.Lock()


@contextmanager
def _one_round_at_a_time(service: Service) -> Iterator[None]:
    """Hold the store's round lock: a thread's in this process, and a file lock beside a
    SQLite file for another process's (`sync` beside `serve`'s keeper)."""
    path = getattr(service.store, "path", None)
    name = str(path) if path is not None else f"store:{id(service.store)}"
    with _LOCKS_HELD:
        lock = _LOCKS.setdefault(name, threading.Lock())
    with lock:
        if path is None or fcntl is None or str(path).startswith(":memory:"):
            yield
            return
        with open(f"{path}.sync-lock", "a") as held:
            fcntl.flock(held, fcntl.LOCK_EX)  # released when the file closes
            yield


# How the server's answer to a pushed write is written down, by HTTP status.
SETTLED = {200: "accepted", 409: "conflict", 400: "refused", 403: "refused", 404: "refused",
           413: "refused", 422: "refused"}  # fmt: skip
# Any other 4xx refuses the write (a proxy's 405, a 410): kept for a person, as a refusal,
# rather than stopping every round (and its pull) at this write; but these stop the round.
UNSETTLED = frozenset({401, 407, 408, 421, 425, 429})
ANSWER_BYTES = 1_000_000  # a pushed write's answer read at most: ids and a refusal's message
PULL_BYTES = 512_000_000  # a pull's answer read at most (1,000 events, their vectors)


def _push(
    service: Service, http: httpx2.Client, server: str, key: str
) -> tuple[dict[str, int], Retryable | None]:
    """Send the queued writes in order; stop at the first the server cannot answer now,
    with why (Retryable: the round pulls all the same, so reads do not go stale behind a
    write the server fails on, then says it; a refused key stops the round at once).

    An answer is written down only as much as a person or a read needs: an accepted
    write's ids (never the suggestions' texts a remember answers: a forget on the server
    must find them nowhere here), a refusal's class and message."""
    counts: dict[str, int] = {}
    for item in service.pending_writes():
        if not service.still_pending(item.id):  # dropped by a person since the round began
            continue
        try:
            status, answer = _post(http, f"{server}/api/v1/{item.op}", item.arguments, key,
                                   server, ANSWER_BYTES)  # fmt: skip
        except Retryable as exc:
            return counts, exc
        settled = SETTLED.get(status) or ("refused" if status not in UNSETTLED and
                                          400 <= status < 500 else None)  # fmt: skip
        if settled is None:  # the key refused (401), the server busy or away: stop here
            refusal = _refusal(service, server, status, answer, "write")
            if isinstance(refusal, Retryable):
                return counts, refusal
            raise refusal
        if settled == "accepted" and (not isinstance(answer, dict) or "error_class" in answer):
            # a captive portal, a proxy's page, a broken server: not the server's answer,
            # so the write is not taken for written; it waits and goes again
            return counts, Retryable(
                f"The server at {server} answered a write with 200 but not with a Palimpsest "
                "answer: the write waits in the queue. Check `sync.server` (a proxy or a "
                "sign-in page in between?)."
            )
        service.settle(item.id, settled, kept_answer(settled, status, answer))
        counts[settled] = counts.get(settled, 0) + 1
    return counts, None


def _post(
    http: httpx2.Client, url: str, body: Any, key: str, server: str, limit: int
) -> tuple[int, Any]:
    """POST `body` as JSON with the key; the status and the answer's JSON (None when it
    is not JSON or longer than `limit` bytes). Redirects are not followed: the key goes to
    the server named and nowhere else. An answer that takes longer than ANSWER_SECONDS in
    all (a byte now and then keeps any read timeout from firing) is given up: the round
    holds the replica's round lock, and `sync` waits on it."""
    deadline = time.monotonic() + ANSWER_SECONDS
    try:
        with http.stream(
            "POST",
            url,
            content=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            follow_redirects=False,
        ) as response:
            read, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > limit:
                    return response.status_code, None
                if time.monotonic() > deadline:
                    raise Retryable(f"The server at {server} took too long to answer (over "
                                    f"{ANSWER_SECONDS:.0f} seconds): what was not answered "
                                    "waits; sync again later.")  # fmt: skip
                read.append(chunk)
    except httpx2.HTTPError as exc:
        raise _unreachable(server, exc) from None
    try:
        return response.status_code, json.loads(b"".join(read))
    except (ValueError, RecursionError):
        return response.status_code, None


def _pull(
    service: Service, http: httpx2.Client, server: str, key: str, since: dict[str, Any] | None
) -> dict[str, Any]:
    body = {"since": since, "limit": BATCH} if since else {"limit": BATCH}
    status, found = _post(http, server + PULL, body, key, server, PULL_BYTES)
    if status == 200:
        if isinstance(found, dict):
            return found
        raise ValidationError(f"The server at {server} did not answer with JSON: is it a "
                              "Palimpsest server?", field="server")  # fmt: skip
    raise _refusal(service, server, status, found, "pull")


class Unreachable(Retryable):
    """The server could not be reached at all: nothing was asked of it."""


def _unreachable(server: str, exc: Exception) -> Retryable:
    return Unreachable(
        f"The server at {server} cannot be reached ({type(exc).__name__}); reads here go on "
        "from what was synced, and writes wait in the queue. Sync again once it is back."
    )


def _refusal(service: Service, server: str, status: int, body: Any, what: str) -> Exception:
    """The server's refusal as ours, with its message; a refused key is kept as the
    replica's state, so every read of it can say that sync stopped and why."""
    said = body.get("message") if isinstance(body, dict) else None
    said = shown_text(said, MESSAGE_CHARS) if isinstance(said, str) else None
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
    if 300 <= status < 400:
        return ValidationError(f"The server at {server} answered the {what} with a redirect "
                               f"({status}), not followed: the key goes to the server named "
                               "only. Set `sync.server` to the address it answers at.",
                               field="server")  # fmt: skip
    if status in (408, 425, 429) or status >= 500:
        return Retryable(f"The server at {server} answered {status}: {said or 'busy'} Sync "
                         "again in a moment.")  # fmt: skip
    return ValidationError(f"The server at {server} refused the {what} ({status}): {said}",
                           field="server")  # fmt: skip
