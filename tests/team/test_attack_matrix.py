"""Issue 12's attack matrix, through the official MCP client against `serve --http`, on
both stores: every tool with no key, a revoked, an expired or a made-up key (401); a key
of another workspace, or an id guessed or taken from another workspace (`not_found`,
leaking nothing); a viewer writing, an editor doing an owner's work, a workspace key
overriding (`forbidden`). A fingerprint of the store taken before and after shows that no
refused call changed anything.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest
from mcp import Client

from palimpsest.domain.model import format_time

from ..agents.test_mcp_e2e import command, free_port, serving
from ..conftest import needs_postgres, own_postgres_database
from .test_access import cli, keyed

# Tables a refused call may still touch by design: failed authentications are counted.
LOGS = {"failed_auth", "served"}  # what is counted, and what reads (allowed) were shown
# Derived marks a read may leave: doctor's note of the versions its secret scan found clean.
DERIVED = {"screened"}
SECRET_TEXT = "Only the default workspace knows the vault pin rotation"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=needs_postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "attacked.db")
        return
    with own_postgres_database("attack") as url:
        yield url


def fingerprint(url: str) -> str:
    """A hash of every row of every table but the logs, in a fixed order."""
    if url.startswith("postgresql"):
        conn: Any = psycopg.connect(url)
        listing = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
    else:
        conn = sqlite3.connect(url)
        listing = "SELECT name FROM sqlite_master WHERE type = 'table'"
    digest = hashlib.sha256()
    with conn:
        for (table,) in sorted(conn.execute(listing).fetchall()):
            if table not in LOGS:
                cursor = conn.execute(f'SELECT * FROM "{table}"')
                kept = [i for i, c in enumerate(cursor.description) if c[0] not in DERIVED]
                rows = [tuple(row[i] for i in kept) for row in cursor.fetchall()]
                digest.update(table.encode() + repr(sorted(map(repr, rows))).encode())
    conn.close()
    return digest.hexdigest()


class World:
    """Two workspaces, their people and keys, and what each one holds."""

    def __init__(self, url: str, env: dict[str, str]):
        self.mine = cli(url, env, "remember", "-n", "ops", "-k", "fact", SECRET_TEXT)["id"]
        self.other = cli(url, env, "remember", "-n", "ops", "-k", "fact", "The pool holds 40")["id"]
        for name, role in (("vic", "viewer"), ("ed", "editor")):
            cli(url, env, "user", "add", name, "--role", role)
        self.viewer = cli(url, env, "key", "create", "--user", "vic")["key"]
        self.editor = cli(url, env, "key", "create", "--user", "ed")["key"]
        self.agent = cli(url, env, "key", "create", "--agent", "ci")["key"]
        revoked = cli(url, env, "key", "create", "--agent", "gone")
        cli(url, env, "key", "revoke", revoked["id"])
        self.revoked = revoked["key"]
        # a key that expires in two seconds: past by the time the server is asked
        self.expires_at = datetime.now(UTC) + timedelta(seconds=2)
        soon = format_time(self.expires_at)
        self.expired = cli(url, env, "key", "create", "--agent", "old", "--expires", soon)["key"]
        lab = ("--workspace", "lab")
        cli(url, env, "workspace", "create", "lab")
        cli(url, env, *lab, "user", "add", "mallory", "--role", "owner")
        self.stranger = cli(url, env, *lab, "key", "create", "--user", "mallory")["key"]
        self.theirs = cli(url, env, *lab, "remember", "-n", "lab", "-k", "fact", "Lab only")["id"]


def every_call(world: World, target: str) -> dict[str, dict[str, Any]]:
    """One call of each tool that reads or changes `target` (a memory id)."""
    return {
        "remember": {"notebook": "ops", "kind": "fact", "text": "Filed by an intruder"},
        "recall": {"query": "vault pin rotation"},
        "revise": {"id": target, "append": "changed"},
        "revert": {"id": target, "version": 1, "because": "undo"},
        "forget": {"id": target, "because": "erase"},
        "inspect": {"id": target},
        "history": {"id": target},
        "notebook": {"action": "create", "name": "intruders"},
        "link": {"source": target, "target": world.other, "type": "relates_to"},
        "dispute": {"action": "open", "ids": [target, world.other], "reason": "contested"},
        "doctor": {},
        "check": {},
        "orient": {},
        "guard": {"command": "ls"},
    }


WRITES = ("remember", "revise", "revert", "forget", "notebook", "link", "dispute")
BY_ID = ("revise", "revert", "forget", "inspect", "history", "link", "dispute")


def raw_call(url: str, key: str | None, tool: str, arguments: dict[str, Any]) -> int:
    headers = {"Accept": "application/json, text/event-stream"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}  # fmt: skip
    return httpx2.post(url, json=body, headers=headers, timeout=30).status_code


async def refusal(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, (tool, result)
    body: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    return body


@pytest.mark.anyio
async def test_every_tool_refuses_what_the_caller_may_not_do_and_changes_nothing(
    store_url: str, env: dict[str, str]
) -> None:
    world = World(store_url, env)
    port = free_port()
    process = subprocess.Popen(
        command(store_url, "serve", "--http", "--port", str(port)),
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    with serving(process, port):
        url = f"http://127.0.0.1:{port}/mcp"
        time.sleep(max(0.0, (world.expires_at - datetime.now(UTC)).total_seconds()))
        before = fingerprint(store_url)
        calls = every_call(world, world.mine)
        bad_keys = (None, world.revoked, world.expired, "palimpsest_k_" + "a" * 20 + "_" + "0" * 48,
                    str(world.viewer)[:-1] + "x", "not a key at all")  # fmt: skip
        for key in bad_keys:
            for tool, arguments in calls.items():
                assert raw_call(url, key, tool, arguments) == 401, (key, tool)

        async with keyed(url, str(world.stranger)) as client:  # another workspace's owner
            for tool in BY_ID:
                body = await refusal(client, tool, calls[tool])
                assert body["error_class"] == "not_found", (tool, body)
            for tool in ("recall", "doctor", "orient"):
                answer = (await client.call_tool(tool, calls[tool])).content[0].text  # type: ignore[union-attr]
                assert world.mine not in answer and "vault" not in answer, (tool, answer)

        guessed = "m_" + "0" * 20
        async with keyed(url, str(world.editor)) as client:
            for tool in BY_ID:  # a made-up id, and one of another workspace: alike
                for target in (guessed, world.theirs):
                    body = await refusal(client, tool, every_call(world, target)[tool])
                    assert body["error_class"] == "not_found", (tool, target, body)
                    assert "Lab only" not in json.dumps(body)
            # an owner's work: forget another's memory, merge domains, forget a field
            for tool, arguments in (
                ("forget", {"id": world.mine, "because": "not mine"}),
                ("forget", {"notebook": "ops", "field": "summary", "because": "tidy"}),
                (
                    "notebook",
                    {
                        "action": "merge_domains",
                        "from_domain": "a",
                        "to_domain": "b",
                        "because": "tidy",
                    },
                ),
            ):
                assert (await refusal(client, tool, arguments))["error_class"] == "forbidden"

        async with keyed(url, str(world.viewer)) as client:
            for tool in WRITES:
                body = await refusal(client, tool, calls[tool])
                assert body["error_class"] == "forbidden", (tool, body)

        async with keyed(url, str(world.agent)) as client:  # a workspace key never overrides
            override = {"id": world.mine, "tags": ["taken"], "override_reason": "mine now",
                        "override_confirm": True}  # fmt: skip
            assert (await refusal(client, "revise", override))["error_class"] == "forbidden"
        assert fingerprint(store_url) == before
