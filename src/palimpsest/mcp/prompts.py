"""The MCP prompts: what a person starts by hand, which clients list as slash commands.

Each prompt reads the service, as the caller (over HTTP, the request's key holder, as the
tools do) and on a store thread, and renders the answer as one user message. A refusal
becomes a JSON-RPC error carrying the service's message, which says what to change, and
`to_dict()` as its data: the SDK would answer only "Error rendering prompt". A key's
prompts count against its call bound (`bounds`), as its tool calls do.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Annotated, TypeVar

from mcp.server.mcpserver.prompts import Prompt
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

from ..domain.errors import PalimpsestError
from ..service import Service
from ..service.disputes import SHOWN_TEXT
from .bounds import CallBounds
from .keys import request_principal
from .params import describe

ORIENT = "The brief on a notebook (rules, open items, recent memories), to read before a task."
REVIEW_DISPUTES = "Go through the open disputes (contradicting memories) and rule on each."

AFTER_BRIEF = (  # the brief says once that its texts are notes, not instructions
    "Before you act, check your plan against the rules above; then recall the specifics of "
    "the task."
)
HOW_TO_RULE = (
    "For each, find what settles it (code, tests, sources), tell me which memory holds and "
    "why, and once I agree rule with the dispute tool (action rule: dispute, holds, reason, "
    "evidence). Where the evidence is missing, say what would settle it."
)
NO_DISPUTE = "Palimpsest has no open dispute: there is nothing to rule on."

# A refusal the caller can fix is a bad argument; the rest are the server's to report.
CALLER_FIXES = {"validation", "not_found", "forbidden"}


R = TypeVar("R")


class PalimpsestPrompts:
    """The prompts, bound to one service and its threads. `server` registers each one."""

    def __init__(self, service: Service, threads: Executor, bounds: CallBounds | None = None):
        self._service = service
        self.threads = threads
        self.bounds = bounds

    async def _read(self, read: Callable[[Service], R]) -> R:
        """`read` of the caller's service, on a store thread; a refusal as an MCPError."""
        principal = request_principal()  # here: a store thread does not know the request
        key_id = principal.key_id if principal else None
        wait = self.bounds.admit(key_id) if self.bounds and key_id else None
        if wait is not None:
            message = f"This key made more calls than its bound allows: wait {wait} s."
            body = {"error_class": "retryable", "message": message, "retry_after": wait}
            raise MCPError(INTERNAL_ERROR, message, body)
        service = self._service if principal is None else self._service.acting_as(principal)
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self.threads, functools.partial(read, service)
            )
        except PalimpsestError as exc:
            code = INVALID_PARAMS if exc.error_class in CALLER_FIXES else INTERNAL_ERROR
            raise MCPError(code, exc.message, exc.to_dict()) from exc

    async def orient(
        self,
        notebook: Annotated[
            str | None, describe("By name or id; none: the whole workspace.")
        ] = None,
    ) -> str:
        answer = await self._read(lambda service: service.orient(notebook=notebook))
        return f"Read this brief before we start.\n\n{answer['brief'].rstrip()}\n\n{AFTER_BRIEF}"

    async def review_disputes(self) -> str:
        listed = await self._read(lambda service: service.dispute(action="list"))
        if not listed["disputes"]:
            return NO_DISPUTE
        lines = ["Help me rule on the open disputes in Palimpsest, two memories each:"]
        for dispute in listed["disputes"]:
            lines += ["", f"{dispute['id']}: {_line(dispute['reason'] or '')}"]
            lines += [f"- {m['id']}: {_line(m.get('text', '(forgotten)'))}"
                      for m in dispute["memories"]]  # fmt: skip
        if listed.get("more"):
            lines += ["", f"{listed['more']} more wait; ask again once these are ruled."]
        return "\n".join([*lines, "", HOW_TO_RULE])

    def registered(self) -> list[Prompt]:
        return [
            Prompt.from_function(self.orient, title="Orient", description=ORIENT),
            Prompt.from_function(
                self.review_disputes, title="Review disputes", description=REVIEW_DISPUTES
            ),
        ]


def _line(text: str) -> str:
    """`text` on one line, cut as a listed memory's is."""
    flat = " ".join(text.split())
    return flat if len(flat) <= SHOWN_TEXT else flat[:SHOWN_TEXT] + "…"
