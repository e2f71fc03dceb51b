"""VectorReader / VectorWriter (store/protocols.py): one vector per version tagged with its
model, the nearest exactly under the search filters, and stale versions found."""

from __future__ import annotations

import numpy as np
import pytest

from palimpsest.domain.model import Tombstone
from palimpsest.store import SearchQuery, Store

from .records import at, event, filed, memory, revised

MODEL = "test-model"


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_a_vector_is_kept_per_version_and_model(store: Store, workspace: str) -> None:
    with store.write(workspace) as tx:
        m = memory(workspace, "nb_a", "Vectors per version")
        seq = filed(tx, m)
        tx.put_vector(m.id, seq, unit(1, 0, 0, 0), MODEL)
        tx.put_vector(m.id, seq, unit(0, 1, 0, 0), MODEL)  # replaces it
        _, next_seq = revised(tx, m, text="Vectors per version, revised")
        tx.put_vector(m.id, next_seq, unit(0, 0, 1, 0), MODEL)
    with store.read(workspace) as tx:
        first = tx.vector_of(m.id, 1, MODEL)
        assert first is not None and np.allclose(first, unit(0, 1, 0, 0))
        second = tx.vector_of(m.id, 2, MODEL)
        assert second is not None and np.allclose(second, unit(0, 0, 1, 0))
        assert tx.vector_of(m.id, 1, "another-model") is None
    with store.read(f"{workspace}-other") as tx:
        assert tx.vector_of(m.id, 1, MODEL) is None


def test_nearest_ranks_by_cosine_under_the_search_filters(store: Store, workspace: str) -> None:
    with store.write(workspace) as tx:
        made = {}
        for name, vector, notebook_id in (
            ("close", unit(1, 0.1, 0, 0), "nb_a"),
            ("closest", unit(1, 0, 0, 0), "nb_a"),
            ("far", unit(0, 0, 0, 1), "nb_a"),
            ("elsewhere", unit(1, 0, 0, 0), "nb_b"),
        ):
            made[name] = memory(workspace, notebook_id, f"The {name} one")
            tx.put_vector(made[name].id, filed(tx, made[name]), vector, MODEL)
        other = memory(workspace, "nb_a", "Another model's vector")
        tx.put_vector(other.id, filed(tx, other), unit(1, 0, 0, 0), "another-model")
    with store.read(workspace) as tx:
        found = tx.nearest(unit(1, 0, 0, 0), SearchQuery("", notebook_ids=("nb_a",)), MODEL)
        assert [m.text for m, _ in found] == ["The closest one", "The close one", "The far one"]
        assert found[0][1] == pytest.approx(1.0, abs=1e-5)
        assert found[2][1] == pytest.approx(0.0, abs=1e-5)
        limited = tx.nearest_found(unit(1, 0, 0, 0), SearchQuery("", limit=2), MODEL)
        assert {f.id for f, _ in limited} == {made["closest"].id, made["elsewhere"].id}
        assert tx.nearest(unit(1, 0, 0, 0), SearchQuery("", notebook_ids=()), MODEL) == []


def test_stale_versions_are_those_with_content_and_no_vector_of_the_model(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        bare = memory(workspace, "nb_a", "No vector yet")
        filed(tx, bare)
        old = memory(workspace, "nb_a", "An old model's vector")
        tx.put_vector(old.id, filed(tx, old), unit(1, 0, 0, 0), "old-model")
        done = memory(workspace, "nb_a", "Already embedded")
        tx.put_vector(done.id, filed(tx, done), unit(0, 1, 0, 0), MODEL)
    with store.read(workspace) as tx:
        assert tx.stale_vector_count(MODEL) == 2
        assert tx.stale_vectors(MODEL, 10) == [bare, old]  # oldest first
        assert tx.stale_vectors(MODEL, 1) == [bare]
    with store.write(workspace) as tx:
        tx.reindexed_vectors([(bare, unit(0, 0, 1, 0)), (old, unit(0, 0, 0, 1))], MODEL)
    with store.read(workspace) as tx:
        assert tx.stale_vector_count(MODEL) == 0 and tx.stale_vectors(MODEL, 10) == []
        anew = tx.vector_of(old.id, 1, MODEL)
        assert anew is not None and np.allclose(anew, unit(0, 0, 0, 1))


def test_a_forgotten_version_takes_its_vector_alone(store: Store, workspace: str) -> None:
    with store.write(workspace) as tx:
        m = memory(workspace, "nb_a", "Embedded twice")
        tx.put_vector(m.id, filed(tx, m), unit(1, 0, 0, 0), MODEL)
        _, seq = revised(tx, m, text="Embedded twice, revised")
        tx.put_vector(m.id, seq, unit(0, 1, 0, 0), MODEL)
        tx.forget_version(m.id, 1)
    with store.read(workspace) as tx:
        assert tx.vector_of(m.id, 1, MODEL) is None
        assert tx.vector_of(m.id, 2, MODEL) is not None


def test_a_forgotten_memory_takes_its_vectors(store: Store, workspace: str) -> None:
    with store.write(workspace) as tx:
        m = memory(workspace, "nb_a", "Embedded, then forgotten")
        tx.put_vector(m.id, filed(tx, m), unit(1, 0, 0, 0), MODEL)
        forget = tx.append_event(event("forget", m.id))
        tx.forget_memory(Tombstone(m.id, at(9), "user:ann", "gone"), forget)
    with store.read(workspace) as tx:
        assert tx.vector_of(m.id, 1, MODEL) is None
        assert tx.nearest(unit(1, 0, 0, 0), SearchQuery("", statuses=()), MODEL) == []
        assert tx.stale_vector_count(MODEL) == 0  # no content left to embed


def test_current_vectors_are_those_of_each_active_memory_s_current_version(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        m = memory(workspace, "nb_a", "Current vectors")
        tx.put_vector(m.id, filed(tx, m), unit(1, 0, 0, 0), MODEL)
        _, next_seq = revised(tx, m, text="Current vectors, revised")
        tx.put_vector(m.id, next_seq, unit(0, 1, 0, 0), MODEL)
        elsewhere = memory(workspace, "nb_b", "In another notebook")
        tx.put_vector(elsewhere.id, filed(tx, elsewhere), unit(0, 0, 0, 1), MODEL)
        bare = memory(workspace, "nb_a", "No vector")
        filed(tx, bare)
        other = memory(workspace, "nb_a", "Another model's")
        tx.put_vector(other.id, filed(tx, other), unit(0, 0, 1, 0), "another-model")
        gone = memory(workspace, "nb_a", "Retired")
        tx.put_vector(gone.id, filed(tx, gone), unit(1, 1, 0, 0), MODEL)
        _, retired_seq = revised(tx, gone, status="retracted")
        tx.put_vector(gone.id, retired_seq, unit(1, 1, 0, 0), MODEL)
    with store.read(workspace) as tx:
        found = tx.current_vectors(MODEL)
        assert sorted(found) == sorted([m.id, elsewhere.id])
        assert np.allclose(found[m.id], unit(0, 1, 0, 0))
        assert list(tx.current_vectors(MODEL, "nb_a")) == [m.id]
    with store.read(f"{workspace}-other") as tx:
        assert tx.current_vectors(MODEL) == {}
