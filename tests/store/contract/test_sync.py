"""SyncReader / SyncWriter (store/protocols.py): a server's changes after a position, and a
replica writing them under numbers of its own, through the protocols alone."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from palimpsest.domain.errors import Conflict
from palimpsest.domain.model import Link, Tombstone
from palimpsest.store import ReplicaState, Store

from .records import at, event, filed, memory, new_id, notebook, revised


def test_changes_after_a_position_are_the_next_events_and_what_they_made(
    store: Store, workspace: str
) -> None:
    nb = notebook(workspace, "synced")
    with store.write(workspace) as tx:
        tx.put_notebook(nb)
        m = memory(workspace, nb.id, "The pool holds twenty")
        first = filed(tx, m)
        _, second = revised(tx, m, text="The pool holds thirty")
        tx.put_vector(m.id, second, np.array([0.6, 0.8], dtype=np.float32), "model")
        tx.put_setting("recall.min_similarity", 0.3)
    with store.read(workspace) as tx:
        op_id = tx.event_op_id(first)
        head = tx.changes_after(0, 1)
        tail = tx.changes_after(first, 10)
        assert tx.changes_after(second, 10).events == []
        assert tx.event_op_id(second + 1000) is None
    assert op_id is not None and op_id.startswith("op_")
    assert [(e["seq"], e["op_id"]) for e in head.events] == [(first, op_id)]
    # Version 1 is closed by event `second`, after this answer: it is sent open.
    assert [(v["version"], v["to_seq"]) for v in head.versions] == [(1, None)]
    assert head.closed == [] and head.vectors == []
    assert [e["seq"] for e in tail.events] == [second]
    assert [(v["version"], v["text"]) for v in tail.versions] == [(2, "The pool holds thirty")]
    assert tail.closed == [(m.id, 1, second)]
    assert [(v["memory_id"], v["version"], v["model"]) for v in tail.vectors] == [
        (m.id, 2, "model")
    ]
    assert np.allclose(np.frombuffer(tail.vectors[0]["vector"], dtype="<f4"), [0.6, 0.8])
    assert tail.link_ends == [m.id]
    assert {(s["name"], s["value"]) for s in tail.settings} == {("recall.min_similarity", "0.3")}


def test_a_replica_applies_changes_once_under_its_own_numbers(
    store: Store, empty_store: Store, workspace: str
) -> None:
    nb = notebook(workspace, "synced")
    with store.write(workspace) as tx:
        tx.put_notebook(nb)
        m = memory(workspace, nb.id, "Applied as it was")
        other = memory(workspace, nb.id, "Linked to it")
        first = filed(tx, m)
        filed(tx, other)
        current, last = revised(tx, m, text="Applied as it is now")
        tx.put_vector(m.id, last, np.array([1.0, 0.0], dtype=np.float32), "model")
        tx.add_link(Link(new_id("ln"), workspace, m.id, other.id, "relates_to", at(5), "user:ann"))
    with store.read(workspace) as tx:
        rounds = [tx.changes_after(0, 1), tx.changes_after(first, 100)]
    with empty_store.write("replica") as tx:
        assert [tx.apply_changes(c, "model") for c in rounds] == [{"events": 1}, {"events": 2}]
        assert tx.apply_changes(rounds[1], "model") == {"events": 0}  # applied twice: once
    another = replace(rounds[0], events=[{**e, "op_id": new_id("op")} for e in rounds[0].events])
    with pytest.raises(Conflict), empty_store.write("replica") as tx:
        tx.apply_changes(another, "model")  # another history under the same numbers
    with empty_store.read("replica") as tx:
        assert tx.get_memory(m.id) == replace(current, workspace="replica")
        versions = tx.memory_versions(m.id)
        assert [(v.version, v.memory and v.memory.text) for v in versions] == [
            (1, "Applied as it was"), (2, "Applied as it is now")]  # fmt: skip
        assert versions[0].seq < versions[1].seq
        past = tx.memory_at(m.id, versions[0].seq)
        assert past is not None and past.text == "Applied as it was"
        assert [(ln.source_id, ln.target_id) for ln in tx.links(m.id)] == [(m.id, other.id)]
        vector = tx.vector_of(m.id, 2, "model")
        assert vector is not None and np.allclose(vector, [1.0, 0.0])


def test_a_forget_pulled_scrubs_the_replica_as_it_did_the_server(
    store: Store, empty_store: Store, workspace: str
) -> None:
    nb = notebook(workspace, "synced")
    with store.write(workspace) as tx:
        tx.put_notebook(nb)
        m = memory(workspace, nb.id, "A secret pasted by mistake")
        filed(tx, m)
    with store.read(workspace) as tx:
        pulled = tx.changes_after(0, 100)
    with empty_store.write("replica") as tx:
        tx.apply_changes(pulled, None)
    with store.write(workspace) as tx:
        seq = tx.append_event(event("forget", m.id, notebook_id=nb.id))
        tx.forget_memory(Tombstone(m.id, at(9), "user:ann", "a mistake"), seq)
    with store.read(workspace) as tx:
        forgotten = tx.changes_after(pulled.events[-1]["seq"], 100)
    with empty_store.write("replica") as tx:
        assert tx.apply_changes(forgotten, None) == {"events": 1}
    with empty_store.read("replica") as tx:
        tombstone = tx.get_tombstone(m.id)
        assert tombstone is not None and tombstone.reason == "a mistake"
        assert list(tx.all_versions()) == []


def test_a_replica_keeps_what_it_knows_of_its_server(store: Store, workspace: str) -> None:
    with store.read(workspace) as tx:
        assert tx.replica_state() is None
    first = ReplicaState("https://a.example", "default", 7, "op_abc", "editor", at(3))
    with store.write(workspace) as tx:
        tx.put_replica_state(first)
    later = replace(first, position_seq=9, position_op_id="op_def", refused="key revoked")
    with store.write(workspace) as tx:
        tx.put_replica_state(later)
    with store.read(workspace) as tx:
        assert tx.replica_state() == later
    with store.read(f"{workspace}-other") as tx:
        assert tx.replica_state() is None
