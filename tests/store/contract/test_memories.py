"""MemoryReader / MemoryWriter (store/protocols.py): versions over spans of events, the
key rule, and a forget that leaves a tombstone and no content."""

from __future__ import annotations

import pytest

from palimpsest.domain.errors import Conflict
from palimpsest.domain.model import Tombstone, normalize_text
from palimpsest.store import EventFilter, Store

from .records import at, event, filed, memory, new_id, revised


def test_put_memory_makes_the_current_version_and_memory_at_gives_each_as_of_its_event(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        first = memory(workspace, "nb_a", "The cache holds ten entries")
        first_seq = filed(tx, first)
        second, second_seq = revised(tx, first, text="The cache holds twenty entries")
    with store.read(workspace) as tx:
        assert tx.get_memory(first.id) == second
        assert tx.memory_at(first.id, first_seq - 1) is None  # before it was filed
        assert tx.memory_at(first.id, first_seq) == first
        assert tx.memory_at(first.id, second_seq - 1) == first
        assert tx.memory_at(first.id, second_seq) == second
        versions = tx.memory_versions(first.id)
        assert [(v.version, v.seq, v.op, v.memory) for v in versions] == [
            (1, first_seq, "remember", first), (2, second_seq, "revise", second),
        ]  # fmt: skip
        assert [v.actor for v in versions] == ["user:ann", "user:ann"]


def test_memories_at_gives_the_state_of_each_memory_as_of_an_event_by_notebook(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        kept = memory(workspace, "nb_a", "Deploys run on Fridays", id="m_" + "a" * 16)
        kept_seq = filed(tx, kept)
        other = memory(workspace, "nb_b", "Backups run nightly", id="m_" + "b" * 16)
        filed(tx, other)
        changed, _ = revised(tx, kept, text="Deploys run on Mondays")
    with store.read(workspace) as tx:
        assert tx.memories_at(kept_seq) == [kept]
        assert tx.memories_at(None) == [changed, other]  # by id
        assert tx.memories_at(None, "nb_b") == [other]


def test_all_versions_gives_every_version_on_disk_oldest_first(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        first = memory(workspace, "nb_a", "Tokens expire after an hour")
        filed(tx, first)
        second, _ = revised(tx, first, text="Tokens expire after a day")
        gone = memory(workspace, "nb_a", "A version forgotten whole")
        filed(tx, gone)
        tx.forget_version(gone.id, 1)
    with store.read(workspace) as tx:
        assert list(tx.all_versions()) == [first, second]


def test_lookups_by_text_and_key_read_current_versions_only(store: Store, workspace: str) -> None:
    key = new_id("key")
    with store.write(workspace) as tx:
        first = memory(workspace, "nb_a", "Ports: web on 8080", key=key)
        first_seq = filed(tx, first)
        second, _ = revised(tx, first, text="Ports: web on 9090")
        retired = memory(workspace, "nb_b", "Ports: old", key=key, status="superseded")
        filed(tx, retired)
    with store.read(workspace) as tx:
        assert tx.find_by_text("nb_a", normalize_text(second.text)) == [second]
        assert tx.find_by_text("nb_a", normalize_text(first.text)) == []
        assert tx.key_holder("nb_a", key) == second
        assert tx.key_holder("nb_b", key) is None  # not active
        assert {m.id: m.version for m in tx.memories_with_key(key, None)} == {
            first.id: 2, retired.id: 1,
        }  # fmt: skip
        assert tx.memories_with_key(key, first_seq) == [first]


def test_two_active_memories_of_a_notebook_never_share_a_key(store: Store, workspace: str) -> None:
    key = new_id("key")
    with store.write(workspace) as tx:
        filed(tx, memory(workspace, "nb_a", "The first holder", key=key))
        filed(tx, memory(workspace, "nb_b", "Another notebook may hold it", key=key))
        filed(tx, memory(workspace, "nb_a", "A retired one may", key=key, status="retracted"))
    with pytest.raises(Conflict), store.write(workspace) as tx:
        filed(tx, memory(workspace, "nb_a", "A second holder", key=key))
    with store.read(workspace) as tx:
        assert len(tx.memories_with_key(key, None)) == 3  # the refused write left nothing


def test_a_forgotten_memory_has_a_tombstone_and_no_version_at_any_time(
    store: Store, workspace: str
) -> None:
    key = new_id("key")
    with store.write(workspace) as tx:
        m = memory(workspace, "nb_a", "The admin password hint is tulip", key=key)
        seq = filed(tx, m)
        revised(tx, m, text="The admin password hint is rose")
        tombstone = Tombstone(m.id, at(9), "user:ann", "it was a secret")
        forget_seq = tx.append_event(event("forget", m.id, notebook_id="nb_a", at=at(9)))
        tx.forget_memory(tombstone, forget_seq)
    with store.read(workspace) as tx:
        assert tx.get_memory(m.id) is None
        assert tx.get_tombstone(m.id) == tombstone
        assert tx.memory_at(m.id, seq) is None
        assert [v.memory for v in tx.memory_versions(m.id)] == [None, None]
        assert m.id not in {v.id for v in tx.all_versions()}
        assert tx.key_holder("nb_a", key) is None
        assert tx.find_by_text("nb_a", normalize_text(m.text)) == []
        assert m.id in {p.target_id for p in tx.pending_scrubs()}
        before = [e for e in tx.events(EventFilter(target_id=m.id)) if e.seq < forget_seq]
        assert before and all(e.data == {} and e.note is None for e in before)


def test_forget_version_scrubs_that_version_alone(store: Store, workspace: str) -> None:
    with store.write(workspace) as tx:
        first = memory(workspace, "nb_a", "The old value was hunter2")
        filed(tx, first)
        second, _ = revised(tx, first, text="The value is rotated")
        tx.forget_version(first.id, 1)
    with store.read(workspace) as tx:
        assert [v.memory for v in tx.memory_versions(first.id)] == [None, second]
        assert tx.get_memory(first.id) == second
        assert tx.get_tombstone(first.id) is None
        assert first.id in {p.target_id for p in tx.pending_scrubs()}


def test_a_memory_of_another_workspace_is_not_seen(store: Store, workspace: str) -> None:
    elsewhere = f"{workspace}-other"
    with store.write(elsewhere) as tx:
        theirs = memory(elsewhere, "nb_a", "Another team's secret plan", key="plan")
        seq = filed(tx, theirs)
    with store.read(workspace) as tx:
        assert tx.get_memory(theirs.id) is None
        assert tx.memory_at(theirs.id, seq) is None
        assert tx.memory_versions(theirs.id) == []
        assert tx.memories_with_key("plan", None) == []
        assert theirs.id not in {m.id for m in tx.memories_at(None)}
    with store.read(elsewhere) as tx:
        assert tx.get_memory(theirs.id) == theirs
