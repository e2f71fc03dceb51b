"""Users, roles and keys (issue 12, first step), on both stores, and HTTP that asks for a
key once the store has one, through the official MCP client against `serve --http`."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from palimpsest.errors import Forbidden, NotFound, ValidationError
from palimpsest.gate import screen
from palimpsest.service import Service
from palimpsest.service.roles import Principal
from palimpsest.store import EventFilter

from .mcp_helpers import call
from .test_mcp_e2e import command, http_server


def events(service: Service) -> list[dict[str, object]]:
    with service.store.read(service.workspace) as tx:
        return [e.to_dict() for e in tx.events(EventFilter(limit=1000))]


def test_a_key_is_shown_once_kept_hashed_and_acts_as_its_holder(service: Service) -> None:
    service.add_user(name="ana", role="editor")
    made = service.create_key(user="ana", note="laptop")
    secret = made["key"]
    assert secret.startswith("palimpsest_k_") and made["holder"] == "user:ana"
    assert service.authenticate(secret) == Principal("user:ana", "editor", made["id"])
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
    assert service.authenticate(soon["key"]) == Principal("agent:ci", "agent", soon["id"])
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


def test_the_gate_refuses_a_memory_holding_one_of_our_keys(service: Service) -> None:
    service.add_user(name="ana", role="editor")
    key = service.create_key(user="ana")["key"]
    with pytest.raises(ValidationError):
        screen("text", f"The server key is {key}")


# -- over HTTP ---------------------------------------------------------------------------


@asynccontextmanager
async def keyed(url: str, key: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {key}"}
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


def cli(db: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    done = subprocess.run(command(db, *args, "--json"), env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
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
