"""Full text lends each match the words of the memory filed just before it, and draws in
the memory filed just after a good match (store/bm25.py), alike on both stores, within an
episode: memories that say (`occurred_at`) they happened on one day, as the turns of a
conversation do. Hybrid recall asks for it (`beside`); full text alone (the embedder
`none`) does not."""

from __future__ import annotations

import pytest

from palimpsest.embed import NullEmbedder
from palimpsest.service import Service
from palimpsest.store import SearchQuery, Store


@pytest.fixture
def words(store: Store, workspace: str) -> Service:
    return Service(store, workspace=workspace, embedder=NullEmbedder())


def searched(
    service: Service, query: str, beside: bool = True, **narrowed: object
) -> list[tuple[str, bool]]:
    """The store's full-text list, each memory with whether it was found by borrowed words."""
    search = SearchQuery(text=query, beside=beside, **narrowed)  # type: ignore[arg-type]
    with service.store.read(service.workspace) as tx:
        return [(found.id, found.borrowed) for found, _ in tx.search_found(search)]


DAY = "2026-04-02T18:00:00Z"  # the evening the conversation took place


def file(service: Service, text: str, kind: str = "note", when: str | None = DAY) -> str:
    filed = service.remember(notebook="trip", kind=kind, text=text, occurred_at=when)
    return str(filed["id"])


def test_an_answer_is_found_by_the_words_of_the_question_before_it(words: Service) -> None:
    asked = file(words, "Did you get to Lisbon in the spring?")
    answer = file(words, "Yes, in May, and the trams were lovely.")
    file(words, "Unrelated: the kettle is broken.")
    assert searched(words, "Lisbon spring") == [(asked, False), (answer, True)]
    # and recall by words alone lists the question only
    assert [hit["id"] for hit in words.recall(query="Lisbon spring")["hits"]] == [asked]


def test_a_memory_after_one_sharing_the_query_words_ranks_first(words: Service) -> None:
    file(words, "Planning the Lisbon trip")
    after_lisbon = file(words, "We booked a hotel by the river")
    file(words, "Planning the dinner")
    after_dinner = file(words, "We booked a hotel near the station")  # the newer: first on a tie
    ranked = [memory_id for memory_id, _ in searched(words, "Lisbon hotel")]
    assert ranked.index(after_lisbon) < ranked.index(after_dinner)
    plain = [memory_id for memory_id, _ in searched(words, "Lisbon hotel", beside=False)]
    assert plain.index(after_dinner) < plain.index(after_lisbon)


def test_what_is_drawn_in_passes_the_filters_and_the_time_asked(words: Service) -> None:
    file(words, "Did you get to Lisbon in the spring?")
    with words.store.read(words.workspace) as tx:
        before_the_answer = tx.last_event()
    assert before_the_answer is not None
    answer = file(words, "Yes, in May, and the trams were lovely.", kind="fact")
    assert (answer, True) in searched(words, "Lisbon spring")
    assert answer not in dict(searched(words, "Lisbon spring", kinds=("note",)))
    assert answer not in dict(searched(words, "Lisbon spring", at_seq=before_the_answer.seq))


def test_a_forgotten_memory_lends_its_words_to_nothing(words: Service) -> None:
    asked = file(words, "Did you get to Lisbon in the spring?")
    answer = file(words, "Yes, in May, and the trams were lovely.")
    assert (answer, True) in searched(words, "Lisbon spring")
    words.forget(id=asked, because="a test: its words must not be found through another")
    assert searched(words, "Lisbon spring") == []


def test_nothing_is_lent_outside_an_episode(words: Service) -> None:
    """What an agent files one after another without saying when it happened (a working
    session) is not one conversation, nor are two days of one: nothing is lent or drawn."""
    file(words, "Did you get to Lisbon in the spring?", when=None)
    file(words, "Yes, in May, and the trams were lovely.", when=None)
    file(words, "Is Lisbon warm in the spring?", when="2026-04-03T09:00:00Z")
    file(words, "Yes, in May, we swam.", when="2026-04-04T09:00:00Z")
    assert all(not borrowed for _, borrowed in searched(words, "Lisbon spring"))
    assert len(searched(words, "Lisbon spring")) == 2


def test_hybrid_recall_says_a_memory_drawn_in_by_borrowed_words_matched_by_context(
    meaning: Service,
) -> None:
    asked = meaning.remember(notebook="trip", kind="note", text="Is the Lisbon flight at 9?",
                             occurred_at=DAY)  # fmt: skip
    answer = meaning.remember(notebook="trip", kind="note", text="No: 11:40, gate B.",
                              occurred_at=DAY)  # fmt: skip
    hits = {hit["id"]: hit["matched"] for hit in meaning.recall(query="Lisbon flight")["hits"]}
    assert hits[asked["id"]] == "both" and hits[answer["id"]] in ("context", "meaning")
