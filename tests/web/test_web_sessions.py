"""How long a web session and a one-time link live, on a clock the test moves."""

from __future__ import annotations

from palimpsest.web.sessions import IDLE_SECONDS, LINK_SECONDS, LocalLink, WebSessions


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_ends_when_idle_too_long_and_lives_while_used() -> None:
    clock = Clock()
    sessions = WebSessions(per_key=8, clock=clock)
    cookie, opened = sessions.open("palimpsest_k_x", "k_x")
    for _ in range(3):  # used every so often: it lives on
        clock.now += IDLE_SECONDS - 1
        assert sessions.find(cookie) is opened
    clock.now += IDLE_SECONDS + 1
    assert sessions.find(cookie) is None
    assert sessions.count("k_x") == 0


def test_each_key_holds_its_bound_and_loses_its_least_recently_used() -> None:
    clock = Clock()
    sessions = WebSessions(per_key=2, clock=clock)
    first, _ = sessions.open("a", "k_a")
    clock.now += 1
    second, _ = sessions.open("a", "k_a")
    clock.now += 1
    assert sessions.find(first) is not None  # used: now the second is the least recent
    clock.now += 1
    other, _ = sessions.open("b", "k_b")  # another key's take nothing of this one's
    third, _ = sessions.open("a", "k_a")
    assert sessions.find(second) is None
    assert [sessions.find(c) is not None for c in (first, third, other)] == [True] * 3


def test_sign_out_ends_a_session_and_a_cookie_names_nothing_else() -> None:
    sessions = WebSessions(per_key=8)
    cookie, _ = sessions.open("a", "k_a")
    assert sessions.find(cookie + "x") is None and sessions.find("") is None
    sessions.end(cookie)
    assert sessions.find(cookie) is None


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
