"""SearchReader (store/protocols.py): full text over every version, under every filter,
never a forgotten version nor another workspace's, and the memories filed beside."""

from __future__ import annotations

from palimpsest.domain.model import Tombstone
from palimpsest.store import SearchQuery, Store

from .records import at, event, filed, memory, new_id, revised

DIGITS_AS_LETTERS = str.maketrans("0123456789", "ghijklmnop")


def ids(found: list[tuple[object, float]]) -> list[str]:
    return [getattr(hit, "id") for hit, _ in found]  # noqa: B009 (Memory or Found alike)


def test_search_finds_by_words_best_first_under_every_filter(store: Store, workspace: str) -> None:
    with store.write(workspace) as tx:
        both = memory(workspace, "nb_a", "The gateway deploy needs a token", tags=("ops",))
        filed(tx, both)
        one = memory(workspace, "nb_a", "Every deploy runs the tests", kind="decision")
        filed(tx, one)
        other_notebook = memory(workspace, "nb_b", "A gateway deploy elsewhere")
        filed(tx, other_notebook)
        retired = memory(workspace, "nb_a", "The gateway deploy was manual", status="superseded")
        filed(tx, retired)
        expired = memory(workspace, "nb_a", "A gateway deploy freeze", expires_at=at(5, day=2))
        filed(tx, expired)
    with store.read(workspace) as tx:
        found = tx.search(SearchQuery("gateway deploy", notebook_ids=("nb_a",)))
        assert set(ids(found)) == {both.id, one.id, expired.id}
        assert ids(found)[-1] == one.id  # one word of two ranks last
        assert [score for _, score in found] == sorted((s for _, s in found), reverse=True)
        assert ids(tx.search(SearchQuery("deploy", kinds=("decision",)))) == [one.id]
        assert ids(tx.search(SearchQuery("deploy", tags=("ops",)))) == [both.id]
        assert ids(tx.search(SearchQuery("deploy", statuses=("superseded",)))) == [retired.id]
        alive = set(ids(tx.search(SearchQuery("freeze deploy", alive_at=at(0, day=3)))))
        assert expired.id not in alive and both.id in alive
        assert len(tx.search(SearchQuery("deploy", limit=2))) == 2
        assert tx.search(SearchQuery("deploy", notebook_ids=())) == []


def test_search_as_of_an_event_finds_the_version_current_then(store: Store, workspace: str) -> None:
    with store.write(workspace) as tx:
        first = memory(workspace, "nb_a", "The broker is RabbitMQ")
        seq = filed(tx, first)
        second, _ = revised(tx, first, text="The broker is Kafka")
    with store.read(workspace) as tx:
        assert tx.search(SearchQuery("rabbitmq")) == []
        then = tx.search(SearchQuery("rabbitmq", at_seq=seq))
        assert [hit for hit, _ in then] == [first]
        assert [hit for hit, _ in tx.search(SearchQuery("kafka"))] == [second]


def test_search_never_finds_a_forgotten_version_nor_another_workspaces(
    store: Store, workspace: str
) -> None:
    word = "zebrafish" + new_id("w")[-6:].translate(DIGITS_AS_LETTERS)  # this test's own
    elsewhere = f"{workspace}-other"
    with store.write(elsewhere) as tx:
        filed(tx, memory(elsewhere, "nb_a", f"Their {word} notes"))
    with store.write(workspace) as tx:
        gone = memory(workspace, "nb_a", f"Our {word} secret")
        seq = filed(tx, gone)
        forget = tx.append_event(event("forget", gone.id))
        tx.forget_memory(Tombstone(gone.id, at(9), "user:ann", "secret"), forget)
    with store.read(workspace) as tx:
        assert tx.search(SearchQuery(word)) == []
        assert tx.search(SearchQuery(word, at_seq=seq)) == []
        assert tx.search(SearchQuery("", statuses=())) == []  # nothing of ours is left
    with store.read(elsewhere) as tx:
        assert len(tx.search(SearchQuery(word))) == 1


def test_text_with_no_terms_answers_the_newest_versions_passing_the_filters(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        made = [memory(workspace, "nb_a", f"Note number {n}") for n in range(3)]
        for each in made:
            filed(tx, each)
    with store.read(workspace) as tx:
        assert ids(tx.search(SearchQuery("", limit=2))) == [made[2].id, made[1].id]


def test_found_versions_read_back_by_row_with_their_facts(store: Store, workspace: str) -> None:
    with store.write(workspace) as tx:
        m = memory(workspace, "nb_a", "Lunch was at noon", author="user:bob",
                   occurred_at=at(0, day=4))  # fmt: skip
        filed(tx, m)
    with store.read(workspace) as tx:
        found = tx.search_found(SearchQuery("lunch"))
        assert [(f.id, f.borrowed) for f, _ in found] == [(m.id, False)]
        rowid = found[0][0].rowid
        assert tx.versions_of_rows([rowid]) == {rowid: m}
        facts = tx.facts_of_rows([rowid])[rowid]
        assert (facts.notebook_id, facts.day, facts.author) == ("nb_a", "2026-01-04", "user:bob")
        assert tx.versions_of_rows([]) == {} and tx.facts_of_rows([]) == {}


def test_filed_beside_names_the_memories_filed_around_on_the_same_day(
    store: Store, workspace: str
) -> None:
    day = at(0, day=7)
    with store.write(workspace) as tx:
        made = [memory(workspace, "nb_a", f"Episode step {n}", occurred_at=day) for n in range(4)]
        seqs = [filed(tx, each) for each in made[:3]]
        filed(tx, memory(workspace, "nb_b", "Another notebook between", occurred_at=day))
        filed(tx, memory(workspace, "nb_a", "Another day", occurred_at=at(0, day=8)))
        filed(tx, made[3])
        no_day = memory(workspace, "nb_a", "Says no day")
        filed(tx, no_day)
    a, b, c, d = (m.id for m in made)
    with store.read(workspace) as tx:
        beside = tx.filed_beside([b], 1, None)
        assert beside == {b: [(a, -1), (c, 1)]}
        assert tx.filed_beside([c], 1, None) == {c: [(b, -1)]}  # the next is another day's
        assert tx.filed_beside([b], 2, None) == {b: [(a, -1), (c, 1)]}
        assert tx.filed_beside([b], 1, seqs[1]) == {b: [(a, -1)]}  # c came later
        assert tx.filed_beside([no_day.id], 1, None) == {}
        assert tx.filed_beside([d], 1, None) == {d: []}  # the one before it is of another day
