"""Hybrid recall on both stores (issue 10): words and meaning fused, each hit saying how
it matched; with the null embedder recall is full text alone, as before vectors."""

from __future__ import annotations

from typing import Any

import pytest

from palimpsest.domain.errors import ValidationError
from palimpsest.domain.model import Memory
from palimpsest.embed import NullEmbedder
from palimpsest.service import Service
from palimpsest.service.context import with_context
from palimpsest.service.episodes import with_episodes
from palimpsest.service.fusion import Fused, Weights, fuse
from palimpsest.store import Found, SearchQuery, Store

CATS = "Our cat Misu sleeps on the radiator all winter."
MAILS = "Login emails dropped by the provider since Tuesday."
OTHERS = [
    "Deploys go out with make release.",
    "The database runs PostgreSQL 16 on the big host.",
    "Tuesday's standup moved to the afternoon.",
]


@pytest.fixture
def hybrid(meaning: Service) -> Service:
    return meaning


def fill(service: Service) -> dict[str, str]:
    return {
        text: service.remember(notebook="home", kind="fact", text=text)["id"]
        for text in [CATS, MAILS, *OTHERS]
    }


def found(service: Service, query: str, **filters: Any) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = service.recall(query=query, **filters)["hits"]
    return hits


def test_meaning_finds_what_no_word_matches(hybrid: Service) -> None:
    ids = fill(hybrid)
    cats = found(hybrid, "feline")
    assert [h["id"] for h in cats][:1] == [ids[CATS]]
    assert cats[0]["matched"] == "meaning"
    mails = found(hybrid, "why are password reset mails not arriving")
    assert mails[0]["id"] == ids[MAILS]
    assert mails[0]["matched"] == "meaning"


def test_null_embedder_is_full_text_alone(store: Store, workspace: str) -> None:
    service = Service(store, workspace=workspace, embedder=NullEmbedder())
    ids = fill(service)
    assert found(service, "feline") == []
    assert ids[MAILS] not in [h["id"] for h in found(service, "password reset mails arriving")]
    assert [(h["id"], h["matched"]) for h in found(service, "radiator")] == [(ids[CATS], "words")]


def test_matched_says_words_meaning_both_id_and_key(hybrid: Service) -> None:
    ids = fill(hybrid)
    cats = found(hybrid, "cat sleeping on the radiator")
    assert (cats[0]["id"], cats[0]["matched"]) == (ids[CATS], "both")
    by_id = found(hybrid, ids[MAILS])
    assert (by_id[0]["id"], by_id[0]["matched"]) == (ids[MAILS], "id")
    keyed = hybrid.remember(notebook="home", kind="fact", text="Port 5433.", key="pg-port")
    first = found(hybrid, "pg-port")[0]
    assert (first["id"], first["matched"]) == (keyed["id"], "key")
    listed = found(hybrid, "", notebook="home")
    assert listed and {h["matched"] for h in listed} == {"filters"}


def test_no_match_lists_nothing(hybrid: Service) -> None:
    """In a small store every memory is among the nearest: a query that means none of them
    must not list them all."""
    fill(hybrid)
    assert found(hybrid, "quantum chromodynamics lattice") == []


def test_filters_as_of_and_retired_hold_for_meaning(hybrid: Service) -> None:
    ids = fill(hybrid)
    other = hybrid.remember(notebook="pets", kind="note", text="Kittens need vaccines at 8 weeks.")
    assert ids[CATS] not in [h["id"] for h in found(hybrid, "feline", notebook="pets")]
    assert [h["id"] for h in found(hybrid, "feline", kind="note")] == [other["id"]]
    before = hybrid.inspect(id=ids[CATS])["memory"]["recorded_at"]
    hybrid.revise(id=ids[CATS], status="retracted", note="the cat moved out")
    assert ids[CATS] not in [h["id"] for h in found(hybrid, "feline")]
    retired = found(hybrid, "feline", include_retired=True)
    assert ids[CATS] in [h["id"] for h in retired]
    then = found(hybrid, "feline", as_of=before)
    assert ids[CATS] in [h["id"] for h in then] and other["id"] not in [h["id"] for h in then]


def test_weights_are_workspace_settings(hybrid: Service) -> None:
    ids = fill(hybrid)
    hybrid.change_settings(changes={"recall.weight.meaning": "0"}, because="words only here")
    hybrid.change_settings(changes={"recall.min_similarity": 1}, because="no meaning match")
    assert found(hybrid, "feline") == []
    assert found(hybrid, "radiator")[0]["id"] == ids[CATS]
    listed = hybrid.settings()["settings"]
    assert listed["recall.weight.words"]["value"] == 0.4
    for bad in ("-0.1", "2", "lots", True):
        with pytest.raises(ValidationError) as refused:
            hybrid.change_settings(changes={"recall.weight.words": bad}, because="try")
        assert refused.value.field == "recall.weight.words"


def memory(name: str) -> Memory:
    when = "2026-01-01T00:00:00Z"
    return Memory(id=name, workspace="w", notebook_id="n", kind="fact", text=name,
                  version=1, recorded_at=when, author="a", owner=None)  # fmt: skip


def test_fusion_scores_each_side_absolutely() -> None:
    """A full-text score is the share of the query's words a memory holds: one holding a
    small share of them does not outrank one close in meaning, however it ranks among the
    word matches (min-max scaling once gave it the whole words weight). A word match the
    store found near keeps its own similarity, and one below the floor is `words`."""
    words = [(memory("one word"), 0.25), (memory("far"), 0.2)]
    meaning = [(memory("close"), 0.62), (memory("one word"), 0.30), (memory("far"), 0.05)]
    meaning += [(memory(f"m{n}"), 0.04) for n in range(10)]
    hits = fuse(words, meaning, Weights(words=0.4, meaning=0.7, min_similarity=0.25))
    assert [(h.memory.id, h.matched) for h in hits][:3] == [
        ("close", "meaning"), ("one word", "both"), ("far", "words"),
    ]  # fmt: skip
    assert (hits[1].words, hits[1].similarity) == (0.25, 0.30)
    assert hits[2].score == pytest.approx(0.4 * 0.2 + 0.7 * 0.05)


def test_meaning_weighs_less_where_every_memory_is_as_near_as_the_next() -> None:
    """Trust: where the nearest memory stands apart from the tenth, meaning counts whole;
    where all are about as near (a long chat of short turns), words decide."""
    weights = Weights(words=0.4, meaning=0.7, min_similarity=0.25)
    words = [(memory("worded"), 0.6)]
    apart = [(memory("near"), 0.70)] + [(memory(f"m{n}"), 0.30) for n in range(10)]
    crowded = [(memory("near"), 0.70)] + [(memory(f"m{n}"), 0.66) for n in range(10)]
    assert fuse(words, apart, weights)[0].memory.id == "near"
    assert fuse(words, crowded, weights)[0].memory.id == "worded"


def test_a_memory_filed_beside_a_match_in_one_conversation_comes_with_it(
    hybrid: Service,
) -> None:
    """Neighbouring context, within an episode (the turns of one conversation say when
    they happened): the answer filed right after a question is found with it, though it
    shares neither words nor meaning with the query."""
    when = "2026-03-02T09:00:00Z"
    asked = hybrid.remember(notebook="ops", kind="note", text="Which port does the staging "
                            "database listen on?", occurred_at=when)  # fmt: skip
    answer = hybrid.remember(notebook="ops", kind="note", text="5433, since the upgrade.",
                             occurred_at=when)  # fmt: skip
    hybrid.remember(notebook="elsewhere", kind="note", text="Nothing to do with it.")
    hits = found(hybrid, "staging database port")
    assert [h["id"] for h in hits][:2] == [asked["id"], answer["id"]]
    assert hits[1]["matched"] == "context" and "words" not in hits[1]
    assert answer["id"] not in [
        h["id"] for h in found(hybrid, "staging database port", kind="fact")
    ]
    hybrid.revise(id=answer["id"], status="retracted", note="wrong port")
    assert answer["id"] not in [h["id"] for h in found(hybrid, "staging database port")]
    hybrid.change_settings(changes={"recall.weight.context": 0}, because="no context")
    hybrid.revise(id=answer["id"], status="active", note="right after all")
    assert answer["id"] not in [h["id"] for h in found(hybrid, "staging database port")]


def test_what_an_agent_files_in_one_session_lends_nothing(hybrid: Service) -> None:
    """Memories filed one after the other without saying when they happened (an agent's
    working session) are not one conversation: none comes in for being filed beside a
    match, and none gains from the best match of the day."""
    asked = hybrid.remember(notebook="ops", kind="note", text="Which port does the staging "
                            "database listen on?")  # fmt: skip
    beside = hybrid.remember(notebook="ops", kind="note", text="5433, since the upgrade.")
    assert beside["id"] not in [h["id"] for h in found(hybrid, "staging database port")]
    other_day = hybrid.remember(notebook="ops", kind="note", text="5433, since the upgrade",
                                occurred_at="2026-03-02T09:00:00Z")  # fmt: skip
    hits = found(hybrid, "staging database port")
    assert [h["id"] for h in hits] == [asked["id"]] and other_day["id"] != asked["id"]


def test_context_as_of_leaves_out_what_was_filed_later(hybrid: Service) -> None:
    when = "2026-03-02T09:00:00Z"
    asked = hybrid.remember(notebook="ops", kind="note", text="Which port does the staging "
                            "database listen on?", occurred_at=when)  # fmt: skip
    then = hybrid.inspect(id=asked["id"])["memory"]["recorded_at"]
    answer = hybrid.remember(notebook="ops", kind="note", text="5433, since the upgrade.",
                             occurred_at=when)  # fmt: skip
    assert answer["id"] in [h["id"] for h in found(hybrid, "staging database port")]
    assert answer["id"] not in [h["id"] for h in found(hybrid, "staging database port", as_of=then)]


def test_context_lends_within_an_episode_only(service: Service) -> None:
    """A candidate filed right after the best match gains a share of its score when both
    say they happened that day; one filed beside it without a date gains nothing, and no
    memory that is not a candidate enters the list."""
    when = "2026-03-02T09:00:00Z"
    asked = service.remember(notebook="ops", kind="note", text="Which port?", occurred_at=when)
    answer = service.remember(notebook="ops", kind="note", text="5433.", occurred_at=when)
    undated = service.remember(notebook="ops", kind="note", text="Ports are in the wiki.")
    service.remember(notebook="ops", kind="note", text="Unrelated.", occurred_at=when)
    with service.store.read(service.workspace) as tx:
        hits = [Fused(tx.get_memory(asked["id"]), 0.9, "both"),
                Fused(tx.get_memory(undated["id"]), 0.4, "words"),
                Fused(tx.get_memory(answer["id"]), 0.3, "words")]  # fmt: skip
        ranked = with_context(tx, hits, None, 0.3)
    assert [h.memory.id for h in ranked] == [asked["id"], answer["id"], undated["id"]]
    assert ranked[1].score == pytest.approx(0.3 + 0.3 * 0.9)
    assert ranked[2].score == pytest.approx(0.4)


def test_a_match_of_the_best_ones_notebook_and_day_rises_above_an_equal_one(
    service: Service,
) -> None:
    """Episodes: of two equal matches, the one filed in the best match's notebook on the
    day it happened comes first; another notebook's memory of that day does not gain; a
    weight of 0 leaves fusion's order. A memory that names no day is in no episode."""
    monday, next_monday = "2026-03-02T09:00:00Z", "2026-03-09T09:00:00Z"
    filed = [
        ("best", "ops", "The release train left at nine.", monday),
        ("other day", "ops", "Release notes live in the wiki.", next_monday),
        ("other notebook", "home", "The train was late again.", monday),
        ("same day", "ops", "Rollback plan: redeploy the last tag.", "2026-03-02T17:30:00Z"),
        ("undated best", "ops", "Deploys need two reviews.", None),
        ("undated", "ops", "The wiki moved to Notion.", None),  # recorded the same day
    ]
    ids = {
        name: service.remember(notebook=nb, kind="note", text=text, occurred_at=when)["id"]
        for name, nb, text, when in filed
    }
    with service.store.read(service.workspace) as tx:
        unread = {m.id: m for m, _ in tx.search_found(SearchQuery(text="", limit=10))}
        scores = {"best": 0.9, "undated best": 0.9, "other day": 0.5, "other notebook": 0.5,
                  "same day": 0.5, "undated": 0.45}  # fmt: skip
        fused: list[Fused[Memory | Found]] = [
            Fused(unread[ids[name]], score, "words") for name, score in scores.items()
        ]
        ranked = with_episodes(tx, fused, fused, 0.3)
        unchanged = with_episodes(tx, fused, fused, 0.0)
    by_id = {memory_id: name for name, memory_id in ids.items()}
    assert [by_id[h.memory.id] for h in ranked] == [
        "best", "undated best", "same day", "other day", "other notebook", "undated",
    ]  # fmt: skip
    assert ranked[2].score == pytest.approx(0.5 + 0.3 * 0.9)
    assert ranked[3].score == pytest.approx(0.5 + 0.3 * 0.5)
    assert ranked[1].score == 0.9 and ranked[5].score == 0.45
    assert [by_id[h.memory.id] for h in unchanged] == list(scores)


def test_recall_adds_the_episode_share_and_its_setting_turns_it_off(hybrid: Service) -> None:
    """Through recall itself: a lone match is the best of its own episode, so it scores
    1 + recall.weight.episode times what it scores with episodes off (without a day of
    its own it is in no episode and gains nothing)."""
    undated = hybrid.remember(notebook="ops", kind="fact", text=CATS)["id"]
    dated = hybrid.remember(notebook="home", kind="fact", text=CATS, occurred_at="2026-03-02")
    on = {hit["id"]: hit["score"] for hit in found(hybrid, "feline")}
    hybrid.change_settings(changes={"recall.weight.episode": 0}, because="episodes off")
    off = {hit["id"]: hit["score"] for hit in found(hybrid, "feline")}
    assert on[dated["id"]] == pytest.approx(1.7 * off[dated["id"]], abs=1e-3)
    assert on[undated] == pytest.approx(off[undated], abs=1e-4)
