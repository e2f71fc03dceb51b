"""HTTP requests and the workspace's keys, through the MCP SDK's own token hooks (so that
OAuth can come later without touching the tools).

Every request to the HTTP app must pass the SDK's bearer check. A request that carries no
`Authorization` header is given KEYLESS in its place, which this verifier accepts only
while the store has no key: then HTTP on loopback acts as the local owner, as before keys.
From the first key on, a request without a key, or with one unknown, revoked or expired,
gets 401 and reaches no tool. The store is read on every request, so a key revoked through
one server process is refused by every other at once.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from starlette.types import ASGIApp, Receive, Scope, Send

from ..service import Service
from ..service.roles import Principal

KEYLESS = "palimpsest-keyless"  # stands for "no key given"; never a key of ours
LOCAL = Principal("local", "owner")  # a keyless request: the server acts as it was started
FLUSH_SECONDS = 5.0  # failed authentications reach the store at most this often


class KeyVerifier:
    """The SDK's TokenVerifier: a bearer token -> who it acts as, or None (401).

    Each failure is counted for doctor (per workspace when the key's id is one of ours).
    The counts are added to the store at most every FLUSH_SECONDS (the first at once), so
    that a flood of bad keys cannot become a flood of writes.
    """

    def __init__(self, service: Service, clock: Callable[[], float] = time.monotonic):
        self.service = service
        self.clock = clock
        self._failures: Counter[str] = Counter()
        self._flushed_at = -FLUSH_SECONDS  # the first failure is written at once
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    async def verify_token(self, token: str) -> AccessToken | None:
        principal = await anyio.to_thread.run_sync(self._principal, token)
        if principal is None:
            await anyio.to_thread.run_sync(self._count_failure, token)
            return None
        if principal is LOCAL:  # no claims: the server's own actor, as before keys
            return AccessToken(token="", client_id="local", scopes=[], claims={})
        claims = {"actor": principal.actor, "role": principal.role,
                  "workspace": principal.workspace}  # fmt: skip
        return AccessToken(
            token="", client_id=principal.key_id or "local", scopes=[], claims=claims
        )

    def _principal(self, token: str) -> Principal | None:
        if token == KEYLESS:
            return None if self.service.has_keys() else LOCAL
        return self.service.authenticate(token)

    def _count_failure(self, token: str) -> None:
        workspace = self.service.key_workspace(token) or ""
        with self._lock:
            self._failures[workspace] += 1
            wait = FLUSH_SECONDS - (self.clock() - self._flushed_at)
            if wait > 0 and self._timer is None:  # the rest follows when the time is up
                self._timer = threading.Timer(wait, self.flush)
                self._timer.daemon = True
                self._timer.start()
        if wait <= 0:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            failures, self._failures = dict(self._failures), Counter()
            self._flushed_at, self._timer = self.clock(), None
        if failures:
            self.service.count_failed_auth(failures)


def auth_settings(host: str, port: int) -> AuthSettings:
    # Not an OAuth server (yet): no metadata routes, no audience to check.
    return AuthSettings(
        issuer_url=f"http://{host}:{port}",  # type: ignore[arg-type]
        resource_server_url=None,
    )


def request_principal() -> Principal | None:
    """Who the current HTTP request acts as (None: not over HTTP, e.g. stdio)."""
    token = get_access_token()
    if token is None or not token.claims:
        return None
    key_id = None if token.client_id == "local" else token.client_id
    claims = token.claims
    return Principal(claims["actor"], claims["role"], key_id, claims.get("workspace"))


class KeylessMeansLocal:
    """Gives a request without an `Authorization` header the KEYLESS token (see above)."""

    def __init__(self, app: ASGIApp):
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not any(k == b"authorization" for k, _ in scope["headers"]):
            headers: list[Any] = [
                *scope["headers"],
                (b"authorization", f"Bearer {KEYLESS}".encode()),
            ]
            scope = {**scope, "headers": headers}
        await self._app(scope, receive, send)
