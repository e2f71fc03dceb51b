"""The gate's way out, as an agent meets it over MCP: the refusal names `palimpsest secret set
NAME` and `secret:NAME`, a memory holding `secret:NAME` is filed, and no tool handles a
secret's value (only a person's CLI does)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from palimpsest.store import Store, open_store

from ..mcp_helpers import call, refuse

pytestmark = pytest.mark.anyio

TOKEN = "ghp_" + "Zq4Lm8Rt2Vx6Bn0Cs3Dw7Fh1Jk5Np9Yg2Ta4"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    """SQLite only: this tests the MCP adapter; the gate runs on both stores elsewhere."""
    opened = open_store(str(db_path))
    yield opened
    opened.close()


async def test_a_refused_credential_is_told_where_to_go(client: Client) -> None:
    body = await refuse(
        client, "remember", notebook="ops", kind="fact", text=f"CI pushes with {TOKEN}"
    )
    assert (body["error_class"], body["field"]) == ("validation", "text")
    assert "`palimpsest secret set NAME`" in body["message"]
    assert "`secret:NAME`" in body["message"]
    assert TOKEN not in body["message"]
    tools = (await client.list_tools()).tools
    assert not [tool.name for tool in tools if "secret" in tool.name]  # no value over MCP


async def test_a_memory_holding_a_secret_by_name_is_filed(client: Client) -> None:
    text = "CI pushes with client_secret: secret:github/deploy-token (see the keychain)"
    filed = await call(client, "remember", notebook="ops", kind="fact", text=text)
    shown = await call(client, "inspect", id=filed["id"])
    assert text in str(shown)
