"""What a session was shown and what it wrote (issue 32's Sessions page): recorded on
recall, orient, inspect and the session hooks' brief and review, as ids, versions and scores,
never text; read in order by `served`; kept `served.keep_days`; forgotten by an owner.

On both stores through the service; recall through the official MCP client."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from palimpsest.domain.errors import Forbidden, NotFound, ValidationError
from palimpsest.mcp.server import build_server
from palimpsest.service import Service
from palimpsest.service.roles import Principal
from palimpsest.store import Store

from ..mcp_helpers import call

RULE = {"kind": "rule", "falsifier": "a case where it does harm", "severity": "irreversible"}


def texts_of(answer: Any) -> str:
    return json.dumps(answer)


def test_a_hook_session_s_brief_and_what_its_actor_wrote_come_back_in_order(
    service: Service,
) -> None:
    rule = service.remember(notebook="shop", text="Never force-push main", **RULE)
    fact = service.remember(notebook="shop", kind="fact", text="The pool holds twenty")
    start = service.session_start(session_id="claude-7", notebook="shop")
    assert start["session"] is not None
    decision = service.remember(notebook="shop", kind="decision", text="Use pgbouncer")
    service.session_end(session_id="claude-7", notebook="shop")
    later = service.remember(notebook="shop", kind="fact", text="Filed after the session ended")

    answer = service.served(session="claude-7")
    assert answer["session"] == "claude-7" and answer["keep_days"] == 30
    steps = [(e["what"], e.get("event", {}).get("target_id")) for e in answer["entries"]]
    assert steps == [("brief", None), ("remember", decision["id"]), ("review", None)]
    brief = answer["entries"][0]
    assert {(s["id"], s["version"]) for s in brief["shown"]} == {(rule["id"], 1), (fact["id"], 1)}
    assert brief["request"] == {"notebook": "shop", "budget": 8000}
    assert answer["entries"][2]["shown"] == [{"id": decision["id"], "version": None, "score": None}]
    assert later["id"] not in texts_of(answer)
    assert "Never force-push" not in texts_of(answer) and "pool holds" not in texts_of(answer)
    listed = service.served()["sessions"]
    assert [(s["session"], s["servings"]) for s in listed] == [("claude-7", 2)]


def test_a_session_s_recalls_and_writes_are_kept_with_ids_versions_and_scores(
    service: Service,
) -> None:
    fact = service.remember(notebook="shop", kind="fact", text="The deploy runs on Fridays")
    agent = service.in_session("mcp-1")
    hits = agent.recall(query="deploy Fridays", notebook="shop", limit=5)["hits"]
    revised = agent.revise(id=fact["id"], text="The deploy runs on Thursdays")
    agent.inspect(id=fact["id"])
    service.recall(query="deploy")  # no session (the CLI): nothing kept

    entries = service.served(session="mcp-1")["entries"]
    assert [e["what"] for e in entries] == ["recall", "wrote", "inspect"]
    recall, wrote, inspected = entries
    assert recall["request"] == {"query": "deploy Fridays", "notebook": "shop", "limit": 5}
    assert recall["shown"] == [{"id": fact["id"], "version": 1, "score": hits[0]["score"]}]
    assert wrote["request"] == {"op": "revise"}
    assert wrote["shown"] == [{"id": fact["id"], "version": revised["results"][0]["version"],
                               "score": None}]  # fmt: skip
    assert inspected["shown"] == [{"id": fact["id"], "version": 2, "score": None}]
    assert "Thursdays" not in texts_of(entries) and "runs on" not in texts_of(entries)
    assert [s["session"] for s in service.served()["sessions"]] == ["mcp-1"]


def test_a_query_holding_a_credential_is_kept_redacted_and_a_long_one_only_hashed(
    service: Service,
) -> None:
    agent = service.in_session("mcp-2")
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    agent.recall(query=f"where is {token} used")
    agent.recall(query="word " * 60)
    first, second = service.served(session="mcp-2")["entries"]
    assert token not in texts_of(first) and "REDACTED" in first["request"]["query"]
    assert "query" not in second["request"] and len(second["request"]["query_sha256"]) == 64


def test_retention_drops_what_is_older_than_served_keep_days(store: Store, workspace: str) -> None:
    now = ["2026-03-01T10:00:00.000000Z"]
    service = Service(store, workspace=workspace, clock=lambda: now[0])
    service.remember(notebook="shop", kind="fact", text="The deploy runs on Fridays")
    service.change_settings(changes={"served.keep_days": "5"}, because="a short memory")
    agent = service.in_session("old")
    agent.recall(query="deploy")
    now[0] = "2026-03-07T10:00:00.000000Z"
    service.in_session("new").recall(query="deploy")
    assert [s["session"] for s in service.served()["sessions"]] == ["new"]
    with pytest.raises(NotFound, match="kept 5 days"):
        service.served(session="old")
    service.change_settings(changes={"served.keep_days": 0}, because="keep nothing")
    service.in_session("none").recall(query="deploy")
    assert service.served()["sessions"] == []
    with pytest.raises(ValidationError, match="0 to"):
        service.change_settings(changes={"served.keep_days": -1}, because="no")


def test_an_owner_reads_every_session_anyone_else_only_their_own(
    store: Store, workspace: str
) -> None:
    owner = Service(store, workspace=workspace)
    owner.remember(notebook="shop", kind="fact", text="The deploy runs on Fridays")
    ana = owner.acting_as(Principal("user:ana", "editor")).in_session("ana-1")
    bob = owner.acting_as(Principal("user:bob", "viewer")).in_session("bob-1")
    ana.recall(query="deploy")
    bob.recall(query="deploy")
    assert {s["session"] for s in owner.served()["sessions"]} == {"ana-1", "bob-1"}
    assert [s["session"] for s in bob.served()["sessions"]] == ["bob-1"]
    assert bob.served(session="bob-1")["entries"][0]["what"] == "recall"
    with pytest.raises(NotFound):
        bob.served(session="ana-1")
    assert [s["session"] for s in ana.served()["sessions"]] == ["ana-1"]
    elsewhere = Service(store, workspace=f"{workspace}-elsewhere")
    assert elsewhere.served()["sessions"] == []
    with pytest.raises(NotFound):
        elsewhere.served(session="ana-1")
    with pytest.raises(Forbidden):
        ana.forget_served(session="ana-1", because="mine")


def test_an_owner_forgets_a_session_s_record_leaving_an_event_without_its_content(
    service: Service,
) -> None:
    service.remember(notebook="shop", kind="fact", text="The deploy runs on Fridays")
    service.in_session("gone").recall(query="deploy quietly")
    service.in_session("stays").recall(query="deploy")
    dry = service.forget_served(session="gone", because="asked privately", dry_run=True)
    assert dry["dry_run"] is True and service.served(session="gone")
    answer = service.forget_served(session="gone", because="asked privately")
    assert answer["forgotten"] is True and answer["servings"] == 1
    with pytest.raises(NotFound):
        service.served(session="gone")
    assert service.served(session="stays")["entries"]
    events = service.history(limit=5)["events"]
    forgot = [e for e in events if e["op"] == "served.forget"]
    assert forgot and forgot[0]["target_id"] == "gone" and forgot[0]["note"] == "asked privately"
    assert "quietly" not in texts_of(events)
    with pytest.raises(NotFound):
        service.forget_served(session="gone", because="again")
    with pytest.raises(ValidationError):
        service.forget_served(session="stays", because=" ")


def test_a_failure_to_record_never_fails_the_recall(service: Service, db_path: Path) -> None:
    fact = service.remember(notebook="shop", kind="fact", text="The deploy runs on Fridays")
    refusing = f"refuse_{service.workspace.replace('-', '_')}"
    if service.store.url.endswith(".db"):
        with sqlite3.connect(db_path) as raw:
            raw.execute("DROP TABLE served")
    else:  # every row of this workspace refused (other tests share the server)
        with service.store.write(service.workspace) as tx:  # type: ignore[attr-defined]
            tx._run(f"ALTER TABLE served ADD CONSTRAINT {refusing} CHECK (workspace <> "
                    f"'{service.workspace}') NOT VALID")  # fmt: skip
    try:
        agent = service.in_session("s")
        hits = agent.recall(query="deploy Fridays")["hits"]
        assert [h["id"] for h in hits] == [fact["id"]]
        assert agent.orient(notebook="shop")["recent"]
        assert agent.remember(notebook="shop", kind="fact", text="Staging too")["id"]
        agent.served_log.flush()  # PostgreSQL's batch, refused: logged, never raised
        if not service.store.url.endswith(".db"):
            with pytest.raises(NotFound):  # refused, so nothing of the batch was kept
                service.served(session="s")
    finally:
        if not service.store.url.endswith(".db"):
            with service.store.write(service.workspace) as tx:  # type: ignore[attr-defined]
                tx._run(f"ALTER TABLE served DROP CONSTRAINT {refusing}")


@pytest.mark.anyio
async def test_a_recall_through_mcp_is_kept_under_the_client_s_session(service: Service) -> None:
    fact = service.remember(notebook="shop", kind="fact", text="The deploy runs on Fridays")
    server = build_server(service)
    try:
        async with Client(server) as client:
            hits = (await call(client, "recall", query="deploy Fridays"))["hits"]
            await call(client, "remember", notebook="shop", kind="fact", text="Staging too")
    finally:
        server.close()
    (session,) = service.served()["sessions"]
    assert session["session"] == server.process_session and session["actor"] == service.actor
    entries = service.served(session=session["session"])["entries"]
    assert [e["what"] for e in entries] == ["recall", "wrote"]
    assert entries[0]["shown"] == [{"id": fact["id"], "version": 1, "score": hits[0]["score"]}]
    assert "Fridays" not in texts_of(entries[0]["shown"]) and "Staging" not in texts_of(entries)
