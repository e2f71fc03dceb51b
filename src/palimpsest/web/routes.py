"""The site's pages: which path answers what, each reading its request and asking the
service (acting as the signed-in person) on the store threads, then rendering the answer
(pages/). A refusal of the service becomes its page here (`Shown`); who may ask was
settled by app.py before any of this runs."""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..api.status import STATUS
from ..domain.errors import PalimpsestError
from ..service import Service
from . import actions, forms, guard
from .forms import Refused
from .pages import common, doctor, memory_forms, review, search
from .pages import memory as memory_page
from .pages import notebooks as notebooks_page
from .pages import sessions as sessions_page
from .pages.common import Viewer
from .sessions import WebSession, WebSessions

MEMORY_PATH = re.compile(r"/memories/([^/]+)(?:/(verify|revise|retire|revert|forget))?")
SESSION_PATH = re.compile(r"/sessions/(.+)", re.DOTALL)  # an id may hold / and line breaks
NOTEBOOK_PATH = re.compile(r"/notebooks/(.+)", re.DOTALL)  # a name may hold / and line breaks
DAYS = re.compile(r"[0-9]{1,4}")  # a number of days, as the service takes it (else refused)

T = TypeVar("T")


@dataclass
class Signed:
    """A request's live session, who it acts as, and the service acting so."""

    cookie: str
    session: WebSession
    viewer: Viewer
    service: Service


class Pages:
    """GET and POST of a signed-in person: `run` calls the service on the store threads."""

    def __init__(self, run: Callable[..., Awaitable[Any]], sessions: WebSessions):
        self._run = run
        self.sessions = sessions

    async def get(self, request: Request, signed: Signed) -> Response:
        path = request.url.path
        if path == "/":
            return await self._search(request, signed)
        found = MEMORY_PATH.fullmatch(path)
        if found and not found[2]:
            return await self._memory(found[1], signed)
        if path == "/notebooks":
            overview = await self._served(signed, functools.partial(signed.service.notebook_list))
            return html_page(notebooks_page.notebooks(signed.viewer, overview))
        # The path as sent: `url.path` drops the tabs and line breaks a name may hold.
        found = NOTEBOOK_PATH.fullmatch(request.scope["path"])
        if found:
            return await self._notebook(request, found[1], signed)
        if path == "/sessions" and "id" in request.query_params:  # `.` and `..` (session_href)
            return await self._session(request.query_params["id"], signed)
        if path == "/sessions":
            answer = await self._served(signed, functools.partial(signed.service.served))
            return html_page(sessions_page.sessions(signed.viewer, answer))
        found = SESSION_PATH.fullmatch(request.scope["path"])  # as sent, line breaks and all
        if found:
            return await self._session(found[1], signed)
        if path == "/review/duplicates":
            return await self._duplicates(request, signed)
        if path == "/review/disputes":
            listing = functools.partial(signed.service.dispute, action="list", limit=100)
            listed = await self._served(signed, listing)
            return html_page(review.disputes(signed.viewer, listed))
        if path in ("/review/stale", "/review/doctor"):
            # Doctor lists both: no other read lists the memories possibly stale.
            report = await self._served(signed, functools.partial(signed.service.doctor))
            page = doctor.stale if path == "/review/stale" else doctor.doctor
            return html_page(page(signed.viewer, report))
        raise Refused(404, "not_found", "There is no page here: start from the search.")

    async def post(
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
            # The memory page's Verify, read the same way: the service refuses a viewer,
            # checks the id and asks what was checked.
            call = actions.verify(signed.service, form.get("id", "").strip(), form)
            await self._served(signed, call)
            return RedirectResponse("/review/stale", status_code=303)
        if path in ("/review/doctor/retry", "/review/doctor/drop"):
            return await self._settle_queued(signed, path.rsplit("/", 1)[1], form)
        raise Refused(404, "not_found", "Nothing is sent here: start from the search.")

    async def _search(self, request: Request, signed: Signed) -> Response:
        given = {k: v.strip() for k, v in request.query_params.items() if k in forms.SEARCH_FIELDS}
        answer = None
        if any(given.values()):
            call = functools.partial(signed.service.recall, **forms.recall_arguments(given))
            answer = await self._served(signed, call)
        return html_page(search.search(signed.viewer, given, answer))

    async def _session(self, name: str, signed: Signed) -> Response:
        call = functools.partial(signed.service.served, session=name, limit=1000)
        answer = await self._served(signed, call)
        return html_page(sessions_page.served_session(signed.viewer, answer))

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
        return html_page(review.duplicates(signed.viewer, names, chosen, whole, answer))

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

    async def _settle_queued(self, signed: Signed, action: str, form: dict[str, str]) -> Response:
        """On a replica, a write the server did not take: sent again (checked anew), or
        given up with why. The service finds the item in this workspace's queue only."""
        queued = form.get("queued", "").strip()
        call: Callable[[], object]
        if action == "retry":
            call = functools.partial(signed.service.retry_queued, id=queued)
        else:
            because = form.get("because", "").strip() or None
            call = functools.partial(signed.service.drop_queued, id=queued, because=because)
        await self._served(signed, call, back="/review/doctor")
        return RedirectResponse("/review/doctor", status_code=303)

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
        return html_page(page)

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
        return html_page(notebooks_page.notebook(signed.viewer, rules, activity))

    async def _memory(self, memory_id: str, signed: Signed) -> Response:
        inspected = await self._served(
            signed, functools.partial(signed.service.inspect, id=memory_id)
        )
        if "tombstone" in inspected:
            raise _forgotten(memory_id)
        call = functools.partial(signed.service.history, id=memory_id, limit=1000)
        history = await self._served(signed, call)
        return html_page(memory_page.memory(signed.viewer, inspected, history.get("events", [])))

    async def _served(self, signed: Signed, call: Callable[[], T], back: str | None = None) -> T:
        """The service's answer, or its refusal shown as a page with its error_class (and a
        way `back` to the page its form was on)."""
        try:
            answer: T = await self._run(call)
            return answer
        except PalimpsestError as error:
            status = STATUS.get(error.error_class, 400)
            raise Shown(
                html_page(common.problem(signed.viewer, status, error.to_dict(), back), status)
            ) from None


class Shown(Exception):
    """A page already made (a refusal with its viewer): answered as it is."""

    def __init__(self, response: Response):
        super().__init__("shown")
        self.response = response


def _forgotten(memory_id: str) -> Refused:
    return Refused(404, "not_found", f"{memory_id} was forgotten: only its tombstone is left.")


def html_page(html: str, status: int = 200) -> Response:
    return Response(
        html,
        status_code=status,
        media_type="text/html; charset=utf-8",
        headers={"cache-control": "no-store"},
    )
