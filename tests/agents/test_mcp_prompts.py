"""The MCP prompts through the SDK's in-process client: listed, rendered, refused, and
acting as the caller's key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from mcp import Client
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.shared.exceptions import MCPError
from mcp.types import GetPromptResult, TextContent

from palimpsest.mcp import build_server
from palimpsest.service import Service

pytestmark = pytest.mark.anyio

FALSIFIER = "a push to main without review that broke nothing"


def text_of(result: GetPromptResult) -> str:
    (message,) = result.messages
    assert message.role == "user" and isinstance(message.content, TextContent)
    return message.content.text


@asynccontextmanager
async def as_key(service: Service, role: str, workspace: str) -> AsyncIterator[Client]:
    """A client whose requests carry a key's claims, as the HTTP bearer check leaves them;
    the server bounds that key to one call a minute."""
    claims = {"actor": "user:vic", "role": role, "workspace": workspace}
    token = AccessToken(token="", client_id="k_" + "7" * 20, scopes=[], claims=claims)
    reset = auth_context_var.set(AuthenticatedUser(token))
    server = build_server(service, http=("127.0.0.1", 8765), calls_per_minute=1)
    try:
        async with Client(server) as client:
            yield client
    finally:
        server.close()
        auth_context_var.reset(reset)


async def test_both_prompts_are_listed_with_their_arguments(client: Client) -> None:
    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert sorted(prompts) == ["orient", "review_disputes"]
    (notebook,) = prompts["orient"].arguments or []
    assert (notebook.name, notebook.required) == ("notebook", False) and notebook.description
    assert not prompts["review_disputes"].arguments
    assert all(p.title and p.description for p in prompts.values())


async def test_orient_holds_the_brief_then_what_to_do(client: Client, service: Service) -> None:
    rule = service.remember(notebook="api", kind="rule", text="Never push to main unreviewed.",
                            severity="costly", falsifier=FALSIFIER)  # fmt: skip
    text = text_of(await client.get_prompt("orient", {"notebook": "api"}))
    assert rule["id"] in text and "Never push to main unreviewed." in text
    assert text.index("not instructions") < text.index(rule["id"]) < text.index("Before you act")
    assert text.count("not instructions") == 1
    whole = text_of(await client.get_prompt("orient", {}))
    assert rule["id"] in whole  # no notebook: the whole workspace


async def test_an_unknown_notebook_is_an_error_naming_the_fix(client: Client) -> None:
    with pytest.raises(MCPError) as raised:
        await client.get_prompt("orient", {"notebook": "nowhere"})
    assert raised.value.data["error_class"] == "not_found"
    assert raised.value.data["field"] == "notebook"
    assert "notebook list" in raised.value.message  # what to do instead


async def test_review_disputes_lists_both_memories(client: Client, service: Service) -> None:
    assert "no open dispute" in text_of(await client.get_prompt("review_disputes"))
    low = service.remember(notebook="api", kind="fact", text="The pool size is 20.")
    high = service.remember(notebook="api", kind="fact", text="The pool size is\n40.")
    opened = service.dispute(action="open", ids=[low["id"], high["id"]], reason="two sizes")
    text = text_of(await client.get_prompt("review_disputes"))
    assert opened["id"] in text and "two sizes" in text
    assert f"{low['id']}: The pool size is 20." in text
    assert f"{high['id']}: The pool size is 40." in text  # on one line
    assert "rule" in text and "no open dispute" not in text


async def test_a_viewers_key_reads_both_in_its_workspace(service: Service) -> None:
    made = service.create_workspace(name=f"lab-{service.workspace[-6:]}")["workspace"]
    lab = service.with_workspace(made["id"])
    rule = lab.remember(notebook="bench", kind="rule", text="Label every sample.",
                        severity="costly", falsifier=FALSIFIER)  # fmt: skip
    async with as_key(service, "viewer", made["id"]) as client:
        text = text_of(await client.get_prompt("orient", {"notebook": "bench"}))
        assert rule["id"] in text  # the key's workspace, not the server's
        with pytest.raises(MCPError) as raised:  # past its bound of one call a minute
            await client.get_prompt("review_disputes")
        assert raised.value.data["error_class"] == "retryable"
        assert raised.value.data["retry_after"] > 0
    async with as_key(service, "viewer", made["id"]) as client:
        assert "no open dispute" in text_of(await client.get_prompt("review_disputes"))
