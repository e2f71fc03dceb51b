"""Who is signed in to the web page: sessions kept by the server, named by a cookie.

The cookie holds only a random name (256 bits); the session it names holds the key its
person signed in with, and that key is checked against the store at every request
(`service.authenticate`, as /mcp checks a bearer key): a key revoked, expired, or whose
user was removed ends the session at its next request, whichever process serves it.

The session itself lives in the memory of the process that opened it, not in the store:
no table to migrate on both stores, nothing of it left on disk after sign-out, and a
cookie copied before sign-out names nothing afterwards. The cost: behind several processes
a person signs in again on each (a sticky proxy avoids that), and a restart signs everyone
out. A session idle for IDLE_SECONDS ends; each key holds at most `per_key` sessions, a
new one ending its least recently used.

`LocalLink` is `palimpsest web`'s one-time sign-in for the local owner: one token, used at
most once, within LINK_SECONDS.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

IDLE_SECONDS = 8 * 3600.0  # a working day without a click signs out
LINK_SECONDS = 120.0  # a one-time link must be opened within this time


@dataclass
class WebSession:
    key: str | None  # the key signed in with; None: the local owner (a one-time link)
    key_id: str | None
    csrf: str  # the token every form of this session carries
    used_at: float


class WebSessions:
    def __init__(
        self,
        per_key: int,
        clock: Callable[[], float] = time.monotonic,
        idle_seconds: float = IDLE_SECONDS,
    ):
        self.per_key = per_key
        self._clock = clock
        self._idle = idle_seconds
        self._by_name: dict[str, WebSession] = {}  # sha256 of the cookie -> its session
        self._lock = threading.Lock()

    def open(self, key: str | None, key_id: str | None) -> tuple[str, WebSession]:
        """A new session and the cookie value naming it; past its key's bound, the key's
        least recently used session ends."""
        cookie = secrets.token_urlsafe(32)
        session = WebSession(key, key_id, secrets.token_urlsafe(32), self._clock())
        with self._lock:
            self._drop_idle()
            held = [(s.used_at, n) for n, s in self._by_name.items() if s.key_id == key_id]
            for _, name in sorted(held)[: max(0, len(held) - self.per_key + 1)]:
                del self._by_name[name]
            self._by_name[_name(cookie)] = session
        return cookie, session

    def find(self, cookie: str | None) -> WebSession | None:
        """The live session `cookie` names (its key still to be checked), or None."""
        if not cookie:
            return None
        with self._lock:
            session = self._by_name.get(_name(cookie))
            now = self._clock()
            if session is None or now - session.used_at > self._idle:
                self._by_name.pop(_name(cookie), None)
                return None
            session.used_at = now
            return session

    def end(self, cookie: str | None) -> None:
        if cookie:
            with self._lock:
                self._by_name.pop(_name(cookie), None)

    def count(self, key_id: str | None) -> int:
        with self._lock:
            return sum(1 for s in self._by_name.values() if s.key_id == key_id)

    def _drop_idle(self) -> None:
        now = self._clock()
        for name in [n for n, s in self._by_name.items() if now - s.used_at > self._idle]:
            del self._by_name[name]


def _name(cookie: str) -> str:
    # Looked up by its hash: the table never holds a cookie one could present.
    return hashlib.sha256(cookie.encode()).hexdigest()


class LocalLink:
    """The one-time link `palimpsest web` prints: it signs in the local owner, once."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, seconds: float = LINK_SECONDS):
        self.token = secrets.token_urlsafe(32)
        self._clock = clock
        self._until = clock() + seconds
        self._used = False
        self._lock = threading.Lock()

    def holds(self, token: str) -> bool:
        """Whether `token` is this link's (used or not): checked before anything costlier."""
        return hmac.compare_digest(token.encode(), self.token.encode())

    def take(self, token: str) -> bool:
        """Whether `token` is this link's, unused and in time; it is used from now on."""
        with self._lock:
            good = hmac.compare_digest(token.encode(), self.token.encode())
            if not good or self._used or self._clock() > self._until:
                return False
            self._used = True
            return True
