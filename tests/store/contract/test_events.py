"""EventReader / EventWriter (store/protocols.py): one store-wide sequence, filters, the
newest events oldest first, and the key each write came through."""

from __future__ import annotations

from palimpsest.store import EventFilter, Store

from .records import at, event, new_id


def test_append_event_hands_out_increasing_numbers_across_workspaces(
    store: Store, workspace: str
) -> None:
    seqs = []
    for ws in (workspace, f"{workspace}-other", workspace):
        with store.write(ws) as tx:
            given = event("remember", new_id("m"), seq=10**9)  # ignored
            seqs += [tx.append_event(given), tx.append_event(given)]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_events_filter_and_answer_the_newest_oldest_first(store: Store, workspace: str) -> None:
    target, notebook_id = new_id("m"), new_id("nb")
    with store.write(workspace) as tx:
        made = [tx.append_event(event("remember", target, notebook_id=notebook_id, at=at(n)))
                for n in range(1, 6)]  # fmt: skip
        own = tx.append_event(event("notebook.create", notebook_id, target_type="notebook",
                                    at=at(7), actor="user:bob"))  # fmt: skip
        tx.append_event(event("remember", new_id("m"), at=at(8)))  # another notebook's
    with store.read(workspace) as tx:
        assert [e.seq for e in tx.events(EventFilter(target_id=target))] == made
        assert [e.seq for e in tx.events(EventFilter(target_id=target, limit=2))] == made[-2:]
        assert [e.seq for e in tx.events(EventFilter(notebook_id=notebook_id))] == [*made, own]
        assert [e.seq for e in tx.events(EventFilter(actor="user:bob"))] == [own]
        window = EventFilter(target_id=target, since=at(2), until=at(4))
        assert [e.seq for e in tx.events(window)] == made[1:4]
        assert tx.events(EventFilter(target_id=target))[0].notebook_id == notebook_id


def test_seq_at_and_last_event_read_the_workspace_log(store: Store, workspace: str) -> None:
    elsewhere = f"{workspace}-other"
    with store.write(workspace) as tx:
        assert tx.last_event() is None and tx.seq_at(at(59)) == 0
        first = tx.append_event(event("remember", new_id("m"), at=at(10)))
        second = tx.append_event(event("remember", new_id("m"), at=at(20)))
    with store.write(elsewhere) as tx:
        tx.append_event(event("remember", new_id("m"), at=at(15)))
    with store.read(workspace) as tx:
        assert tx.seq_at(at(5)) == 0
        assert tx.seq_at(at(10)) == first
        assert tx.seq_at(at(19)) == first  # not the other workspace's event between
        assert tx.seq_at(at(59)) == second
        last = tx.last_event()
        assert last is not None and last.seq == second


def test_an_event_keeps_the_key_its_write_came_through(store: Store, workspace: str) -> None:
    target = new_id("m")
    with store.write(workspace) as tx:
        tx.key_id = "key_session"
        tx.append_event(event("remember", target))
        tx.append_event(event("revise", target, key_id="key_own"))
        tx.key_id = None
        tx.append_event(event("revise", target))
    with store.read(workspace) as tx:
        keys = [e.key_id for e in tx.events(EventFilter(target_id=target))]
    assert keys == ["key_session", "key_own", None]


def test_events_of_another_workspace_are_not_listed(store: Store, workspace: str) -> None:
    target = new_id("m")
    with store.write(f"{workspace}-other") as tx:
        tx.append_event(event("remember", target, data={"text": "theirs"}))
    with store.read(workspace) as tx:
        assert tx.events(EventFilter(target_id=target)) == []


def test_event_days_count_a_notebooks_events_by_day_and_operation(
    store: Store, workspace: str
) -> None:
    notebook_id, memory_id = new_id("nb"), new_id("m")
    with store.write(workspace) as tx:
        tx.append_event(event("notebook.create", notebook_id, target_type="notebook",
                              at=at(1, day=2)))  # fmt: skip
        for second, day, op in (
            (1, 3, "remember"),
            (2, 3, "revise"),
            (3, 3, "revise"),
            (1, 5, "revise"),
            (1, 1, "revise"),
        ):  # day 1: before `since`
            tx.append_event(event(op, memory_id, notebook_id=notebook_id,
                                  at=at(second, day=day)))  # fmt: skip
        tx.append_event(event("remember", new_id("m"), notebook_id=new_id("nb"), at=at(1, 3)))
    with store.write(f"{workspace}-other") as tx:
        tx.append_event(event("remember", memory_id, notebook_id=notebook_id, at=at(1, 3)))
    with store.read(workspace) as tx:
        days = tx.event_days(notebook_id, "2026-01-02")
    assert [tuple(d) for d in days] == [
        ("2026-01-02", "notebook.create", 1),
        ("2026-01-03", "remember", 1),
        ("2026-01-03", "revise", 2),
        ("2026-01-05", "revise", 1),
    ]
