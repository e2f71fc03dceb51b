"""HTTP requests and the workspace's keys, through the MCP SDK's own token hooks (so that
OAuth can come later without touching the tools).

Every request to the HTTP app must pass the SDK's bearer check. A request that carries no
`Authorization` header is given KEYLESS in its place, which this verifier accepts only
while the store has no key: then HTTP on loopback acts as the local owner, as before keys.
From the first key on, a request without a key, or with one unknown, revoked or expired,
gets 401 and reaches no tool, before anything of its body is read (KeyFirst). The store is
read on every request, so a key revoked through one server process is refused by every
other at once; what a revoked key still holds open (sessions, streams, requests under way)
is taken back within seconds (shares.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from starlette.types import ASGIApp, Receive, Scope, Send

from ..domain.errors import Retryable
from ..service import Service
from ..service.roles import Principal
from .peers import peer_is_this_user
from .refusals import Refusal, refusal, unauthorized

if TYPE_CHECKING:
    from .shares import KeyShares

logger = logging.getLogger("palimpsest.mcp")
KEYLESS = "palimpsest-keyless"  # stands for "no key given"; never a key of ours
LOCAL = Principal("local", "owner")  # a keyless request: the server acts as it was started
FLUSH_SECONDS = 5.0  # failed authentications reach the store at most this often
# Set in a request's scope once its key is known good: until then its connection may be
# closed to make room for others (transport.GuardedH11Protocol).
ADMITTED = "palimpsest.admitted"
# The token this request's KeyFirst checked, and what it found: checked once a request.
_VERIFIED: ContextVar[tuple[str, AccessToken] | None] = ContextVar("verified", default=None)


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
        known = _VERIFIED.get()
        if known is not None and known[0] == token:  # checked by KeyFirst for this request
            return known[1]
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

    def still_valid(self, token: str) -> bool:
        """Whether `token` would still be let in (read from the store; counts no failure)."""
        return self._principal(token) is not None

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


class KeyFirst:
    """The first step of every HTTP request: its key, read from the head alone.

    Nothing of the body is read before the key is known good, and no `100 Continue` is
    sent (uvicorn sends it only once the body is asked for): a request without a valid key
    is answered 401 and its connection closed, however large or slow its body would be.
    Two `Authorization` headers are refused (400): behind a proxy that adds its own, the
    client would choose whom it acts as. A request without one is given KEYLESS (see
    above). A keyed request then goes to `shares` (its key's share of the server).
    """

    def __init__(self, app: ASGIApp, verifier: KeyVerifier, shares: KeyShares):
        self._app = app
        self._verifier = verifier
        self._shares = shares

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan; uvicorn serves no WebSocket here
            await self._app(scope, receive, send)
            return
        given = [v for k, v in scope["headers"] if k == b"authorization"]
        if len(given) > 1:
            message = "send one Authorization header, not several"
            await refusal(400, message, close=True)(scope, receive, send)
            return
        token = _bearer(given[0]) if given else KEYLESS
        try:
            access = None if token is None else await self._verifier.verify_token(token)
        except Exception as exc:  # the store did not answer: no one is let in, nor told why
            await _unchecked(exc)(scope, receive, send)
            return
        if token is None or access is None or not await _own_if_keyless(access, scope):
            await unauthorized("Authentication required")(scope, receive, send)
            return
        scope[ADMITTED] = True  # in the connection's own scope, which uvicorn reads too
        if not given:
            headers = [*scope["headers"], (b"authorization", f"Bearer {KEYLESS}".encode())]
            scope = {**scope, "headers": headers}
        verified = _VERIFIED.set((token, access))  # the SDK's own check then reads no store
        try:
            if access.claims:  # a key's holder; the local owner (no keys yet) is not bounded
                await self._shares.serve(access.client_id, token, scope, receive, send)
            else:
                await self._app(scope, receive, send)
        finally:
            _VERIFIED.reset(verified)


async def _own_if_keyless(access: AccessToken, scope: Scope) -> bool:
    """A request let in without a key (a store with none yet) acts as the local owner: only
    over a connection of the user this server runs as (or root), as `palimpsest web`'s
    link; another user of the machine reaching 127.0.0.1 is not the owner (mcp/peers.py)."""
    if access.claims:  # a key's holder: its key says who
        return True
    ends = (scope.get("client"), scope.get("server"))
    return await anyio.to_thread.run_sync(peer_is_this_user, *ends)


def _unchecked(exc: Exception) -> Refusal:
    """The answer when a key could not be checked: `retryable` (503) when the store is
    unreachable or busy, else `internal` (500, logged); neither says more than that."""
    if isinstance(exc, Retryable):
        logger.warning("a key could not be checked: %s", exc.message)
        message = "the key could not be checked, the store did not answer: send it again"
        return refusal(503, message, error_class="retryable", close=True)
    logger.error("a key could not be checked", exc_info=exc)
    message = "the key could not be checked, the server failed: report it if it lasts"
    return refusal(500, message, error_class="internal", close=True)


def _bearer(header: bytes) -> str | None:
    """The token of an `Authorization: Bearer ...` header, read as the SDK reads it."""
    text = header.decode("latin-1")
    return text[7:] if text.lower().startswith("bearer ") else None
