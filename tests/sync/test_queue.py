"""Writes on a replica: checked there, queued as requests, pushed to a real `serve --http`
in order, answered once, and shown pending until a pull brings them back (docs/sync.md)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx2
import pytest

from palimpsest.domain.errors import Conflict, Forbidden, NotFound, Retryable, ValidationError
from palimpsest.service import Service
from palimpsest.store import open_store
from palimpsest.sync import sync_round

from ..agents.test_mcp_e2e import command, free_port, serving
from ..api.scripts import api_server

SECRET = "ghp_" + "Zq4Lm8Rt2Vx6Bn0Cs3Dw7Fh1Jk5Np9Yg2Ta4"


@dataclass
class Setup:
    server_db: Path
    editor: str  # ed's key
    viewer: str  # vic's key
    memory: str  # a memory of the server's, ed's own


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    db = tmp_path / "server.db"
    service = Service(open_store(str(db)))
    try:
        service.add_user(name="ed", role="editor")
        service.add_user(name="vic", role="viewer")
        ed = service.with_actor("user:ed")  # ed's own memory: his replica may revise it
        memory = ed.remember(notebook="ops", kind="fact", text="The pool holds 40")["id"]
        editor = service.create_key(user="ed")["key"]
        viewer = service.create_key(user="vic")["key"]
    finally:
        service.close()
    return Setup(db, editor, viewer, memory)


@pytest.fixture
def replica(tmp_path: Path) -> Iterator[Service]:
    opened = Service(open_store(str(tmp_path / "replica.db")))
    yield opened
    opened.close()


def server_service(setup: Setup) -> Service:
    return Service(open_store(str(setup.server_db)))


def texts_on_server(setup: Setup) -> list[str]:
    service = server_service(setup)
    try:
        return [m.text for m in _current(service)]
    finally:
        service.close()


def _current(service: Service) -> list[object]:
    with service.store.read(service.workspace) as tx:
        return list(tx.memories_at(None))


def test_a_write_made_with_the_server_down_is_pending_then_written_there_once(
    setup: Setup, replica: Service, env: dict[str, str]
) -> None:
    with api_server(setup.server_db, env) as served:
        sync_round(replica, served.base, setup.editor)
        url = served.base
    filed = replica.remember(notebook="ops", kind="decision", text="Releases go out on Tuesdays")
    assert filed["pending"] is True and filed["queued"].startswith("q_")
    # shown pending wherever it shows: recall, orient; a revise of a pulled memory on it
    assert [p["text"] for p in replica.recall(query="when do releases go out")["pending"]] == [
        "Releases go out on Tuesdays"
    ]
    replica.revise(id=setup.memory, text="The pool holds 60")
    assert replica.recall(query="pool holds")["hits"][0]["pending"] == ["revise"]
    assert [p["op"] for p in replica.inspect(id=setup.memory)["pending"]] == ["revise"]
    assert {p["op"] for p in replica.orient()["pending"]} == {"remember", "revise"}
    with pytest.raises(Retryable):  # the server is away: the writes wait
        sync_round(replica, url, setup.editor)
    assert len(replica.pending_writes()) == 2

    with api_server(setup.server_db, env, port=int(url.rsplit(":", 1)[1])) as served:
        done = sync_round(replica, served.base, setup.editor)
    assert done.pushed == {"accepted": 2}, replica.queued_writes()["writes"][0]["answer"]
    assert sorted(texts_on_server(setup)) == ["Releases go out on Tuesdays", "The pool holds 60"]
    # back here as the server wrote them, by the key's holder, and no longer pending
    recalled = replica.recall(query="when do releases go out")
    assert "pending" not in recalled and recalled["hits"][0]["text"].startswith("Releases")
    assert replica.inspect(id=setup.memory)["memory"]["text"] == "The pool holds 60"
    assert "pending" not in replica.inspect(id=setup.memory)
    history = replica.history(id=setup.memory)["events"]
    assert history[-1]["actor"] == "user:ed" and history[-1]["op"] == "revise"


def test_a_push_repeated_after_a_crash_is_answered_not_applied_twice(
    setup: Setup, replica: Service, env: dict[str, str]
) -> None:
    with api_server(setup.server_db, env) as served:
        sync_round(replica, served.base, setup.editor)
        replica.remember(notebook="ops", kind="fact", text="Caches expire after ten minutes")
        (item,) = replica.pending_writes()
        # the server got it and answered, but the replica died before writing that down
        first = httpx2.post(f"{served.base}/api/v1/remember", json=item.arguments,
                            headers={"Authorization": f"Bearer {setup.editor}"})  # fmt: skip
        assert first.status_code == 200
        done = sync_round(replica, served.base, setup.editor)
    assert done.pushed == {"accepted": 1}
    assert texts_on_server(setup).count("Caches expire after ten minutes") == 1
    (answered,) = replica.queued_writes(states=("accepted",))["writes"]
    assert answered["answer"]["replayed"] is True
    assert answered["answer"]["id"] == first.json()["id"]


def test_two_replicas_changing_one_memory_offline_give_a_conflict_not_a_lost_write(
    setup: Setup, replica: Service, tmp_path: Path, env: dict[str, str]
) -> None:
    other = Service(open_store(str(tmp_path / "other.db")))
    try:
        with api_server(setup.server_db, env) as served:
            for service in (replica, other):
                sync_round(service, served.base, setup.editor)
            replica.revise(id=setup.memory, text="The pool holds 60")
            other.revise(id=setup.memory, text="The pool holds 80")
            assert sync_round(replica, served.base, setup.editor).pushed == {"accepted": 1}
            assert sync_round(other, served.base, setup.editor).pushed == {"conflict": 1}
            # the conflict is kept, listed by doctor with the way out, never dropped
            (found,) = other.doctor()["sync"]["not_taken"]
            assert found["state"] == "conflict" and found["id"] == setup.memory
            assert "--retry" in other.doctor()["sync"]["fix"]
            # seen both: sent again on the version now current, it lands on top
            other.retry_queued(id=found["queued"])
            assert sync_round(other, served.base, setup.editor).pushed == {"accepted": 1}
        server = server_service(setup)
        try:
            versions = server.inspect(id=setup.memory)["versions"]
        finally:
            server.close()
        assert len(versions) == 3  # 40, then 60, then 80: each kept in history
        assert other.inspect(id=setup.memory)["memory"]["text"] == "The pool holds 80"
        assert "sync" not in other.doctor()
    finally:
        other.close()


def test_a_write_the_server_refuses_is_kept_listed_until_a_person_drops_it(
    setup: Setup, replica: Service, env: dict[str, str]
) -> None:
    with api_server(setup.server_db, env) as served:
        sync_round(replica, served.base, setup.editor)
        replica.revise(id=setup.memory, text="The pool holds 60")
        server = server_service(setup)
        try:
            server.forget(id=setup.memory, because="it named the wrong pool")
        finally:
            server.close()
        assert sync_round(replica, served.base, setup.editor).pushed == {"refused": 1}
    (refused,) = replica.doctor()["sync"]["not_taken"]
    assert refused["answer"]["error_class"] == "not_found"
    # the forget pulled erased the queued write's text too, from the replica's files
    for path in Path(replica.store.url).parent.glob("replica.db*"):
        assert b"The pool holds 60" not in path.read_bytes(), path
    with pytest.raises(ValidationError):
        replica.drop_queued(id=refused["queued"])  # why, first
    replica.drop_queued(id=refused["queued"], because="the memory was forgotten there")
    assert "sync" not in replica.doctor()
    (dropped,) = replica.queued_writes(states=("dropped",))["writes"]
    assert dropped["answer"] == {"because": "the memory was forgotten there"}


def test_a_viewers_replica_refuses_writes_as_the_server_would(
    setup: Setup, replica: Service, env: dict[str, str]
) -> None:
    with api_server(setup.server_db, env) as served:
        assert sync_round(replica, served.base, setup.viewer).role == "viewer"
    with pytest.raises(Forbidden, match="viewer"):
        replica.remember(notebook="ops", kind="fact", text="A viewer's note")
    assert replica.pending_writes() == []


def test_a_secret_never_reaches_the_queue_and_other_writes_are_refused_on_a_replica(
    setup: Setup, replica: Service, tmp_path: Path, env: dict[str, str]
) -> None:
    with api_server(setup.server_db, env) as served:
        sync_round(replica, served.base, setup.editor)
    with pytest.raises(ValidationError, match="secret"):
        replica.remember(notebook="ops", kind="fact", text=f"The deploy key is {SECRET}")
    assert replica.pending_writes() == []
    replica.store.close()
    for path in tmp_path.glob("replica.db*"):
        assert SECRET.encode() not in path.read_bytes()
    reopened = Service(open_store(str(tmp_path / "replica.db")))
    try:
        for refused in (
            lambda: reopened.forget(id=setup.memory, because="gone"),
            lambda: reopened.create_notebook(name="new"),
            lambda: reopened.change_settings(changes={"served.keep_days": 5}, because="try"),
        ):
            with pytest.raises(Conflict, match=r"replica of http://127\.0\.0\.1"):
                refused()
    finally:
        reopened.close()


def test_a_key_revoked_stops_the_push_and_keeps_the_writes(
    setup: Setup, replica: Service, env: dict[str, str]
) -> None:
    with api_server(setup.server_db, env) as served:
        sync_round(replica, served.base, setup.editor)
        replica.remember(notebook="ops", kind="fact", text="Alerts page the on-call phone")
        server = server_service(setup)
        try:
            (ed,) = [k for k in server.list_keys()["keys"] if k["holder"] == "user:ed"]
            server.revoke_key(id=ed["id"])
        finally:
            server.close()
        with pytest.raises(Forbidden, match="refused the replica's key"):
            sync_round(replica, served.base, setup.editor)
    assert [w.state for w in replica.pending_writes()] == ["pending"]
    assert "revoked" in (replica.replica() or pytest.fail()).refused
    assert "revoked" in replica.doctor()["sync"]["stopped"]


def test_serve_pushes_a_write_made_while_the_server_was_away_once_it_is_back(
    setup: Setup, tmp_path: Path, env: dict[str, str]
) -> None:
    replica_db = tmp_path / "replica.db"
    port = free_port()
    server_url = f"http://127.0.0.1:{port}"
    with api_server(setup.server_db, env, port=port):
        first = subprocess.run(command(replica_db, "sync", "--server", server_url, "--json"),
                               env={**env, "PALIMPSEST_SYNC_KEY": setup.editor},
                               capture_output=True, text=True, timeout=60)  # fmt: skip
        assert first.returncode == 0, first.stderr
    keeping = {**env, "PALIMPSEST_SYNC_KEY": setup.editor, "PALIMPSEST_SYNC_SERVER": server_url}
    replica_port = free_port()
    serve = command(replica_db, "serve", "--http", "--port", str(replica_port))
    process = subprocess.Popen(serve, env=keeping, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    with serving(process, replica_port):
        made = subprocess.run(command(replica_db, "remember", "--notebook", "ops", "--kind",
                                      "fact", "Backups run nightly at two", "--json"),
                              env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
        assert json.loads(made.stdout)["pending"] is True
        with api_server(setup.server_db, env, port=port):
            deadline = time.monotonic() + 30
            while "Backups run nightly at two" not in texts_on_server(setup):
                assert time.monotonic() < deadline, "the queued write never reached the server"
                time.sleep(0.1)


@pytest.mark.parametrize("skew_minutes", [-5, 5])
def test_a_replica_whose_clock_is_five_minutes_off_reads_and_writes_as_any(
    setup: Setup, tmp_path: Path, env: dict[str, str], skew_minutes: int
) -> None:
    def skewed() -> str:
        moment = datetime.now(UTC) + timedelta(minutes=skew_minutes)
        return moment.isoformat().replace("+00:00", "Z")

    replica = Service(open_store(str(tmp_path / "skewed.db")), clock=skewed)
    try:
        with api_server(setup.server_db, env) as served:
            sync_round(replica, served.base, setup.editor)
            fresh = httpx2.post(f"{served.base}/api/v1/remember", headers={
                "Authorization": f"Bearer {setup.editor}"}, json={
                "notebook": "ops", "kind": "fact", "text": "Deploys freeze on Fridays",
                "expires_at": (datetime.now(UTC) + timedelta(minutes=2)).isoformat()})  # fmt: skip
            assert fresh.status_code == 200, fresh.text
            replica.remember(notebook="ops", kind="fact", text="Logs rotate weekly")
            assert sync_round(replica, served.base, setup.editor).pushed == {"accepted": 1}
        found = {hit["text"] for hit in replica.recall(query="deploys freeze logs rotate")["hits"]}
        # the server's times are kept as they are; only what expired by the replica's own
        # clock leaves its recall, as on any store
        expected = {"Logs rotate weekly"} | ({"Deploys freeze on Fridays"} if skew_minutes < 0
                                             else set())  # fmt: skip
        assert found == expected
        events = replica.history(notebook="ops")["events"]
        assert [e["at"] for e in events] == sorted(e["at"] for e in events)
    finally:
        replica.close()


def test_a_replica_never_sends_its_queue_to_another_server(
    setup: Setup, replica: Service, tmp_path: Path, env: dict[str, str]
) -> None:
    other_db = tmp_path / "other-server.db"
    other = Service(open_store(str(other_db)))
    try:  # another server where the same person has a key: another history
        other.remember(notebook="ops", kind="fact", text="The other server's own")
        other.add_user(name="ed", role="editor")
        other_key = other.create_key(user="ed")["key"]
    finally:
        other.close()
    with api_server(setup.server_db, env) as served:
        sync_round(replica, served.base, setup.editor)
    replica.remember(notebook="ops", kind="fact", text="Only for the first server")
    with api_server(other_db, env) as elsewhere, pytest.raises(Conflict):
        sync_round(replica, elsewhere.base, other_key)
    assert [w.state for w in replica.pending_writes()] == ["pending"]
    other = Service(open_store(str(other_db)))
    try:
        assert [m.text for m in _current(other)] == ["The other server's own"]
    finally:
        other.close()


def test_a_replica_keeps_and_forgets_what_its_own_sessions_were_shown(
    setup: Setup, replica: Service, env: dict[str, str]
) -> None:
    """What an agent was shown is the store's own, not the server's: a replica records it
    and its owner forgets it there, the one write a replica makes of its own."""
    with api_server(setup.server_db, env) as served:
        sync_round(replica, served.base, setup.editor)
    session = replica.in_session("laptop-session-1")
    assert session.recall(query="pool holds")["hits"]
    replica.served_log.flush()
    assert replica.served(session="laptop-session-1")["entries"]
    forgotten = replica.forget_served(session="laptop-session-1", because="a test session")
    assert forgotten["forgotten"] is True
    with pytest.raises(NotFound):
        replica.served(session="laptop-session-1")
