"""Times far in the past: stored with a four-digit year, compared in order, out of range refused.

Times compare as text in both stores, which only works when every year has four digits:
year 999 written as `999-...` sorts after `2026-...`. These go through the MCP tools on
both stores.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from ..mcp_helpers import call, refuse

pytestmark = pytest.mark.anyio


async def remember(client: Client, text: str, **fields: Any) -> str:
    filed = await call(client, "remember", notebook="past", kind="fact", text=text, **fields)
    return str(filed["id"])


async def hit_ids(client: Client, **filters: Any) -> set[str]:
    return {hit["id"] for hit in (await call(client, "recall", **filters))["hits"]}


async def test_a_year_before_1000_is_stored_with_four_digits(client: Client) -> None:
    memory = await remember(client, "The abbey was founded", occurred_at="0999-12-31T10:00:00Z")
    shown = (await call(client, "inspect", id=memory))["memory"]
    assert shown["occurred_at"] == "0999-12-31T10:00:00.000000Z"
    await call(client, "revise", id=memory, occurred_at="0042-03-01")
    shown = (await call(client, "inspect", id=memory))["memory"]
    assert shown["occurred_at"] == "0042-03-01T00:00:00.000000Z"


async def test_an_expiry_before_1000_has_passed(client: Client) -> None:
    gone = await remember(client, "A truce held", expires_at="0900-01-01")
    kept = await remember(client, "The walls still stand")
    assert await hit_ids(client) == {kept}
    assert await hit_ids(client, include_retired=True) == {gone, kept}


async def test_as_of_a_year_before_1000_is_before_anything_was_recorded(client: Client) -> None:
    await remember(client, "Recorded today")
    assert "hits" not in await call(client, "recall", as_of="0999-12-31")  # empty: left out
    assert "events" not in await call(client, "history", until="0999-12-31")


async def test_since_and_until_order_years_before_and_after_1000(client: Client) -> None:
    old = await remember(client, "Charter signed", occurred_at="0999-06-01")
    older = await remember(client, "Village named", occurred_at="0099-06-01")
    new = await remember(client, "Charter digitised", occurred_at="2020-06-01")
    assert await hit_ids(client, until="1500-01-01") == {old, older}
    assert await hit_ids(client, since="1500-01-01") == {new}
    assert await hit_ids(client, since="0500-01-01", until="1500-01-01") == {old}


@pytest.mark.parametrize(
    "value",
    ["0000-12-31", "10000-01-01", "999-12-31", "9999-12-31T23:00:00-02:00",
     "0001-01-01T00:30:00+01:00", "-0001-01-01"],
)  # fmt: skip
async def test_a_time_outside_years_1_to_9999_is_refused_saying_the_range(
    client: Client, value: str
) -> None:
    memory = await remember(client, "Kept as it was")
    refusals = [
        await refuse(client, "remember", notebook="past", kind="fact", text="x", occurred_at=value),
        await refuse(client, "revise", id=memory, expires_at=value),
        await refuse(client, "recall", as_of=value),
        await refuse(client, "recall", since=value),
        await refuse(client, "history", until=value),
    ]
    for body in refusals:
        assert body["error_class"] == "validation"
        assert "0001" in body["message"] and "9999" in body["message"], body
        assert value not in body["message"]  # a refusal never echoes the value
    shown = (await call(client, "inspect", id=memory))["memory"]
    assert shown["version"] == 1 and "expires_at" not in shown
