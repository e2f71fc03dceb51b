"""The `guard` tool over MCP: the answer, a refusal of bad input, and the command kept
after answering (both stores, the SDK's in-memory client)."""

from __future__ import annotations

import time

import pytest
from mcp import Client

from palimpsest.service import Service

from .mcp_helpers import call, refuse

pytestmark = pytest.mark.anyio


async def test_the_guard_tool_names_the_refusing_rule(client: Client, service: Service) -> None:
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
    deadline = time.monotonic() + 30  # kept on a store thread after the answer
    while len(service.seen()["commands"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # a second keep of either, had there been one, lands meanwhile
    assert sorted(c["command"] for c in service.seen()["commands"]) == [
        "echo 'git push --force'", "sudo git push origin +main"
    ]  # each kept once  # fmt: skip


async def test_remember_over_mcp_takes_the_trials_answers(client: Client, service: Service) -> None:
    await call(client, "remember", notebook="web", kind="note", text="The web project.")
    for command in ("git push", "git push -f", "git pull", "git push origin x", "git push y"):
        service.guard(command=command, notebook="web")
    broad = {"kind": "forbidden", "literals": ["git push"]}
    refused = await refuse(client, "remember", notebook="web", kind="rule", text="No pushing.",
                           falsifier="f", check=broad)  # fmt: skip
    assert refused["field"] == "check"
    kept = await call(client, "remember", notebook="web", kind="rule", text="No pushing.",
                      falsifier="f", check=broad, keep_as_note=True)  # fmt: skip
    assert kept["kept_as_note"] is True
