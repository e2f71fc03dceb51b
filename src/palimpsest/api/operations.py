"""The operations the web page calls that are no MCP tool: sessions served, duplicates and
their merge, a notebook's overview, rules and activity, and a person's change with its
reason. Each is the service's own operation, under its name, so a script does what the
page does. And a replica's pull (`sync_pull`, docs/sync.md), and on a replica its queue of
writes for the server: listed, retried, dropped with a reason.

They are not MCP tools: every agent pays for the tool list before its first call, and it
is at its budget (tests/agents/test_tool_list.py). They are built as the tools are, though
(the SDK's `Tool` from a typed function, hardened by mcp/schema.py) and run by the MCP
server's `call_in_session`: the same bound on calls a minute, the same strict arguments,
the service acting as the key's holder on the store threads, the same refusals.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver.tools import Tool, ToolManager
from mcp.types import Tool as MCPTool

from ..mcp.params import (
    TIME,
    Clearable,
    DryRun,
    IdempotencyKey,
    Kind,
    ReviseStatus,
    Tags,
    Title,
    Why,
    describe,
)
from ..mcp.schema import harden
from ..mcp.tools import PalimpsestTools
from ..service.answers import DuplicatesAnswer, MergeAnswer, RevertAnswer, ReviseAnswer
from ..service.notebook_answers import ActivityAnswer, NotebookListAnswer, NotebookRulesAnswer
from ..service.queueing import QueueAnswer, Queued
from ..service.served_answers import ServedAnswer, ServedForgotten
from ..service.sync import Position, SyncPulled

Note = Annotated[str | None, describe("Required: why, in a sentence; kept in history.")]
QueueState = Literal["pending", "accepted", "refused", "conflict", "dropped"]
QueuedId = Annotated[str, describe("The queued write's id (q_...).")]

DESCRIPTIONS = {
    "served": "What a session was shown and what it wrote, in order; without `session`, "
    "the sessions recorded, the latest first. An owner reads every session, anyone else "
    "only their own.",
    "forget_served": "Erase for good the record of what a session was shown (an owner's "
    "act, with `because`). One event says it was forgotten and why, never what it held.",
    "duplicates": "Groups of active memories that say the same thing, in a notebook or the "
    "whole workspace (slower): the largest first, then the most alike.",
    "merge": "Keep one memory; each of `ids` retires as superseded by it. With `because`.",
    "notebook_list": "Every notebook of the workspace, with its counts of memories, active "
    "ones and rules, and the projects bound to it.",
    "notebook_rules": "The rules binding a notebook (its own and the workspace-wide ones), "
    "and the commands the guard denied or asked about in it, newest first.",
    "activity": "A notebook's events over the last `days` days, by day and operation, oldest "
    "day first.",
    "revise_with_reason": "Revise one memory as `revise` does, with a `note` saying why "
    "(required); a status it cannot take is refused, not answered as unmatched.",
    "revert_with_reason": "Set one memory back to an earlier `version` as `revert` does, "
    "with a `note` saying why (required).",
    "sync_pull": "A replica's pull (docs/sync.md): the rows this workspace's events after "
    "`since` made, in order, at most `limit` events, and the `position` to pull from next; "
    "`more` while events wait. A position this server's history does not hold is refused "
    "(conflict, field `since`): pull again from the start.",
    "queued_writes": "On a replica: the writes queued here for the server, the oldest first, "
    "in `states` (by default those still pending and those the server refused or found in "
    "conflict), each with the server's answer once it gave one.",
    "retry_queued": "On a replica: send a write the server refused or found in conflict "
    "again, checked anew against what was pulled since (a revise lands on the version now "
    "current); the old item is kept as dropped, naming the new one.",
    "drop_queued": "On a replica: give up a queued write, `because` required; it stays "
    "listed as dropped, with why.",
}
TITLES = {
    "served": "Sessions served",
    "forget_served": "Forget a session's record",
    "duplicates": "Duplicates",
    "merge": "Merge duplicates",
    "notebook_list": "Notebooks overview",
    "notebook_rules": "A notebook's rules",
    "activity": "A notebook's activity",
    "revise_with_reason": "Revise, with a reason",
    "revert_with_reason": "Revert, with a reason",
    "sync_pull": "Sync: pull",
    "queued_writes": "Sync: queued writes",
    "retry_queued": "Sync: retry a queued write",
    "drop_queued": "Sync: drop a queued write",
}
NAMES = tuple(DESCRIPTIONS)


class PageOperations:
    """The operations, acting as the tools do: the caller's service on the store threads."""

    def __init__(self, tools: PalimpsestTools):
        self._tools = tools

    async def served(
        self,
        session: Annotated[
            str | None, describe("A session's id: its steps. Without: the sessions.")
        ] = None,
        since: Annotated[str | None, describe(f"Steps at or after, {TIME}.")] = None,
        limit: Annotated[int | None, describe("At most this many, 1 to 1000 (100).")] = None,
    ) -> ServedAnswer:
        return await self._tools.run(self._tools.service.served, locals())

    async def forget_served(
        self,
        session: Annotated[str, describe("The session whose record goes.")],
        because: Annotated[
            str | None, describe("Required: why. Kept in the event, so no secret in it.")
        ] = None,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> ServedForgotten:
        return await self._tools.run(self._tools.service.forget_served, locals())

    async def duplicates(
        self,
        notebook: Annotated[str | None, describe("Only this notebook (else all).")] = None,
        limit: Annotated[int | None, describe("At most this many groups, 1 to 200 (20).")] = None,
    ) -> DuplicatesAnswer:
        return await self._tools.run(self._tools.service.duplicates, locals())

    async def merge(
        self,
        keep: Annotated[str, describe("The memory kept, unchanged.")],
        ids: Annotated[list[str], describe("The memories retired as superseded by `keep`.")],
        because: Annotated[str | None, describe("Required: why they are one.")] = None,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> MergeAnswer:
        return await self._tools.run(self._tools.service.merge, locals())

    async def notebook_list(self) -> NotebookListAnswer:
        return await self._tools.run(self._tools.service.notebook_list, {})

    async def notebook_rules(
        self, notebook: Annotated[str, describe("The notebook's name or id.")]
    ) -> NotebookRulesAnswer:
        return await self._tools.run(self._tools.service.notebook_rules, locals())

    async def activity(
        self,
        notebook: Annotated[str, describe("The notebook's name or id.")],
        days: Annotated[int | None, describe("The last this many days, 1 to 366 (30).")] = None,
    ) -> ActivityAnswer:
        return await self._tools.run(self._tools.service.activity, locals())

    async def revise_with_reason(
        self,
        id: Annotated[str, describe("The memory's id.")],
        note: Note = None,
        text: Annotated[str | None, describe("The whole new text.")] = None,
        title: Title = None,
        kind: Kind | None = None,
        why: Why = None,
        tags: Tags = None,
        clear: Annotated[list[Clearable] | None, describe("Fields to empty.")] = None,
        status: Annotated[
            ReviseStatus | None, describe("As revise's: superseded, retracted, active, verified.")
        ] = None,
        superseded_by: Annotated[
            str | None, describe("With status superseded: the active memory replacing it.")
        ] = None,
        expected_version: Annotated[
            int | None, describe("The version you read; if it moved on, a conflict.")
        ] = None,
    ) -> ReviseAnswer:
        return await self._tools.run(self._tools.service.revise_with_reason, locals())

    async def revert_with_reason(
        self,
        id: Annotated[str, describe("The memory's id.")],
        version: Annotated[int | None, describe("The version to go back to.")] = None,
        note: Note = None,
    ) -> RevertAnswer:
        service = self._tools.service  # the caller's, read here: not known on a store thread

        def revert(**given: Any) -> RevertAnswer:  # the service takes both, None or not
            return service.revert_with_reason(
                id=given["id"], version=given.get("version"), note=given.get("note")
            )

        return await self._tools.run(revert, {"id": id, "version": version, "note": note})

    async def sync_pull(
        self,
        since: Annotated[
            Position | None, describe("The `position` the last pull answered; none at first.")
        ] = None,
        limit: Annotated[int | None, describe("At most this many events, 1 to 5000.")] = None,
    ) -> SyncPulled:
        # whole: a row's null is a value the replica writes, not an empty to leave out
        return await self._tools.run(self._tools.service.sync_pull, locals(), whole=True)

    async def queued_writes(
        self,
        states: Annotated[
            list[QueueState] | None,
            describe("Only these (pending, conflict, refused when not given)."),
        ] = None,
    ) -> QueueAnswer:
        service = self._tools.service  # the caller's, read here: not known on a store thread

        def listed(**given: Any) -> QueueAnswer:
            if "states" in given:
                return service.queued_writes(states=tuple(given["states"]))
            return service.queued_writes()

        return await self._tools.run(listed, {"states": states})

    async def retry_queued(self, id: QueuedId) -> Queued:
        return await self._tools.run(self._tools.service.retry_queued, locals())

    async def drop_queued(
        self,
        id: QueuedId,
        because: Annotated[str | None, describe("Required: why it is given up.")] = None,
    ) -> QueueAnswer:
        return await self._tools.run(self._tools.service.drop_queued, locals())


def page_operations(tools: PalimpsestTools) -> ToolManager:
    """The operations registered as the MCP server registers its tools (server.py)."""
    operations = PageOperations(tools)
    made = [
        harden(
            Tool.from_function(
                getattr(operations, name),
                name=name,
                title=TITLES[name],
                description=DESCRIPTIONS[name],
                structured_output=True,
            )
        )
        for name in NAMES
    ]
    return ToolManager(tools=made)


def listed(manager: ToolManager) -> list[MCPTool]:
    """The operations as `tools/list` would show them (what openapi.py reads)."""
    return [
        MCPTool(
            name=tool.name,
            title=tool.title,
            description=tool.description,
            input_schema=tool.parameters,
            output_schema=tool.output_schema,
        )
        for tool in manager.list_tools()
    ]
