"""Sync's service, one behaviour at a time: a server's answers and a replica writing them
(tests/sync/test_sync_converges.py drives random sequences of the same)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.domain.errors import Conflict, ValidationError
from palimpsest.service import Service
from palimpsest.store import open_store

from .world import World


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    server = open_store(str(tmp_path / "server.db"))
    made = World(server, tmp_path / "replica.db")
    yield made
    made.close()
    server.close()


def test_a_settings_change_is_pulled_with_the_workspace_settings(world: World) -> None:
    world.remember("alpha", "pool")
    world.server.change_settings(changes={"recall.min_similarity": 0.3}, because="tuning")
    world.pull_all(limit=1)
    world.assert_converged()
    assert world.replica.settings() == world.server.settings()


def test_a_notebook_renamed_onto_a_name_another_had_before(world: World) -> None:
    world.remember("alpha", "pool")
    world.remember("beta", "queue")
    world.pull_all()
    world.server.edit_notebook(notebook="beta", name="gamma")
    world.server.edit_notebook(notebook="alpha", name="beta")
    world.server.edit_notebook(notebook="gamma", name="alpha")
    world.pull_all()
    world.assert_converged()


@pytest.mark.parametrize("limit", [1, 2, 1000])
def test_a_memory_forgotten_after_its_versions_were_pulled(world: World, limit: int) -> None:
    kept = world.remember("alpha", "pool")
    gone = world.remember("alpha", "cache")
    world.server.revise(id=gone, text=world.text("cache", "revised"))
    world.server.link(source=kept, target=gone, type="relates_to")
    world.pull_all(limit)
    world.server.forget(id=gone, because="a mistake")
    world.pull_all(limit)
    world.assert_converged()


@pytest.mark.parametrize("limit", [1, 3])
def test_a_version_pulled_already_scrubbed_before_its_forget(world: World, limit: int) -> None:
    target = world.remember("alpha", "pool")
    world.server.revise(id=target, text=world.text("pool", "fixed"))
    world.server.revise(id=target, tags=["index"])
    world.server.forget(id=target, version=1, because="pasted wrong")
    world.pull_all(limit)
    world.assert_converged()


def test_a_version_forgotten_after_it_was_pulled(world: World) -> None:
    target = world.remember("alpha", "pool")
    world.server.revise(id=target, text=world.text("pool", "fixed"))
    world.pull_all()
    world.server.forget(id=target, version=1, because="pasted wrong")
    world.pull_all(limit=1)
    world.assert_converged()


def test_spans_closed_in_a_later_round(world: World) -> None:
    target = world.remember("alpha", "pool")
    world.pull_all()
    world.times.append(world.server.clock())
    world.server.revise(id=target, text=world.text("pool", "changed"))
    world.times.append(world.server.clock())
    world.server.revise(id=target, status="retracted", note="never true")
    world.pull_all(limit=1)
    world.times.append(world.server.clock())
    world.assert_converged()


def test_disputes_opened_and_ruled_in_separate_rounds(world: World) -> None:
    first = world.remember("alpha", "pool")
    second = world.remember("alpha", "cache")
    opened = world.server.open_dispute(ids=[first, second], reason="they disagree")
    world.pull_all(limit=1)
    world.times.append(world.server.clock())
    world.server.rule_dispute(dispute=opened["id"], holds=first, reason="checked")
    world.pull_all(limit=1)
    world.assert_converged()
    assert world.replica.list_disputes(include_closed=True)["disputes"][0]["status"] == "ruled"


def test_as_of_on_the_replica_answers_as_the_server_does(world: World) -> None:
    target = world.remember("alpha", "pool")
    world.times.append(world.server.clock())
    world.server.revise(id=target, text=world.text("pool", "second"))
    world.times.append(world.server.clock())
    world.server.revise(id=target, status="retracted", note="never true")
    world.times.append(world.server.clock())
    world.pull_all(limit=2)
    world.assert_converged()


def test_a_notebook_forgotten_and_its_name_taken_again_in_one_round(world: World) -> None:
    world.remember("alpha", "pool")
    world.server.create_notebook(name="gamma")
    world.pull_all()
    world.server.forget(notebook="gamma", because="not needed")
    world.server.create_notebook(name="gamma", summary="the new one")
    world.pull_all()
    world.assert_converged()


MALFORMED = [{"seq": -1}, {"seq": "3"}, {"seq": True}, {"seq": 3}, {"seq": 3, "op_id": "nope!"},
             {"op_id": "op_abc"}, "3", 3, [3]]  # fmt: skip


@pytest.mark.parametrize("since", MALFORMED)
def test_a_malformed_since_is_refused_naming_it(world: World, since: object) -> None:
    world.remember("alpha", "pool")
    with pytest.raises(ValidationError) as refused:
        world.server.sync_pull(since=since)  # type: ignore[arg-type]
    assert refused.value.field == "since"


@pytest.mark.parametrize("limit", [0, -1, 5001, True, "10", 2.5])
def test_a_limit_out_of_bounds_is_refused_naming_it(world: World, limit: object) -> None:
    with pytest.raises(ValidationError) as refused:
        world.server.sync_pull(limit=limit)  # type: ignore[arg-type]
    assert refused.value.field == "limit"


def test_a_position_the_server_never_gave_is_unknown(world: World) -> None:
    world.remember("alpha", "pool")
    answer = world.server.sync_pull()
    position = answer["position"]
    for since in ({**position, "op_id": "op_01m93qbb56b5cgdv8j2s"},
                  {"seq": position["seq"] + 5, "op_id": position["op_id"]}):  # fmt: skip
        with pytest.raises(Conflict) as refused:
            world.server.sync_pull(since=since)
        assert refused.value.field == "since"


def test_a_store_with_memories_of_its_own_is_not_made_a_replica(tmp_path: Path) -> None:
    server = Service(open_store(str(tmp_path / "server.db")))
    server.remember(notebook="alpha", kind="fact", text="On the server")
    own = Service(open_store(str(tmp_path / "own.db")))
    own.remember(notebook="alpha", kind="fact", text="Of its own")
    with pytest.raises(Conflict) as refused:
        own.apply_pulled(server.sync_pull(), "https://a.example")
    assert refused.value.field == "db"
    assert own.replica() is None
    assert [h["text"] for h in own.recall(query="own")["hits"]] == ["Of its own"]
    for service in (server, own):
        service.store.close()


def test_a_replica_follows_one_server_and_says_where_it_is(world: World) -> None:
    world.remember("alpha", "pool")
    world.pull_all()
    state = world.replica.replica()
    assert state is not None and state.server == "https://palimpsest.example"
    assert state.position_seq == world.last["position"]["seq"]
    with pytest.raises(Conflict) as refused:
        world.replica.apply_pulled(world.server.sync_pull(), "https://another.example")
    assert refused.value.field == "server"


def test_a_damaged_answer_writes_nothing(world: World) -> None:
    world.remember("alpha", "pool")
    answer = world.server.sync_pull()
    damaged = {**answer, "records": [*answer["records"], {"record": "memory", "id": 5}]}
    with pytest.raises(ValidationError):
        world.replica.apply_pulled(damaged, "https://palimpsest.example")
    assert world.replica.replica() is None
    assert world.replica.recall(query="pool")["hits"] == []


def test_an_older_answer_applied_late_leaves_the_position_where_it_was(world: World) -> None:
    world.remember("alpha", "pool")
    world.remember("alpha", "cache")
    first = world.server.sync_pull(limit=1)
    second = world.server.sync_pull(since=first["position"], limit=1)
    world.replica.apply_pulled(first, "https://palimpsest.example")
    world.replica.apply_pulled(second, "https://palimpsest.example")
    late = world.replica.apply_pulled(first, "https://palimpsest.example")  # a retry, late
    assert late["events"] == 0
    state = world.replica.replica()
    assert state is not None
    assert (state.position_seq, state.position_op_id) == (
        second["position"]["seq"], second["position"]["op_id"])  # fmt: skip


def test_another_history_at_the_same_address_is_refused_not_skipped(
    world: World, tmp_path: Path
) -> None:
    """A server restored from an export (or another server at its address) numbers other
    events as the replica's: pulled from the start, they must not be taken as held."""
    world.remember("alpha", "pool")
    world.pull_all()
    before = world.view(world.replica)
    restored = Service(open_store(str(tmp_path / "restored.db")))
    restored.remember(notebook="alpha", kind="fact", text="Only on the restored server")
    with pytest.raises(Conflict):
        world.replica.apply_pulled(restored.sync_pull(), "https://palimpsest.example")
    assert world.view(world.replica) == before
    state = world.replica.replica()
    assert state is not None and state.position_seq == world.last["position"]["seq"]
    restored.store.close()


def test_a_name_taken_from_a_notebook_forgotten_in_a_later_round(world: World) -> None:
    gone = world.remember("alpha", "pool")
    world.remember("beta", "queue")
    world.pull_all()
    world.server.forget(id=gone, because="a mistake")
    world.server.edit_notebook(notebook="alpha", name="gamma")
    world.server.edit_notebook(notebook="beta", name="alpha")
    world.server.forget(notebook="gamma", because="empty now")
    world.pull_all(limit=3)
    world.assert_converged()


def test_a_name_a_round_sends_before_the_rename_that_freed_it(world: World) -> None:
    world.remember("alpha", "pool")
    world.remember("beta", "queue")
    world.pull_all()
    world.server.edit_notebook(notebook="beta", summary="touched first")
    world.server.edit_notebook(notebook="alpha", name="gamma")
    world.server.edit_notebook(notebook="beta", name="alpha")
    world.pull_all(limit=1)
    world.assert_converged()


@pytest.mark.parametrize("limit", [1, 2, 1000])
def test_a_key_passed_to_a_successor_across_rounds(world: World, limit: int) -> None:
    filed = world.server.remember(notebook="alpha", kind="fact", text=world.text("pool"),
                                  key="pool.size")  # fmt: skip
    world.ids.append(filed["id"])
    world.pull_all()
    revised = world.server.revise(id=filed["id"], supersede=True, text=world.text("pool"))
    world.ids += [r["id"] for r in revised["results"] if r["id"] not in world.ids]
    world.pull_all(limit)
    world.assert_converged()


def test_links_sent_ahead_of_the_memory_they_reach(world: World) -> None:
    first = world.remember("alpha", "pool")
    world.pull_all()
    world.server.revise(id=first, tags=["index"])
    later = world.remember("beta", "queue")
    world.server.link(source=first, target=later, type="relates_to")
    world.pull_all(limit=1)
    world.assert_converged()


def test_a_forget_pulled_says_when_its_scrub_waits_for_a_reader(world: World) -> None:
    gone = world.remember("alpha", "pool")
    world.pull_all()
    world.server.forget(id=gone, because="a mistake")
    answer = world.server.sync_pull(since=world.last["position"])
    reader = sqlite3.connect(world.replica_path)  # another process reading the replica
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM events").fetchone()
        applied = world.replica.apply_pulled(answer, "https://palimpsest.example")
        assert applied.get("scrub_pending") is True
    finally:
        reader.close()
    assert world.replica.store.scrub(world.replica.workspace)
    assert "scrub_pending" not in world.replica.apply_pulled(answer, "https://palimpsest.example")
    world.last = answer
    world.assert_converged()


def test_an_answer_that_skips_events_the_replica_lacks_is_refused(world: World) -> None:
    for word in ("pool", "cache", "queue"):
        world.remember("alpha", word)
    first = world.server.sync_pull(limit=2)
    second = world.server.sync_pull(since=first["position"], limit=2)
    third = world.server.sync_pull(since=second["position"], limit=2)
    world.replica.apply_pulled(first, "https://palimpsest.example")
    before = world.view(world.replica)
    with pytest.raises(Conflict) as refused:
        world.replica.apply_pulled(third, "https://palimpsest.example")  # second never came
    assert refused.value.field == "since"
    assert world.view(world.replica) == before
    state = world.replica.replica()
    assert state is not None and state.position_seq == first["position"]["seq"]
