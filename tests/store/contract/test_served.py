"""ServedReader / ServedWriter (store/protocols.py): what each session was shown, kept a
while, read by session and by actor, forgotten by session."""

from __future__ import annotations

from palimpsest.store import Served, Store

from .records import at, new_id


def serving(second: int, session: str = "s-1", actor: str = "agent:a", **kw: object) -> Served:
    fields: dict[str, object] = {
        "key_id": None,
        "what": "recall",
        "request": {"query": "deploy steps", "limit": 10},
        "shown": (("mem_1", 3, 0.91), ("mem_2", 1, 0.5)),
    } | kw
    return Served(new_id("srv"), session, actor, served_at=at(second), **fields)  # type: ignore[arg-type]


def test_a_session_s_servings_come_back_in_order_as_they_were_kept(
    store: Store, workspace: str
) -> None:
    first = serving(1)
    brief = serving(2, what="brief", request={}, shown=(("mem_3", 2, None),), key_id="k_1")
    other = serving(3, session="s-2", actor="user:ana")
    with store.write(workspace) as tx:
        tx.add_served([brief, other], before=at(0))
        tx.add_served([first], before=at(0))
    with store.read(workspace) as tx:
        assert tx.served("s-1", None, 10) == [first, brief]
        assert tx.served("s-1", at(2), 10) == [brief]
        assert tx.served("s-1", None, 1) == [first]
        assert tx.served("s-1", None, 10, actor="user:ana") == []
        assert tx.served("s-2", None, 10, actor="user:ana") == [other]
        sessions = tx.served_sessions(10)
        assert [(s.session, s.servings, s.first_at, s.last_at) for s in sessions] == [
            ("s-2", 1, at(3), at(3)), ("s-1", 2, at(1), at(2))
        ]  # fmt: skip
        assert [s.session for s in tx.served_sessions(10, actor="agent:a")] == ["s-1"]
        assert len(tx.served_sessions(1)) == 1
    with store.read(f"{workspace}-other") as tx:
        assert tx.served("s-1", None, 10) == [] and tx.served_sessions(10) == []


def test_servings_older_than_the_cutoff_go_when_one_is_kept(store: Store, workspace: str) -> None:
    old, kept, new = serving(1), serving(5), serving(9)
    with store.write(workspace) as tx:
        tx.add_served([old, kept], before=at(0))
        tx.add_served([new], before=at(5))
    with store.read(workspace) as tx:
        assert tx.served("s-1", None, 10) == [kept, new]


def test_a_forgotten_session_is_gone_and_pending_its_scrub(store: Store, workspace: str) -> None:
    gone, stays = serving(1), serving(2, session="s-2")
    with store.write(workspace) as tx:
        tx.add_served([gone, stays], before=at(0))
        assert tx.forget_served("s-1") == 1
        assert tx.forget_served("s-1") == 0
    with store.read(workspace) as tx:
        assert tx.served("s-1", None, 10) == [] and tx.served("s-2", None, 10) == [stays]
        assert "served:s-1" in {p.target_id for p in tx.pending_scrubs()}
    with store.write(f"{workspace}-other") as tx:
        assert tx.forget_served("s-2") == 0
    with store.read(workspace) as tx:
        assert tx.served("s-2", None, 10) == [stays]


def test_a_store_says_whether_its_commits_are_cheap(store: Store) -> None:
    # SQLite's WAL is not synced at each commit; PostgreSQL waits for its WAL: the served
    # record is written at once on the one, in batches on the other.
    assert store.commits_cheaply is store.scrubs_in_place
