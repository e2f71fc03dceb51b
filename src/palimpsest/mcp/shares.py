"""What one key may hold of an HTTP server: its share of requests, streams and sessions.

A key's holder may open sessions and event streams as fast as it likes, and each lives
until it is closed or idle for half an hour; one key could so take every session and
every connection the server has, and keep them after it was revoked. Here, per key and
per server process:

- at most `requests_per_key` requests under way at once, streams included; past it a
  request is answered 429 with `Retry-After`, so other keys still find connections;
- at most `streams_per_key` event streams (GET): past it a new one is answered 429;
- at most `sessions_per_key` MCP sessions: a new one closes that key's least recently
  used (the one its holder most likely forgot: a client that crashed never says goodbye);
- every RECHECK_SECONDS the keys holding any of these are checked again against the
  store: a key revoked or expired, or whose user was removed, loses them all at once.

Everything here runs on the server's event loop: no locks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..config import DEFAULT_LIMITS, Limits
from .refusals import API_PREFIX, refusal, unauthorized

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

logger = logging.getLogger("palimpsest.mcp")
RECHECK_SECONDS = 2.0  # how soon a revoked key loses its sessions, streams and requests
SESSION_HEADER = b"mcp-session-id"
# The id of the key the current request came with (None: the local owner, no keys yet).
REQUEST_KEY: ContextVar[str | None] = ContextVar("request_key", default=None)


@dataclass(eq=False)
class _Request:
    stream: bool  # a GET: an event stream that stays open
    cancel: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    ended: bool = False  # ended by us (its key revoked): no longer counted, still unwinding

    def end(self) -> None:
        self.ended = True
        self.cancel.cancel()


@dataclass
class _Share:
    token: str  # the key itself, kept to check it again (its id alone cannot be checked)
    requests: list[_Request] = field(default_factory=list)  # oldest first
    sessions: dict[str, None] = field(default_factory=dict)  # least recently used first
    taken_back: bool = False  # its key was found revoked: it holds nothing more

    def live(self, stream: bool | None = None) -> list[_Request]:
        return [r for r in self.requests if not r.ended and stream in (None, r.stream)]


class KeyShares:
    """The ASGI step that holds each key to its share (after the key is known)."""

    def __init__(
        self,
        app: ASGIApp,
        still_valid: Callable[[str], bool],
        sessions: StreamableHTTPSessionManager | None,
        limits: Limits = DEFAULT_LIMITS,
    ):
        self._app = app
        self._still_valid = still_valid  # run on a worker thread: it reads the store
        self._manager = sessions  # None when stateless: there are no sessions to bound
        self._limits = limits
        self._shares: dict[str, _Share] = {}
        self._watcher: asyncio.Task[None] | None = None

    async def serve(
        self, key_id: str, token: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        share = self._shares.setdefault(key_id, _Share(token))
        share.token = token
        # A GET on /mcp is an event stream; one of the HTTP API (its document) is not.
        stream = scope["method"] == "GET" and not scope["path"].startswith(API_PREFIX)
        refused = self._past_share(share, stream)
        if refused is not None:
            retry = {"retry-after": "1"}
            await refusal(429, refused, error_class="retryable", headers=retry)(
                scope, receive, send
            )
            return
        session = _header(scope, SESSION_HEADER)
        if session is not None and session in share.sessions:
            share.sessions[session] = share.sessions.pop(session)  # now the most recent
        request = _Request(stream)
        share.requests.append(request)
        self._watch()
        answer = _Answer(send, lambda opened: self._opened(share, opened), session is None)
        named = REQUEST_KEY.set(key_id)
        try:
            with request.cancel:
                await self._app(scope, receive, answer.send)
        finally:
            share.requests.remove(request)
            REQUEST_KEY.reset(named)
        if request.cancel.cancelled_caught:
            await answer.finish(scope)

    def _past_share(self, share: _Share, stream: bool) -> str | None:
        """Why a new request of this key is refused, if it is."""
        if stream and len(share.live(stream=True)) >= self._limits.streams_per_key:
            # Refused rather than displacing the oldest: clients reopen a stream that ends,
            # so a few sharing one key would displace each other for ever.
            return (f"this key holds {self._limits.streams_per_key} event streams, as many as "
                    "a key may (`http.streams_per_key`): close one first")  # fmt: skip
        if len(share.live()) >= self._limits.requests_per_key:
            return (f"this key has {self._limits.requests_per_key} requests under way, as many "
                    "as a key may (`http.requests_per_key`): wait for one to finish and send "
                    "it again")  # fmt: skip
        return None

    def _opened(self, share: _Share, session: str) -> None:
        """A request of this key opened `session`: past the key's bound, its least recently
        used one is closed."""
        if share.taken_back:  # opened as its key was revoked: it is no one's to use
            self._close_session(session)
            return
        share.sessions[session] = None
        self._forget_closed(share)
        while len(share.sessions) > self._limits.sessions_per_key:
            oldest = next(iter(share.sessions))
            del share.sessions[oldest]
            self._close_session(oldest)

    def _forget_closed(self, share: _Share) -> None:
        """Drop the sessions that ended on their own (idle, closed by the client)."""
        open_ = self._open_sessions()
        for session in [s for s in share.sessions if s not in open_]:
            del share.sessions[session]

    def _open_sessions(self) -> Collection[str]:
        # The SDK's own table of sessions; it offers no other way to list or close one.
        return self._manager._server_instances if self._manager else ()

    def _close_session(self, session: str) -> None:
        transport = self._manager._server_instances.get(session) if self._manager else None
        if transport is not None:  # its own task then forgets it (see the SDK's manager)
            asyncio.get_running_loop().create_task(transport.terminate())

    def _watch(self) -> None:
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.get_running_loop().create_task(self._recheck())

    async def _recheck(self) -> None:
        """While any key holds anything, check those keys again every RECHECK_SECONDS."""
        while self._shares:
            await anyio.sleep(RECHECK_SECONDS)
            for key_id, share in list(self._shares.items()):
                self._forget_closed(share)
                if not share.requests and not share.sessions:
                    del self._shares[key_id]
            held = {key_id: share.token for key_id, share in self._shares.items()}
            try:
                revoked = await anyio.to_thread.run_sync(self._revoked, held)
            except Exception:  # the store is unreachable: take nothing back, try again
                logger.warning("could not check the keys holding sessions", exc_info=True)
                continue
            for key_id in revoked:
                self._take_back(key_id)

    def _revoked(self, held: dict[str, str]) -> list[str]:
        return [key_id for key_id, token in held.items() if not self._still_valid(token)]

    def _take_back(self, key_id: str) -> None:
        share = self._shares.pop(key_id, None)
        if share is None:
            return
        share.taken_back = True
        for request in share.requests:
            request.end()
        for session in share.sessions:
            self._close_session(session)


class _Answer:
    """The response as it goes out: tells when it opens a session, and can be finished
    cleanly when its request is cut short (a stream ends as a stream ends)."""

    def __init__(self, send: Send, opened: Callable[[str], None], may_open: bool):
        self._send = send
        self._opened = opened
        self._may_open = may_open  # the request named no session: it may open one
        self.started = self.complete = False

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            session = _header(message, SESSION_HEADER)
            if self._may_open and session is not None and message["status"] < 400:
                self._opened(session)
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            self.complete = True
        await self._send(message)

    async def finish(self, scope: Scope) -> None:
        if self.complete:
            return
        if not self.started:
            message = "the key was revoked while the request was under way"
            with anyio.CancelScope(shield=True):
                await unauthorized(message)(scope, _never, self._send)
            return
        with anyio.CancelScope(shield=True):
            await self._send({"type": "http.response.body", "body": b"", "more_body": False})


async def _never() -> Message:
    raise RuntimeError("a refusal reads no request")


def _header(holder: Scope | Message, name: bytes) -> str | None:
    found = next((v for k, v in holder.get("headers", []) if k.lower() == name), None)
    return found.decode("latin-1") if found is not None else None
