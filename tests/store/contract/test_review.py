"""ReviewReader / ReviewWriter (store/protocols.py): what doctor lists, asked of the store,
and the marks that spare the secret detector a version it has read already."""

from __future__ import annotations

from palimpsest.store import Store

from .records import at, filed, memory, revised

NOTEBOOK = "nb_review"


def test_possibly_stale_reads_each_kinds_window_from_the_last_verification(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        old_fact = memory(workspace, NOTEBOOK, "Filed long ago", recorded_at=at(1, day=1))
        filed(tx, old_fact)
        verified = memory(workspace, NOTEBOOK, "Checked lately", recorded_at=at(1, day=1),
                          verified_at=at(1, day=20))  # fmt: skip
        filed(tx, verified)
        new_fact = memory(workspace, NOTEBOOK, "Filed lately", recorded_at=at(1, day=20))
        filed(tx, new_fact)
        old_decision = memory(workspace, NOTEBOOK, "Chosen long ago", kind="decision",
                              recorded_at=at(1, day=1))  # fmt: skip
        filed(tx, old_decision)
        retired = memory(workspace, NOTEBOOK, "Retired long ago", recorded_at=at(1, day=1),
                         status="retired")  # fmt: skip
        filed(tx, retired)
    with store.read(workspace) as tx:
        # Facts go stale before day 10; decisions are not asked about.
        assert tx.possibly_stale({"fact": at(0, day=10)}) == [old_fact]
        both = tx.possibly_stale({"fact": at(0, day=10), "decision": at(0, day=10)})
        assert sorted(m.id for m in both) == sorted([old_fact.id, old_decision.id])
        assert tx.possibly_stale({}) == []


def test_expired_ownerless_and_kinds_read_current_active_memories_only(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        expired = memory(workspace, NOTEBOOK, "Until day 2", expires_at=at(0, day=2))
        filed(tx, expired)
        later = memory(workspace, NOTEBOOK, "Until day 30", expires_at=at(0, day=30))
        filed(tx, later)
        ownerless = memory(workspace, NOTEBOOK, "Nobody's", owner=None)
        filed(tx, ownerless)
        still = memory(workspace, NOTEBOOK, "Nobody's still", owner=None)
        filed(tx, still)
        owned_now, _ = revised(tx, ownerless, owner="user:bo")
        rule = memory(workspace, NOTEBOOK, "Never force-push", kind="rule")
        filed(tx, rule)
        retired_rule = memory(workspace, NOTEBOOK, "Old rule", kind="rule", status="retired")
        filed(tx, retired_rule)
    with store.read(workspace) as tx:
        assert tx.expired_memories(at(0, day=10)) == [expired]
        assert tx.ownerless_memories() == [still]  # the other's current version has one
        assert tx.active_of_kinds({"rule"}) == [rule]
        assert tx.active_of_kinds(set()) == []
        assert owned_now.owner == "user:bo"


def test_unscreened_versions_are_those_the_detector_has_not_marked(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        first = memory(workspace, NOTEBOOK, "The pool holds 40 connections")
        filed(tx, first)
        second, _ = revised(tx, first, text="The pool holds 80 connections")
        gone = memory(workspace, NOTEBOOK, "Forgotten version")
        filed(tx, gone)
        tx.forget_version(gone.id, 1)
    with store.read(workspace) as tx:
        assert [(m.id, m.version) for m in tx.unscreened_versions("d1:a")] == [
            (first.id, 1), (first.id, 2)]  # fmt: skip
    with store.write(workspace) as tx:
        tx.mark_screened([(first.id, 1)], "d1:a")
    with store.read(workspace) as tx:
        assert tx.unscreened_versions("d1:a") == [second]
        # Another detector reads every version again.
        assert len(tx.unscreened_versions("d1:b")) == 2
