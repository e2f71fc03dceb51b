"""Hybrid recall on both stores (issue 10): words and meaning fused, each hit saying how
it matched; with the null embedder recall is full text alone, as before vectors."""

from __future__ import annotations

from typing import Any

import pytest

from palimpsest.embed import NullEmbedder
from palimpsest.errors import ValidationError
from palimpsest.model import Memory
from palimpsest.service import Service
from palimpsest.service.context import with_context
from palimpsest.service.episodes import with_episodes
from palimpsest.service.fusion import Fused, Weights, fuse, unmatched_score
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
    assert listed["recall.weight.words"]["value"] == 0.3
    for bad in ("-0.1", "2", "lots", True):
        with pytest.raises(ValidationError) as refused:
            hybrid.change_settings(changes={"recall.weight.words": bad}, because="try")
        assert refused.value.field == "recall.weight.words"


def memory(name: str) -> Memory:
    when = "2026-01-01T00:00:00Z"
    return Memory(id=name, workspace="w", notebook_id="n", kind="fact", text=name,
                  version=1, recorded_at=when, author="a", owner=None)  # fmt: skip


def test_fusion_keeps_a_strong_word_match_above_a_vague_meaning() -> None:
    """Scores, not ranks, are fused: the best word match keeps its lead unless meaning
    says clearly otherwise, and a word match outside the nearest pool is not sunk."""
    words = [(memory("exact"), 9.0), (memory("weak"), 1.0)]
    meaning = [(memory("vague"), 0.45), (memory("weak"), 0.40), (memory("close"), 0.30)]
    hits = fuse(words, meaning, Weights(words=0.3, meaning=0.7, min_similarity=0.25))
    assert [(h.memory.id, h.matched) for h in hits] == [
        ("exact", "words"), ("vague", "meaning"), ("weak", "both"), ("close", "meaning"),
    ]  # fmt: skip


def test_a_memory_filed_beside_a_match_comes_with_it(hybrid: Service) -> None:
    """Neighbouring context: the answer filed right after a question is found with it,
    though it shares neither words nor meaning with the query."""
    asked = hybrid.remember(notebook="ops", kind="note", text="Which port does the staging "
                            "database listen on?")  # fmt: skip
    answer = hybrid.remember(notebook="ops", kind="note", text="5433, since the upgrade.")
    hybrid.remember(notebook="elsewhere", kind="note", text="Nothing to do with it.")
    hits = found(hybrid, "staging database port")
    assert [h["id"] for h in hits][:2] == [asked["id"], answer["id"]]
    assert hits[1]["matched"] == "context"
    assert answer["id"] not in [
        h["id"] for h in found(hybrid, "staging database port", kind="fact")
    ]
    hybrid.revise(id=answer["id"], status="retracted", note="wrong port")
    assert answer["id"] not in [h["id"] for h in found(hybrid, "staging database port")]
    hybrid.change_settings(changes={"recall.weight.context": 0}, because="no context")
    hybrid.revise(id=answer["id"], status="active", note="right after all")
    assert answer["id"] not in [h["id"] for h in found(hybrid, "staging database port")]


def test_context_as_of_leaves_out_what_was_filed_later(hybrid: Service) -> None:
    asked = hybrid.remember(notebook="ops", kind="note", text="Which port does the staging "
                            "database listen on?")  # fmt: skip
    then = hybrid.inspect(id=asked["id"])["memory"]["recorded_at"]
    answer = hybrid.remember(notebook="ops", kind="note", text="5433, since the upgrade.")
    assert answer["id"] in [h["id"] for h in found(hybrid, "staging database port")]
    assert answer["id"] not in [h["id"] for h in found(hybrid, "staging database port", as_of=then)]


def test_the_answer_beside_a_match_outranks_loose_matches(service: Service) -> None:
    """A neighbour that matched neither way scores what fusion would give it at most (the
    base) plus what it gains: filed right after the best match, it comes before a loose
    candidate that scores more than its gain alone but less than base and gain."""
    filed = {
        text: service.remember(notebook="ops", kind="note", text=text)["id"]
        for text in ["Which port does staging listen on?", "5433, since the upgrade."]
    }
    loose = service.remember(notebook="infra", kind="fact", text="Ports are in the wiki.")["id"]
    asked, answer = filed.values()
    search = SearchQuery(text="staging port", limit=10, statuses=("active",))
    with service.store.read(service.workspace) as tx:
        hits = [Fused(tx.get_memory(asked), 0.9, "both"), Fused(tx.get_memory(loose), 0.4, "words")]
        ranked = with_context(tx, hits, search, 0.3, lambda m, s: True, base=0.2)
        without = with_context(tx, hits, search, 0.3, lambda m, s: True)
    assert [(h.memory.id, h.matched) for h in ranked] == [
        (asked, "both"), (answer, "context"), (loose, "words"),
    ]  # fmt: skip
    assert ranked[1].score == pytest.approx(0.2 + 0.3 * 0.9)
    assert [h.memory.id for h in without] == [asked, loose, answer]


def test_context_base_is_the_bound_fusion_gives_what_it_left_out() -> None:
    """A memory outside the nearest is no nearer than the last one returned; when even
    that one is below the floor, what was left out is no match by meaning: base 0."""
    weights = Weights(words=0.3, meaning=0.7, min_similarity=0.25)
    assert unmatched_score([(memory("a"), 0.6), (memory("b"), 0.4)], weights) == (
        pytest.approx(0.7 * 0.4)
    )
    assert unmatched_score([(memory("a"), 0.6), (memory("far"), 0.1)], weights) == 0.0
    assert unmatched_score([], weights) == 0.0


def test_a_match_of_the_best_ones_notebook_and_day_rises_above_an_equal_one(
    service: Service,
) -> None:
    """Episodes: of two equal matches, the one filed in the best match's notebook on the
    day it happened comes first; another notebook's memory of that day does not gain; a
    weight of 0 leaves fusion's order."""
    monday, next_monday = "2026-03-02T09:00:00Z", "2026-03-09T09:00:00Z"
    filed = [
        ("best", "ops", "The release train left at nine.", monday),
        ("other day", "ops", "Release notes live in the wiki.", next_monday),
        ("other notebook", "home", "The train was late again.", monday),
        ("same day", "ops", "Rollback plan: redeploy the last tag.", "2026-03-02T17:30:00Z"),
    ]
    ids = {
        name: service.remember(notebook=nb, kind="note", text=text, occurred_at=when)["id"]
        for name, nb, text, when in filed
    }
    with service.store.read(service.workspace) as tx:
        unread = {m.id: m for m, _ in tx.search_found(SearchQuery(text="", limit=10))}
        scores = {"best": 0.9, "other day": 0.5, "other notebook": 0.5, "same day": 0.5}
        fused: list[Fused[Memory | Found]] = [
            Fused(unread[ids[name]], score, "words") for name, score in scores.items()
        ]
        ranked = with_episodes(tx, fused, fused, 0.3)
        unchanged = with_episodes(tx, fused, fused, 0.0)
    by_id = {memory_id: name for name, memory_id in ids.items()}
    assert [by_id[h.memory.id] for h in ranked] == [
        "best", "same day", "other day", "other notebook",
    ]  # fmt: skip
    assert ranked[1].score == pytest.approx(0.5 + 0.3 * 0.9)
    assert ranked[2].score == pytest.approx(0.5 + 0.3 * 0.5)
    assert [by_id[h.memory.id] for h in unchanged] == list(scores)


def test_recall_adds_the_episode_share_and_its_setting_turns_it_off(hybrid: Service) -> None:
    """Through recall itself: a lone match is the best of its own episode, so it scores
    1 + recall.weight.episode times what it scores with episodes off."""
    hybrid.remember(notebook="ops", kind="fact", text=CATS)
    with_episodes_on = found(hybrid, "feline")[0]["score"]
    hybrid.change_settings(changes={"recall.weight.episode": 0}, because="episodes off")
    assert with_episodes_on == pytest.approx(1.7 * found(hybrid, "feline")[0]["score"], abs=1e-3)
