"""Who is signed in to the web page: sessions named by a cookie, checked at every request.

A person signed in with a key has a session kept in the store (service/web_sessions.py):
every process serving the store knows it, so behind a load balancer the next request may
go to any of them, and a sign-out, a revoked key or a removed user ends it on all of them
at once. The store keeps the cookie's sha256 and the key's id only; the key is checked
against its record at every request, as /mcp checks a bearer key.

The local owner signed in by `palimpsest web`'s one-time link (`LocalLink`) has a session
in this process's memory only: it belongs to one process on one machine, and ends with it.
A session idle for IDLE_SECONDS ends; at most `per_key` are held at once.

A session's form token is derived from its cookie (`form_token`), so no token is stored
anywhere and every process derives the same: it is an HMAC keyed by the cookie, which the
page shows in its forms without revealing the cookie (HttpOnly: no script reads it).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..service import Service
from ..service.roles import Principal
from ..service.web_sessions import IDLE_SECONDS, cookie_hash

LINK_SECONDS = 120.0  # a one-time link must be opened within this time


@dataclass(frozen=True)
class WebSession:
    """A live session, found by its cookie: who it acts as, checked now, and its form token."""

    principal: Principal | None  # None: the local owner (a one-time link)
    csrf: str  # the token every form of this session carries

    @property
    def key_id(self) -> str | None:
        return self.principal.key_id if self.principal else None


class WebSessions:
    """The sessions of a key in the store; the local owner's in this process. Each call
    may read or write the store: adapters run it on the store threads."""

    def __init__(
        self,
        service: Service,
        per_key: int,
        clock: Callable[[], float] = time.monotonic,
        idle_seconds: float = IDLE_SECONDS,
    ):
        self.service = service
        self.per_key = per_key
        self._clock = clock
        self._idle = idle_seconds
        self._local: dict[str, float] = {}  # the local owner's: sha256 of cookie -> last use
        self._lock = threading.Lock()

    def open(self, key_id: str | None) -> str | None:
        """A new session of the key of that id (None: the local owner), and the cookie
        naming it; None if the key no longer lets anyone in."""
        if key_id is not None:
            return self.service.open_web_session(key_id=key_id, per_key=self.per_key)
        cookie = secrets.token_urlsafe(32)
        with self._lock:
            now = self._clock()
            held = sorted((used, name) for name, used in self._local.items())
            for _, name in held[: max(0, len(held) - self.per_key + 1)]:
                del self._local[name]  # past the bound: the least recently used ends
            self._local[cookie_hash(cookie)] = now
        return cookie

    def find(self, cookie: str | None) -> WebSession | None:
        """The live session `cookie` names, its key checked against the store now."""
        if not cookie:
            return None
        with self._lock:
            name, now = cookie_hash(cookie), self._clock()
            used = self._local.get(name)
            if used is not None and now - used <= self._idle:
                self._local[name] = now
                return WebSession(None, form_token(cookie))
            self._local.pop(name, None)
        principal = self.service.web_session(cookie)
        return WebSession(principal, form_token(cookie)) if principal else None

    def end(self, cookie: str | None) -> None:
        """Sign out: the session ends, in the store for every process."""
        if not cookie:
            return
        with self._lock:
            if self._local.pop(cookie_hash(cookie), None) is not None:
                return
        self.service.end_web_session(cookie)


def form_token(cookie: str) -> str:
    """The form token of the session `cookie` names: only its holder can derive it, and it
    gives the cookie away to no one who reads a page."""
    return hmac.new(cookie.encode(), b"palimpsest web form token", hashlib.sha256).hexdigest()


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
