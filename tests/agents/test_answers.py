"""What an agent pays for an answer (issue 29): the text block is compact JSON with nothing
empty in it, the same object as the structured content; inspect shows each version as
what changed, the text once where it did not."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent

from palimpsest.domain.views import lean
from palimpsest.service import Service

from ..mcp_helpers import call, versions_whole

pytestmark = pytest.mark.anyio

TEXT = "The deploy pipeline runs the migrations before it switches traffic to the new pods."


def empties(value: Any, path: str = "") -> list[str]:
    """Where in `value` a key holds nothing (None, "", [], {})."""
    found = []
    if isinstance(value, dict):
        for key, member in value.items():
            if member is None or (isinstance(member, str | list | dict) and not member):
                found.append(f"{path}.{key}")
            found += empties(member, f"{path}.{key}")
    elif isinstance(value, list):
        for n, member in enumerate(value):
            found += empties(member, f"{path}[{n}]")
    return found


async def text_block(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    block = result.content[0]
    assert isinstance(block, TextContent) and not result.is_error, block
    assert json.loads(block.text) == result.structured_content
    return block.text


def test_lean_leaves_out_only_what_is_empty() -> None:
    answer = {"a": None, "b": "", "c": [], "d": {}, "e": False, "f": 0, "g": [{"h": None}, 1],
              "i": {"j": {"k": []}}, "l": "x"}  # fmt: skip
    assert lean(answer) == {"e": False, "f": 0, "g": [{}, 1], "l": "x"}


async def test_every_answer_is_compact_and_holds_nothing_empty(client: Client) -> None:
    filed = await call(client, "remember", notebook="ops", kind="decision", text=TEXT,
                       why="a failed migration must not take traffic")  # fmt: skip
    await call(client, "remember", notebook="ops", kind="rule", text="Never skip migrations.",
               falsifier="a skipped migration that broke nothing")  # fmt: skip
    for tool, arguments in [
        ("recall", {"query": "migrations before traffic"}),
        ("inspect", {"id": filed["id"]}),
        ("history", {"id": filed["id"]}),
        ("orient", {"notebook": "ops"}),
        ("notebook", {"action": "list"}),
        ("doctor", {}),
    ]:
        text = await text_block(client, tool, **arguments)
        compact = json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
        assert text == compact, tool
        assert empties(json.loads(text)) == [], tool


async def test_inspect_shows_the_text_once_when_only_other_fields_changed(
    client: Client,
) -> None:
    memory = (await call(client, "remember", notebook="ops", kind="fact", text=TEXT))["id"]
    await call(client, "revise", id=memory, tags=["deploy"])
    await call(client, "revise", id=memory, status="verified")
    await call(client, "revise", id=memory, append=" It waits for the health checks.")
    shown = await call(client, "inspect", id=memory)
    versions = shown["versions"]
    assert [v["version"] for v in versions] == [1, 2, 3, 4]
    assert versions[0]["changed"]["text"] == TEXT  # as filed
    assert versions[1]["changed"] == {"tags": ["deploy"]}
    assert set(versions[2]["changed"]) == {"verified_at"}
    assert versions[3]["changed"]["text"] == TEXT + " It waits for the health checks."
    text = await text_block(client, "inspect", id=memory)
    assert text.count(TEXT) == 3  # as filed, as changed in version 4, and the current memory
    whole = versions_whole(shown)
    assert whole[4] is not None and whole[4]["text"] == shown["memory"]["text"]
    assert whole[2] is not None and (whole[2]["text"], whole[2]["tags"]) == (TEXT, ["deploy"])


async def test_recall_fills_its_budget_with_the_best_hits_and_names_the_rest(
    client: Client,
) -> None:
    for n in range(8):
        text = f"Migration {n} runs before traffic moves; " + "detail " * 20 * n
        await call(client, "remember", notebook="ops", kind="fact", text=text)
    every = (await call(client, "recall", query="migration traffic", limit=20))["hits"]
    assert len(every) >= 4
    fitted = await call(client, "recall", query="migration traffic", limit=20, budget=500)
    kept, left = fitted["hits"], fitted["left_out"]
    assert [hit["id"] for hit in kept] + left == [hit["id"] for hit in every]
    assert kept and sum(len(json.dumps(hit, separators=(",", ":"))) + 1 for hit in kept) <= 500
    whole = await call(client, "recall", query="migration traffic", limit=20, budget=100_000)
    assert "left_out" not in whole and len(whole["hits"]) == len(every)
    for bad in (10, 100_001, "500"):
        refused = await client.call_tool("recall", {"query": "migration", "budget": bad})
        assert refused.is_error


def stored_versions(service: Service, memory_id: str) -> dict[int, dict[str, Any] | None]:
    """Each version as the store holds it, the fields inspect's versions show, lean."""
    with service.store.read(service.workspace) as tx:
        versions = tx.memory_versions(memory_id)
    whole: dict[int, dict[str, Any] | None] = {}
    for version in versions:
        if version.memory is None:
            whole[version.version] = None
            continue
        content = version.memory.to_dict()
        for name in ("id", "workspace", "version"):
            content.pop(name)
        whole[version.version] = lean(content)
    return whole


async def test_folding_what_changed_rebuilds_every_version_an_agent_reads(
    client: Client, service: Service
) -> None:
    """Through the lean MCP answer, a field emptied by a version (a `why` cleared, the tags
    removed, `superseded_by` dropped on reactivation) is still said to have changed: folding
    `changed` gives each version exactly as the store keeps it, whatever the sequence."""
    other = (await call(client, "remember", notebook="ops", kind="fact", text="Port 9090."))["id"]
    for seed in range(6):
        chance = random.Random(seed)
        memory = (
            await call(client, "remember", notebook="ops", kind="fact", text=f"{TEXT} {seed}",
                       why="traffic must wait", tags=["deploy", "ci"], source="runbook")
        )["id"]  # fmt: skip
        for step in range(10):
            shown = await call(client, "inspect", id=memory)
            status = shown["memory"]["status"]
            move = chance.choice(["clear", "set", "text", "status", "move", "revert", "forget"])
            if move == "clear":
                fields = chance.sample(["why", "tags", "source", "title"], 2)
                await call(client, "revise", id=memory, clear=fields)
            elif move == "set":
                await call(client, "revise", id=memory, why=f"why {step}", tags=[f"t{step}"])
            elif move == "text":
                await call(client, "revise", id=memory, text=f"{TEXT} {seed} step {step}")
            elif move == "status" and status == "active":
                await call(client, "revise", id=memory, status="superseded", superseded_by=other)
            elif move == "status":
                await call(client, "revise", id=memory, status="active")
            elif move == "move":
                await call(client, "revise", id=memory, move_to=chance.choice(["ops", "dev"]))
            readable = [v["version"] for v in shown["versions"] if not v.get("scrubbed")]
            if move == "revert" and len(readable) > 1:
                await call(client, "revert", id=memory, version=chance.choice(readable[:-1]))
            elif move == "forget" and len(readable) > 2:
                await call(client, "forget", id=memory, version=chance.choice(readable[:-1]),
                           because="a test scrubs it")  # fmt: skip
        shown = await call(client, "inspect", id=memory)
        want = stored_versions(service, memory)
        got = versions_whole(shown)
        assert got == want, (seed, shown["versions"])


async def test_orient_says_each_text_once(client: Client) -> None:
    """The brief holds the texts; its items beside it name the memories by id."""
    await call(client, "remember", notebook="ops", kind="rule", text="Never skip migrations.",
               falsifier="a skipped migration that broke nothing")  # fmt: skip
    await call(client, "remember", notebook="ops", kind="issue", text="The login test is flaky.")
    await call(client, "remember", notebook="ops", kind="fact", text=TEXT)
    text = await text_block(client, "orient", notebook="ops")
    for said in ("Never skip migrations.", "The login test is flaky.", TEXT):
        assert text.count(said) == 1, said
    brief = json.loads(text)
    assert brief["rules"][0]["id"] and "text" not in brief["rules"][0]
