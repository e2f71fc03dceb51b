"""WebSessionReader / WebSessionWriter (store/protocols.py): web page sign-ins by key, found
by their cookie's hash from any workspace, bounded per key, ended one by one or by key."""

from __future__ import annotations

import hashlib

from palimpsest.store import AccessKey, Store, WebSession

from .records import at, new_id


def a_key(store: Store, workspace: str, expires_at: str | None = None) -> str:
    key = AccessKey(new_id("key"), "user:ann", None, at(0), expires_at, None)
    with store.write(workspace) as tx:
        tx.put_access_key(key, "a" * 64)
    return key.id


def session(key_id: str, workspace: str, second: int) -> WebSession:
    name = hashlib.sha256(new_id("cookie").encode()).hexdigest()
    return WebSession(name, workspace, key_id, at(second), at(second))


def test_a_session_is_found_by_its_hash_from_any_workspace_and_listed_in_its_own(
    store: Store, workspace: str
) -> None:
    key_id = a_key(store, workspace)
    opened = session(key_id, workspace, 1)
    with store.write(workspace) as tx:
        tx.open_web_session(opened, keep=3, idle_before=at(0))
    with store.read(f"{workspace}-other") as tx:
        assert tx.web_session(opened.cookie_hash) == opened  # a request names no workspace
        assert tx.web_sessions(key_id) == []
        assert tx.web_session("0" * 64) is None
    with store.read(workspace) as tx:
        assert tx.web_sessions(key_id) == [opened]


def test_a_key_holds_its_bound_and_loses_its_least_recently_used(
    store: Store, workspace: str
) -> None:
    key_id, other_key = a_key(store, workspace), a_key(store, workspace)
    first, second, third = (session(key_id, workspace, s) for s in (1, 2, 3))
    theirs = session(other_key, workspace, 4)
    with store.write(workspace) as tx:
        tx.open_web_session(first, keep=2, idle_before=at(0))
        tx.open_web_session(second, keep=2, idle_before=at(0))
        tx.touch_web_session(first.cookie_hash, at(5))  # used: now the second is the oldest
        tx.open_web_session(theirs, keep=2, idle_before=at(0))  # takes nothing of key_id's
        tx.open_web_session(third, keep=2, idle_before=at(0))
    with store.read(workspace) as tx:
        assert [s.cookie_hash for s in tx.web_sessions(key_id)] == [
            first.cookie_hash, third.cookie_hash
        ]  # fmt: skip
        assert tx.web_session(first.cookie_hash).used_at == at(5)  # type: ignore[union-attr]
        assert tx.web_sessions(other_key) == [theirs]


def test_a_new_session_is_kept_even_when_its_clock_is_behind_the_others(
    store: Store, workspace: str
) -> None:
    key_id = a_key(store, workspace)
    ahead, behind = session(key_id, workspace, 9), session(key_id, workspace, 1)
    with store.write(workspace) as tx:
        tx.open_web_session(ahead, keep=1, idle_before=at(0))
        tx.open_web_session(behind, keep=1, idle_before=at(0))
    with store.read(workspace) as tx:
        assert tx.web_sessions(key_id) == [behind]


def test_opening_prunes_idle_sessions_and_those_of_revoked_or_expired_keys(
    store: Store, workspace: str
) -> None:
    kept_key, revoked_key = a_key(store, workspace), a_key(store, workspace)
    expired_key = a_key(store, workspace, expires_at=at(20))
    idle, kept = session(kept_key, workspace, 1), session(kept_key, workspace, 10)
    revoked, expired = session(revoked_key, workspace, 10), session(expired_key, workspace, 10)
    with store.write(workspace) as tx:
        for opened in (idle, kept, revoked, expired):
            tx.open_web_session(opened, keep=5, idle_before=at(0))
        tx.revoke_access_key(revoked_key, at(11))
    new = session(kept_key, workspace, 30)
    with store.write(workspace) as tx:
        tx.open_web_session(new, keep=5, idle_before=at(5))
    with store.read(workspace) as tx:
        assert tx.web_sessions(kept_key) == [new, kept]
        assert tx.web_sessions(revoked_key) == tx.web_sessions(expired_key) == []


def test_a_session_ends_alone_or_with_every_other_of_its_key_in_its_workspace_only(
    store: Store, workspace: str
) -> None:
    key_id, other_key = a_key(store, workspace), a_key(store, workspace)
    one, two = session(key_id, workspace, 1), session(key_id, workspace, 2)
    theirs = session(other_key, workspace, 3)
    with store.write(workspace) as tx:
        for opened in (one, two, theirs):
            tx.open_web_session(opened, keep=5, idle_before=at(0))
    with store.write(f"{workspace}-other") as tx:
        assert not tx.end_web_session(one.cookie_hash)
        assert tx.end_key_web_sessions(key_id) == 0
    with store.write(workspace) as tx:
        assert tx.end_web_session(one.cookie_hash)
        assert not tx.end_web_session(one.cookie_hash)
    with store.read(workspace) as tx:
        assert tx.web_session(one.cookie_hash) is None and tx.web_sessions(key_id) == [two]
    with store.write(workspace) as tx:
        assert tx.end_key_web_sessions(key_id) == 1
    with store.read(workspace) as tx:
        assert tx.web_sessions(key_id) == [] and tx.web_sessions(other_key) == [theirs]
