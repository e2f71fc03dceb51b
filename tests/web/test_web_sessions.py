"""How long a web session and a one-time link live, on clocks the test moves, over a real
SQLite store: a key's sessions are kept there, the local owner's in the process."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from palimpsest.domain.model import format_time
from palimpsest.embed import NullEmbedder
from palimpsest.service import Service
from palimpsest.service.web_sessions import TOUCH_SECONDS
from palimpsest.store import open_store
from palimpsest.web.sessions import (
    IDLE_SECONDS,
    LINK_SECONDS,
    LocalLink,
    WebSessions,
    form_token,
)


class Clock:
    """Seconds, for the process's own (monotonic) clock."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class StoreClock:
    """The service's clock: times as the store keeps them."""

    def __init__(self) -> None:
        self.at = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

    def __call__(self) -> str:
        return format_time(self.at)

    def move(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


@pytest.fixture
def clock() -> StoreClock:
    return StoreClock()


@pytest.fixture
def service(db: Path, clock: StoreClock) -> Iterator[Service]:
    store = open_store(str(db))
    made = Service(store, actor="user:owner", clock=clock, embedder=NullEmbedder())
    made.add_user(name="ana", role="editor")
    yield made
    store.close()


def key_of(service: Service, **given: str) -> str:
    return service.create_key(user="ana", **given)["id"]


def rows(db: Path) -> list[tuple[str, ...]]:
    with sqlite3.connect(db) as conn:
        found = conn.execute("SELECT cookie_hash, key_id, used_at FROM web_sessions").fetchall()
    conn.close()
    return [tuple(row) for row in found]


def test_a_session_ends_when_idle_too_long_and_lives_while_used(
    service: Service, clock: StoreClock, db: Path
) -> None:
    sessions = WebSessions(service, per_key=8)
    cookie = sessions.open(key_of(service))
    assert cookie is not None
    for _ in range(3):  # used every so often: it lives on
        clock.move(IDLE_SECONDS - 1)
        found = sessions.find(cookie)
        assert found is not None and found.principal is not None
        assert found.principal.actor == "user:ana" and found.csrf == form_token(cookie)
    clock.move(IDLE_SECONDS + 1)
    assert sessions.find(cookie) is None
    assert rows(db) == []  # and it is gone from the store


def test_its_last_use_is_written_at_most_once_a_minute(
    service: Service, clock: StoreClock, db: Path
) -> None:
    sessions = WebSessions(service, per_key=8)
    cookie = sessions.open(key_of(service))
    (opened,) = rows(db)
    clock.move(TOUCH_SECONDS - 1)
    assert sessions.find(cookie) is not None
    assert rows(db) == [opened]  # a request within the minute writes nothing
    clock.move(2)
    assert sessions.find(cookie) is not None
    assert rows(db)[0][2] == service.clock() != opened[2]


def test_each_key_holds_its_bound_and_loses_its_least_recently_used(
    service: Service, clock: StoreClock
) -> None:
    sessions = WebSessions(service, per_key=2)
    ana, other = key_of(service), key_of(service)
    first = sessions.open(ana)
    clock.move(TOUCH_SECONDS + 1)
    second = sessions.open(ana)
    clock.move(TOUCH_SECONDS + 1)
    assert sessions.find(first) is not None  # used: now the second is the least recent
    clock.move(1)
    theirs = sessions.open(other)  # another key's take nothing of this one's
    third = sessions.open(ana)
    assert sessions.find(second) is None
    assert [sessions.find(c) is not None for c in (first, third, theirs)] == [True] * 3


def test_sign_out_ends_a_session_and_a_cookie_names_nothing_else(service: Service) -> None:
    sessions = WebSessions(service, per_key=8)
    cookie = sessions.open(key_of(service))
    assert cookie is not None
    assert sessions.find(cookie + "x") is None and sessions.find("") is None
    sessions.end(cookie)
    assert sessions.find(cookie) is None


def test_the_key_is_checked_at_every_request_with_its_holders_role_now(
    service: Service, clock: StoreClock, db: Path
) -> None:
    sessions = WebSessions(service, per_key=8)
    expiring = sessions.open(key_of(service, expires=format_time(clock.at + timedelta(hours=1))))
    lasting = sessions.open(key_of(service))
    service.add_user(name="ana", role="viewer")
    found = sessions.find(lasting)
    assert found is not None and found.principal is not None
    assert found.principal.role == "viewer"  # not the role it signed in with
    clock.move(3600)
    assert sessions.find(expiring) is None  # its key expired
    assert sessions.find(lasting) is not None
    service.remove_user(name="ana")
    assert rows(db) == []  # her keys' sessions went with her, in the same transaction
    assert sessions.find(lasting) is None


def test_a_revoked_key_s_sessions_go_with_its_revocation(service: Service, db: Path) -> None:
    sessions = WebSessions(service, per_key=8)
    revoked, kept = key_of(service), key_of(service)
    for key_id in (revoked, revoked, kept):
        sessions.open(key_id)
    service.revoke_key(id=revoked)
    assert [row[1] for row in rows(db)] == [kept]  # before any request asks
    assert sessions.open(revoked) is None  # and none opens for it any more


def test_the_local_owner_s_session_stays_in_its_process_and_off_the_store(
    service: Service, db: Path
) -> None:
    clock = Clock()
    here = WebSessions(service, per_key=2, clock=clock)
    cookie = here.open(None)
    assert cookie is not None and rows(db) == []
    found = here.find(cookie)
    assert found is not None and found.principal is None and found.key_id is None
    assert WebSessions(service, per_key=2).find(cookie) is None  # another process: unknown
    clock.now += IDLE_SECONDS + 1
    assert here.find(cookie) is None


def test_a_one_time_link_works_once_within_its_time_and_a_wrong_token_uses_nothing() -> None:
    clock = Clock()
    link = LocalLink(clock=clock)
    assert not link.take(link.token[:-1])
    assert not link.take("")
    assert link.take(link.token)
    assert not link.take(link.token)
    late = LocalLink(clock=clock)
    clock.now += LINK_SECONDS + 1
    assert not late.take(late.token)
