"""A replica kept in sync while `serve` runs (docs/sync.md): a thread that runs a round
every `sync.every_seconds`, and at once when a write waits in the queue, checked every
second, so a write made while the server was away goes out within a second or two of its
return. A refused key stops the thread (the replica keeps why). A server that answers but
cannot take the round now (busy: 429, 5xx) is asked again after a wait that doubles from
two seconds to eight (or `sync.every_seconds` if shorter), a write waiting or not, so it
is not asked every second; one that cannot be reached at all is tried every second while a
write waits (a refused connection costs it nothing), so the write goes out within a second
or two of its return.
"""

from __future__ import annotations

import sys
import threading
import time

from ..domain.errors import Forbidden, PalimpsestError
from ..service import Service
from .client import Unreachable, sync_round

TICK_SECONDS = 1.0
FIRST_BACKOFF_SECONDS, MAX_BACKOFF_SECONDS = 2.0, 8.0  # the waits after failed rounds


class Keeper:
    """Runs rounds for one service in a daemon thread until `stop`."""

    def __init__(self, service: Service, server: str, key: str, every: float):
        self._service, self._server, self._key, self._every = service, server, key, every
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="palimpsest-sync", daemon=True)
        self.last_error: str | None = None
        self._retry_at = 0.0  # no round before this, a write waiting or not (a failure's)

    def start(self) -> Keeper:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        due, backoff = 0.0, 0.0  # the first round at once
        while not self._stopped.is_set():
            now = time.monotonic()
            if now >= due or (self._waiting() and now >= self._retry_at):
                done = self._round()
                if done is None:
                    return
                longest = max(min(self._every, MAX_BACKOFF_SECONDS), FIRST_BACKOFF_SECONDS)
                busy = done is False  # it answered, but could not take the round
                backoff = min(max(backoff * 2, FIRST_BACKOFF_SECONDS), longest) if busy else 0.0
                self._retry_at = time.monotonic() + backoff
                due = time.monotonic() + max(self._every, backoff)
            self._stopped.wait(TICK_SECONDS)

    def _waiting(self) -> bool:
        try:
            return bool(self._service.pending_writes())
        except PalimpsestError:
            return False

    def _round(self) -> bool | str | None:
        """One round: True if it went through, "away" if the server could not be reached,
        False if it answered but could not take it; None once it refused the key (nothing
        more to try)."""
        try:
            sync_round(self._service, self._server, self._key)
            self.last_error = None
        except Forbidden as exc:
            print(f"palimpsest: sync stopped: {exc.message}", file=sys.stderr, flush=True)
            return None
        except PalimpsestError as exc:
            if exc.message != self.last_error:  # said once, not every second
                print(f"palimpsest: sync: {exc.message}", file=sys.stderr, flush=True)
            self.last_error = exc.message
            return "away" if isinstance(exc, Unreachable) else False
        return True
