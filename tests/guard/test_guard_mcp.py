"""The `guard` tool over MCP: the answer, a refusal of bad input, and the command kept
after answering (both stores, the SDK's in-memory client)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from mcp import Client

from palimpsest.mcp import build_server
from palimpsest.service import Service

from ..agent_runs import ran
from ..mcp_helpers import call, refuse

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def settled(service: Service) -> AsyncIterator[Client]:
    """A client of a server of its own, which is closed on leaving: closing waits for its
    store threads to finish all they were given, a keep sent there after an answer too."""
    server = build_server(service)
    try:
        async with Client(server) as client:
            yield client
    finally:
        server.close()


async def test_the_guard_tool_names_the_refusing_rule(service: Service) -> None:
    async with settled(service) as client:
        rule = await call(
            client, "remember", notebook="web", kind="rule", text="Never force-push main.",
            falsifier="a force-push that lost nothing", severity="irreversible",
            check={"kind": "forbidden", "literals": ["git push --force"]},
        )  # fmt: skip
        answer = await call(client, "guard", command="sudo git push origin +main", notebook="web")
        assert answer["decision"] == "deny"
        assert answer["refused_by"][0]["id"] == rule["id"]
        allowed = await call(client, "guard", command="echo 'git push --force'", notebook="web")
        assert allowed["decision"] == "allow" and "refused_by" not in allowed
        refused = await refuse(client, "guard", command="  ")
        assert refused["error_class"] == "validation" and refused["field"] == "command"
    # The server is closed: a keep on a store thread after an answer has landed by now.
    assert service.seen()["commands"] == []  # trials count what the hook saw run, not asks


async def test_flooding_the_guard_tool_cannot_make_a_new_rule_too_broad(service: Service) -> None:
    """Anyone with a key could ask about a forbidden command again and again, so that the
    rule a person files next is refused as too broad: what the tool is asked is not kept."""
    async with settled(service) as client:
        await call(client, "remember", notebook="web", kind="note", text="The web project.")
        for n in range(12):
            await call(client, "guard", command=f"git push --force origin f{n}", notebook="web")
    # Closed: every keep sent to its store threads (before the fix, one per ask) has landed.
    async with settled(service) as client:
        force = {"kind": "forbidden", "literals": ["git push --force"]}
        filed = await call(client, "remember", notebook="web", kind="rule", text="No force-push.",
                           falsifier="f", check=force)  # fmt: skip
    assert filed["version"] == 1 and "kept_as_note" not in filed


async def test_remember_over_mcp_takes_the_trials_answers(client: Client, service: Service) -> None:
    await call(client, "remember", notebook="web", kind="note", text="The web project.")
    for command in ("git push", "git push -f", "git pull", "git push origin x", "git push y"):
        ran(service, command, notebook="web")
    broad = {"kind": "forbidden", "literals": ["git push"]}
    refused = await refuse(client, "remember", notebook="web", kind="rule", text="No pushing.",
                           falsifier="f", check=broad)  # fmt: skip
    assert refused["field"] == "check"
    kept = await call(client, "remember", notebook="web", kind="rule", text="No pushing.",
                      falsifier="f", check=broad, keep_as_note=True)  # fmt: skip
    assert kept["kept_as_note"] is True
