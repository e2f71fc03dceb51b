"""Store (store/protocols.py): transactions that land whole or not at all, snapshots that
later commits leave alone, the schema, and the upkeep of forgets."""

from __future__ import annotations

import threading

import pytest

from palimpsest.domain.model import Tombstone
from palimpsest.store import Store, open_store
from palimpsest.store.migrations import migrations

from .records import at, event, filed, memory


def test_a_write_lands_whole_at_its_end_or_not_at_all(store: Store, workspace: str) -> None:
    with pytest.raises(RuntimeError), store.write(workspace) as tx:
        failed = memory(workspace, "nb_a", "Written, then the request failed")
        filed(tx, failed)
        raise RuntimeError("the request failed")
    with store.write(workspace) as tx:
        dry = memory(workspace, "nb_a", "A dry run")
        filed(tx, dry)
        assert tx.get_memory(dry.id) == dry  # the transaction sees its own write
        tx.discard()
    with store.write(workspace) as tx:
        kept = memory(workspace, "nb_a", "Kept")
        filed(tx, kept)
    with store.read(workspace) as tx:
        assert tx.get_memory(failed.id) is None and tx.get_memory(dry.id) is None
        assert tx.get_memory(kept.id) == kept
        last = tx.last_event()
        assert last is not None and last.target_id == kept.id


def test_a_read_keeps_its_snapshot_while_another_writer_commits(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        before = memory(workspace, "nb_a", "Before the read")
        filed(tx, before)
    later = memory(workspace, "nb_a", "Committed during the read")

    def write_later() -> None:
        with store.write(workspace) as tx:
            filed(tx, later)

    with store.read(workspace) as tx:
        assert tx.workspace == workspace
        assert tx.get_memory(before.id) == before  # the snapshot is taken
        writer = threading.Thread(target=write_later)
        writer.start()
        writer.join(timeout=60)
        assert not writer.is_alive()
        assert tx.get_memory(later.id) is None
        assert [m.id for m in tx.memories_at(None)] == [before.id]
    with store.read(workspace) as tx:
        assert tx.get_memory(later.id) == later


def test_the_schema_is_the_newest_migration(store: Store) -> None:
    kind = "sqlite" if store.url.endswith(".db") else "postgres"
    assert store.schema_version() == migrations(kind)[-1][0]


def test_a_forget_waits_for_the_scrub_or_the_rewrite_the_store_needs(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        m = memory(workspace, "nb_a", "The door code is 4455")
        filed(tx, m)
        tx.forget_memory(Tombstone(m.id, at(9), "user:ann", "a secret"),
                         tx.append_event(event("forget", m.id)))  # fmt: skip
    with store.read(workspace) as tx:
        assert [p.target_id for p in tx.pending_scrubs()] == [m.id]
    finished = store.scrub(workspace)
    assert finished is store.scrubs_in_place  # SQLite: the checkpoint; PostgreSQL: not yet
    if not finished:
        done = store.rewrite()
        assert done.pending == 0 and done.locked_seconds
        assert store.scrub(workspace)
    with store.read(workspace) as tx:
        assert tx.pending_scrubs() == []
    rewritten = store.rewrite()  # nothing waits: a rewrite finds nothing to finish
    assert rewritten.pending == 0


def test_a_closed_store_opened_again_holds_what_it_held(empty_store: Store) -> None:
    with empty_store.write("kept") as tx:
        m = memory("kept", "nb_a", "Outlives the process")
        filed(tx, m)
    empty_store.close()
    reopened = open_store(empty_store.url)
    try:
        with reopened.read("kept") as tx:
            assert tx.get_memory(m.id) == m
    finally:
        reopened.close()
