"""CopyReader / CopyWriter (store/protocols.py): a workspace dumped and loaded into an
empty one gives the same memories, versions, events and vectors, numbered anew."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from palimpsest.domain.model import Tombstone
from palimpsest.store import EventFilter, Store

from .records import at, event, filed, memory, new_id, notebook, revised


def test_a_dump_loaded_into_an_empty_workspace_is_the_same_workspace(
    store: Store, empty_store: Store, workspace: str
) -> None:
    nb = notebook(workspace, "copied")
    with store.write(workspace) as tx:
        tx.put_notebook(nb)
        m = memory(workspace, nb.id, "Copied with its past")
        first_seq = filed(tx, m)
        current, seq = revised(tx, m, text="Copied with its past, revised")
        tx.put_vector(m.id, seq, np.array([0.6, 0.8], dtype=np.float32), "model")
        gone = memory(workspace, nb.id, "Forgotten before the copy")
        filed(tx, gone)
        tx.forget_memory(Tombstone(gone.id, at(9), "user:ann", "x"),
                         tx.append_event(event("forget", gone.id)))  # fmt: skip
        tx.put_setting("recall.limit", 7)
    with store.read(workspace) as tx:
        records = list(tx.dump())
        events = tx.events(EventFilter())
        versions = list(tx.all_versions())
    with empty_store.read("copy") as tx:
        assert tx.is_empty()
        assert tx.ids_held("memories", "id", [m.id]) == {}
    with empty_store.write("copy") as tx:
        counts = tx.load(records)
    assert counts["memory_versions"] == 3 and counts["memory_vectors"] == 1
    with empty_store.read("copy") as tx:
        assert not tx.is_empty()
        assert tx.get_memory(m.id) == replace(current, workspace="copy")
        copied_events = tx.events(EventFilter())
        assert [(e.op, e.target_id) for e in copied_events] == [(e.op, e.target_id) for e in events]
        assert [e.seq for e in copied_events] == sorted(e.seq for e in copied_events)
        first_copied = copied_events[[e.seq for e in events].index(first_seq)].seq
        copied_first = tx.memory_at(m.id, first_copied)
        assert copied_first is not None and copied_first.text == m.text
        assert [v.text for v in tx.all_versions()] == [v.text for v in versions]
        assert tx.get_tombstone(gone.id) is not None
        vector = tx.vector_of(m.id, 2, "model")
        assert vector is not None and np.allclose(vector, [0.6, 0.8])
        assert tx.settings() == {"recall.limit": 7}
        assert tx.ids_held("memories", "id", [m.id, new_id("m")]) == {m.id: "copy"}
        rows = list(tx.table_rows("memory_versions"))
        assert [row["version"] for row in rows if row["memory_id"] == m.id] == [1, 2]
