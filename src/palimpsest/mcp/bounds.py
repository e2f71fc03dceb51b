"""How many calls a key may make (tool calls, API operations, the web page's pages and
sign-ins draw from one bucket): a token bucket per key, in each server process.

A key may make `per_minute` calls in a burst, and then one more each 60/`per_minute`
seconds. Past that its call is answered `retryable` with `retry_after` (seconds), and
reaches no tool. The local owner (stdio, keyless loopback HTTP) is not bounded. Behind a
proxy with several server processes each keeps its own buckets: the bound is per process.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

IDLE_SECONDS = 600.0  # a full bucket unused this long is dropped (it would be full again)


class CallBounds:
    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic):
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0  # tokens a second
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key id -> (tokens, at)
        self._lock = threading.Lock()

    def admit(self, key_id: str) -> float | None:
        """Take one call from `key_id`'s bucket: None if admitted, else the seconds to wait."""
        now = self.clock()
        with self._lock:
            tokens, at = self._buckets.get(key_id, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - at) * self.rate)
            if tokens < 1.0:
                self._buckets[key_id] = (tokens, now)
                return math.ceil((1.0 - tokens) / self.rate * 10) / 10
            self._buckets[key_id] = (tokens - 1.0, now)
            if len(self._buckets) > 1024:
                self._forget_idle(now)
            return None

    def _forget_idle(self, now: float) -> None:
        for key_id, (_, at) in list(self._buckets.items()):
            if now - at > IDLE_SECONDS:
                del self._buckets[key_id]
