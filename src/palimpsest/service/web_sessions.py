"""The web page's sessions of people signed in with a key, kept in the store (issue 32).

Every process serving the store sees them: behind a load balancer a cookie made by one is
known to the next, and a sign-out, a revocation or a user's removal ends it on all at once.
A session is named by its cookie's sha256 and holds its key's id, never the key: at every
request the key's record is checked as `authenticate` checks a bearer key (`admit_key`),
so the role is the user's as it is now. Not an event: a sign-in is no change to memory.

Bounds: each key holds at most `per_key` sessions (a new one ends its least recently
used); one unused for IDLE_SECONDS ends; the last use is written at most once every
TOUCH_SECONDS, not at every request.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from datetime import timedelta

from ..domain.errors import Retryable
from ..domain.model import format_time, parse_time
from ..store import StoreWriter, WebSession
from .access import AccessOps
from .roles import Principal

IDLE_SECONDS = 8 * 3600  # a working day without a click signs out
TOUCH_SECONDS = 60  # how stale a session's last use may be written: idle is judged in hours


def cookie_hash(cookie: str) -> str:
    # Looked up by its hash: the table never holds a cookie one could present.
    return hashlib.sha256(cookie.encode()).hexdigest()


class WebSessionOps(AccessOps):
    def open_web_session(self, *, key_id: str, per_key: int) -> str | None:
        """A new session of the key of that id, and the cookie naming it (256 random bits,
        shown here only); None if the key was revoked meanwhile. Past `per_key` sessions of
        the key, its least recently used ends."""
        with self.store.read(self.workspace) as tx:
            workspace = tx.key_workspace(key_id)
        if workspace is None:
            return None
        cookie = secrets.token_urlsafe(32)
        with self.store.write(workspace) as tx:
            found = tx.access_key(key_id)
            if found is None or found[0].revoked_at is not None:
                return None
            now = self.clock()
            opened = WebSession(cookie_hash(cookie), workspace, key_id, now, now)
            tx.open_web_session(opened, keep=per_key, idle_before=_before(now, IDLE_SECONDS))
        return cookie

    def web_session(self, cookie: str) -> Principal | None:
        """Who the session `cookie` names acts as now, or None: no such session, idle too
        long, or its key no longer lets anyone in (then the session ends here)."""
        name = cookie_hash(cookie)
        with self.store.read(self.workspace) as tx:
            found = tx.web_session(name)
        if found is None:
            return None
        now = self.clock()
        idle = found.used_at < _before(now, IDLE_SECONDS)
        principal = None if idle else self.admit_key(found.key_id)
        if principal is None or principal.workspace != found.workspace:
            self._upkeep(found.workspace, lambda tx: tx.end_web_session(name))
            return None
        if found.used_at < _before(now, TOUCH_SECONDS):
            self._upkeep(found.workspace, lambda tx: tx.touch_web_session(name, now))
        return principal

    def end_web_session(self, cookie: str) -> bool:
        """Sign out: the session `cookie` names ends, on every process; False if none was."""
        name = cookie_hash(cookie)
        with self.store.read(self.workspace) as tx:
            found = tx.web_session(name)
        if found is None:
            return False
        with self.store.write(found.workspace) as tx:
            return tx.end_web_session(name)

    def _upkeep(self, workspace: str, change: Callable[[StoreWriter], object]) -> None:
        """A write the answer does not wait on: on a busy store, the next request does it
        (a dead session lets no one in meanwhile: it was judged before this write)."""
        try:
            with self.store.write(workspace) as tx:
                change(tx)
        except Retryable:
            pass


def _before(now: str, seconds: int) -> str:
    return format_time(parse_time(now) - timedelta(seconds=seconds))
