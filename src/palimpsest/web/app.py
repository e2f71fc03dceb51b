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
   server's store threads, and renders its answer (pages/).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Collection
from concurrent.futures import Executor
from dataclasses import dataclass
from importlib import resources
from typing import Any, TypeVar

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
from . import actions, forms, guard
from .forms import Refused
from .pages import common, doctor, memory_forms, review, search
from .pages import memory as memory_page
from .pages import notebooks as notebooks_page
from .pages import sessions as sessions_page
from .pages.common import Viewer
from .sessions import LocalLink, WebSession, WebSessions

logger = logging.getLogger("palimpsest.web")
STATIC = {"site.css": "text/css; charset=utf-8", "site.js": "text/javascript; charset=utf-8"}
MEMORY_PATH = re.compile(r"/memories/([^/]+)(?:/(verify|revise|retire|revert|forget))?")
SESSION_PATH = re.compile(r"/sessions/(.+)", re.DOTALL)  # an id may hold / and line breaks
NOTEBOOK_PATH = re.compile(r"/notebooks/(.+)", re.DOTALL)  # a name may hold / and line breaks
DAYS = re.compile(r"[0-9]{1,4}")  # a number of days, as the service takes it (else refused)
ENDED = (
    "Your session has ended: its key was revoked or has expired, or its user was "
    "removed, or it was idle too long. Sign in again with a valid key."
)

T = TypeVar("T")


@dataclass
class Signed:
    """A request's live session, who it acts as, and the service acting so."""

    cookie: str
    session: WebSession
    viewer: Viewer
    service: Service


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
        self._files = {
            name: (resources.files(__package__) / "static" / name).read_bytes() for name in STATIC
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        try:
            response = await self._answer(request)
        except _Shown as shown:
            response = shown.response
        except Refused as refused:
            response = _page(common.problem(None, refused.status, refused.body), refused.status)
            response.headers.update(refused.headers)
        except Exception:
            logger.exception("the web page failed")
            body = {
                "error_class": "internal",
                "message": "The server failed unexpectedly; "
                "it logged the details. Retry once; if it fails again, report it.",
            }
            response = _page(common.problem(None, 500, body), 500)
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
            return await self._post(request, again, form, secure)
        if method not in ("GET", "HEAD"):
            raise Refused(405, "validation", "This page is read with GET and changed with POST.")
        self._spend_a_call(signed)
        return await self._get(request, signed)

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
            return _page(common.sign_in(message, "error"), 401)
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
            return _page(common.sign_in(message, "error"), 403)
        return await self._open_session(request, secure, None)

    async def _open_session(self, request: Request, secure: bool, key_id: str | None) -> Response:
        """A new session, always a new cookie (none chosen before sign-in is kept); the
        session the browser held till now ends, so no copy of its cookie outlives it."""
        try:
            await self._run(self.sessions.end, guard.session_cookie(request, secure))
            cookie = await self._run(self.sessions.open, key_id)
        except PalimpsestError as error:  # a busy store, say: answered as the service says
            status = STATUS.get(error.error_class, 400)
            return _page(common.problem(None, status, error.to_dict()), status)
        if cookie is None:  # its key was revoked since it was checked
            return _page(common.sign_in("That key is no longer let in.", "error"), 401)
        return _signed_in(cookie, secure)

    def _not_signed_in(self, request: Request, secure: bool) -> Response:
        given = guard.session_cookie(request, secure)
        if request.method == "POST":  # answered before its body is read; nothing runs
            response = _page(common.sign_in("Sign in first.", "error"), 401)
        elif given:
            response = _page(common.sign_in(ENDED, "error"), 401)
        else:
            response = _page(common.sign_in(), 200 if request.url.path == "/" else 401)
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

    # -- pages --------------------------------------------------------------------------

    async def _get(self, request: Request, signed: Signed) -> Response:
        path = request.url.path
        if path == "/":
            return await self._search(request, signed)
        found = MEMORY_PATH.fullmatch(path)
        if found and not found[2]:
            return await self._memory(found[1], signed)
        if path == "/notebooks":
            overview = await self._served(signed, functools.partial(signed.service.notebook_list))
            return _page(notebooks_page.notebooks(signed.viewer, overview))
        # The path as sent: `url.path` drops the tabs and line breaks a name may hold.
        found = NOTEBOOK_PATH.fullmatch(request.scope["path"])
        if found:
            return await self._notebook(request, found[1], signed)
        if path == "/sessions" and "id" in request.query_params:  # `.` and `..` (session_href)
            return await self._session(request.query_params["id"], signed)
        if path == "/sessions":
            answer = await self._served(signed, functools.partial(signed.service.served))
            return _page(sessions_page.sessions(signed.viewer, answer))
        found = SESSION_PATH.fullmatch(request.scope["path"])  # as sent, line breaks and all
        if found:
            return await self._session(found[1], signed)
        if path == "/review/duplicates":
            return await self._duplicates(request, signed)
        if path == "/review/disputes":
            listing = functools.partial(signed.service.dispute, action="list", limit=100)
            listed = await self._served(signed, listing)
            return _page(review.disputes(signed.viewer, listed))
        if path in ("/review/stale", "/review/doctor"):
            # Doctor lists both: no other read lists the memories possibly stale.
            report = await self._served(signed, functools.partial(signed.service.doctor))
            page = doctor.stale if path == "/review/stale" else doctor.doctor
            return _page(page(signed.viewer, report))
        raise Refused(404, "not_found", "There is no page here: start from the search.")

    async def _post(
        self, request: Request, signed: Signed, form: dict[str, str], secure: bool
    ) -> Response:
        path = request.url.path
        if path == "/sign-out":
            await self._run(self.sessions.end, signed.cookie)
            response = RedirectResponse("/", status_code=303)
            response.headers.append("set-cookie", guard.clear_cookie(secure))
            return response
        found = MEMORY_PATH.fullmatch(path)
        if found and found[2] == "forget":
            return await self._forget(found[1], signed, form)
        if found and found[2]:
            # verify, revise, retire, revert: the form as the service's call (actions.py)
            here = common.memory_href(found[1])
            call = actions.ACTIONS[found[2]](signed.service, found[1], form)
            await self._served(signed, call, back=here)
            return RedirectResponse(here, status_code=303)
        if path == "/sessions/forget":
            session = form.get("session", "")
            because = form.get("because", "").strip() or None
            call = functools.partial(signed.service.forget_served, session=session, because=because)
            await self._served(signed, call, back=common.session_href(session))
            return RedirectResponse("/sessions", status_code=303)
        if path == "/review/duplicates/merge":
            return await self._merge(signed, form)
        if path == "/review/disputes/rule":
            return await self._rule(signed, form)
        if path == "/review/stale/verify":
            # As the memory page's Verify: the service refuses a viewer, checks the id and
            # asks the reason (what was checked), as of every change made from the page.
            memory_id, note = form.get("id", "").strip(), form.get("note", "").strip() or None
            call = functools.partial(
                signed.service.revise_with_reason, id=memory_id, status="verified", note=note
            )
            await self._served(signed, call)
            return RedirectResponse("/review/stale", status_code=303)
        raise Refused(404, "not_found", "Nothing is sent here: start from the search.")

    async def _search(self, request: Request, signed: Signed) -> Response:
        given = {k: v.strip() for k, v in request.query_params.items() if k in forms.SEARCH_FIELDS}
        answer = None
        if any(given.values()):
            call = functools.partial(signed.service.recall, **forms.recall_arguments(given))
            answer = await self._served(signed, call)
        return _page(search.search(signed.viewer, given, answer))

    async def _session(self, name: str, signed: Signed) -> Response:
        call = functools.partial(signed.service.served, session=name, limit=1000)
        answer = await self._served(signed, call)
        return _page(sessions_page.served_session(signed.viewer, answer))

    async def _duplicates(self, request: Request, signed: Signed) -> Response:
        """A notebook's groups by default: the whole workspace's take seconds at 10,000
        memories, so they are asked for on purpose (`all=1`)."""
        chosen = request.query_params.get("notebook", "").strip()
        whole = request.query_params.get("all") == "1" and not chosen
        listed = await self._served(signed, functools.partial(signed.service.notebooks))
        names = sorted(nb["name"] for nb in listed.get("notebooks", []))
        answer = None
        if chosen or whole:
            call = functools.partial(signed.service.duplicates, notebook=chosen or None)
            answer = await self._served(signed, call)
        return _page(review.duplicates(signed.viewer, names, chosen, whole, answer))

    async def _merge(self, signed: Signed, form: dict[str, str]) -> Response:
        """Keep the one picked; the rest of its group retire as superseded by it. The
        service decides who may (a viewer's post is refused) and checks each id."""
        keep = form.get("keep", "").strip()
        retired = [i for i in form.get("group", "").split() if i != keep]
        because = form.get("because", "").strip() or None
        call = functools.partial(signed.service.merge, keep=keep, ids=retired, because=because)
        merged = await self._served(signed, call)
        return RedirectResponse(common.memory_href(merged["id"]), status_code=303)

    async def _rule(self, signed: Signed, form: dict[str, str]) -> Response:
        """A ruling as the dispute operation takes it (`dispute`, `holds`, `reason`, and
        `evidence`, `because` when given); the page then opens the memory that holds."""
        given = {name: form.get(name, "").strip() or None
                 for name in ("dispute", "holds", "reason", "evidence", "because")}  # fmt: skip
        call = functools.partial(
            signed.service.dispute,
            action="rule",
            dispute=given["dispute"],
            holds=given["holds"],
            reason=given["reason"],
            evidence=given["evidence"],
            because=given["because"],
        )
        ruled = await self._served(signed, call)
        return RedirectResponse(common.memory_href(ruled.get("holds", "")), status_code=303)

    async def _forget(self, memory_id: str, signed: Signed, form: dict[str, str]) -> Response:
        """Two steps: unconfirmed, forget's dry run names what it would erase (nothing is);
        confirmed, it erases, and the memory's address then says it was forgotten."""
        here = common.memory_href(memory_id)
        call, confirmed = actions.forget(signed.service, memory_id, form)
        answer = await self._served(signed, call, back=here)
        if confirmed:
            return RedirectResponse(here, status_code=303)
        inspect = functools.partial(signed.service.inspect, id=memory_id)
        inspected = await self._served(signed, inspect, back=here)
        if "tombstone" in inspected:  # forgotten already (a scrub it finished, or a race)
            raise _forgotten(memory_id)
        page = memory_forms.forget_confirmation(
            signed.viewer,
            inspected["memory"],
            dict(answer["results"][0]),
            form.get("because", "").strip(),
            form.get("expected_version", "").strip() or None,
        )
        return _page(page)

    async def _notebook(self, request: Request, name: str, signed: Signed) -> Response:
        """Its rules and refused commands, and its activity over `days` (30 by default);
        what is no number of days goes to the service as it is, which refuses it."""
        given = request.query_params.get("days", "30")
        days: Any = int(given) if DAYS.fullmatch(given) else given
        rules = await self._served(
            signed, functools.partial(signed.service.notebook_rules, notebook=name)
        )
        activity = await self._served(
            signed, functools.partial(signed.service.activity, notebook=name, days=days)
        )
        return _page(notebooks_page.notebook(signed.viewer, rules, activity))

    async def _memory(self, memory_id: str, signed: Signed) -> Response:
        inspected = await self._served(
            signed, functools.partial(signed.service.inspect, id=memory_id)
        )
        if "tombstone" in inspected:
            raise _forgotten(memory_id)
        call = functools.partial(signed.service.history, id=memory_id, limit=1000)
        history = await self._served(signed, call)
        return _page(memory_page.memory(signed.viewer, inspected, history.get("events", [])))

    async def _served(self, signed: Signed, call: Callable[[], T], back: str | None = None) -> T:
        """The service's answer, or its refusal shown as a page with its error_class (and a
        way `back` to the page its form was on)."""
        try:
            answer: T = await self._run(call)
            return answer
        except PalimpsestError as error:
            status = STATUS.get(error.error_class, 400)
            raise _Shown(
                _page(common.problem(signed.viewer, status, error.to_dict(), back), status)
            ) from None

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


class _Shown(Exception):
    """A page already made (a refusal with its viewer): answered as it is."""

    def __init__(self, response: Response):
        super().__init__("shown")
        self.response = response


def _forgotten(memory_id: str) -> Refused:
    return Refused(404, "not_found", f"{memory_id} was forgotten: only its tombstone is left.")


def _signed_in(cookie: str, secure: bool) -> Response:
    response = RedirectResponse("/", status_code=303)
    response.headers.append("set-cookie", guard.set_cookie(cookie, secure))
    return response


def _page(html: str, status: int = 200) -> Response:
    return Response(
        html,
        status_code=status,
        media_type="text/html; charset=utf-8",
        headers={"cache-control": "no-store"},
    )
