"""The real `palimpsest serve` process, driven by the official MCP client over stdio and HTTP."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Tool

from .mcp_helpers import call, check_tool_schemas, refuse, refused

pytestmark = pytest.mark.anyio

STARTUP_SECONDS = 30


def command(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "palimpsest", "--db", str(db), *args]


@asynccontextmanager
async def stdio(db: Path, env: dict[str, str]) -> AsyncIterator[Client]:
    """A client over a `palimpsest serve` child process (the SDK ends the process on exit)."""
    args = command(db, "serve")
    params = StdioServerParameters(command=args[0], args=args[1:], env=env)
    async with Client(params, read_timeout_seconds=STARTUP_SECONDS) as client:
        yield client


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def accepts_connections(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


@pytest.fixture
def http_url(db_path: Path, env: dict[str, str]) -> Iterator[str]:
    """`palimpsest serve --http` on a free port, ready to answer; killed afterwards."""
    port = free_port()
    process = subprocess.Popen(
        command(db_path, "serve", "--http", "--port", str(port)),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not accepts_connections(port):
            assert time.monotonic() < deadline, "the HTTP server did not start in time"
            try:  # waits a moment, and notices at once if the server died instead
                process.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                continue
            raise AssertionError(f"serve --http exited: {process.stderr.read()!r}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


def cli(db: Path, env: dict[str, str], *args: str) -> Any:
    done = subprocess.run(
        command(db, *args, "--json"), env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def event_count(db: Path) -> int:
    with sqlite3.connect(db) as raw:
        return int(raw.execute("SELECT count(*) FROM events").fetchone()[0])


async def every_tool(client: Client) -> None:
    """Each tool's happy path and one of its refusals, as an agent would meet them."""
    check_tool_schemas((await client.list_tools()).tools)
    filed = await call(client, "remember", notebook="shop", kind="decision",
                       text="Payments go through Stripe", why="it handles VAT")  # fmt: skip
    memory = filed["id"]
    assert (await refuse(client, "remember", notebook="shop", kind="rule", text="No cash"))[
        "field"
    ] == "falsifier"
    other = (await call(client, "remember", notebook="shop", kind="fact",
                        text="Stripe webhooks arrive at /hooks/stripe"))["id"]  # fmt: skip

    hits = (await call(client, "recall", query="Stripe", notebook="shop"))["hits"]
    assert {h["id"] for h in hits} == {memory, other}
    assert (await refuse(client, "recall", limit=0))["field"] == "limit"

    revised = await call(client, "revise", id=memory, append="and refunds", expected_version=1)
    assert revised["results"][0]["version"] == 2
    assert (await refuse(client, "revise", id=memory, expected_version=1, why="stale"))[
        "error_class"
    ] == "conflict"

    assert (await call(client, "revert", id=memory, version=1))["results"][0]["version"] == 3
    assert (await refuse(client, "revert", id=memory, version=42))["error_class"] == "not_found"

    shown = await call(client, "inspect", id=memory)
    assert [v["version"] for v in shown["versions"]] == [1, 2, 3]
    assert (await refuse(client, "inspect"))["error_class"] == "validation"

    events = (await call(client, "history", id=memory))["events"]
    assert [e["op"] for e in events] == ["remember", "revise", "revert"]
    assert (await refuse(client, "history", id="m_nope"))["error_class"] == "not_found"

    linked = await call(client, "link", source=other, target=memory, type="depends_on")
    assert set(linked["versions"]) == {memory, other}
    assert (await refuse(client, "link", source=other, target=other, type="relates_to"))[
        "error_class"
    ] == "validation"

    assert [n["name"] for n in (await call(client, "notebook", action="list"))["notebooks"]] == [
        "shop"
    ]
    assert (await refuse(client, "notebook", action="create", name="shop"))[
        "error_class"
    ] == "conflict"

    forgotten = await call(client, "forget", id=other, because="test data")
    assert forgotten["results"][0]["forgotten"] is True
    assert (await refuse(client, "forget", id=other, because="twice"))["error_class"] == (
        "not_found"
    )

    report = await call(client, "doctor")
    assert report["secrets"] == [] and report["scrub_pending"] is False
    secret_note = "ghp_" + "".join(reversed("bC7dE8fG9hI0jK1lM2nO3pQ4rS5tU6vW7xY8qZ"))
    refused_secret = await refuse(client, "remember", notebook="shop", kind="fact",
                                  text=f"CI uses {secret_note}")  # fmt: skip
    assert refused_secret["field"] == "text" and secret_note not in json.dumps(refused_secret)
    assert (await refuse(client, "doctor", verbose=True))["error_class"] == "validation"


async def test_every_tool_over_stdio(db_path: Path, env: dict[str, str]) -> None:
    async with stdio(db_path, env) as client:
        await every_tool(client)


async def test_every_tool_over_streamable_http(http_url: str) -> None:
    async with Client(http_url, read_timeout_seconds=STARTUP_SECONDS) as client:
        await every_tool(client)


async def test_http_serves_several_clients_at_once_and_older_protocols(http_url: str) -> None:
    async with Client(http_url) as first, Client(http_url, mode="legacy") as second:
        assert first.protocol_version != second.protocol_version
        filed = await call(first, "remember", notebook="n", kind="fact", text="Shared over HTTP")
        hits = (await call(second, "recall", query="Shared"))["hits"]
        assert [h["id"] for h in hits] == [filed["id"]]


async def test_mcp_and_the_cli_see_each_other_s_changes(db_path: Path, env: dict[str, str]) -> None:
    async with stdio(db_path, env) as client:
        memory = (await call(client, "remember", notebook="ops", kind="fact",
                             text="Backups run at 02:00"))["id"]  # fmt: skip
        await call(client, "revise", id=memory, replace_from="02:00", replace_to="03:00",
                   note="moved off the batch window")  # fmt: skip
        events = cli(db_path, env, "history", memory)["events"]
        assert [(e["op"], e["note"]) for e in events][-1] == (
            "revise", "moved off the batch window",
        )  # fmt: skip
        assert events[-1]["changes"]["text"]["new"] == "Backups run at 03:00"

        by_cli = cli(db_path, env, "remember", "-n", "ops", "-k", "decision",
                     "Restores are tested monthly")["id"]  # fmt: skip
        hits = (await call(client, "recall", query="Restores tested", notebook="ops"))["hits"]
        assert [h["id"] for h in hits] == [by_cli]


async def test_two_stdio_servers_on_one_file_write_and_see_each_other(
    db_path: Path, env: dict[str, str]
) -> None:
    async with stdio(db_path, env) as first, stdio(db_path, env) as second:
        mine = await call(first, "remember", notebook="n", kind="fact", text="Written by one")
        hits = (await call(second, "recall", query="Written"))["hits"]
        assert [h["id"] for h in hits] == [mine["id"]]
        await call(second, "revise", id=mine["id"], text="Rewritten by two")
        shown = await call(first, "inspect", id=mine["id"])
        assert (shown["memory"]["text"], shown["memory"]["version"]) == ("Rewritten by two", 2)

        answers: list[dict[str, Any]] = []

        async def burst(client: Client, who: str) -> None:
            for n in range(15):
                answers.append(await call(client, "remember", notebook="n", kind="note",
                                          text=f"{who} note {n}"))  # fmt: skip

        async with anyio.create_task_group() as group:
            group.start_soon(burst, first, "first")
            group.start_soon(burst, second, "second")
        assert len({a["id"] for a in answers}) == 30
        seqs = [e["seq"] for e in (await call(first, "history", limit=1000))["events"]]
        assert seqs == sorted(seqs) and len(seqs) == event_count(db_path)


# -- malformed arguments --------------------------------------------------------------------

HUGE = "x" * 1_000_000
BAD_IDS = ["", "m_does_not_exist", "../../etc/passwd", "m_" + "x" * 300, "\x00", " "]


def admits_string(schema: dict[str, Any]) -> bool:
    options = schema.get("anyOf", [schema])
    return any(o.get("type") == "string" or "enum" in o for o in options)


def malformed(tool: Tool, base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Wrong types, unknown fields and huge strings, derived from the tool's input schema."""
    properties = tool.input_schema["properties"]
    for name, schema in properties.items():
        yield {**base, name: 1.5}  # no parameter takes a fraction
        if admits_string(schema):
            yield {**base, name: {"not": ["a", "string"]}}
            yield {**base, name: HUGE}
        types = {o.get("type") or "object" for o in schema.get("anyOf", [schema])}
        if "array" in types:
            yield {**base, name: [HUGE]}
            yield {**base, name: [{"not": "an item"}]}
            yield {**base, name: [{"id": HUGE}, {HUGE: "a huge key"}]}
        if "object" in types:
            yield {**base, name: {"kind": "contains", "path": "a", "literal": HUGE}}
            yield {**base, name: {HUGE: "a huge key"}}
    yield {**base, "no_such_parameter": "x"}
    yield {**base, HUGE: "a huge parameter name"}
    yield {**base, "Id": "wrong case"}


def bad_ids(tool: str, memory: str) -> Iterator[dict[str, Any]]:
    for bad in BAD_IDS:
        yield {
            "remember": {"notebook": "n", "kind": "fact", "text": "t", "supersedes": [bad]},
            "recall": {"notebook": bad or " "},
            "revise": {"id": bad, "why": "a reason"},
            "revert": {"id": bad, "version": 1},
            "forget": {"id": bad, "because": "a reason"},
            "inspect": {"id": bad},
            "history": {"id": bad or " "},
            "notebook": {"action": "edit", "notebook": bad or " ", "summary": "s"},
            "link": {"source": memory, "target": bad, "type": "relates_to"},
            "doctor": {"id": bad},
        }[tool]


async def test_malformed_arguments_are_refused_and_change_nothing(
    db_path: Path, env: dict[str, str]
) -> None:
    async with stdio(db_path, env) as client:
        memory = (await call(client, "remember", notebook="n", kind="fact", text="Kept"))["id"]
        other = (await call(client, "remember", notebook="n", kind="fact", text="Also"))["id"]
        valid = {
            "remember": {"notebook": "n", "kind": "fact", "text": "A new memory"},
            "recall": {"query": "Kept"},
            "revise": {"id": memory, "why": "a reason"},
            "revert": {"id": memory, "version": 1},
            "forget": {"id": memory, "because": "a reason"},
            "inspect": {"id": memory},
            "history": {"id": memory},
            "notebook": {"action": "create", "name": "fresh"},
            "link": {"source": memory, "target": other, "type": "relates_to"},
            "doctor": {},
        }
        before = event_count(db_path)
        classes: Counter[str] = Counter()
        for tool in (await client.list_tools()).tools:
            name = tool.name
            cases = [*malformed(tool, valid[name]), *bad_ids(name, memory)]
            if tool.input_schema.get("required") or name in ("revise", "revert", "forget"):
                cases.append({})
            for arguments in cases:
                result = await client.call_tool(name, arguments)
                body = refused(result)
                assert "x" * 1000 not in body["message"], (name, body["error_class"])
                classes[body["error_class"]] += 1
        assert sum(classes.values()) > 200 and {"validation", "not_found"} <= set(classes)
        assert event_count(db_path) == before
        assert (await call(client, "inspect", id=memory))["memory"]["version"] == 1
