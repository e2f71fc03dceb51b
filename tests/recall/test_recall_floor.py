"""Recall in a project's notebook through the MCP client (issue 29): the answer first
whether it shares words or only meaning, each hit saying how it matched, nothing for a
question no memory answers, and no stranger ranked above a memory that shares anything."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from mcp import Client

from palimpsest.mcp import build_server
from palimpsest.service import Service

from ..mcp_helpers import call

pytestmark = pytest.mark.anyio

# One working session of an agent on a web shop: filed one after the other, on one day,
# about whatever came up (nothing says when any of it happened).
SESSION = {
    "release": "We ship to production with `make release`; it tags the commit and runs the "
    "migrations first.",
    "flags": "Feature toggles live in LaunchDarkly; a flag goes live for staff first.",
    "styling": "Styling uses Tailwind with the brand preset; no hand-written CSS files.",
    "vault": "Credentials are read from Vault at boot by the config loader.",
    "prices": "Stale prices after a sale: the Redis keys had no TTL. Fixed with a 10 minute TTL.",
    "staging": "The staging database is wiped every Sunday night.",
}


@pytest.fixture
async def agent(meaning: Service) -> AsyncIterator[tuple[Client, dict[str, str]]]:
    ids = {}
    for name, text in SESSION.items():
        ids[name] = meaning.remember(notebook="shop", kind="fact", text=text)["id"]
    server = build_server(meaning)
    async with Client(server) as connected:
        yield connected, ids
    server.close()


async def test_the_answer_comes_first_by_meaning_with_its_similarity(
    agent: tuple[Client, dict[str, str]],
) -> None:
    client, ids = agent
    answer = await call(client, "recall", query="How do I push a new version live?",
                        notebook="shop")  # fmt: skip
    first = answer["hits"][0]
    assert first["id"] == ids["release"]
    assert 0 < first["similarity"] <= 1
    assert "words" not in first  # "live" is another memory's word
    secrets = await call(client, "recall", query="Where do API keys and passwords come from "
                         "at startup?", notebook="shop")  # fmt: skip
    assert secrets["hits"][0]["id"] == ids["vault"]


async def test_matched_names_the_query_words_a_hit_holds(
    agent: tuple[Client, dict[str, str]],
) -> None:
    client, ids = agent
    hits = (await call(client, "recall", query="why is the staging database wiped?"))["hits"]
    assert hits[0]["id"] == ids["staging"]
    assert hits[0]["matched"] == "both"
    assert hits[0]["words"] == ["staging", "database", "wiped"]  # stopwords are not words


async def test_a_question_no_memory_answers_gets_no_hits_and_says_so(
    agent: tuple[Client, dict[str, str]],
) -> None:
    client, _ = agent
    answer = await call(client, "recall", query="How long should sourdough bread proof?",
                        notebook="shop")  # fmt: skip
    assert "hits" not in answer and "no memory matches" in answer["note"].lower()
    closest = await call(client, "recall", query="How long should sourdough bread proof?",
                         notebook="shop", near_misses=True)  # fmt: skip
    assert closest["hits"] and all(hit["below_floor"] for hit in closest["hits"])
    assert "note" not in closest


async def test_no_stranger_outranks_a_memory_that_shares_words_or_meaning(
    agent: tuple[Client, dict[str, str]],
) -> None:
    """Memories filed beside the answer in the same session share nothing with the
    question: none is listed, and every hit listed shares words or meaning."""
    client, ids = agent
    answer = await call(client, "recall", query="Where do API keys and passwords come from "
                        "at startup?", notebook="shop")  # fmt: skip
    listed = [hit["id"] for hit in answer["hits"]]
    assert ids["flags"] not in listed and ids["styling"] not in listed
    for hit in answer["hits"]:
        assert hit["matched"] in {"words", "meaning", "both"}
        assert hit.get("words") or hit["similarity"] >= 0.25


async def test_hits_far_below_the_best_are_left_out(meaning: Service) -> None:
    """The relevance floor's second rule: a match scoring under half the best is not
    listed, unless asked for; `recall.floor.share` moves it."""
    ids = {name: meaning.remember(notebook="shop", kind="fact", text=text)["id"]
           for name, text in SESSION.items()}  # fmt: skip
    query = "production release tagging and the database"
    shown = meaning.recall(query=query)["hits"]
    assert [hit["id"] for hit in shown] == [ids["release"]]
    every = {hit["id"]: hit for hit in meaning.recall(query=query, near_misses=True)["hits"]}
    weak = every[ids["staging"]]  # it holds "database", and is a little near in meaning
    assert weak["below_floor"] and weak["words"] == ["database"]
    assert weak["score"] < 0.5 * shown[0]["score"]
    meaning.change_settings(changes={"recall.floor.share": 0}, because="list every match")
    assert [hit["id"] for hit in meaning.recall(query=query)["hits"]] == [
        ids["release"], ids["staging"],
    ]  # fmt: skip
