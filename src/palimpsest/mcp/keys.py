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

from typing import Any

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from starlette.types import ASGIApp, Receive, Scope, Send

from ..service import Service
from ..service.roles import LOCAL_OWNER, Principal

KEYLESS = "palimpsest-keyless"  # stands for "no key given"; never a key of ours


class KeyVerifier:
    """The SDK's TokenVerifier: a bearer token -> who it acts as, or None (401)."""

    def __init__(self, service: Service):
        self.service = service

    async def verify_token(self, token: str) -> AccessToken | None:
        principal = await anyio.to_thread.run_sync(self._principal, token)
        if principal is None:
            return None
        claims = {"actor": principal.actor, "role": principal.role,
                  "workspace": principal.workspace}  # fmt: skip
        return AccessToken(
            token="", client_id=principal.key_id or "local", scopes=[], claims=claims
        )

    def _principal(self, token: str) -> Principal | None:
        if token == KEYLESS:
            return None if self.service.has_keys() else LOCAL_OWNER
        return self.service.authenticate(token)


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
