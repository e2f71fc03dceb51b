"""A replica kept in sync while `serve` runs (docs/sync.md): a thread that runs a round
every `sync.every_seconds`, and at once when a write waits in the queue, checked every
second, so a write made while the server was away goes out within a second or two of its
return. A refused key stops the thread (the replica keeps why); any other failure is tried
again at the next tick.
"""

from __future__ import annotations

import sys
import threading
import time

from ..domain.errors import Forbidden, PalimpsestError
from ..service import Service
from .client import sync_round

TICK_SECONDS = 1.0


class Keeper:
    """Runs rounds for one service in a daemon thread until `stop`."""

    def __init__(self, service: Service, server: str, key: str, every: float):
        self._service, self._server, self._key, self._every = service, server, key, every
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="palimpsest-sync", daemon=True)
        self.last_error: str | None = None

    def start(self) -> Keeper:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        due = 0.0  # the first round at once
        while not self._stopped.is_set():
            if time.monotonic() >= due or self._waiting():
                if not self._round():
                    return
                due = time.monotonic() + self._every
            self._stopped.wait(TICK_SECONDS)

    def _waiting(self) -> bool:
        try:
            return bool(self._service.pending_writes())
        except PalimpsestError:
            return False

    def _round(self) -> bool:
        """One round; False once the server refused the key (nothing more to try)."""
        try:
            sync_round(self._service, self._server, self._key)
            self.last_error = None
        except Forbidden as exc:
            print(f"palimpsest: sync stopped: {exc.message}", file=sys.stderr, flush=True)
            return False
        except PalimpsestError as exc:
            if exc.message != self.last_error:  # said once, not every second
                print(f"palimpsest: sync: {exc.message}", file=sys.stderr, flush=True)
            self.last_error = exc.message
        return True
