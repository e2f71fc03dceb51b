"""OrientReader / OrientWriter (store/protocols.py): usefulness marks counted from their
events, what orient reads first, and the session hooks' bookkeeping."""

from __future__ import annotations

from palimpsest.domain.model import Anchor, Tombstone
from palimpsest.store import AgentSession, Store

from .records import at, event, filed, memory, new_id, revised


def test_feedback_events_are_counted_per_memory_until_it_is_forgotten(
    store: Store, workspace: str
) -> None:
    a, b = new_id("m"), new_id("m")
    with store.write(workspace) as tx:
        filed(tx, memory(workspace, "nb_a", "Helpful", id=a))
        filed(tx, memory(workspace, "nb_a", "Noisy", id=b))
        for target, mark in ((a, "helped"), (a, "helped"), (a, "noise"), (b, "noise")):
            tx.append_event(event("feedback", target, data={"feedback": mark}))
    with store.read(workspace) as tx:
        assert tx.feedback_counts([a, b, new_id("m")]) == {a: (2, 1), b: (0, 1)}
        assert tx.all_feedback_counts() == {a: (2, 1), b: (0, 1)}
    with store.write(workspace) as tx:
        seq = tx.append_event(event("forget", a))
        tx.forget_memory(Tombstone(a, at(9), "user:ann", "gone"), seq)
    with store.read(workspace) as tx:
        assert tx.all_feedback_counts() == {b: (0, 1)}


def test_orient_reads_current_active_memories_least_recently_verified_first(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        old = memory(workspace, "nb_a", "Checked long ago", recorded_at=at(1, day=1))
        filed(tx, old)
        recent = memory(workspace, "nb_a", "Checked lately", recorded_at=at(1, day=1),
                        verified_at=at(1, day=20))  # fmt: skip
        filed(tx, recent)
        elsewhere = memory(workspace, "nb_b", "Other notebook", recorded_at=at(1, day=2))
        filed(tx, elsewhere)
        retired = memory(workspace, "nb_a", "Retired", recorded_at=at(0), status="retracted")
        filed(tx, retired)
        anchored = memory(workspace, "nb_a", "Anchored", recorded_at=at(1, day=3),
                          anchors=(Anchor("src/app.py"),))  # fmt: skip
        filed(tx, anchored)
        noted, _ = revised(tx, anchored, verified_at=at(1, day=25))
    with store.read(workspace) as tx:
        cutoffs = {"fact": at(0, day=10)}
        assert tx.unverified_since(None, cutoffs, 10) == [old, elsewhere]
        assert tx.unverified_since(("nb_a",), cutoffs, 10) == [old]
        assert tx.unverified_since(None, cutoffs, 1) == [old]
        assert tx.unverified_since(None, {}, 10) == []
        assert tx.with_evidence(None, 10) == [noted]
        assert tx.with_evidence(("nb_b",), 10) == []


def test_memory_events_after_gives_the_later_memory_events_oldest_first(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        start = filed(tx, memory(workspace, "nb_a", "Before the session"))
        tx.append_event(event("notebook.create", "nb_a", target_type="notebook"))
        later = [filed(tx, memory(workspace, nb, f"During, in {nb}")) for nb in ("nb_a", "nb_b")]
    with store.read(workspace) as tx:
        assert [e.seq for e in tx.memory_events_after(start, None, 10)] == later
        assert [e.seq for e in tx.memory_events_after(start, "nb_b", 10)] == later[1:]
        assert [e.seq for e in tx.memory_events_after(start, None, 1)] == later[:1]


def test_a_session_start_is_noted_once_and_asked_once(store: Store, workspace: str) -> None:
    stale = AgentSession(new_id("s"), None, 1, at(1, day=1), None)
    first = AgentSession(new_id("s"), "nb_a", 7, at(1, day=5), None)
    with store.write(workspace) as tx:
        tx.start_agent_session(stale, prune_before=at(0, day=1))
        assert tx.start_agent_session(first, prune_before=at(0, day=2)) == first
        resumed = AgentSession(first.session_id, "nb_b", 99, at(1, day=6), None)
        assert tx.start_agent_session(resumed, prune_before=at(0, day=2)) == first
        assert tx.agent_session(stale.session_id) is None  # begun before the cut: gone
        assert tx.mark_session_asked(first.session_id, at(3, day=5))
        assert not tx.mark_session_asked(first.session_id, at(4, day=5))
    with store.read(workspace) as tx:
        kept = tx.agent_session(first.session_id)
        assert kept is not None and kept.asked_at == at(3, day=5)
    with store.read(f"{workspace}-other") as tx:
        assert tx.agent_session(first.session_id) is None
