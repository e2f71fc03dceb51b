"""QueueReader / QueueWriter (store/protocols.py): a replica's writes queued for its
server, kept in the order written, answered in place, never deleted; and which stores may
be a replica at all (`replicates`)."""

from __future__ import annotations

from palimpsest.store import QueuedWrite, Store


def _item(n: int, **given: object) -> QueuedWrite:
    return QueuedWrite(
        id=f"q_{n:02d}",
        op="remember",
        arguments={"notebook": "ops", "kind": "fact", "text": f"Note {n}"},
        target_id=None,
        actor="user:ana",
        queued_at=f"2026-12-05T10:00:{n:02d}Z",
        state="pending",
        **given,  # type: ignore[arg-type]
    )


def test_queued_writes_come_back_in_order_and_are_answered_in_place(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        for n in (2, 1, 3):
            tx.queue_write(_item(n))
        tx.settle_queued("q_01", "refused", {"error_class": "not_found"}, "2026-12-05T11:00:00Z")
        tx.settle_queued("q_03", "accepted", {"id": "m_1"}, "2026-12-05T11:00:01Z")
    with store.read(workspace) as tx:
        assert [i.id for i in tx.queued_writes(("pending", "refused"))] == ["q_01", "q_02"]
        refused = tx.queued_write("q_01")
        accepted = tx.queued_write("q_03")
        assert refused is not None and refused.answer == {"error_class": "not_found"}
        assert refused.arguments["text"] == "Note 1"  # kept for the person who settles it
        # the server holds an accepted write: its text is not kept here
        assert (
            accepted is not None and accepted.arguments == {} and accepted.answer == {"id": "m_1"}
        )
        assert accepted.done_at == "2026-12-05T11:00:01Z"
        assert tx.queued_writes(("pending",), limit=1)[0].id == "q_02"
    with store.write(workspace) as tx:  # a memory it names was forgotten: no text stays
        tx.empty_queued("q_01")
    with store.read(workspace) as tx:
        emptied = tx.queued_write("q_01")
        assert emptied is not None and emptied.arguments == {} and emptied.state == "refused"
    with store.read(f"{workspace}-other") as tx:
        assert tx.queued_write("q_01") is None and tx.queued_writes(("pending",)) == []


def test_only_a_store_of_one_machine_may_be_a_replica(store: Store) -> None:
    assert store.replicates is store.scrubs_in_place  # SQLite yes, PostgreSQL no
