"""Copying a workspace between stores loses nothing: SQLite to PostgreSQL and back."""

from __future__ import annotations

import itertools
import uuid
from pathlib import Path
from typing import Any

import pytest

from palimpsest.domain.errors import Conflict
from palimpsest.service import Service
from palimpsest.service.stores import copy_workspace
from palimpsest.store import EventFilter, Store, open_store

from ..conftest import POSTGRES_URL, needs_postgres


def fill(service: Service) -> dict[str, str]:
    """A little of everything a workspace holds: versions, retirements, links, a forget."""
    ticks = itertools.count()
    service.clock = lambda: f"2026-01-01T00:00:{next(ticks):02d}.000000Z"
    service.create_notebook(name="web", domain="apps", summary="the shop")
    a = service.remember(notebook="web", kind="decision", text="We use Stripe", key="pay")["id"]
    b = service.remember(notebook="web", kind="fact", text="Webhooks at /hooks")["id"]
    service.revise(id=a, append="for payments", idempotency_key="k1")
    service.link(source=a, target=b, type="depends_on")
    service.revise(id=b, status="superseded", note="moved")
    gone = service.remember(notebook="web", kind="note", text="Ana's phone is 555 0101")["id"]
    service.forget(id=gone, because="personal data")
    service.revise(id=a, append="and refunds")
    service.forget(id=a, version=2, because="a mistake in v2")
    return {"a": a, "b": b, "gone": gone}


def picture(store: Store, workspace: str) -> dict[str, Any]:
    """Everything a user can observe of a workspace, minus store-local sequence numbers."""
    service = Service(store, workspace=workspace)
    with store.read(workspace) as tx:
        events = tx.events(EventFilter(limit=10_000))
        memories = tx.memories_at(None)
        ids = sorted({e.target_id for e in events if e.target_type == "memory"})
        versions = {i: [(v.version, v.at, v.actor, v.op, v.memory) for v in tx.memory_versions(i)]
                    for i in ids}  # fmt: skip
        tombstones = [tx.get_tombstone(i) for i in ids]
        links = {i: tx.links(i) for i in ids}
    return {
        "events": [
            (e.op_id, e.at, e.actor, e.op, e.target_id, e.version, e.fields, e.note, e.data)
            for e in events
        ],
        "memories": memories,
        "versions": versions,
        "tombstones": tombstones,
        "links": links,
        "notebooks": service.notebooks(),
        # Scores are each store's own ranking (BM25, ts_rank): compare what was found.
        "as_of": [
            {k: v for k, v in hit.items() if k != "score"}
            for hit in service.recall(query="Stripe", as_of="2026-01-01T00:00:02Z")["hits"]
        ],
    }


@needs_postgres
def test_a_workspace_survives_sqlite_to_postgres_and_back(tmp_path: Path) -> None:
    assert POSTGRES_URL
    workspace = f"copy-{uuid.uuid4().hex[:12]}"
    first, postgres = open_store(str(tmp_path / "a.db")), open_store(POSTGRES_URL)
    back = open_store(str(tmp_path / "b.db"))
    try:
        ids = fill(Service(first, workspace=workspace))
        copied = copy_workspace(first, postgres, workspace)["copied"]
        assert copied["events"] == len(picture(first, workspace)["events"])
        copy_workspace(postgres, back, workspace)
        original = picture(first, workspace)
        assert picture(postgres, workspace) == original
        assert picture(back, workspace) == original
        # The copies behave, not only look, the same: keys, idempotency keys, search.
        for store in (postgres, back):
            service = Service(store, workspace=workspace)
            again = service.revise(id=ids["a"], append="for payments", idempotency_key="k1")
            assert again["replayed"] is True
            assert service.recall(query="refunds")["hits"][0]["id"] == ids["a"]
            assert service.recall(query="phone", include_retired=True)["hits"] == []
    finally:
        for store in (first, postgres, back):
            store.close()


def test_copying_into_a_workspace_that_holds_memory_is_refused(tmp_path: Path) -> None:
    source, target = open_store(str(tmp_path / "a.db")), open_store(str(tmp_path / "b.db"))
    try:
        Service(source).remember(notebook="n", kind="fact", text="from the source")
        Service(target).remember(notebook="n", kind="fact", text="already here")
        with pytest.raises(Conflict):
            copy_workspace(source, target, "default")
        hits = Service(target).recall()["hits"]
        assert [h["text"] for h in hits] == ["already here"]
    finally:
        source.close()
        target.close()
