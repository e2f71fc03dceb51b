"""DisputeReader / DisputeWriter (store/protocols.py): disputes versioned over events, open
ones named per memory, and no text left once a memory of one is forgotten."""

from __future__ import annotations

from palimpsest.domain.model import Dispute, Ruling, Tombstone
from palimpsest.store import EventFilter, Store

from .records import at, event, filed, memory, new_id


def pair() -> tuple[str, str]:
    first, second = sorted((new_id("m"), new_id("m")))
    return first, second


def opened(workspace: str, memory_ids: tuple[str, str]) -> Dispute:
    return Dispute(new_id("dp"), workspace, memory_ids, "they say opposite things", at(2),
                   "user:ann")  # fmt: skip


def test_put_dispute_keeps_each_version_for_reads_as_of_earlier_events(
    store: Store, workspace: str
) -> None:
    ids = pair()
    first = opened(workspace, ids)
    with store.write(workspace) as tx:
        open_seq = tx.append_event(event("dispute.open", ids[0]))
        tx.put_dispute(first, open_seq)
        ruling = Ruling(ids[0], ids[1], "the first holds", "a log line", at(3), "user:bob")
        ruled = first.replace(version=2, status="ruled", ruling=ruling)
        rule_seq = tx.append_event(event("dispute.rule", ids[0]))
        tx.put_dispute(ruled, rule_seq)
    with store.read(workspace) as tx:
        assert tx.get_dispute(first.id) == ruled
        assert tx.disputes(ids[1], at_seq=open_seq) == [first]
        assert tx.disputes(ids[1]) == [ruled]
        assert tx.disputes(ids[0], statuses=("open",)) == []
        assert tx.disputes(ids[0], statuses=("open",), at_seq=open_seq) == [first]
        assert tx.disputes(new_id("m")) == []
    with store.read(f"{workspace}-other") as tx:
        assert tx.get_dispute(first.id) is None and tx.disputes(ids[0]) == []


def test_disputed_with_names_the_other_memories_of_open_disputes(
    store: Store, workspace: str
) -> None:
    a, b, c = sorted(new_id("m") for _ in range(3))
    with store.write(workspace) as tx:
        for memory_id in (a, b, c):
            filed(tx, memory(workspace, "nb_a", f"claim {memory_id}", id=memory_id))
        seq = tx.append_event(event("dispute.open", a))
        tx.put_dispute(opened(workspace, (a, b)), seq)
        tx.put_dispute(opened(workspace, (a, c)), seq)
        closed = opened(workspace, (b, c))
        tx.put_dispute(closed, seq)
        later = tx.append_event(event("dispute.withdraw", b))
        tx.put_dispute(closed.replace(version=2, status="withdrawn"), later)
    with store.read(workspace) as tx:
        assert tx.disputed_with([a, b, c]) == {a: [b, c], b: [a], c: [a]}
        assert tx.disputed_with([b, c], at_seq=seq) == {b: [a, c], c: [a, b]}
        assert tx.disputed_with([]) == {}


def test_a_forgotten_memory_leaves_its_disputes_without_text_at_every_time(
    store: Store, workspace: str
) -> None:
    a, b = pair()
    dispute = opened(workspace, (a, b))
    with store.write(workspace) as tx:
        filed(tx, memory(workspace, "nb_a", "The vault code is 1234", id=a))
        filed(tx, memory(workspace, "nb_a", "The vault code is 4321", id=b))
        seq = tx.append_event(event("dispute.open", b, data={"dispute": dispute.id,
                                                             "evidence": "code 1234"}))  # fmt: skip
        tx.put_dispute(dispute, seq)
        forget = tx.append_event(event("forget", a))
        tx.forget_memory(Tombstone(a, at(9), "user:ann", "a secret"), forget)
    with store.read(workspace) as tx:
        kept = tx.get_dispute(dispute.id)
        assert kept is not None and kept.reason is None and kept.memory_ids == (a, b)
        assert tx.disputed_with([b]) == {} and tx.disputed_with([b], at_seq=seq) == {}
        on_other = tx.events(EventFilter(target_id=b))
        assert [e.data for e in on_other if e.seq == seq] == [{"dispute": dispute.id}]
