"""A replica's queue of writes for its server over the HTTP API, through a real `serve
--http` on a SQLite replica: a script lists what waits and what the server did not take,
sends a refused write again, and gives one up with why, as the doctor page does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from palimpsest.domain.errors import Forbidden
from palimpsest.embed import NullEmbedder
from palimpsest.service import Service
from palimpsest.service.roles import Principal
from palimpsest.store import open_store

from .scripts import Served, answers_as_documented, api_server

UNREACHABLE = "http://127.0.0.1:9"  # the server a replica follows: never asked here
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # made here, never a real one
REFUSAL = {"error_class": "forbidden", "message": "<script>alert(1)</script> not yours"}


def pulled(tmp: Path) -> Any:
    """A server's workspace holding one memory, as a replica's first pull answers it."""
    server = Service(open_store(str(tmp / "server.db")), embedder=NullEmbedder())
    try:
        server.remember(notebook="ops", kind="fact", text="The pool holds 40 connections")
        return server.sync_pull()
    finally:
        server.close()


def replica(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A replica of that workspace, with a remember waiting and two the server refused (as
    a sync round writes its refusals)."""
    db = tmp / "replica.db"
    here = Service(open_store(str(db)), embedder=NullEmbedder())
    try:
        here.apply_pulled(pulled(tmp), UNREACHABLE)
        queued = {name: here.remember(notebook="ops", kind="fact", text=text)["queued"]
                  for name, text in (("waits", "The pool warms up in ten seconds"),
                                     ("refused", "The pool drains at midnight"),
                                     ("other", "The pool logs every checkout"))}  # fmt: skip
        for name in ("refused", "other"):
            here.settle(queued[name], "refused", REFUSAL)
    finally:
        here.close()
    return db, queued


def call(served: Served, document: dict[str, Any], operation: str, status: int,
         **arguments: Any) -> Any:  # fmt: skip
    got = served.post(operation, arguments)  # no keys here: loopback acts as the owner
    assert got.status_code == status, (operation, got.text)
    return answers_as_documented(document, operation, got)


def test_a_script_lists_retries_and_drops_a_replicas_queued_writes(
    tmp_path: Path, env: dict[str, str]
) -> None:
    db, queued = replica(tmp_path)
    with api_server(db, env) as served:
        document = served.document()
        listed = call(served, document, "queued_writes", 200)["writes"]
        assert [(w["queued"], w["state"]) for w in listed] == [
            (queued["waits"], "pending"), (queued["refused"], "refused"),
            (queued["other"], "refused")]  # fmt: skip
        assert listed[1]["answer"] == REFUSAL  # the server's words, as they came
        only = call(served, document, "queued_writes", 200, states=["refused"])["writes"]
        assert {w["queued"] for w in only} == {queued["refused"], queued["other"]}
        assert call(served, document, "queued_writes", 400, states=["lost"])["field"]

        again = call(served, document, "retry_queued", 200, id=queued["refused"])
        assert again["pending"] is True and again["queued"] not in queued.values()
        assert call(served, document, "retry_queued", 404, id=queued["waits"])  # not refused
        assert call(served, document, "retry_queued", 404, id="q_nothing")["field"] == "id"

        unsaid = call(served, document, "drop_queued", 400, id=queued["other"])
        assert unsaid["field"] == "because"
        secret = call(served, document, "drop_queued", 400, id=queued["other"],
                      because=f"the token {TOKEN} leaked")  # fmt: skip
        assert secret["error_class"] == "validation" and TOKEN not in str(secret)
        dropped = call(served, document, "drop_queued", 200, id=queued["other"],
                       because="the server is right: it is not ours")  # fmt: skip
        gone = {w["queued"]: w for w in dropped["writes"]}
        assert gone[queued["other"]]["answer"] == {"because": "the server is right: it is not ours"}
        assert gone[queued["refused"]]["answer"]["because"] == f"sent again as {again['queued']}"
        assert call(served, document, "drop_queued", 404, id=queued["other"], because="twice")

        now = call(served, document, "queued_writes", 200)["writes"]
        assert [(w["queued"], w["state"]) for w in now] == [
            (queued["waits"], "pending"), (again["queued"], "pending")]  # fmt: skip


def test_a_queued_write_of_another_workspace_is_not_found(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A store whose workspace `laptop` follows a server while `default` is its own: the
    caller in `default` neither lists, retries nor drops `laptop`'s queue."""
    mixed = tmp_path / "mixed.db"
    store = open_store(str(mixed))
    try:
        Service(store, embedder=NullEmbedder()).remember(notebook="ops", kind="fact",
                                                         text="Mine, on no server")  # fmt: skip
        laptop = Service(store, workspace="laptop", embedder=NullEmbedder())
        laptop.apply_pulled(pulled(tmp_path), UNREACHABLE)
        theirs = laptop.remember(notebook="ops", kind="fact", text="The laptop's write")
        laptop.settle(theirs["queued"], "refused", REFUSAL)
    finally:
        store.close()
    with api_server(mixed, env) as served:
        document = served.document()
        assert call(served, document, "queued_writes", 200, states=["refused"]) == {}  # none
        assert call(served, document, "retry_queued", 404, id=theirs["queued"])
        assert call(served, document, "drop_queued", 404, id=theirs["queued"], because="mine")
    store = open_store(str(mixed))
    try:
        kept = Service(store, workspace="laptop").queued_writes(states=("refused",))["writes"]
        assert [w["queued"] for w in kept] == [theirs["queued"]]
    finally:
        store.close()


def test_a_viewer_may_not_drop_a_queued_write(tmp_path: Path) -> None:
    """Who may settle the queue is the service's to say, as for any write. A replica holds
    no keys today, so only its owner reaches it; the check matters once one does."""
    db, queued = replica(tmp_path)
    store = open_store(str(db))
    try:
        viewer = Service(store, embedder=NullEmbedder()).acting_as(Principal("user:vic", "viewer"))
        try:
            viewer.drop_queued(id=queued["refused"], because="not mine to keep")
        except Forbidden:
            return
        raise AssertionError("a viewer dropped a queued write")
    finally:
        store.close()
