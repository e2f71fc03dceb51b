"""Recall and the authors a query names (service/authors.py), on both stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest.evaluation import locomo
from palimpsest.service import Service
from palimpsest.service.authors import named_authors
from palimpsest.store import SearchQuery, open_store

from ..recall.test_bench_recall import write_jsonl


def test_a_person_is_named_by_every_word_of_the_name_and_only_among_others() -> None:
    authors = {1: "user:Ana Lima", 2: "user:ben", 3: "agent:deploy", 4: None}
    assert named_authors(authors, ["ana", "lima", "move"]) == {"user:Ana Lima"}
    assert named_authors(authors, ["ana", "move"]) == set()  # half a name names no one
    assert named_authors(authors, ["ana", "lima", "ben"]) == {"user:Ana Lima", "user:ben"}
    # An agent's name is a word of the trade; `user:local` is the machine's own user.
    assert named_authors(authors, ["deploy", "fail"]) == set()
    assert named_authors({1: "user:local", 2: "user:ben"}, ["local", "cach"]) == set()
    # One author among the candidates: naming them would tell nothing apart.
    assert named_authors({1: "user:ana", 2: "user:ana"}, ["ana"]) == set()


def test_full_text_leaves_out_the_terms_it_is_told_to_unless_none_would_be_left() -> None:
    query = SearchQuery(text="What did Ana say about the cache?", without=frozenset({"ana"}))
    assert query.terms() == ["say", "cach"]
    assert SearchQuery(text="Ana", without=frozenset({"ana"})).terms() == ["ana"]


def filed_by(service: Service, actor: str, text: str) -> str:
    return str(service.with_actor(actor).remember(notebook="team", kind="fact", text=text)["id"])


def test_a_query_naming_an_author_puts_their_memory_first(meaning: Service) -> None:
    ana = filed_by(meaning, "user:Ana", "I moved to Porto last spring.")
    ben = filed_by(meaning, "user:Ben", "I moved to Lisbon last spring.")

    def first(query: str) -> str:
        return str(meaning.recall(query=query, notebook="team")["hits"][0]["id"])

    assert first("Where did Ana move to last spring?") == ana
    assert first("Where did Ben move to last spring?") == ben
    meaning.change_settings(changes={"recall.weight.author": 0}, because="authors off")
    assert first("Where did Ana move to last spring?") == ben  # by words and meaning alone


def test_a_name_matched_by_authorship_is_not_searched_as_a_word(meaning: Service) -> None:
    """Ben's memory shares only Ana's name with the question: it is no match by words."""
    ana = filed_by(meaning, "user:Ana", "The staging database runs on the old host.")
    ben = filed_by(meaning, "user:Ben", "Ana, Ana and Ana again: lunch on Friday.")
    hits = {hit["id"]: hit for hit in meaning.recall(query="Ana staging host")["hits"]}
    assert hits[ana]["matched"] == "both"
    assert ben not in hits or hits[ben]["matched"] == "meaning"


def test_locomo_turns_are_filed_by_their_speakers(tmp_path: Path) -> None:
    folder = tmp_path / "locomo"
    folder.mkdir()
    turns = [{"id": "D1:1", "speaker": "Ana", "text": "I adopted a kitten."},
             {"id": "D1:2", "speaker": "Ben", "text": "What is its name?"},
             {"id": "D1:3", "speaker": "", "text": "(no speaker)"}]  # fmt: skip
    write_jsonl(folder / "c.memories.jsonl", turns)
    write_jsonl(folder / "c.questions.jsonl", [])
    store = open_store(str(tmp_path / "filed.db"))
    try:
        service = Service(store, actor="user:bench")
        locomo.file_locomo(service, locomo.read_locomo(folder))
        hits = service.recall(limit=10)["hits"]
        authors = {h["text"]: service.inspect(id=h["id"])["memory"]["author"] for h in hits}
    finally:
        store.close()
    assert authors == {
        "Ana: I adopted a kitten.": "user:Ana",
        "Ben: What is its name?": "user:Ben",
        ": (no speaker)": "user:bench",  # no name an actor may hold: the filer's own
    }


@pytest.mark.parametrize("actor", ["agent:", "robot:x", "user:a\x00b"])
def test_acting_as_another_actor_is_refused_as_any_actor_is(meaning: Service, actor: str) -> None:
    from palimpsest.domain.errors import ValidationError

    with pytest.raises(ValidationError) as refused:
        meaning.with_actor(actor)
    assert refused.value.field == "actor"
