"""A replica pulling a server's events reads as the server does each time it has caught
up: random sequences of real operations on a server, pulled in random batches (some
applied twice), and no forgotten text left in the replica's files.

Between batches a replica is not any past state of its server, by design: current rows
(notebooks, links, settings) and forgets are the server's present, so it is compared
once a run of pulls reaches the server's last event."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from palimpsest.embed import Embedder
from palimpsest.service import Service
from palimpsest.store import Store, open_store

from ..conftest import needs_postgres
from .world import NAMES, WORDS, World

# Renames weigh more: names are unique in a workspace, and a round must move them in order.
OPS = ("remember", "revise_text", "revise_status", "revise_tags", "supersede", "link",
       "unlink", "dispute_open", "dispute_rule", "forget", "forget_version", "rename",
       "summary", "forget_summary", "forget_notebook", "setting", "pull",
       "rename", "rename", "remember", "move", "feedback", "revert", "remember_superseding",
       "link_notebooks", "forget_name")  # fmt: skip


def step(world: World, data: st.DataObject) -> None:
    op = data.draw(st.sampled_from(OPS), label="op")
    event(f"op: {op}")
    srv = world.server
    some = lambda: data.draw(st.sampled_from(world.ids)) if world.ids else None  # noqa: E731
    word = lambda: data.draw(st.sampled_from(WORDS))  # noqa: E731
    name = lambda: data.draw(st.sampled_from(NAMES))  # noqa: E731
    if op == "remember" or not world.ids:
        world.remember(data.draw(st.sampled_from(NAMES[:2])), word(), word())
    elif op == "revise_text":
        target, text = some(), world.text(word())
        world.attempt(lambda: srv.revise(id=target, text=text))
    elif op == "revise_status":
        target, status = some(), data.draw(st.sampled_from(("retracted", "active", "verified")))
        world.attempt(lambda: srv.revise(id=target, status=status, note="checked again"))
    elif op == "revise_tags":
        target, tag = some(), word()
        world.attempt(lambda: srv.revise(id=target, tags=[tag]))
    elif op == "supersede":
        old, new = some(), some()
        world.attempt(lambda: srv.revise(id=old, status="superseded", superseded_by=new,
                                         note="a newer truth"))  # fmt: skip
    elif op in ("link", "unlink"):
        a, b = some(), some()
        world.attempt(lambda: srv.link(source=a, target=b, type="relates_to",
                                       remove=op == "unlink"))  # fmt: skip
    elif op == "dispute_open":
        a, b = some(), some()
        opened = world.attempt(lambda: srv.open_dispute(ids=[a, b], reason="they disagree"))
        if opened:
            world.disputes.append(opened["id"])
    elif op == "dispute_rule" and world.disputes:
        dispute = data.draw(st.sampled_from(world.disputes))
        holds = some()
        world.attempt(lambda: srv.rule_dispute(dispute=dispute, holds=holds, reason="checked"))
    elif op == "forget":
        target = some()
        world.attempt(lambda: srv.forget(id=target, because="a mistake"))
    elif op == "forget_version":
        target, version = some(), data.draw(st.integers(1, 4))
        world.attempt(lambda: srv.forget(id=target, version=version, because="pasted wrong"))
    elif op == "rename":
        old, new = name(), name()
        world.attempt(lambda: srv.edit_notebook(notebook=old, name=new))
    elif op == "summary":
        nb, text = name(), world.text(word())
        world.attempt(lambda: srv.edit_notebook(notebook=nb, summary=text))
    elif op == "forget_summary":
        nb = name()
        world.attempt(lambda: srv.forget(notebook=nb, field="summary", because="pasted wrong"))
    elif op == "move":
        target, nb = some(), name()
        world.attempt(lambda: srv.revise(id=target, move_to=nb))
    elif op == "feedback":
        target = some()
        world.attempt(lambda: srv.revise(id=target, feedback="helped"))
    elif op == "revert":
        target, version = some(), data.draw(st.integers(1, 3))
        world.attempt(lambda: srv.revert(id=target, version=version, because="went wrong"))
    elif op == "remember_superseding":
        old, text = some(), world.text(word())
        filed = world.attempt(lambda: srv.remember(notebook="alpha", kind="fact", text=text,
                                                   supersedes=[old]))  # fmt: skip
        if filed:
            world.ids.append(filed["id"])
    elif op == "link_notebooks":
        a, b = name(), name()
        world.attempt(lambda: srv.link(source=a, target=b, type="depends_on"))
    elif op == "forget_name":
        nb = name()
        world.attempt(lambda: srv.forget(notebook=nb, field="name", because="pasted wrong"))
    elif op == "forget_notebook":
        nb = name()
        world.attempt(lambda: srv.create_notebook(name=nb))
        world.attempt(lambda: srv.forget(notebook=nb, because="not needed"))
    elif op == "setting":
        value = data.draw(st.sampled_from((0.2, 0.3, 0.4)))
        world.attempt(lambda: srv.change_settings(changes={"recall.min_similarity": value},
                                                  because="tuning"))  # fmt: skip
    elif op == "pull":
        world.times.append(srv.clock())
        while world.pull(data.draw(st.integers(1, 7), label="limit"),
                         twice=data.draw(st.booleans(), label="twice")):  # fmt: skip
            pass
        world.assert_converged()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_replica_reads_as_its_server_after_every_pull(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder:
        server = open_store(str(Path(folder) / "server.db"))
        world = World(server, Path(folder) / "replica" / "replica.db")
        try:
            world.remember("alpha", "pool", "cache")
            world.remember("beta", "deploy", "queue")
            for _ in range(data.draw(st.integers(10, 40), label="steps")):
                step(world, data)
            world.pull_all(limit=data.draw(st.integers(1, 7), label="last limit"))
            world.assert_converged()
        finally:
            world.close()
            server.close()


@needs_postgres
def test_a_sqlite_replica_follows_a_postgres_server(postgres_store: Store, tmp_path: Path) -> None:
    """The real deployment: a team's server on PostgreSQL, a laptop's replica on SQLite."""
    workspace = f"test-{uuid.uuid4().hex[:12]}"
    world = World(postgres_store, tmp_path / "replica.db", workspace=workspace)
    srv = world.server
    try:
        first = world.remember("alpha", "pool", "cache")
        second = world.remember("beta", "deploy", "queue")
        third = world.remember("alpha", "index", "pool")
        assert first and second and third
        srv.change_settings(changes={"recall.min_similarity": 0.3}, because="tuning")
        world.pull(2, twice=True)
        world.times.append(srv.clock())
        srv.revise(id=first, text=world.text("pool", "revised"))
        srv.link(source=first, target=second, type="relates_to")
        opened = srv.open_dispute(ids=[second, third], reason="they disagree")
        world.pull(3)
        srv.rule_dispute(dispute=opened["id"], holds=second, reason="checked")
        srv.revise(id=first, status="superseded", superseded_by=second, note="newer")
        srv.edit_notebook(notebook="beta", name="gamma")
        srv.edit_notebook(notebook="alpha", name="beta", summary=world.text("summary"))
        world.times.append(srv.clock())
        world.pull_all(limit=2)
        world.assert_converged()
        srv.forget(id=third, because="a mistake")
        srv.forget(id=first, version=1, because="pasted wrong")
        srv.forget(notebook="beta", field="summary", because="pasted wrong")
        srv.create_notebook(name="delta")
        srv.forget(notebook="delta", because="not needed")
        world.pull_all(limit=1)
        world.assert_converged()
        assert len(world.forgotten_tokens()) == 3  # third, first's version 1, the summary
    finally:
        world.close()


@needs_postgres
def test_vectors_pulled_from_postgres_answer_by_meaning_on_the_replica(
    postgres_store: Store, tmp_path: Path, minilm: Embedder
) -> None:
    """A replica recalls by meaning with the server's vectors, without embedding again."""
    server = Service(postgres_store, workspace=f"test-{uuid.uuid4().hex[:12]}", embedder=minilm)
    replica = Service(open_store(str(tmp_path / "replica.db")), embedder=minilm)
    try:
        for text in ("The database connection pool holds twenty connections",
                     "Deploys go out on Tuesdays after the review",
                     "Lunch is served in the canteen at noon"):  # fmt: skip
            server.remember(notebook="ops", kind="fact", text=text)
        answer = server.sync_pull(limit=2)
        replica.apply_pulled(answer, "https://palimpsest.example")
        while answer["more"]:
            answer = server.sync_pull(since=answer["position"], limit=2)
            replica.apply_pulled(answer, "https://palimpsest.example")
        with replica.store.read(replica.workspace) as tx:
            model = replica.vectors.model
            held = [tx.vector_of(m.id, m.version, model) for m in tx.memories_at(None)]
        assert len(held) == 3 and all(v is not None for v in held)
        question = "how many database connections may be open at once"
        ids = [[h["id"] for h in s.recall(query=question)["hits"]] for s in (server, replica)]
        assert ids[0] and ids[0] == ids[1]
    finally:
        replica.store.close()


@needs_postgres
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_sqlite_replica_reads_as_its_postgres_server(
    postgres_store: Store, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = f"test-{uuid.uuid4().hex[:12]}"
        world = World(postgres_store, Path(folder) / "replica.db", workspace=workspace)
        try:
            world.remember("alpha", "pool", "cache")
            world.remember("beta", "deploy", "queue")
            for _ in range(data.draw(st.integers(10, 30), label="steps")):
                step(world, data)
            world.pull_all(limit=data.draw(st.integers(1, 7), label="last limit"))
            world.assert_converged()
        finally:
            world.close()
