"""A replica's write path and sync client attacked: bad input on queued writes, secrets,
a hostile or broken server, two writers at once, and the keeper (docs/sync.md).

The server here is a Service in this process behind httpx's MockTransport, so a test can
make it answer anything; what a real `serve --http` does is tests/sync/test_queue.py's."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from palimpsest.api.status import STATUS
from palimpsest.domain.errors import (
    Conflict,
    Forbidden,
    PalimpsestError,
    Retryable,
    ValidationError,
)
from palimpsest.service import Service
from palimpsest.store import open_store
from palimpsest.sync import keeper as keeper_module
from palimpsest.sync import sync_round
from palimpsest.sync.client import Unreachable
from palimpsest.sync.keeper import Keeper

URL = "https://memory.example.org"
Handler = Callable[[httpx2.Request], httpx2.Response | None]


@dataclass
class World:
    server: Service  # the server's store, acting as ed (an editor)
    replica: Service
    memory: str  # ed's own memory on the server
    requests: list[httpx2.Request]
    hostile: list[Handler]  # answer first, if they answer (None: the real server answers)

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self._answer), timeout=5)

    def sync(self) -> Any:
        return sync_round(self.replica, URL, "palimpsest_k_test", client=self.client())

    def _answer(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        for handler in self.hostile:
            answer = handler(request)
            if answer is not None:
                return answer
        op = request.url.path.rsplit("/", 1)[-1]
        body = json.loads(request.content or b"{}")
        try:
            found = getattr(self.server, op)(**body)
        except PalimpsestError as exc:
            return httpx2.Response(STATUS[exc.error_class], json=exc.to_dict())
        return httpx2.Response(200, json=found)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    server = Service(open_store(str(tmp_path / "server.db")))
    replica = Service(open_store(str(tmp_path / "replica.db")))
    try:
        server.add_user(name="ed", role="editor")
        ed = server.with_actor("user:ed")
        ed.role = "editor"
        memory = ed.remember(notebook="ops", kind="fact", text="The pool holds 40")["id"]
        made = World(ed, replica, memory, [], [])
        made.sync()
        yield made
    finally:
        replica.close()
        server.close()


def replica_bytes(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(tmp_path.glob("replica.db*")))


# -- a hostile or broken server -------------------------------------------------------------


@pytest.mark.parametrize(
    "junk",
    [
        httpx2.Response(200, text="<html>Sign in to the hotel wifi</html>"),
        httpx2.Response(200, json=["not", "an", "answer"]),
        httpx2.Response(200, json={"error_class": "internal", "message": "oops"}),
    ],
    ids=["html", "a-list", "an-error-as-200"],
)
def test_a_200_that_is_no_answer_leaves_the_write_pending_not_accepted(
    world: World, junk: httpx2.Response
) -> None:
    world.replica.remember(notebook="ops", kind="fact", text="Releases go out on Tuesdays")
    world.hostile.append(lambda r: junk if r.url.path.endswith("/remember") else None)
    with pytest.raises(PalimpsestError):
        world.sync()
    # never written there: it must not be taken for written
    assert [w.state for w in world.replica.pending_writes()] == ["pending"]
    world.hostile.clear()
    assert world.sync().pushed == {"accepted": 1}


def test_a_redirect_is_not_followed_and_the_key_goes_nowhere_else(world: World) -> None:
    world.replica.remember(notebook="ops", kind="fact", text="Releases go out on Tuesdays")
    world.hostile.append(lambda r: httpx2.Response(
        307, headers={"Location": "https://evil.example.net/api/v1/remember"})
        if r.url.host == "memory.example.org" else None)  # fmt: skip
    with pytest.raises(PalimpsestError, match="307"):
        world.sync()
    assert {r.url.host for r in world.requests} == {"memory.example.org"}
    assert [w.state for w in world.replica.pending_writes()] == ["pending"]


@pytest.mark.parametrize("size", [500_000, 5_000_000])
def test_a_huge_answer_is_not_kept_on_the_replica(world: World, tmp_path: Path, size: int) -> None:
    world.replica.revise(id=world.memory, text="The pool holds 60")
    filler = "x" * size
    world.hostile.append(lambda r: httpx2.Response(
        422, json={"error_class": "validation", "message": "no", "junk": filler})
        if r.url.path.endswith("/revise") else None)  # fmt: skip
    assert world.sync().pushed == {"refused": 1}
    (refused,) = world.replica.queued_writes()["writes"]
    assert refused["answer"].get("error_class", "validation") == "validation"
    assert "422" in refused["answer"]["message"] or refused["answer"]["message"] == "no"
    assert len(json.dumps(refused["answer"])) < 10_000
    assert len(replica_bytes(tmp_path)) < 4_000_000


def test_an_accepted_answer_keeps_no_text_of_the_server_on_the_replica(
    world: World, tmp_path: Path
) -> None:
    other = world.server.remember(notebook="ops", kind="fact",
                                  text="Deploy freezes start on Fridays at noon")["id"]  # fmt: skip
    world.sync()
    world.replica.remember(notebook="ops", kind="fact", text="Deploy freezes start Fridays")
    world.hostile.append(lambda r: httpx2.Response(200, json={
        "id": "m_new", "version": 1, "possible_duplicates": [
            {"id": other, "text": "Deploy freezes start on Fridays at noon"}]})
        if r.url.path.endswith("/remember") else None)  # fmt: skip
    world.sync()
    world.hostile.clear()
    (accepted,) = world.replica.queued_writes(states=("accepted",))["writes"]
    assert accepted["answer"]["id"] == "m_new"
    world.server.forget(id=other, because="it was wrong")
    world.sync()
    world.replica.store.close()
    assert b"start on Fridays at noon" not in replica_bytes(tmp_path)


@pytest.mark.parametrize("state", ["refused", "dropped", "retried"])
def test_a_forget_on_the_server_leaves_no_text_of_a_queued_write_on_its_memory(
    world: World, tmp_path: Path, state: str
) -> None:
    world.replica.revise(id=world.memory, text="The pool holds sixty litres of brine")
    world.hostile.append(lambda r: httpx2.Response(
        403, json={"error_class": "forbidden", "message": "not now"})
        if r.url.path.endswith("/revise") else None)  # fmt: skip
    assert world.sync().pushed == {"refused": 1}
    world.hostile.clear()
    (item,) = world.replica.queued_writes()["writes"]
    if state == "dropped":
        world.replica.drop_queued(id=item["queued"], because="not wanted")
    elif state == "retried":
        world.replica.retry_queued(id=item["queued"])
        assert world.sync().pushed == {"accepted": 1}
    world.server.forget(id=world.memory, because="it named the wrong pool")
    world.sync()
    if state == "refused":  # nothing kept to send again: a person drops it
        with pytest.raises(Conflict, match="Drop it"):
            world.replica.retry_queued(id=item["queued"])
    world.replica.store.close()
    assert b"sixty litres of brine" not in replica_bytes(tmp_path)


# -- bad input -------------------------------------------------------------------------------


def test_deeply_nested_arguments_are_refused_as_invalid_not_an_internal_error(
    world: World,
) -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ValidationError):
        world.replica.remember(notebook="ops", kind="fact", text="Nested", tags=deep)
    assert world.replica.pending_writes() == []


def test_an_id_that_is_no_string_on_retry_and_drop_is_refused_plainly(world: World) -> None:
    for bad in (None, 7, {"$ne": ""}, "q_\x00", "q_" + "9" * 100_000):
        for act in (world.replica.retry_queued,
                    lambda id: world.replica.drop_queued(id=id, because="not wanted")):  # fmt: skip
            with pytest.raises(PalimpsestError) as raised:
                act(id=bad)
            assert raised.value.error_class in ("validation", "not_found")
            assert len(raised.value.message) < 500


def test_a_secret_in_any_part_of_a_queued_write_never_reaches_the_queue(
    world: World, tmp_path: Path
) -> None:
    secret = "ghp_" + "Zq4Lm8Rt2Vx6Bn0Cs3Dw7Fh1Jk5Np9Yg2Ta4"
    other = world.server.remember(notebook="ops", kind="fact", text="The pool is blue")["id"]
    world.sync()
    attempts: list[Callable[[], Any]] = [
        lambda: world.replica.remember(notebook="ops", kind="fact", text="ok", why=secret),
        lambda: world.replica.remember(notebook="ops", kind="fact", text="ok", tags=[secret]),
        lambda: world.replica.remember(
            items=[{"notebook": "ops", "kind": "fact", "text": f"token {secret}"}]
        ),
        lambda: world.replica.revise(
            id=world.memory, because=f"rotated {secret}", text="The pool holds 41"
        ),
        lambda: world.replica.link(source=secret, target=other, type="relates_to"),
        lambda: world.replica.dispute(
            action="open", ids=[world.memory, other], reason=f"see {secret}"
        ),
        lambda: world.replica.remember(
            notebook="ops", kind="fact", text="ok", idempotency_key=secret
        ),
    ]
    for attempt in attempts:
        with pytest.raises(PalimpsestError):
            attempt()
    assert world.replica.pending_writes() == []
    world.replica.revise(id=world.memory, text="The pool holds 41")
    (item,) = world.replica.pending_writes()
    with pytest.raises(ValidationError):
        world.replica.drop_queued(id=item.id, because=f"see {secret}")
    world.replica.store.close()
    assert secret.encode() not in replica_bytes(tmp_path)


# -- two writers at once ---------------------------------------------------------------------


def test_two_rounds_at_once_send_each_write_once(world: World) -> None:
    for n in range(5):
        world.replica.remember(notebook="ops", kind="fact", text=f"Runbook step {n} is checked")
    slow = threading.Event()

    def dawdle(request: httpx2.Request) -> None:
        if request.url.path.endswith("/remember"):
            slow.wait(0.05)
        return None

    world.hostile.append(dawdle)
    errors: list[BaseException] = []

    def one_round() -> None:
        try:
            world.sync()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=one_round) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors, errors
    sent = [r for r in world.requests if r.url.path.endswith("/remember")]
    assert len(sent) == 5  # each once: the second round waits for the first
    assert len(world.replica.queued_writes(states=("accepted",))["writes"]) == 5


# -- the keeper -----------------------------------------------------------------------------


def test_the_keeper_backs_off_while_the_server_is_busy_and_a_write_waits(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.replica.remember(notebook="ops", kind="fact", text="Releases go out on Tuesdays")
    calls: list[float] = []

    def busy(*args: Any, **kwargs: Any) -> Any:
        calls.append(time.monotonic())
        raise Retryable("The server answered 429: busy")

    monkeypatch.setattr(keeper_module, "sync_round", busy)
    monkeypatch.setattr(keeper_module, "TICK_SECONDS", 0.05)
    kept = Keeper(world.replica, URL, "palimpsest_k_test", every=30).start()
    time.sleep(1.5)
    kept.stop()
    # a write waits, but a busy server is not asked again every tick (30 in 1.5 s)
    assert 1 <= len(calls) <= 6, len(calls)


def test_the_keeper_tries_every_tick_while_the_server_is_away_and_a_write_waits(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused connection asks nothing of the server: tried at each tick, the write goes
    out within a tick of its return (the 2 s target), not after a doubled wait."""
    world.replica.remember(notebook="ops", kind="fact", text="Releases go out on Tuesdays")
    calls: list[float] = []

    def away(*args: Any, **kwargs: Any) -> Any:
        calls.append(time.monotonic())
        raise Unreachable("The server at http://127.0.0.1:9 cannot be reached")

    monkeypatch.setattr(keeper_module, "sync_round", away)
    monkeypatch.setattr(keeper_module, "TICK_SECONDS", 0.05)
    kept = Keeper(world.replica, URL, "palimpsest_k_test", every=30).start()
    time.sleep(1.5)
    kept.stop()
    assert len(calls) >= 10, len(calls)


@pytest.mark.parametrize("action", ["List", " list ", "LIST"])
def test_a_dispute_list_spelled_another_way_is_a_read_not_a_queued_write(
    world: World, action: str
) -> None:
    listed = world.replica.dispute(action=action)
    assert "queued" not in listed
    assert world.replica.pending_writes() == []


def test_a_round_waits_for_another_process_round_on_the_same_replica(
    world: World, tmp_path: Path
) -> None:
    import fcntl

    world.replica.remember(notebook="ops", kind="fact", text="Releases go out on Tuesdays")
    world.requests.clear()
    done = threading.Event()
    with open(tmp_path / "replica.db.sync-lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # `serve`'s keeper, in another process, mid-round
        threading.Thread(target=lambda: (world.sync(), done.set()), daemon=True).start()
        assert not done.wait(0.5)
        assert world.requests == []
    assert done.wait(10)
    assert len(world.replica.queued_writes(states=("accepted",))["writes"]) == 1


def test_an_answer_older_than_the_position_does_not_set_it_back(world: World) -> None:
    world.server.remember(notebook="ops", kind="fact", text="The pool is heated in May")
    world.sync()
    held = (world.replica.replica() or pytest.fail()).position_seq
    older = json.loads(json.dumps(world.server.sync_pull(limit=1)))
    assert older["position"]["seq"] < held
    world.replica.apply_pulled(older, URL)
    assert (world.replica.replica() or pytest.fail()).position_seq == held


def test_a_server_that_answers_a_byte_at_a_time_does_not_hold_the_round_forever(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from palimpsest.sync import client as client_module

    monkeypatch.setattr(client_module, "ANSWER_SECONDS", 1.0)
    world.replica.remember(notebook="ops", kind="fact", text="Releases go out on Tuesdays")

    def drip() -> Iterator[bytes]:
        for _ in range(100):  # each byte within any read timeout: twenty seconds in all
            time.sleep(0.2)
            yield b" "

    world.hostile.append(lambda r: httpx2.Response(200, content=drip()))
    started = time.monotonic()
    with pytest.raises(Retryable, match="too long"):
        world.sync()
    assert time.monotonic() - started < 5
    assert [w.state for w in world.replica.pending_writes()] == ["pending"]


@pytest.mark.parametrize("status", [405, 410, 418])
def test_a_write_answered_with_an_unexpected_refusal_is_kept_and_the_pull_goes_on(
    world: World, status: int
) -> None:
    world.replica.remember(notebook="ops", kind="fact", text="Releases go out on Tuesdays")
    world.server.remember(notebook="ops", kind="fact", text="The pool is heated in May")
    world.hostile.append(lambda r: httpx2.Response(status, text="Not here")
                         if r.url.path.endswith("/remember") else None)  # fmt: skip
    # a proxy that refuses the path must not stop every later pull behind this one write
    assert world.sync().pushed == {"refused": 1}
    (refused,) = world.replica.queued_writes()["writes"]
    assert str(status) in refused["answer"]["message"]
    hits = world.replica.recall(query="pool heated")["hits"]
    assert [h for h in hits if "heated" in h["text"]]


def test_an_answer_claiming_another_workspace_changes_nothing(world: World) -> None:
    world.server.remember(notebook="ops", kind="fact", text="The pool is heated in May")

    def elsewhere(request: httpx2.Request) -> httpx2.Response | None:
        if not request.url.path.endswith("/sync_pull"):
            return None
        answer = world.server.sync_pull(**json.loads(request.content))
        return httpx2.Response(200, json={**answer, "workspace": {"id": "lab", "name": "lab"}})

    world.hostile.append(elsewhere)
    with pytest.raises(Conflict, match="one server's workspace"):
        world.sync()
    hits = world.replica.recall(query="pool heated")["hits"]
    assert not [h for h in hits if "heated" in h["text"]]


def test_a_write_the_server_fails_on_waits_but_the_pull_still_brings_its_history(
    world: World,
) -> None:
    world.replica.remember(notebook="ops", kind="fact", text="Releases go out on Tuesdays")
    world.server.remember(notebook="ops", kind="fact", text="The pool is heated in May")
    bug = {"error_class": "internal", "message": "a bug"}
    world.hostile.append(lambda r: httpx2.Response(500, json=bug)
                         if r.url.path.endswith("/remember") else None)  # fmt: skip
    with pytest.raises(Retryable, match="500"):  # said, so the keeper waits before again
        world.sync()
    hits = world.replica.recall(query="pool heated")["hits"]
    assert [h for h in hits if "heated" in h["text"]]  # reads do not go stale behind it
    assert [w.state for w in world.replica.pending_writes()] == ["pending"]


def test_a_round_killed_between_the_servers_accept_and_the_settle_writes_once(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.replica.remember(notebook="ops", kind="fact", text="Caches expire after ten minutes")

    def killed(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt  # kill -9: the server wrote it, the replica wrote nothing

    with monkeypatch.context() as patched:
        patched.setattr(Service, "settle", killed)
        with pytest.raises(KeyboardInterrupt):
            world.sync()
    assert world.sync().pushed == {"accepted": 1}
    (answered,) = world.replica.queued_writes(states=("accepted",))["writes"]
    assert answered["answer"]["replayed"] is True
    found = world.server.recall(query="caches expire")["hits"]
    assert len([h for h in found if h["text"] == "Caches expire after ten minutes"]) == 1


def test_an_editors_replica_revises_anothers_memory_only_as_the_server_would(
    world: World, tmp_path: Path
) -> None:
    owner = Service(open_store(str(tmp_path / "server.db")), actor="user:olga")
    try:
        theirs = owner.remember(notebook="ops", kind="fact", text="The pool opens at six")["id"]
    finally:
        owner.close()
    world.sync()
    with pytest.raises(PalimpsestError, match="override"):  # refused here, as there
        world.replica.revise(id=theirs, tags=["pool"])
    world.replica.revise(id=theirs, tags=["pool"], override_reason="tagging the pool's facts",
                         override_confirm=True)  # fmt: skip
    assert world.sync().pushed == {"accepted": 1}


@pytest.mark.parametrize(
    "given",
    [
        ["--because", "not wanted"],  # no --drop: a round would run, the drop never made
        ["--retry", "q_a", "--drop", "q_b", "--because", "x"],
        ["--status", "--drop", "q_b", "--because", "x"],
        ["--status", "--retry", "q_a"],
    ],
)
def test_sync_given_options_that_do_not_go_together_says_so_and_does_nothing(
    world: World, tmp_path: Path, env: dict[str, str], given: list[str]
) -> None:
    import subprocess

    from ..agents.test_mcp_e2e import command

    world.replica.close()
    done = subprocess.run(command(tmp_path / "replica.db", "sync", *given, "--json"),
                          env={**env, "PALIMPSEST_SYNC_KEY": "palimpsest_k_test"},
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0, done.stdout
    assert json.loads(done.stdout)["error_class"] == "validation"


@pytest.mark.parametrize(
    "given",
    [
        {"notebook": "ops", "kind": "fact", "text": "A NUL \x00 in the text"},
        {"notebook": "ops", "kind": "fact", "text": "x" * 2_000_000},
        {"notebook": "ops", "kind": "fact", "text": "Tagged", "tags": ["a\x00b"]},
        {"notebook": "ops\x00", "kind": "fact", "text": "In a NUL notebook"},
        {"items": [{"notebook": "ops", "kind": "fact", "text": f"n{i}"} for i in range(5000)]},
        {"notebook": "ops", "kind": "fact", "text": "Odd", "because": {"nested": ["x"]}},
    ],
    ids=["nul-text", "huge-text", "nul-tag", "nul-notebook", "huge-batch", "nested-because"],
)
def test_bad_input_on_a_replica_is_refused_as_the_server_would_and_queues_nothing(
    world: World, given: dict[str, Any]
) -> None:
    with pytest.raises(PalimpsestError) as raised:
        world.replica.remember(**given)
    assert raised.value.error_class == "validation"
    assert world.replica.pending_writes() == []


def test_a_write_dropped_while_a_round_runs_is_not_sent_after_all(world: World) -> None:
    world.replica.remember(notebook="ops", kind="fact", text="Runbook step one is checked")
    second = world.replica.remember(notebook="ops", kind="fact", text="Runbook step two")
    world.requests.clear()

    def person_drops(request: httpx2.Request) -> None:
        if request.url.path.endswith("/remember") and len(world.requests) == 1:
            world.replica.drop_queued(id=second["queued"], because="step two was wrong")
        return None

    world.hostile.append(person_drops)
    assert world.sync().pushed == {"accepted": 1}
    assert [r.url.path for r in world.requests].count("/api/v1/remember") == 1
    (dropped,) = world.replica.queued_writes(states=("dropped",))["writes"]
    assert dropped["queued"] == second["queued"]


def test_a_refused_write_retried_twice_at_once_is_queued_once(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from palimpsest.service.queueing import QueueOps

    world.replica.revise(id=world.memory, text="The pool holds 60")
    world.hostile.append(lambda r: httpx2.Response(
        403, json={"error_class": "forbidden", "message": "not now"})
        if r.url.path.endswith("/revise") else None)  # fmt: skip
    world.sync()
    world.hostile.clear()
    (item,) = world.replica.queued_writes()["writes"]
    both = threading.Barrier(2, timeout=5)
    looked = QueueOps._current_version

    def together(self: QueueOps, memory_id: Any) -> int | None:
        both.wait()  # a double click on the page's Retry: both read the item as refused
        return looked(self, memory_id)

    monkeypatch.setattr(QueueOps, "_current_version", together)
    outcomes: list[object] = []

    def retry() -> None:
        try:
            outcomes.append(world.replica.retry_queued(id=item["queued"]))
        except PalimpsestError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=retry) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(world.replica.pending_writes()) == 1, outcomes
    assert sum(isinstance(o, PalimpsestError) for o in outcomes) == 1  # not found: sent


def test_a_forget_empties_a_queued_dispute_that_names_the_memory_among_others(
    world: World, tmp_path: Path
) -> None:
    other = world.server.remember(notebook="ops", kind="fact", text="The pool holds 45")["id"]
    world.sync()
    world.replica.dispute(action="open", ids=[world.memory, other],
                          reason="The gauge on the brine tank reads forty-five")  # fmt: skip
    world.hostile.append(lambda r: httpx2.Response(
        403, json={"error_class": "forbidden", "message": "not now"})
        if r.url.path.endswith("/dispute") else None)  # fmt: skip
    assert world.sync().pushed == {"refused": 1}
    world.hostile.clear()
    world.server.forget(id=other, because="a wrong reading")
    world.sync()
    world.replica.store.close()
    assert b"brine tank reads" not in replica_bytes(tmp_path)


@pytest.mark.parametrize("answer", ["refused key", "a refused write waits"])
def test_the_keeper_stops_on_a_refused_key_and_idles_while_a_refused_write_waits(
    world: World, monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    world.replica.revise(id=world.memory, text="The pool holds 60")
    world.hostile.append(lambda r: httpx2.Response(
        403, json={"error_class": "forbidden", "message": "not yours"})
        if r.url.path.endswith("/revise") else None)  # fmt: skip
    world.sync()  # the write is refused: it waits for a person, not for the keeper
    calls: list[float] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(time.monotonic())
        if answer == "refused key":
            raise Forbidden("The server refused the replica's key (401)")
        return world.sync()

    monkeypatch.setattr(keeper_module, "sync_round", counted)
    monkeypatch.setattr(keeper_module, "TICK_SECONDS", 0.05)
    kept = Keeper(world.replica, URL, "palimpsest_k_test", every=30).start()
    time.sleep(1.0)
    stopped = not kept._thread.is_alive()
    kept.stop()
    assert len(calls) == 1
    assert stopped == (answer == "refused key")


def test_a_batch_remembered_on_a_replica_shows_pending_as_a_single_one_does(
    world: World,
) -> None:
    world.replica.remember(items=[
        {"notebook": "ops", "kind": "fact", "text": "Backups run nightly at two"},
        {"notebook": "ops", "kind": "fact", "text": "Alerts page the on-call phone"},
    ])  # fmt: skip
    found = world.replica.recall(query="when do backups run")
    assert [p["text"] for p in found.get("pending", [])] == ["Backups run nightly at two"]


def test_a_revert_made_offline_over_a_version_written_there_since_is_a_conflict(
    world: World,
) -> None:
    world.server.revise(id=world.memory, text="The pool holds 50")
    world.sync()
    world.replica.revert(id=world.memory, version=1, because="50 was a misreading")
    world.server.revise(id=world.memory, text="The pool holds 70, after the refill")
    assert world.sync().pushed == {"conflict": 1}


def test_two_revises_of_one_memory_made_offline_on_one_replica_both_land(world: World) -> None:
    world.replica.revise(id=world.memory, text="The pool holds 60")
    world.replica.revise(id=world.memory, tags=["pool"])  # on top of its own first: no conflict
    assert world.sync().pushed == {"accepted": 2}
    memory = world.replica.inspect(id=world.memory)["memory"]
    assert (memory["text"], memory["tags"], memory["version"]) == ("The pool holds 60", ["pool"], 3)


def test_a_refusal_quoting_a_secret_is_not_kept_on_the_replica(
    world: World, tmp_path: Path
) -> None:
    secret = "ghp_" + "Zq4Lm8Rt2Vx6Bn0Cs3Dw7Fh1Jk5Np9Yg2Ta4"
    world.replica.revise(id=world.memory, text="The pool holds 60")
    world.replica.remember(notebook="ops", kind="fact", text="Logs rotate weekly")
    world.hostile.append(lambda r: httpx2.Response(422, json={
        "error_class": "validation", "message": f"refused: {secret}", "field": secret})
        if r.url.path.endswith("/revise") else None)  # fmt: skip
    world.hostile.append(lambda r: httpx2.Response(200, json={"id": secret, "version": 1})
                         if r.url.path.endswith("/remember") else None)  # fmt: skip
    assert world.sync().pushed == {"refused": 1, "accepted": 1}
    (refused,) = world.replica.queued_writes()["writes"]
    assert refused["answer"]["error_class"] == "validation"
    world.replica.store.close()
    assert secret.encode() not in replica_bytes(tmp_path)


def test_a_refusal_with_terminal_escapes_is_kept_without_them(world: World) -> None:
    world.replica.revise(id=world.memory, text="The pool holds 60")
    world.hostile.append(lambda r: httpx2.Response(422, json={
        "error_class": "validation\x1b[2J", "message": "no\x1b]0;pwned\x07 \u202eevil"})
        if r.url.path.endswith("/revise") else None)  # fmt: skip
    assert world.sync().pushed == {"refused": 1}
    (refused,) = world.replica.queued_writes()["writes"]
    kept = "".join(v for v in refused["answer"].values() if isinstance(v, str))
    assert kept and not [c for c in kept if not c.isprintable()], kept


def test_a_dry_run_on_a_viewers_replica_answers_as_the_write_would(world: World) -> None:
    world.server.role = "viewer"
    world.sync()
    with pytest.raises(PalimpsestError) as real:
        world.replica.remember(notebook="ops", kind="fact", text="A viewer's note")
    with pytest.raises(PalimpsestError) as dry:
        world.replica.remember(notebook="ops", kind="fact", text="A viewer's note",
                               dry_run=True)  # fmt: skip
    assert dry.value.error_class == real.value.error_class == "forbidden"
    assert world.replica.pending_writes() == []


def test_a_server_that_always_says_more_does_not_hold_the_round_forever(world: World) -> None:
    def more(request: httpx2.Request) -> httpx2.Response | None:
        if not request.url.path.endswith("/sync_pull"):
            return None
        if len(world.requests) > 50:
            raise AssertionError("still pulling: the round never ends")
        answer = world.server.sync_pull(**json.loads(request.content))
        return httpx2.Response(200, json={**answer, "more": True})

    world.hostile.append(more)
    world.requests.clear()
    with pytest.raises(PalimpsestError, match="more"):
        world.sync()
    assert len(world.requests) <= 3


def test_sync_run_while_serve_keeps_the_replica_sends_each_write_once(
    tmp_path: Path, env: dict[str, str]
) -> None:
    import subprocess

    from ..agents.test_mcp_e2e import command, free_port, serving
    from ..api.scripts import api_server

    server_db, replica_db = tmp_path / "server.db", tmp_path / "replica.db"
    made = Service(open_store(str(server_db)))
    try:
        made.add_user(name="ed", role="editor")
        key = made.create_key(user="ed")["key"]
    finally:
        made.close()
    with api_server(server_db, env) as served:
        keyed = {**env, "PALIMPSEST_SYNC_KEY": key, "PALIMPSEST_SYNC_SERVER": served.base}
        first = subprocess.run(command(replica_db, "sync"), env=keyed, capture_output=True,
                               text=True, timeout=60)  # fmt: skip
        assert first.returncode == 0, first.stderr
        replica = Service(open_store(str(replica_db)))
        try:
            for n in range(12):
                replica.remember(notebook="ops", kind="fact", text=f"Runbook step {n} holds")
        finally:
            replica.close()
        port = free_port()
        keeper = subprocess.Popen(command(replica_db, "serve", "--http", "--port", str(port)),
                                  env=keyed, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
        with serving(keeper, port):
            rounds = [subprocess.Popen(command(replica_db, "sync"), env=keyed,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True) for _ in range(2)]  # fmt: skip
            for running in rounds:
                _, err = running.communicate(timeout=60)
                assert running.returncode == 0, err
            time.sleep(1)
    replica = Service(open_store(str(replica_db)))
    try:
        accepted = replica.queued_writes(states=("accepted",))["writes"]
        assert len(accepted) == 12
        # sent twice, the second answer would be the server's replay: none is
        assert [a["queued"] for a in accepted if a["answer"].get("replayed")] == []
        texts = [h["text"] for h in replica.recall(query="runbook step holds", limit=50)["hits"]]
        assert sorted(texts) == sorted(f"Runbook step {n} holds" for n in range(12))
    finally:
        replica.close()


def test_a_callers_idempotency_key_on_a_replica_queues_once_and_refuses_another_request(
    world: World,
) -> None:
    first = world.replica.remember(notebook="ops", kind="fact", text="Logs rotate weekly",
                                   idempotency_key="agent-retry-1")  # fmt: skip
    again = world.replica.remember(notebook="ops", kind="fact", text="Logs rotate weekly",
                                   idempotency_key="agent-retry-1")  # fmt: skip
    assert again["queued"] == first["queued"]
    with pytest.raises(Conflict, match="idempotency_key"):
        world.replica.remember(notebook="ops", kind="fact", text="Logs rotate daily",
                               idempotency_key="agent-retry-1")  # fmt: skip
    assert len(world.replica.pending_writes()) == 1
    # a revise behind another of its memory, retried by its caller: the same write still
    world.replica.revise(id=world.memory, text="The pool holds 50")
    revised = world.replica.revise(id=world.memory, tags=["pool"], idempotency_key="agent-2")
    assert (
        world.replica.revise(id=world.memory, tags=["pool"], idempotency_key="agent-2")["queued"]
        == revised["queued"]
    )
    assert world.sync().pushed == {"accepted": 3}


def test_the_key_for_a_server_on_this_machine_never_goes_to_a_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from ..agents.test_mcp_e2e import free_port

    proxy = socket.socket()
    proxy.bind(("127.0.0.1", 0))
    proxy.listen(1)
    proxy.settimeout(5)
    heard: list[bytes] = []

    def listen() -> None:
        try:
            conn, _ = proxy.accept()
        except OSError:
            return
        heard.append(conn.recv(65536))
        conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
        conn.close()

    threading.Thread(target=listen, daemon=True).start()
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.getsockname()[1]}")
    monkeypatch.setenv("ALL_PROXY", f"http://127.0.0.1:{proxy.getsockname()[1]}")
    fresh = Service(open_store(str(tmp_path / "fresh.db")))
    try:
        with pytest.raises(Retryable):  # nothing listens there: unreachable, said
            sync_round(fresh, f"http://127.0.0.1:{free_port()}", "palimpsest_k_plaintext")
    finally:
        fresh.close()
        proxy.close()
    assert not [h for h in heard if b"palimpsest_k_plaintext" in h]


def test_a_viewer_of_the_replica_itself_cannot_queue_a_write_as_the_keys_editor(
    world: World,
) -> None:
    viewer = world.replica.with_actor("user:vic")
    viewer.role = "viewer"  # a caller of the replica's own page or API, with its role there
    with pytest.raises(Forbidden):
        viewer.remember(notebook="ops", kind="fact", text="A viewer's note")
    with pytest.raises(Forbidden):
        viewer.revise(id=world.memory, text="The pool holds 0")
    with pytest.raises(Forbidden):  # its dry run says so too
        viewer.revise(id=world.memory, text="The pool holds 0", dry_run=True)
    assert world.replica.pending_writes() == []
