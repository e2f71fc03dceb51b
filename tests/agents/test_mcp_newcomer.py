"""What an agent stumbled on over MCP (issue 9), through the official client.

Argument errors are said in our words (the field, and what it takes), never in the
validation library's; a single string where a list is expected is a list of one; the
values the service forgives (case, `-` for `_`) pass the schema too; the tool list says
what it means.
"""

from __future__ import annotations

import pytest
from mcp import Client

from ..mcp_helpers import call, refuse

pytestmark = pytest.mark.anyio

LIBRARY_WORDS = ("Input should", "valid list", "unable to parse", "Spec", "dictionary")


def ours(message: str) -> bool:
    return not any(words in message for words in LIBRARY_WORDS)


async def remember(client: Client, text: str, **fields: object) -> str:
    fields.setdefault("kind", "fact")
    answer = await call(client, "remember", notebook="web", text=text, **fields)
    memory_id: str = answer["id"]
    return memory_id


@pytest.mark.parametrize(
    "tool, arguments, field, wanted",
    [
        ("recall", {"limit": "ten"}, "limit", "`limit` must be a whole number"),
        ("revise", {"id": "m_x", "expected_version": "two"}, "expected_version", "whole number"),
        ("remember", {"tags": 5}, "tags", "`tags` must be a list"),
        ("remember", {"anchors": [5]}, "anchors", "`anchors[0]` must be a string or an object"),
        ("remember", {"anchors": [{"file": "a"}]}, "anchors", "`anchors[0].file` is not a key"),
        ("remember", {"check": "contains"}, "check", "`check` must be an object"),
        ("revise", {"id": "m_x", "claim": "perhaps"}, "claim", "`claim` must be true or false"),
    ],
)
async def test_an_argument_of_the_wrong_type_is_said_in_our_words(
    client: Client, tool: str, arguments: dict[str, object], field: str, wanted: str
) -> None:
    if tool == "remember":
        arguments = {"notebook": "web", "kind": "fact", "text": "Port 8080", **arguments}
    body = await refuse(client, tool, **arguments)
    assert (body["error_class"], body["field"]) == ("validation", field)
    assert wanted in body["message"] and ours(body["message"]), body["message"]


async def test_a_single_string_where_a_list_is_expected_is_a_list_of_one(client: Client) -> None:
    old = await remember(client, "Port 8080")
    new = await remember(client, "Port 9090", tags="infra", supersedes=old)
    shown = (await call(client, "inspect", id=new))["memory"]
    assert shown["tags"] == ["infra"]
    assert (await call(client, "inspect", id=old))["memory"]["status"] == "superseded"
    await call(client, "revise", ids=new, clear="tags")
    assert "tags" not in (await call(client, "inspect", id=new))["memory"]  # empty: left out
    assert "hits" not in await call(client, "recall", tags="nothing-here")


async def test_a_hyphen_for_an_underscore_passes_the_schema(client: Client) -> None:
    first = await remember(client, "Port 8080")
    second = await remember(client, "Port 9090")
    link = (await call(client, "link", source=first, target=second, type="Relates-To"))["link"]
    assert link["type"] == "relates_to"


async def test_revise_sets_a_rules_fields_as_remember_does(client: Client) -> None:
    memory = await remember(client, "Never push to main", kind="orientation", falsifier="x")
    await call(client, "revise", id=memory, kind="Rule", severity="Costly", scope="workspace",
               check={"kind": "forbidden", "literals": ["git push origin main"]})  # fmt: skip
    shown = (await call(client, "inspect", id=memory))["memory"]
    assert (shown["kind"], shown["severity"], shown["scope"]) == ("rule", "costly", "workspace")
    assert shown["check"]["kind"] == "forbidden"
    body = await refuse(client, "revise", id=memory, severity="high", because="x")
    assert body["field"] == "severity" and "house_style, costly, irreversible" in body["message"]


async def test_a_recall_hit_says_why(client: Client) -> None:
    await remember(client, "We deploy with make deploy", kind="decision", why="it migrates")
    (hit,) = (await call(client, "recall", query="deploy"))["hits"]
    assert hit["why"] == "it migrates"


async def test_the_instructions_say_forget_alone_cannot_be_undone(client: Client) -> None:
    instructions = client.instructions
    assert instructions is not None
    assert "any change can be undone" not in instructions
    assert "every change but a forget can be undone" in instructions.replace("\n", " ")


async def test_orient_in_a_notebook_not_made_yet_says_remember_makes_it(client: Client) -> None:
    """The instructions say to orient first; in a new project nothing was filed yet."""
    refused = await refuse(client, "orient", notebook="brand-new-project")
    assert refused["error_class"] == "not_found" and "remember" in refused["message"]
