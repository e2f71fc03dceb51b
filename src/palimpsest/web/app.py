"""The web page as an ASGI app, served beside /mcp by `serve --http` (transport.py).

Each request, in this order, so that nothing is read or run for a stranger:

1. files (`/static/...`) and the sign-in routes need no session; a browser's request that
   another origin's page made (a script, image, frame or fetch) is refused (guard.py);
2. any other request needs a session cookie naming a live session (kept in the store, so
   any process serving it knows it) whose key the store still lets in (sessions.py);
   without one a POST is refused before its body is read;
3. the key's share, as on /mcp: at most `requests_per_key` of its requests under way, and
   a call from its `calls_per_minute` for each page that asks the service (else 429,
   before any body is read);
4. a POST must come from this origin and carry the session's form token (guard.py), and
   its key is checked again once its body is in;
5. the page calls the service acting as the key's holder, in the key's workspace, on the
   server's store threads, and renders its answer (routes.py, pages/).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
from collections import Counter
from collections.abc import Callable, Collection
from concurrent.futures import Executor
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from ..api.status import STATUS
from ..config import DEFAULT_LIMITS
from ..domain.errors import PalimpsestError
from ..mcp.bounds import CallBounds
from ..mcp.keys import ADMITTED, KeyVerifier
from ..service import Service
from ..service.access import KEY_PREFIX
from . import forms, guard
from .forms import Refused
from .pages import common
from .pages.common import Viewer
from .routes import Pages, Shown, Signed, html_page
from .sessions import LocalLink, WebSessions

logger = logging.getLogger("palimpsest.web")
STATIC = {"site.css": "text/css; charset=utf-8", "site.js": "text/javascript; charset=utf-8"}
ENDED = (
    "Your session has ended: its key was revoked or has expired, or its user was "
    "removed, or it was idle too long. Sign in again with a valid key."
)


class Site:
    def __init__(
        self,
        service: Service,
        verifier: KeyVerifier,
        threads: Executor,
        sessions: WebSessions,
        *,
        behind_tls: bool = False,
        local_link: LocalLink | None = None,
        local_hosts: Collection[str] = (),
        bounds: CallBounds | None = None,
        requests_per_key: int = DEFAULT_LIMITS.requests_per_key,
    ):
        self.service = service
        self.verifier = verifier
        self.threads = threads
        self.sessions = sessions
        self.behind_tls = behind_tls
        self.local_link = local_link
        self.local_hosts = {h.lower() for h in local_hosts}  # the Host a one-time link needs
        # A key's share, as on /mcp: its calls a minute (the same buckets as its tool
        # calls) and its requests under way at once (counted on the event loop: no lock).
        self.bounds = bounds
        self.requests_per_key = requests_per_key
        self._under_way: Counter[str] = Counter()
        self.pages = Pages(self._run, sessions)
        self._files = {
            name: (resources.files(__package__) / "static" / name).read_bytes() for name in STATIC
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        try:
            response = await self._answer(request)
        except Shown as shown:
            response = shown.response
        except Refused as refused:
            response = html_page(common.problem(None, refused.status, refused.body), refused.status)
            response.headers.update(refused.headers)
        except Exception:
            logger.exception("the web page failed")
            body = {
                "error_class": "internal",
                "message": "The server failed unexpectedly; "
                "it logged the details. Retry once; if it fails again, report it.",
            }
            response = html_page(common.problem(None, 500, body), 500)
        response.headers.update(guard.HEADERS)
        await response(scope, receive, send)

    async def _answer(self, request: Request) -> Response:
        path, method = request.url.path, request.method
        secure = guard.is_secure(request, self.behind_tls)
        if path.startswith("/static/"):
            return self._file(path.removeprefix("/static/"), method)
        if guard.made_by_another_page(request):  # before any session is looked up
            raise Refused(
                403,
                "forbidden",
                "This page opens only on its own, not inside or from another site's page.",
            )
        if path == "/sign-in/local":
            return await self._local_sign_in(request, secure)
        if path == "/sign-in" and method == "POST":
            return await self._sign_in(request, secure)
        signed = await self._signed(request, secure)
        if signed is None:
            return self._not_signed_in(request, secure)
        key_id = signed.session.key_id
        if key_id is None:  # the local owner is not bounded, as on /mcp
            return await self._answer_signed(request, signed, secure)
        if self._under_way[key_id] >= self.requests_per_key:  # before any body is read
            raise Refused(
                429,
                "retryable",
                f"This key has {self.requests_per_key} requests under way, as many as a key "
                "may (`http.requests_per_key`): wait for one to finish and send it again.",
                {"retry-after": "1"},
            )
        self._under_way[key_id] += 1
        try:
            return await self._answer_signed(request, signed, secure)
        finally:
            self._under_way[key_id] -= 1
            if not self._under_way[key_id]:
                del self._under_way[key_id]

    async def _answer_signed(self, request: Request, signed: Signed, secure: bool) -> Response:
        request.scope[ADMITTED] = True  # its connection is no longer a stranger's
        method = request.method
        if method == "POST":
            if not guard.same_origin(request, secure):  # before the body, as for a stranger
                raise Refused(
                    403,
                    "forbidden",
                    "A change must come from this site's own pages: "
                    "this request came from another origin, or named none.",
                )
            if request.url.path != "/sign-out":
                self._spend_a_call(signed)
            form = await self._checked_form(request, signed)
            # The key again, now that the body is in: one revoked while it arrived acts
            # no more (nor one whose role changed meanwhile acts with its old role).
            again = await self._signed(request, secure)
            if again is None:
                return self._not_signed_in(request, secure)
            return await self.pages.post(request, again, form, secure)
        if method not in ("GET", "HEAD"):
            raise Refused(405, "validation", "This page is read with GET and changed with POST.")
        self._spend_a_call(signed)
        return await self.pages.get(request, signed)

    def _spend_a_call(self, signed: Signed) -> None:
        """A page that asks the service costs its key a call, from the bucket its tool
        calls on /mcp draw from (`http.calls_per_minute`)."""
        key_id = signed.session.key_id
        wait = self.bounds.admit(key_id) if self.bounds and key_id else None
        if wait is not None:
            raise Refused(
                429,
                "retryable",
                f"This key made as many calls as it may a minute (`http.calls_per_minute`): "
                f"try again in {wait:g} seconds.",
                {"retry-after": str(max(1, math.ceil(wait)))},
            )

    # -- signing in and out -------------------------------------------------------------

    async def _sign_in(self, request: Request, secure: bool) -> Response:
        if not guard.same_origin(request, secure):  # before the body: a stranger's post
            raise Refused(403, "forbidden", "A sign-in must come from this page's own form.")
        form = await forms.read_form(request)
        key = form.get("key", "").strip()
        # Only a key of ours: the stand-in for "no key" (keys.KEYLESS) signs no one in here.
        access = await self.verifier.verify_token(key) if key.startswith(KEY_PREFIX) else None
        if access is None or not access.claims:
            has_keys = await self._run(self.service.has_keys)
            message = (
                "That key is not one this server lets in: unknown, revoked or expired, "
                "or its user was removed. Check it, or ask an owner for a new one."
                if has_keys
                else "This store has no keys yet: on its machine, open the "
                "page with `palimpsest web`, or make a key (`palimpsest key create "
                "--user NAME`)."
            )
            return html_page(common.sign_in(message, "error"), 401)
        wait = self.bounds.admit(access.client_id) if self.bounds else None
        if wait is not None:  # a flood of sign-ins spends the key's calls, as its requests do
            raise Refused(429, "retryable", "This key made as many calls as it may a minute "
                          f"(`http.calls_per_minute`): try again in {wait:g} seconds.",
                          {"retry-after": str(max(1, math.ceil(wait)))})  # fmt: skip
        return await self._open_session(request, secure, access.client_id)

    async def _local_sign_in(self, request: Request, secure: bool) -> Response:
        """`palimpsest web`'s one-time link: only on a loopback Host of this server (a name
        rebound to 127.0.0.1 by another site does not pass), never from another site, and
        only over a connection of this server's own user (guard.peer_is_this_user)."""
        host = request.headers.get("host", "").lower()
        origin = request.headers.get("origin")
        fetched_from = request.headers.get("sec-fetch-site", "none")
        token = request.query_params.get("token", "")
        if (
            self.local_link is None
            or host not in self.local_hosts
            or len(request.headers.getlist("host")) != 1
            or (origin is not None and not guard.same_origin(request, secure))
            or fetched_from not in ("none", "same-origin")
            or not self.local_link.holds(token)
            or not guard.peer_is_this_user(request.scope.get("client"), request.scope.get("server"))
            or not self.local_link.take(token)
        ):
            message = (
                "This sign-in link is used, expired or was not opened from this "
                "machine: run `palimpsest web` again for a new one."
            )
            return html_page(common.sign_in(message, "error"), 403)
        return await self._open_session(request, secure, None)

    async def _open_session(self, request: Request, secure: bool, key_id: str | None) -> Response:
        """A new session, always a new cookie (none chosen before sign-in is kept); the
        session the browser held till now ends, so no copy of its cookie outlives it."""
        try:
            await self._run(self.sessions.end, guard.session_cookie(request, secure))
            cookie = await self._run(self.sessions.open, key_id)
        except PalimpsestError as error:  # a busy store, say: answered as the service says
            status = STATUS.get(error.error_class, 400)
            return html_page(common.problem(None, status, error.to_dict()), status)
        if cookie is None:  # its key was revoked since it was checked
            return html_page(common.sign_in("That key is no longer let in.", "error"), 401)
        return _signed_in(cookie, secure)

    def _not_signed_in(self, request: Request, secure: bool) -> Response:
        given = guard.session_cookie(request, secure)
        if request.method == "POST":  # answered before its body is read; nothing runs
            response = html_page(common.sign_in("Sign in first.", "error"), 401)
        elif given:
            response = html_page(common.sign_in(ENDED, "error"), 401)
        else:
            response = html_page(common.sign_in(), 200 if request.url.path == "/" else 401)
        if given:
            response.headers.append("set-cookie", guard.clear_cookie(secure))
        return response

    async def _signed(self, request: Request, secure: bool) -> Signed | None:
        """The request's live session, its key checked against the store now."""
        cookie = guard.session_cookie(request, secure)
        session = await self._run(self.sessions.find, cookie) if cookie else None
        if cookie is None or session is None:
            return None
        if session.principal is None:  # the local owner, signed in by `palimpsest web`'s link
            # Only for this user's connections: its cookie is sent to every server on
            # this host, whatever the port, and another user's may keep it.
            scope = request.scope
            if not guard.peer_is_this_user(scope.get("client"), scope.get("server")):
                return None
            service = self.service
            viewer = Viewer(service.actor, service.role, service.workspace, session.csrf)
            return Signed(cookie, session, viewer, service)
        principal = session.principal  # its key's record checked as the session was found
        service = self.service.acting_as(principal)
        viewer = Viewer(principal.actor, principal.role, service.workspace, session.csrf)
        return Signed(cookie, session, viewer, service)

    async def _checked_form(self, request: Request, signed: Signed) -> dict[str, str]:
        form = await forms.read_form(request, forms.SIGNED_FORM_BYTES)
        if not guard.token_matches(form.get("csrf"), signed.session.csrf):
            raise Refused(
                403,
                "forbidden",
                "This form is not from this session's pages: reload the page and send it again.",
            )
        return form

    async def _run(self, call: Callable[..., Any], *args: Any) -> Any:
        """On the server's store threads: the service is synchronous."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.threads, functools.partial(call, *args))

    def _file(self, name: str, method: str) -> Response:
        if name not in STATIC or method not in ("GET", "HEAD"):
            raise Refused(404, "not_found", "There is no such file.")
        return Response(
            self._files[name], media_type=STATIC[name], headers={"cache-control": "no-cache"}
        )


def _signed_in(cookie: str, secure: bool) -> Response:
    response = RedirectResponse("/", status_code=303)
    response.headers.append("set-cookie", guard.set_cookie(cookie, secure))
    return response
