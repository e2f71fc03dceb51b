"""AccessReader / AccessWriter (store/protocols.py): users and keys of a workspace, the
store's workspaces and their names, failed authentications."""

from __future__ import annotations

import pytest

from palimpsest.domain.errors import Conflict
from palimpsest.store import AccessKey, Store, User

from .records import at, filed, memory, new_id, revised


def test_users_are_put_replaced_and_dropped_in_their_workspace(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        tx.put_user(User("bob", "viewer", at(1)))
        tx.put_user(User("ann", "owner", at(2)))
        tx.put_user(User("bob", "editor", at(3)))
    with store.read(workspace) as tx:
        assert [(u.name, u.role) for u in tx.users()] == [("ann", "owner"), ("bob", "editor")]
    with store.write(workspace) as tx:
        tx.drop_user("bob")
    with store.read(workspace) as tx:
        assert [u.name for u in tx.users()] == ["ann"]
    with store.read(f"{workspace}-other") as tx:
        assert tx.users() == []


def test_a_key_keeps_its_hash_its_workspace_and_its_revocation(
    store: Store, workspace: str
) -> None:
    key = AccessKey(new_id("key"), "user:ann", "laptop", at(1), None, None)
    with store.write(workspace) as tx:
        tx.put_access_key(key, "a" * 64)
    elsewhere = f"{workspace}-other"
    with store.read(elsewhere) as tx:
        assert tx.has_access_keys()  # store-wide
        assert tx.key_workspace(key.id) == workspace
        assert tx.access_key(key.id) is None and tx.access_keys() == []
    with store.write(workspace) as tx:
        assert tx.access_key(key.id) == (key, "a" * 64)
        tx.revoke_access_key(key.id, at(5))
    with store.read(workspace) as tx:
        assert tx.access_keys() == [AccessKey(key.id, "user:ann", "laptop", at(1), None, at(5))]
        assert tx.key_workspace(new_id("key")) is None


def test_owned_by_gives_the_current_version_of_the_actors_memories(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        mine = memory(workspace, "nb_a", "Mine", owner="user:cat")
        filed(tx, mine)
        current, _ = revised(tx, mine, text="Mine, revised")
        filed(tx, memory(workspace, "nb_a", "Someone else's", owner="user:dan"))
    with store.write(f"{workspace}-other") as tx:
        filed(tx, memory(f"{workspace}-other", "nb_a", "Cat's elsewhere", owner="user:cat"))
    with store.read(workspace) as tx:
        assert tx.owned_by("user:cat") == [current]


def test_a_workspace_is_listed_from_its_first_write_and_names_are_unique(
    store: Store, workspace: str
) -> None:
    named = f"{workspace}-named"
    with store.write(named) as tx:
        tx.name_workspace(f"Team {named}")
    with store.read(f"{workspace}-only-read") as tx:
        listed = {w.id: w.name for w in tx.workspaces()}
    assert listed[named] == f"Team {named}"
    assert f"{workspace}-only-read" not in listed  # a read makes no workspace
    with pytest.raises(Conflict), store.write(workspace) as tx:
        tx.name_workspace(f"Team {named}")


def test_failed_authentications_are_counted_per_workspace_from_an_hour_on(
    store: Store, workspace: str
) -> None:
    other = f"{workspace}-other"
    with store.write(workspace) as tx:
        tx.add_failed_auth(workspace, "2026-01-01T09", 2, at(1))
        tx.add_failed_auth(workspace, "2026-01-01T10", 3, at(5))
        tx.add_failed_auth(workspace, "2026-01-01T10", 1, at(9))
        tx.add_failed_auth(other, "2026-01-01T10", 7, at(7))
    with store.read(workspace) as tx:
        assert tx.failed_auth_since("2026-01-01T10", (workspace,)) == (4, at(9))
        assert tx.failed_auth_since("2026-01-01T09", (workspace, other)) == (13, at(9))
        assert tx.failed_auth_since("2026-01-01T11", (workspace,)) == (0, None)
