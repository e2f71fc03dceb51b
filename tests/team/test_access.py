"""Workspaces, users, roles and keys (issue 12), on both stores, and HTTP that asks for a
key once the store has one, through the official MCP client against `serve --http`."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import threading
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from palimpsest.domain.errors import Conflict, Forbidden, NotFound, ValidationError
from palimpsest.embed import Embedder, Vectors
from palimpsest.mcp.bounds import CallBounds
from palimpsest.mcp.keys import FLUSH_SECONDS
from palimpsest.screening.gate import screen
from palimpsest.service import Service
from palimpsest.service.roles import Principal
from palimpsest.store import EventFilter, Store

from ..agent_runs import ran
from ..agents.test_mcp_e2e import command, free_port, http_server, serving
from ..mcp_helpers import call


def events(service: Service) -> list[dict[str, object]]:
    with service.store.read(service.workspace) as tx:
        return [e.to_dict() for e in tx.events(EventFilter(limit=1000))]


def test_a_key_is_shown_once_kept_hashed_and_acts_as_its_holder(service: Service) -> None:
    service.add_user(name="ana", role="editor")
    made = service.create_key(user="ana", note="laptop")
    secret = made["key"]
    assert secret.startswith("palimpsest_k_") and made["holder"] == "user:ana"
    assert service.authenticate(secret) == Principal(
        "user:ana", "editor", made["id"], service.workspace
    )
    listed = json.dumps(service.list_keys())
    assert made["id"] in listed and secret not in listed
    assert secret not in json.dumps(events(service))
    with service.store.read(service.workspace) as tx:
        found = tx.access_key(made["id"])
    assert found is not None and secret.rsplit("_", 1)[1] not in found[1]  # a hash, not it
    assert [e["op"] for e in events(service)] == ["user.add", "key.create"]


def test_a_key_fails_when_revoked_expired_unknown_or_altered(service: Service) -> None:
    service.add_user(name="ana", role="viewer")
    key = service.create_key(user="ana")
    soon = service.create_key(agent="ci", expires="2099-01-01")
    ci = Principal("agent:ci", "agent", soon["id"], service.workspace)
    assert service.authenticate(soon["key"]) == ci
    later = Service(
        service.store, workspace=service.workspace, clock=lambda: "2099-01-02T00:00:00Z"
    )
    assert later.authenticate(soon["key"]) is None  # expired
    altered = key["key"][:-1] + ("0" if key["key"][-1] != "0" else "1")
    for wrong in (altered, "palimpsest_k_" + "0" * 20 + "_" + "0" * 48, "", "Bearer x"):
        assert service.authenticate(wrong) is None
    assert service.revoke_key(id=key["id"])["revoked_at"]
    assert service.authenticate(key["key"]) is None
    assert service.revoke_key(id=key["id"])["unchanged"]
    assert [e["op"] for e in events(service)][-1] == "key.revoke"


def test_admitting_a_key_by_its_id_checks_all_that_its_secret_would_but_the_secret(
    service: Service,
) -> None:
    """A web session holds its key's id, never the key: at each request `admit_key` must
    let in exactly whom `authenticate` would let in with the key itself."""
    service.add_user(name="ana", role="editor")
    service.add_user(name="bob", role="viewer")
    keys = [service.create_key(user="ana"), service.create_key(user="bob"),
            service.create_key(agent="ci", expires="2099-01-01")]  # fmt: skip
    later = Service(
        service.store, workspace=service.workspace, clock=lambda: "2099-01-02T00:00:00Z"
    )
    other = service.create_workspace(name=f"w{uuid.uuid4().hex[:8]}")["workspace"]["id"]
    elsewhere = service.in_workspace(other)

    def agree(*on: Service) -> list[Principal | None]:
        found = [(s.authenticate(k["key"]), s.admit_key(k["id"])) for s in on for k in keys]
        assert all(by_key == by_id for by_key, by_id in found), found
        return [by_key for by_key, _ in found]

    assert None not in agree(service, elsewhere)  # found by id from any workspace
    assert agree(later)[2] is None  # expired
    service.add_user(name="ana", role="viewer")
    assert agree(service)[0].role == "viewer"  # type: ignore[union-attr]  # her role now
    service.revoke_key(id=keys[0]["id"])
    service.remove_user(name="bob")
    assert agree(service)[:2] == [None, None]
    assert service.admit_key("k_" + "0" * 20) is None


def test_a_personal_key_acts_with_the_users_role_as_it_is_now(service: Service) -> None:
    service.add_user(name="ana", role="viewer")
    key = service.create_key(user="ana")["key"]
    service.add_user(name="ana", role="owner")
    principal = service.authenticate(key)
    assert principal is not None and principal.role == "owner"


def test_bad_users_and_keys_are_refused_and_change_nothing(service: Service) -> None:
    with pytest.raises(ValidationError):
        service.add_user(name="ana", role="admin")
    with pytest.raises(ValidationError):
        service.add_user(name="ana ;drop", role="viewer")
    with pytest.raises(NotFound):
        service.create_key(user="nobody")
    with pytest.raises(ValidationError):
        service.create_key(user="ana", agent="ci")
    with pytest.raises(ValidationError):
        service.create_key(agent="ci", expires="2001-01-01")
    with pytest.raises(NotFound):
        service.revoke_key(id="k_" + "0" * 20)
    with pytest.raises(ValidationError):
        service.create_key(agent="ci", note="  ")
    assert events(service) == [] and service.list_keys() == {"keys": []}


def test_roles_decide_what_a_key_may_write(service: Service) -> None:
    mine = service.remember(notebook="n", kind="fact", text="The owner's fact")["id"]
    viewer = service.acting_as(Principal("user:vic", "viewer", "k_" + "1" * 20))
    editor = service.acting_as(Principal("user:ed", "editor", "k_" + "2" * 20))
    agent = service.acting_as(Principal("agent:ci", "agent", "k_" + "3" * 20))
    before = events(service)
    assert viewer.recall(query="fact")["hits"]
    with pytest.raises(Forbidden):
        viewer.remember(notebook="n", kind="fact", text="A viewer's fact")
    with pytest.raises(Forbidden):
        viewer.revise(id=mine, feedback="helped")
    with pytest.raises(Forbidden):
        editor.forget(id=mine, because="not theirs")
    with pytest.raises(Forbidden):
        editor.change_settings(changes={"freshness_days.fact": 30}, because="owner's call")
    with pytest.raises(Forbidden):
        editor.create_key(agent="sneaky")
    assert events(service) == before  # every refusal changed nothing
    theirs = editor.remember(notebook="n", kind="fact", text="The editor's fact")["id"]
    editor.forget(id=theirs, because="their own")  # an editor forgets what it owns
    assert agent.remember(notebook="n", kind="fact", text="The agent's fact")["id"]
    refused = pytest.raises(Forbidden)
    with refused:  # a workspace key never overrides another's memory
        agent.revise(id=mine, text="Rewritten", override_reason="I know better")
    written = events(service)[len(before) :]
    assert {e["key_id"] for e in written} == {"k_" + "2" * 20, "k_" + "3" * 20}


def test_only_an_owner_moves_a_notebook_between_domains(service: Service) -> None:
    service.create_notebook(name="shop", domain="commerce")
    editor = service.acting_as(Principal("user:ed", "editor", "k_" + "2" * 20))
    agent = service.acting_as(Principal("agent:ci", "agent", "k_" + "3" * 20))
    before = events(service)
    for changing in ({"domain": "retail"}, {"clear": ["domain"]}):
        for who in (editor, agent):
            for dry_run in (False, True):
                with pytest.raises(Forbidden, match="owner"):
                    who.edit_notebook(notebook="shop", dry_run=dry_run, **changing)
    with pytest.raises(Forbidden, match="owner"):
        editor.merge_domains(source="commerce", target="retail", because="one domain")
    assert events(service) == before
    assert editor.edit_notebook(notebook="shop", summary="The web shop")["notebook"]["domain"] == (
        "commerce"
    )  # the rest of a notebook is an editor's to change
    editor.create_notebook(name="mobile", domain="commerce")  # and a new one's domain
    service.edit_notebook(notebook="shop", domain="retail")


def test_the_gate_refuses_a_memory_holding_one_of_our_keys(service: Service) -> None:
    service.add_user(name="ana", role="editor")
    key = service.create_key(user="ana")["key"]
    with pytest.raises(ValidationError):
        screen("text", f"The server key is {key}")


def test_removing_a_user_leaves_what_they_owned_ownerless_for_anyone_to_claim(
    service: Service,
) -> None:
    service.add_user(name="ana", role="editor")
    key = service.create_key(user="ana")["key"]
    ana = service.acting_as(Principal("user:ana", "editor"))
    owned = [ana.remember(notebook="n", kind="fact", text=f"Ana's fact {n}")["id"]
             for n in range(3)]  # fmt: skip
    ana.revise(id=owned[0], status="retracted", note="wrong")
    theirs = service.remember(notebook="n", kind="fact", text="Someone else's fact")["id"]
    removed = service.remove_user(name="ana")
    assert sorted(removed["ownerless"]) == sorted(owned) and service.authenticate(key) is None
    latest = events(service)[-5:]
    assert [e["op"] for e in latest] == ["user.remove", "key.revoke", "disown", "disown", "disown"]
    assert len({e["op_id"] for e in latest}) == 1  # one operation
    for memory_id in owned:
        memory = service.inspect(id=memory_id)["memory"]
        assert memory["owner"] is None and memory["author"] == "user:ana"
    assert service.inspect(id=theirs)["memory"]["owner"] == service.actor
    bo = service.acting_as(Principal("user:bo", "editor"))
    assert bo.revise(id=owned[1], claim=True)["results"][0]["version"] == 3
    assert bo.inspect(id=owned[1])["memory"]["owner"] == "user:bo"
    with pytest.raises(NotFound):
        service.remove_user(name="ana")


# -- workspaces ---------------------------------------------------------------------------


def unique(name: str) -> str:
    """A workspace name of this test's own (PostgreSQL's store is shared by the tests)."""
    return f"{name}-{uuid.uuid4().hex[:8]}"


def test_workspaces_are_made_listed_and_renamed(service: Service) -> None:
    service.remember(notebook="n", kind="fact", text="A first write makes the workspace")
    name = unique("research")
    made = service.create_workspace(name=name)["workspace"]
    listed = {w["id"]: w for w in service.workspaces()["workspaces"]}
    assert listed[made["id"]]["name"] == name and listed[service.workspace]["current"]
    research = service.in_workspace(name)
    assert research.workspace == made["id"] == service.in_workspace(made["id"]).workspace
    assert [e["op"] for e in events(research)] == ["workspace.create"]
    renamed = unique("lab")
    assert research.rename_workspace(name=renamed)["renamed_from"] == name
    assert service.in_workspace(renamed).workspace == made["id"]
    with pytest.raises(NotFound):
        service.in_workspace(name)  # the old name is free, and means nothing now
    assert research.rename_workspace(name=renamed)["unchanged"]
    with pytest.raises(Conflict):
        service.create_workspace(name=renamed)
    for bad in ("", "a b", "default", "x" * 65, "-lead"):
        with pytest.raises(ValidationError):
            service.create_workspace(name=bad)
    assert service.in_workspace(None).workspace == service.in_workspace("default").workspace


def test_nothing_of_one_workspace_is_visible_from_another(service: Service) -> None:
    here = service.remember(notebook="ops", kind="fact", text="The pool size is twenty")
    other = service.in_workspace(service.create_workspace(name=unique("other"))["workspace"]["id"])
    there = other.remember(notebook="ops", kind="fact", text="The pool size is forty")
    assert [h["id"] for h in other.recall(query="pool size")["hits"]] == [there["id"]]
    assert [h["id"] for h in service.recall(query="pool size")["hits"]] == [here["id"]]
    before = events(service)
    for attempt in (
        lambda: other.inspect(id=here["id"]),
        lambda: other.history(id=here["id"]),
        lambda: other.revise(id=here["id"], append="more"),
        lambda: other.forget(id=here["id"], because="not yours"),
        lambda: other.link(source=there["id"], target=here["id"], type="relates_to"),
        lambda: other.revert(id=here["id"], version=1, because="no"),
        lambda: other.dispute(action="open", ids=[there["id"], here["id"]], reason="x"),
        lambda: other.dispute(action="list", ids=[here["id"]]),
    ):
        with pytest.raises(NotFound):
            attempt()
    assert events(service) == before
    service.add_user(name="ana", role="viewer")
    assert other.list_users() == {"users": []} and other.list_keys() == {"keys": []}
    key = other.create_key(agent="ci")
    assert service.list_keys() == {"keys": []}
    with pytest.raises(NotFound):
        service.revoke_key(id=key["id"])
    principal = service.authenticate(key["key"])  # the key decides the workspace
    assert principal is not None and principal.workspace == other.workspace
    assert service.acting_as(principal).recall(query="pool size")["hits"][0]["id"] == there["id"]


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    return {k for v in value for k in _keys(v)} if isinstance(value, list) else set()


def test_no_answer_shows_the_stores_sequence_which_counts_every_workspaces_writes(
    service: Service,
) -> None:
    """A sequence number moving by more than one would tell another workspace's activity."""
    other = service.in_workspace(service.create_workspace(name=unique("other"))["workspace"]["id"])
    answers: list[Any] = [other.session_start(session_id="s1", notebook="ops")]
    first = other.remember(notebook="ops", kind="fact", text="The pool size is forty")
    service.remember(notebook="ops", kind="fact", text="Our own write, in between")
    second = other.remember(notebook="ops", kind="fact", text="Deploys go out on Mondays")
    answers += [
        first,
        second,
        other.revise(id=first["id"], append="(checked)"),
        other.revise(id=first["id"], tags=["db"], dry_run=True),
        other.create_notebook(name="web"),
        other.edit_notebook(notebook="web", summary="The web shop"),
        other.dispute(action="open", ids=[first["id"], second["id"]], reason="they clash"),
        other.history(id=first["id"]),
        other.history(notebook="ops"),
        other.inspect(id=first["id"]),
        other.forget(id=second["id"], because="filed by mistake"),
        other.add_user(name="ana", role="viewer"),
        other.create_key(agent="ci"),
        other.change_settings(changes={"freshness_days.fact": 30}, because="team's call"),
        other.session_end(session_id="s1"),
    ]
    assert not {k for k in _keys(answers) if k.endswith("seq")}


# -- over HTTP ---------------------------------------------------------------------------
# -- over HTTP ---------------------------------------------------------------------------


@asynccontextmanager
async def keyed(url: str, key: str) -> AsyncIterator[Client]:
    async with sending(url, {"Authorization": f"Bearer {key}"}) as client:
        yield client


@asynccontextmanager
async def sending(url: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    """The official client over HTTP, sending `headers` with every request."""
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def status_of(url: str, key: str | None) -> int:
    headers = {"Accept": "application/json, text/event-stream"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    return httpx2.post(url, json=body, headers=headers, timeout=30).status_code


def cli(store: Path | str, env: dict[str, str], *args: str) -> dict[str, Any]:
    """`palimpsest --db STORE ARGS --json` (a SQLite file or a PostgreSQL URL): its answer."""
    done = subprocess.run(command(store, *args, "--json"), env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


@pytest.mark.anyio
async def test_http_asks_for_a_key_once_the_store_has_one(
    db_path: Path, env: dict[str, str]
) -> None:
    with http_server(db_path, env) as (url, _):
        async with Client(url) as local:  # no key yet: loopback acts as the local owner
            await call(local, "remember", notebook="n", kind="fact", text="Before keys")
        cli(db_path, env, "user", "add", "vic", "--role", "viewer")
        viewer = str(cli(db_path, env, "key", "create", "--user", "vic")["key"])
        made = cli(db_path, env, "key", "create", "--agent", "ci")
        agent = str(made["key"])
        # From the first key on, with the server still running: no key, or a wrong one, is 401.
        assert status_of(url, None) == 401
        assert status_of(url, "palimpsest-keyless") == 401
        assert status_of(url, viewer[:-4] + "0000") == 401
        async with keyed(url, viewer) as client:
            assert (await call(client, "recall", query="keys"))["hits"]
            refused = await client.call_tool(
                "remember", {"notebook": "n", "kind": "fact", "text": "A viewer writes"}
            )
            assert refused.is_error and '"forbidden"' in refused.content[0].text  # type: ignore[union-attr]
        async with keyed(url, agent) as client:
            filed = await call(client, "remember", notebook="n", kind="fact", text="By the agent")
        history = cli(db_path, env, "history", str(filed["id"]))
        assert json.dumps(history).count(str(made["id"])) >= 1 and agent not in json.dumps(history)
        cli(db_path, env, "key", "revoke", str(made["id"]))
        assert status_of(url, agent) == 401  # revoked through the CLI: refused at once


@pytest.mark.anyio
async def test_over_http_the_key_decides_the_workspace(db_path: Path, env: dict[str, str]) -> None:
    cli(db_path, env, "remember", "-n", "ops", "-k", "fact", "The default pool size is twenty")
    cli(db_path, env, "workspace", "create", "lab")
    lab = ("--workspace", "lab")
    cli(db_path, env, *lab, "user", "add", "ana", "--role", "editor")
    key = str(cli(db_path, env, *lab, "key", "create", "--user", "ana")["key"])
    hidden = cli(db_path, env, "remember", "-n", "ops", "-k", "fact", "The pool owner is Bo")
    with http_server(db_path, env) as (url, _):  # started on the default workspace
        async with keyed(url, key) as client:
            filed = await call(client, "remember", notebook="ops", kind="fact",
                               text="The lab pool size is forty")  # fmt: skip
            hits = (await call(client, "recall", query="pool size"))["hits"]
            assert [h["id"] for h in hits] == [filed["id"]]
            refused = await client.call_tool("inspect", {"id": str(hidden["id"])})
            text = refused.content[0].text  # type: ignore[union-attr]
            assert refused.is_error and '"not_found"' in text and "Bo" not in text
    lab_hits = cli(db_path, env, *lab, "recall", "pool")["hits"]
    assert [h["id"] for h in lab_hits] == [filed["id"]]


def test_listening_beyond_loopback_starts_once_keys_exist_and_asks_for_one(
    db_path: Path, env: dict[str, str]
) -> None:
    cli(db_path, env, "user", "add", "ana", "--role", "viewer")
    key = str(cli(db_path, env, "key", "create", "--user", "ana")["key"])
    port = free_port()
    process = subprocess.Popen(
        command(db_path, "serve", "--http", "--host", "0.0.0.0", "--port", str(port)),
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    with serving(process, port):
        url = f"http://127.0.0.1:{port}/mcp"
        assert status_of(url, None) == 401
        assert status_of(url, key) == 200


def test_the_cli_acts_in_the_workspace_a_flag_or_the_environment_names(
    db_path: Path, env: dict[str, str]
) -> None:
    cli(db_path, env, "workspace", "create", "lab")
    filed = cli(db_path, env, "--workspace", "lab", "remember", "-n", "n", "-k", "fact", "In lab")
    in_lab = cli(db_path, {**env, "PALIMPSEST_WORKSPACE": "lab"}, "recall", "lab")
    assert [h["id"] for h in in_lab["hits"]] == [filed["id"]]
    assert cli(db_path, env, "recall", "lab")["hits"] == []
    listed = cli(db_path, env, "workspace", "list", "--workspace", "lab")["workspaces"]
    assert [(w["name"], w["current"]) for w in listed] == [("default", False), ("lab", True)]
    done = subprocess.run(command(db_path, "--workspace", "lbа", "recall", "x", "--json"),
                          env=env, capture_output=True, text=True)  # fmt: skip
    refusal = json.loads(done.stdout)
    assert done.returncode != 0 and refusal["error_class"] == "not_found"
    assert "palimpsest workspace list" in refusal["message"]


def test_an_existing_store_becomes_the_default_workspace_with_no_keys(tmp_path: Path) -> None:
    """A store from before workspaces and keys: nothing changes for its local user."""
    from palimpsest.store import open_store

    from ..store.test_time_migration import FIXTURE

    db = tmp_path / "old.db"
    shutil.copy(FIXTURE, db)
    with sqlite3.connect(db) as raw:
        held = {row[0] for row in raw.execute("SELECT id FROM memories")}
    store = open_store(str(db))
    try:
        service = Service(store)
        assert held and service.workspaces()["workspaces"] == [
            {"id": "default", "name": "default", "created_at": ANY, "current": True}
        ]
        assert not service.has_keys() and service.list_users() == {"users": []}
        assert {service.inspect(id=memory_id)["memory"]["id"] for memory_id in held} == held
        service.remember(notebook="n", kind="fact", text="The local owner still writes")
    finally:
        store.close()


def test_a_key_gets_its_bound_of_calls_then_a_time_to_wait() -> None:
    now = [0.0]
    bounds = CallBounds(per_minute=3, clock=lambda: now[0])
    assert [bounds.admit("k_a") for _ in range(3)] == [None, None, None]
    assert bounds.admit("k_a") == 20.0  # one call comes back each 20 s
    assert bounds.admit("k_b") is None  # another key has its own bound
    now[0] = 19.0
    assert bounds.admit("k_a") == 1.0
    now[0] = 20.0
    assert bounds.admit("k_a") is None and bounds.admit("k_a") is not None
    now[0] = 1000.0  # idle long: the bucket is full again, not fuller
    assert [bounds.admit("k_a") for _ in range(4)][-1] is not None


@pytest.mark.anyio
async def test_over_http_calls_past_a_keys_bound_are_retryable_and_reach_no_tool(
    db_path: Path, env: dict[str, str]
) -> None:
    cli(db_path, env, "user", "add", "ana", "--role", "editor")
    ana = str(cli(db_path, env, "key", "create", "--user", "ana")["key"])
    bo = str(cli(db_path, env, "key", "create", "--agent", "bo")["key"])
    with http_server(db_path, {**env, "PALIMPSEST_HTTP_CALLS_PER_MINUTE": "2"}) as (url, _):
        async with keyed(url, ana) as client:
            for n in range(2):
                await call(client, "remember", notebook="n", kind="fact", text=f"Fact {n}")
            refused = await client.call_tool(
                "remember", {"notebook": "n", "kind": "fact", "text": "One too many"}
            )
            body = json.loads(refused.content[0].text)  # type: ignore[union-attr]
            assert refused.is_error and body["error_class"] == "retryable"
            assert 0 < body["retry_after"] <= 30
        async with keyed(url, bo) as client:
            assert (await call(client, "recall", query="fact"))["hits"]
    assert [h["text"] for h in cli(db_path, env, "recall", "many")["hits"]] == []


@pytest.mark.anyio
async def test_failed_authentications_are_counted_and_doctor_shows_each_its_own(
    db_path: Path, env: dict[str, str]
) -> None:
    cli(db_path, env, "workspace", "create", "lab")
    cli(db_path, env, "--workspace", "lab", "user", "add", "ana", "--role", "viewer")
    made = cli(db_path, env, "--workspace", "lab", "key", "create", "--user", "ana")
    key = str(made["key"])
    agent = cli(db_path, env, "--workspace", "lab", "key", "create", "--agent", "x")
    cli(db_path, env, "--workspace", "lab", "key", "revoke", str(agent["id"]))
    assert "failed_authentications" not in cli(db_path, env, "doctor")
    with http_server(db_path, env) as (url, _):
        # The first failure is written at once, the next within seconds (or as it stops).
        assert status_of(url, str(agent["key"])) == 401  # a key of lab's: counted in lab
        assert status_of(url, None) == 401  # no key: counted in no workspace
        assert status_of(url, "palimpsest_k_" + "0" * 20 + "_" + "0" * 48) == 401
        async with keyed(url, key) as client:  # lab's viewer sees lab's count alone
            seen = (await call(client, "doctor"))["failed_authentications"]
        assert seen["last_24_hours"] == 1

        def counted(*workspace: str) -> object:
            found = cli(db_path, env, *workspace, "doctor").get("failed_authentications")
            return found and found["last_24_hours"]

        deadline = time.monotonic() + FLUSH_SECONDS + 20
        while counted() != 2:  # whoever opens the store sees those of no workspace too
            assert time.monotonic() < deadline, counted()
            time.sleep(0.5)
        assert counted("--workspace", "lab") == 3


def test_a_copied_workspace_brings_its_users_and_keys(tmp_path: Path) -> None:
    from palimpsest.service import copy_between
    from palimpsest.store import open_store

    source, target = tmp_path / "here.db", tmp_path / "there.db"
    store = open_store(str(source))
    try:
        here = Service(store)
        here.add_user(name="ana", role="editor")
        key = here.create_key(user="ana")["key"]
    finally:
        store.close()
    copy_between(str(source), str(target), "default")
    copied = open_store(str(target))
    try:
        principal = Service(copied).authenticate(key)
        assert principal is not None and (principal.actor, principal.role) == ("user:ana", "editor")
    finally:
        copied.close()


def test_an_editor_reverts_only_what_it_owns_and_a_revert_keeps_the_owner(
    service: Service,
) -> None:
    service.add_user(name="ana", role="editor")
    ana = service.acting_as(Principal("user:ana", "editor", "k_" + "4" * 20))
    theirs = service.remember(notebook="n", kind="fact", text="The pool holds forty")["id"]
    service.revise(id=theirs, append="connections")
    with pytest.raises(Forbidden):  # content changes only through supersede
        ana.revert(id=theirs, version=1, because="shorter")
    with pytest.raises(Forbidden):
        ana.revert(notebook="n", as_of="2000-01-01T00:00:00Z", because="start over")
    assert service.inspect(id=theirs)["memory"]["version"] == 2
    mine = ana.remember(notebook="n", kind="fact", text="The cache holds 1 GB")["id"]
    ana.revise(id=mine, append="of RAM")
    service.remove_user(name="ana")  # hers becomes ownerless (version 3)
    service.revert(id=mine, version=1, because="the shorter text")
    assert service.inspect(id=mine)["memory"]["owner"] is None  # not hers again


@pytest.mark.anyio
async def test_without_keys_http_acts_as_the_servers_own_actor(
    db_path: Path, env: dict[str, str]
) -> None:
    with http_server(db_path, {**env, "PALIMPSEST_ACTOR": "agent:nightly"}) as (url, _):
        async with Client(url) as client:
            filed = await call(client, "remember", notebook="n", kind="fact", text="As before")
    memory = cli(db_path, env, "inspect", str(filed["id"]))["memory"]
    assert (memory["author"], memory["owner"]) == ("agent:nightly", "agent:nightly")


def test_a_removed_users_keys_stay_revoked_when_the_name_comes_back(service: Service) -> None:
    service.add_user(name="tmp", role="editor")
    key = service.create_key(user="tmp")
    service.remove_user(name="tmp")
    listed = {k["id"]: k for k in service.list_keys()["keys"]}
    assert listed[key["id"]]["revoked_at"] is not None  # `key list` says so
    service.add_user(name="tmp", role="owner")
    assert service.authenticate(key["key"]) is None


def test_a_viewers_guarded_commands_are_not_kept(service: Service) -> None:
    viewer = service.acting_as(Principal("user:vic", "viewer", "k_" + "6" * 20))
    assert ran(viewer, "ls -la")["decision"] == "allow"
    editor = service.acting_as(Principal("user:ed", "editor", "k_" + "8" * 20))
    ran(editor, "ls -l")
    assert [c["command"] for c in service.seen()["commands"]] == ["ls -l"]


def test_two_creating_one_workspace_name_at_once_get_it_and_a_conflict(service: Service) -> None:
    name = unique("race")
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def create() -> None:
        barrier.wait()
        try:
            service.create_workspace(name=name)
            outcomes.append("made")
        except Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=create) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict", "made"]
    assert [w["name"] for w in service.workspaces()["workspaces"]].count(name) == 1


def test_a_workspace_name_cannot_hide_another(service: Service) -> None:
    made = service.create_workspace(name=unique("first"))["workspace"]
    for hiding in (made["id"], made["name"].upper(), "Default", "w_" + "1" * 20):
        with pytest.raises((Conflict, ValidationError)):
            service.create_workspace(name=hiding)


def test_a_workspace_is_copied_by_its_name_and_keeps_it(tmp_path: Path) -> None:
    from palimpsest.service import copy_between
    from palimpsest.store import open_store

    source, target = tmp_path / "here.db", tmp_path / "there.db"
    store = open_store(str(source))
    try:
        lab = Service(store).in_workspace(
            Service(store).create_workspace(name="lab")["workspace"]["id"]
        )
        filed = lab.remember(notebook="n", kind="fact", text="Only the lab knows")["id"]
    finally:
        store.close()
    assert copy_between(str(source), str(target), "lab")["name"] == "lab"
    copied = open_store(str(target))
    try:
        there = Service(copied).in_workspace("lab")
        assert there.workspace == lab.workspace and there.inspect(id=filed)["memory"]["id"] == filed
    finally:
        copied.close()


def test_what_another_workspace_holds_moves_no_score_here(service: Service) -> None:
    """Full-text scores count this workspace's memories alone: filing many that hold the
    same word elsewhere leaves every hit's score as it was."""
    filler = [{"kind": "fact", "text": f"Backup number {n} ran at night"} for n in range(30)]
    service.remember(notebook="ops", items=filler)
    for text in ("The pools hold forty connections", "Pools drain"):
        service.remember(notebook="ops", kind="fact", text=text)
    before = [(h["id"], h["score"]) for h in service.recall(query="pools")["hits"]]
    assert all(score > 0.1 for _, score in before), before  # a score that could move
    other = service.in_workspace(service.create_workspace(name=unique("noisy"))["workspace"]["id"])
    other.remember(notebook="ops", items=[{"kind": "fact", "text": f"Pools number {n}"}
                                          for n in range(40)])  # fmt: skip
    assert [(h["id"], h["score"]) for h in service.recall(query="pools")["hits"]] == before


class CountingEmbedder:
    """The real model, counting the texts it is asked to embed."""

    def __init__(self, model: Embedder):
        self.model, self.texts = model, 0
        self.name, self.version, self.dimensions = model.name, model.version, model.dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += len(texts)
        return self.model.embed(texts)


def test_a_viewers_write_is_refused_before_the_gate_or_the_model_does_any_work(
    store: Store, workspace: str, minilm: Embedder
) -> None:
    counting = CountingEmbedder(minilm)
    service = Service(store, workspace=workspace, embedder=counting)
    mine = service.remember(notebook="n", kind="fact", text="The owner's fact")["id"]
    counting.texts = 0
    viewer = service.acting_as(Principal("user:vic", "viewer", "k_" + "1" * 20))
    items = [{"kind": "fact", "text": f"Fact number {n} of a viewer's batch"} for n in range(500)]
    with pytest.raises(Forbidden):
        viewer.remember(notebook="n", items=items)
    with pytest.raises(Forbidden):
        viewer.remember_batch(items, notebook="n")
    with pytest.raises(Forbidden):
        viewer.remember(notebook="n", kind="fact", text="A viewer's single fact")
    with pytest.raises(Forbidden):
        viewer.revise(items=[{"id": mine, "text": f"Rewritten {n}"} for n in range(500)])
    assert counting.texts == 0  # the model never ran for a refused write
    editor = service.acting_as(Principal("user:ed", "editor", "k_" + "2" * 20))
    editor.remember(notebook="n", items=items[:2])
    assert counting.texts == 2  # what an allowed batch costs, counted the same way
