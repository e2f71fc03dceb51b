"""How `server` runs over HTTP: the SDK's streamable HTTP, with two gaps closed (`stdio`
closes stdio's). Only `serve --http` loads this module, and with it uvicorn's connections.

- HTTP bodies. The SDK answers a body that is JSON but no JSON-RPC message (an older
  client's batch, a wrong `jsonrpc`) with pydantic's error text, which quotes the body, so a
  key in a memory's text came back in the error. Here such a body gets the stdio answer.
- HTTP. uvicorn waits for a request's headers as long as the client likes, and keeps every
  connection it accepts: a few hundred clients sending headers slowly hold every file
  descriptor and lock everyone else out. Here a request's head must arrive within
  `HEAD_SECONDS`, and at most `MAX_CONNECTIONS` stay open: past that, the connection
  that has waited longest for its head, or whose request's key is still being checked, is
  closed to make room (one in the middle of a keyed request is never closed for this;
  when all are, the newcomer is, and keys.KeyFirst and shares.KeyShares keep any one key
  from holding them all). More than that calls for a reverse proxy in front (the README
  says how). A body must arrive within `BODY_SECONDS` (else 408) and hold at most
  `MAX_BODY_BYTES` (else 413), so slow or huge bodies cannot hold a connection or the
  memory either; a request answered before its body came has its connection closed.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import TYPE_CHECKING, ClassVar

import anyio
import h11
import mcp_types as types
import pydantic
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..config import DEFAULT_LIMITS, Limits
from .bounds import CallBounds
from .keys import ADMITTED, KeyFirst
from .refusals import API_PREFIX, QuietRefusals, refusal
from .shares import REQUEST_KEY, KeyShares
from .stdio import unreadable_answer

if TYPE_CHECKING:
    from .server import PalimpsestMCP

# The defaults; `[http]` in the configuration changes them (config.py).
# To send a request line and headers, from connecting or the last answer:
HEAD_SECONDS = DEFAULT_LIMITS.head_seconds
# Open at once; well under the usual 1,024 file descriptors:
MAX_CONNECTIONS = DEFAULT_LIMITS.max_connections
BODY_SECONDS = 30.0  # to send a request's body, once its head is in
# The largest body read: a batch of 1,000 revisions at the longest text fits well inside.
MAX_BODY_BYTES = 64 * 2**20
# Connections accepted in one go, before any is counted against MAX_CONNECTIONS (asyncio
# accepts up to this many per wake-up): with uvicorn's 2,048, a burst alone could exhaust
# the descriptors. Also the kernel's queue of connections waiting to be accepted.
ACCEPT_BATCH = 128


class AnsweringUnreadableBodies:
    """The SDK's HTTP app, minus its answer to a JSON body that is no JSON-RPC message.

    That answer is pydantic's error text, which quotes the body; this one is the stdio
    transport's (-32600, or -32700 for no JSON), and quotes nothing. Other requests, and the
    body of a readable one, go to the app as they came.
    """

    def __init__(self, app: ASGIApp, path: str, bounds: CallBounds | None = None):
        self._app = app
        self._path = path
        self._bounds = bounds  # an `initialize` costs its key a call, as a tool call does

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._is_post(scope):
            await self._app(scope, receive, send)
            return
        body = await body_in_bounds(scope, receive, send)
        if body is None:
            return
        parsed = None
        try:
            if _is_json(scope):  # anything else the SDK refuses as it is
                parsed = types.jsonrpc_message_adapter.validate_json(body, by_name=False)
        except pydantic.ValidationError as exc:
            answer = unreadable_answer(exc).message
            content = answer.model_dump_json(by_alias=True, exclude_unset=True)
            response = Response(content, status_code=400, media_type="application/json")
            await response(scope, receive, send)
            return
        wait = self._initialize_waits(parsed)
        if wait is not None:
            await _too_many_calls(parsed, wait)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self._app(scope, replay, send)

    def _initialize_waits(self, message: types.JSONRPCMessage | None) -> float | None:
        """The seconds to wait if `message` opens a session its key has no call left for."""
        key_id = REQUEST_KEY.get()
        opens = isinstance(message, types.JSONRPCRequest) and message.method == "initialize"
        if not opens or key_id is None or self._bounds is None:
            return None
        return self._bounds.admit(key_id)

    def _is_post(self, scope: Scope) -> bool:
        """Every POST to the path has its body read here, under the deadline and the cap,
        whatever its headers say (a repeated Content-Type must not slip past)."""
        return bool(
            scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == self._path
        )


def _is_json(scope: Scope) -> bool:
    """Read as the SDK reads it: the first Content-Type header given."""
    types_given = [v for k, v in scope["headers"] if k == b"content-type"]
    return bool(types_given) and b"application/json" in types_given[0].lower()


class BodyTooLarge(Exception):
    pass


async def body_in_bounds(scope: Scope, receive: Receive, send: Send) -> bytes | None:
    """The whole body, if it arrives within BODY_SECONDS and holds at most MAX_BODY_BYTES;
    else None, once the refusal (408, 413) is sent, or the client went away."""
    try:
        with anyio.fail_after(BODY_SECONDS):
            return await read_body(scope, receive)
    except TimeoutError:
        message = f"the body must arrive within {BODY_SECONDS:.0f} seconds"
        await refusal(408, message)(scope, receive, send)
    except BodyTooLarge:
        message = f"a request body holds at most {MAX_BODY_BYTES} bytes"
        await refusal(413, message)(scope, receive, send)
    return None


async def read_body(scope: Scope, receive: Receive) -> bytes | None:
    """The whole body, or None if the client went away. Past the cap it is refused as soon
    as that is known (from its declared length, or once that much has come)."""
    declared = dict(scope["headers"]).get(b"content-length", b"0")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise BodyTooLarge
    body, more = bytearray(), True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += message.get("body", b"")
        if len(body) > MAX_BODY_BYTES:
            raise BodyTooLarge
        more = message.get("more_body", False)
    return bytes(body)


def _too_many_calls(message: types.JSONRPCMessage | None, wait: float) -> Response:
    """429 to an `initialize` past its key's bound, with the id and the time to wait."""
    text = (f"This key made more calls than its bound allows (a server's "
            f"`http.calls_per_minute`; opening a session is one): wait {wait} s and send it "
            "again.")  # fmt: skip
    detail = {"error_class": "retryable", "message": text, "retry_after": wait}
    data = types.ErrorData(code=types.INVALID_REQUEST, message=text, data=detail)
    ident = message.id if isinstance(message, types.JSONRPCRequest) else None
    error = types.JSONRPCError(jsonrpc="2.0", id=ident, error=data)
    content = error.model_dump_json(by_alias=True, exclude_unset=True)
    headers = {"retry-after": str(math.ceil(wait))}
    return Response(content, status_code=429, media_type="application/json", headers=headers)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 connection, with a deadline for each request head and a cap on
    how many connections stay open."""

    head_deadline: asyncio.TimerHandle | None = None
    waiting_since: float = 0.0
    head_seconds: ClassVar[float] = HEAD_SECONDS
    max_connections: ClassVar[int] = MAX_CONNECTIONS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_head()
        if len(self.connections) > self.max_connections:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            # Answered before its body came (refused for its key, its share, its size):
            # waiting for the rest would hold the connection for nothing.
            self.transport.close()
        if not self.transport.is_closing():
            self._await_head()

    def _await_head(self) -> None:
        self._stop_waiting()
        self.waiting_since = self.loop.time()
        self.head_deadline = self.loop.call_later(self.head_seconds, self._head_overdue)

    def _stop_waiting(self) -> None:
        if self.head_deadline is not None:
            self.head_deadline.cancel()
            self.head_deadline = None

    @property
    def waiting_for_head(self) -> bool:
        """No request is under way: the connection waits for (the rest of) a request head."""
        return self.conn.their_state is h11.IDLE and (
            self.cycle is None or self.cycle.response_complete
        )

    def _head_overdue(self) -> None:
        self.head_deadline = None
        if self.waiting_for_head and not self.transport.is_closing():
            self.transport.close()

    @property
    def unproven(self) -> bool:
        """A request is under way whose key is not yet known good (keys.KeyFirst marks the
        ones it lets in): closing it loses no one's work, and is what keeps requests
        without a key from holding every connection while they are checked."""
        return self.cycle is not None and not self.cycle.scope.get(ADMITTED, False)

    def _make_room(self) -> None:
        """Close the connection that has waited longest for a head, or whose request's key
        is still unproven (maybe this one)."""
        waiting = [
            c
            for c in self.connections
            if isinstance(c, GuardedH11Protocol)
            and (c.waiting_for_head or c.unproven)
            and not c.transport.is_closing()
        ]
        if not waiting:
            self.transport.close()
            return
        min(waiting, key=lambda c: c.waiting_since).transport.close()


class BesideMCP:
    """`path` (and below it), the HTTP API's paths and the lifespan to the keyed app (MCP
    and the API); every other path to `site` (the web page, which checks its own sessions:
    keys.KeyFirst would refuse a browser)."""

    def __init__(self, mcp_app: ASGIApp, site: ASGIApp, path: str):
        self._mcp = mcp_app
        self._site = site
        self._path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        keyed = path == self._path or path.startswith((self._path + "/", API_PREFIX))
        if scope["type"] != "http" or keyed:
            await self._mcp(scope, receive, send)
        else:
            await self._site(scope, receive, send)


class APIBesideMCP:
    """Once a request's key is known (keys.KeyFirst, shares.KeyShares): the HTTP API's
    paths to `api`, the rest and the lifespan to the MCP app."""

    def __init__(self, mcp_app: ASGIApp, api: ASGIApp):
        self._mcp = mcp_app
        self._api = api

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path", "").startswith(API_PREFIX):
            await self._api(scope, receive, send)
        else:
            await self._mcp(scope, receive, send)


async def serve_http(
    server: PalimpsestMCP,
    *,
    host: str,
    port: int,
    path: str,
    limits: Limits = DEFAULT_LIMITS,
    stateless: bool = False,
    site: ASGIApp | None = None,
    api: ASGIApp | None = None,
) -> None:
    """What the SDK's `run("streamable-http")` does, on guarded connections. `stateless`:
    no MCP session is kept, so a request may reach any of several processes. `site`: the
    app that answers every path but `path` and the API's (the web page), on the same
    connections. `api`: the HTTP API (api/), at API_PREFIX, behind the same keys."""
    import uvicorn

    # The protocol class is uvicorn's to build, per connection: the limits ride on it.
    connection_limits = {
        "head_seconds": limits.head_seconds,
        "max_connections": limits.max_connections,
    }
    protocol = type("GuardedH11Protocol", (GuardedH11Protocol,), connection_limits)

    app = server.streamable_http_app(
        streamable_http_path=path,
        host=host,
        max_request_body_size=MAX_BODY_BYTES,
        stateless_http=stateless,
    )
    verifier = server.verifier
    assert verifier is not None, "an HTTP server is built with `http` (build_server)"
    sessions = None if stateless else server._lowlevel_server._session_manager
    keyed: ASGIApp = AnsweringUnreadableBodies(app, path, server.bounds)
    if api is not None:  # the same key check and share of the server as /mcp
        keyed = APIBesideMCP(keyed, api)
    shares = KeyShares(keyed, verifier.still_valid, sessions, limits)
    logging.getLogger("uvicorn.error").addFilter(QuietRefusals())
    served: ASGIApp = KeyFirst(keyed, verifier, shares)
    if site is not None:
        served = BesideMCP(served, site, path)
    config = uvicorn.Config(
        served,
        host=host,
        port=port,
        http=protocol,
        timeout_keep_alive=limits.keep_alive_seconds,
        backlog=ACCEPT_BATCH,
        # uvicorn would believe X-Forwarded-For/-Proto from any client on 127.0.0.1, i.e.
        # from any user of this machine: the web page's one-time link asks who holds the
        # connection (web/guard.peer_is_this_user), and a proxy's TLS is told by
        # `http.behind_tls`, never by a header.
        proxy_headers=False,
        log_level=server.settings.log_level.lower(),
    )
    await uvicorn.Server(config).serve()
