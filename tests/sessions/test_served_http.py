"""Over HTTP, where a request of protocol 2026-07-28 is self-contained (no MCP session), a
key's calls are one session of the record, `http:<key id>` (`http:local` without keys)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from palimpsest.service import Service
from palimpsest.store import open_store

from ..agents.test_mcp_e2e import cli, http_server
from ..mcp_helpers import call

pytestmark = pytest.mark.anyio


async def test_the_calls_of_http_clients_are_recorded_under_their_key(
    db_path: Path, env: dict[str, str]
) -> None:
    service = Service(open_store(str(db_path)))
    fact = service.remember(notebook="shop", kind="fact", text="The deploy runs on Fridays")
    service.store.close()
    with http_server(db_path, env) as (url, _):
        async with Client(streamable_http_client(url)) as first:
            await call(first, "recall", query="deploy Fridays")
            await call(first, "inspect", id=fact["id"])
        async with Client(streamable_http_client(url)) as second:
            await call(second, "remember", notebook="shop", kind="fact", text="Staging too")
    (session,) = cli(db_path, env, "served")["sessions"]
    assert session["session"] == "http:local" and session["servings"] == 3
    steps = cli(db_path, env, "served", "http:local")["entries"]
    assert [e["what"] for e in steps] == ["recall", "inspect", "wrote"]
    assert steps[0]["shown"][0]["id"] == fact["id"] and steps[2]["request"] == {"op": "remember"}
    assert "Fridays" not in str(steps[1:]) and "Staging" not in str(steps)
