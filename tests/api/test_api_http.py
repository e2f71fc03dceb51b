"""The HTTP API (issue 32) through a real `serve --http` process: a script's calls with a
key, their answers held to the OpenAPI document the server serves, and the same roles,
workspaces and refusals as the MCP tools."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jsonschema
import psycopg
import pytest

from palimpsest.api.operations import NAMES as PAGE_OPERATIONS
from palimpsest.mcp.descriptions import TOOL_NAMES

from ..conftest import needs_postgres, own_postgres_database
from ..mcp_helpers import call
from ..team.test_access import keyed
from ..team.test_attack_matrix import fingerprint
from ..team.test_team_http import INITIALIZE, headers, open_session, open_stream
from .scripts import (
    API,
    LAB_TEXT,
    Served,
    answer_schema,
    answers_as_documented,
    api_server,
    status_before_body,
    team,
    wait_for,
)


def editor_key(store: Path | str, env: dict[str, str]) -> str:
    return team(store).editor


def round_trip(served: Served, key: str) -> dict[str, Any]:
    """What a script does: remember, recall, revise with the version it read, history;
    each answer as the served document says. Returns the memory as inspected."""
    document = served.document(key)

    def ok(operation: str, body: dict[str, Any]) -> Any:
        got = served.post(operation, body, key)
        assert got.status_code == 200, got.text
        return answers_as_documented(document, operation, got)

    filed = ok("remember", {"notebook": "ops", "kind": "fact", "text": "The cache keeps 40 pages"})
    assert filed["version"] == 1 and filed["id"].startswith("m_")
    hits = ok("recall", {"query": "cache pages"})["hits"]
    assert [hit["id"] for hit in hits] == [filed["id"]]
    revised = ok(
        "revise", {"id": filed["id"], "text": "The cache keeps 60 pages", "expected_version": 1}
    )
    assert revised["results"][0]["version"] == 2
    stale = served.post("revise", {"id": filed["id"], "append": "!", "expected_version": 1}, key)
    assert stale.status_code == 409
    assert answers_as_documented(document, "revise", stale)["error_class"] == "conflict"
    events = ok("history", {"id": filed["id"]})["events"]
    assert [event["version"] for event in events] == [1, 2]
    inspected: dict[str, Any] = ok("inspect", {"id": filed["id"]})
    assert inspected["memory"]["text"] == "The cache keeps 60 pages"
    return inspected


def test_a_script_remembers_recalls_revises_and_reads_history(
    db_path: Path, env: dict[str, str]
) -> None:
    key = editor_key(db_path, env)
    with api_server(db_path, env) as served:
        round_trip(served, key)


@needs_postgres
def test_a_script_round_trip_on_postgresql(env: dict[str, str]) -> None:
    with own_postgres_database("api") as url:
        world = team(url)
        with api_server(url, env) as served:
            round_trip(served, world.editor)
            theirs = served.post("inspect", {"id": world.theirs}, world.editor)
            assert theirs.status_code == 404 and theirs.json()["error_class"] == "not_found"


def test_every_tool_is_an_operation(db_path: Path, env: dict[str, str]) -> None:
    key = editor_key(db_path, env)
    with api_server(db_path, env) as served:
        document = served.document(key)

        async def listed() -> set[str]:
            async with keyed(f"{served.base}/mcp", key) as client:
                return {tool.name for tool in (await client.list_tools()).tools}

        tools = anyio.run(listed)
    operations = {path.removeprefix(API) for path in document["paths"]} - {"openapi.json"}
    assert tools == set(TOOL_NAMES)
    # Besides the tools, the page's own operations (test_api_page_operations.py).
    assert operations == tools | set(PAGE_OPERATIONS)
    assert document["paths"][f"{API}openapi.json"].keys() == {"get"}


def test_the_document_is_openapi_3_1_and_every_reference_resolves(
    db_path: Path, env: dict[str, str]
) -> None:
    with api_server(db_path, env) as served:  # no keys yet: loopback acts as the owner
        document = served.document()
    assert document["openapi"].startswith("3.1.")
    assert {"title", "version"} <= document["info"].keys()
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    operation_ids = []
    for path, methods in document["paths"].items():
        assert path.startswith(API) and len(methods) == 1
        for operation in methods.values():
            operation_ids.append(operation["operationId"])
            assert "200" in operation["responses"] and "401" in operation["responses"]
            for response in operation["responses"].values():
                assert response["description"]
    assert len(operation_ids) == len(set(operation_ids))
    refs = set(references(document))
    assert refs and all(ref.startswith("#/components/schemas/") for ref in refs)
    assert {ref.rsplit("/", 1)[1] for ref in refs} <= document["components"]["schemas"].keys()
    for schema in schemas_in(document):
        jsonschema.Draft202012Validator.check_schema(schema)
    remember = document["paths"][f"{API}remember"]["post"]
    assert (
        "falsifier"
        in remember["requestBody"]["content"]["application/json"]["schema"]["properties"]
    )
    assert remember["description"].startswith("File")


def references(node: Any) -> list[str]:
    if isinstance(node, list):
        return [ref for item in node for ref in references(item)]
    if not isinstance(node, dict):
        return []
    found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
    return found + [ref for value in node.values() for ref in references(value)]


def schemas_in(document: dict[str, Any]) -> list[Any]:
    found = list(document["components"]["schemas"].values())
    for methods in document["paths"].values():
        for operation in methods.values():
            bodies = [operation.get("requestBody", {}), *operation["responses"].values()]
            found += [b["content"]["application/json"]["schema"] for b in bodies if b]
    return found


def test_roles_workspaces_and_refusals_are_the_tools_own_and_change_nothing(
    db_path: Path, env: dict[str, str]
) -> None:
    world = team(db_path)
    with api_server(db_path, env) as served:
        document = served.document(world.viewer)
        before = fingerprint(str(db_path))
        refusals = {
            "a viewer writing": (
                served.post("revise", {"id": world.mine, "append": "x"}, world.viewer),
                403, "forbidden",
            ),
            "another workspace's id": (
                served.post("inspect", {"id": world.theirs}, world.editor), 404, "not_found"
            ),
            "a key of another workspace": (
                served.post("inspect", {"id": world.mine}, world.stranger), 404, "not_found"
            ),
            "a workspace key overriding": (
                served.post("revise", {"id": world.mine, "tags": ["x"], "override_reason": "r"},
                            world.agent), 403, "forbidden",
            ),
            "a workspace named in the body": (
                served.post("inspect", {"id": world.theirs, "workspace": "lab"}, world.editor),
                400, "validation",
            ),
            "an argument of the wrong type": (
                served.post("recall", {"query": "pool", "limit": "5"}, world.editor),
                400, "validation",
            ),
        }  # fmt: skip
        for case, (got, status, error_class) in refusals.items():
            assert got.status_code == status, (case, got.text)
            operation = got.request.url.path.removeprefix(API)
            body = answers_as_documented(document, operation, got)
            assert body["error_class"] == error_class, case
            assert LAB_TEXT not in got.text, case
        workspace = refusals["a workspace named in the body"][0].json()
        assert workspace["field"] == "workspace"
        assert refusals["an argument of the wrong type"][0].json()["field"] == "limit"
        # A workspace named in the query or a header is no way in either.
        sideways = httpx2.post(
            f"{served.base}{API}inspect?workspace=lab", json={"id": world.theirs},
            headers={"Authorization": f"Bearer {world.editor}", "X-Workspace": "lab"},
        )  # fmt: skip
        assert sideways.status_code == 404
        assert fingerprint(str(db_path)) == before


def test_without_a_valid_key_nothing_of_the_body_is_read(
    db_path: Path, env: dict[str, str]
) -> None:
    key = editor_key(db_path, env)
    with api_server(db_path, env) as served:
        for given in (None, "palimpsest_k_made_up", key[:-1] + ("0" if key[-1] != "0" else "1")):
            assert status_before_body(served.port, f"{API}remember", given) == 401
        # A key in the body, not the header, lets nothing in.
        body = {"notebook": "ops", "kind": "fact", "text": "x", "authorization": f"Bearer {key}"}
        assert served.post("remember", body).status_code == 401
        assert served.post("remember", body, **{"X-Api-Key": key}).status_code == 401
        unkeyed = httpx2.get(f"{served.base}{API}openapi.json")
        assert unkeyed.status_code == 401 and "www-authenticate" in unkeyed.headers


def test_bodies_the_api_cannot_read_are_refused_without_echoing_them(
    db_path: Path, env: dict[str, str]
) -> None:
    key = editor_key(db_path, env)
    secret = "ghp_" + "a1B2c3D4e5" * 4  # the shape of a GitHub token
    deep = b'{"text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    # Within what the JSON parser takes: the tool refuses it, naming the argument.
    nested = (
        b'{"notebook": "n", "items": [{"kind": "fact", "text": "x", "why": '
        + b"[" * 500
        + b"]" * 500
        + b"}]}"
    )
    bodies = {
        "not JSON": f'{{"text": "{secret}"'.encode(),
        "a list": f'["{secret}"]'.encode(),
        "a string": f'"{secret}"'.encode(),
        "a key named twice": (
            f'{{"notebook": "n", "kind": "fact", "text": "{secret}", "text": "harmless"}}'
        ).encode(),
        "NaN": b'{"limit": NaN, "query": "x"}',
        "a number past a float's range": b'{"budget": 1e999, "query": "x"}',
        "an unpaired surrogate": b'{"notebook": "n", "kind": "fact", "text": "x\\ud800y"}',
        "nested past the parser's stack": deep,
        "nested within it, past any argument": nested,
        "not UTF-8": b'{"text": "\xff\xfe"}',
    }
    with api_server(db_path, env) as served:
        document = served.document(key)
        before = fingerprint(str(db_path))
        answered = {case: served.post("remember", body, key) for case, body in bodies.items()}
        wrong = {case: got.text for case, got in answered.items() if got.status_code != 400}
        assert not wrong
        for case, got in answered.items():
            assert answers_as_documented(document, "remember", got)["error_class"] == "validation"
            assert secret not in got.text and "harmless" not in got.text, case
        as_text = served.post("remember", {"text": secret}, key, **{"Content-Type": "text/plain"})
        assert as_text.status_code == 415 and secret not in as_text.text
        huge = served.post("remember", b'{"text": "' + b"a" * (65 * 2**20) + b'"}', key)
        assert huge.status_code == 413 and huge.json()["error_class"] == "validation"
        assert fingerprint(str(db_path)) == before


def test_paths_methods_and_overrides(db_path: Path, env: dict[str, str]) -> None:
    key = editor_key(db_path, env)
    auth = {"Authorization": f"Bearer {key}"}
    with api_server(db_path, env) as served:
        unknown = served.post("drop_everything", {}, key)
        assert unknown.status_code == 404 and unknown.json()["error_class"] == "not_found"
        for path in ("/api/", "/api/v1/", "/api/v2/remember", f"{API}remember/"):
            assert httpx2.post(f"{served.base}{path}", json={}, headers=auth).status_code == 404
        # The method is the request's own: no override header is read.
        override = {**auth, "X-HTTP-Method-Override": "POST", "X-Method-Override": "POST"}
        got = httpx2.get(f"{served.base}{API}remember?notebook=n&kind=fact&text=x",
                         headers=override)  # fmt: skip
        assert got.status_code == 405 and got.headers["allow"] == "POST"
        posted = served.post("openapi.json", {}, key, **{"X-HTTP-Method-Override": "GET"})
        assert posted.status_code == 405 and posted.headers["allow"] == "GET"
        # Another site's page, and a host name that only resolves here (DNS rebinding).
        other_site = served.post("recall", {"query": "x"}, key, Origin="https://evil.example")
        assert other_site.status_code == 403
        assert other_site.json()["error_class"] == "forbidden"
        rebound = served.post("recall", {"query": "x"}, key, Host="evil.example")
        assert rebound.status_code == 421
        # Two Authorization headers: refused in the API's own shape.
        doubled = httpx2.post(f"{served.base}{API}recall", json={"query": "x"},
                              headers=[("Authorization", f"Bearer {key}"),
                                       ("Authorization", "Bearer other")])  # fmt: skip
        assert doubled.status_code == 400 and doubled.json()["error_class"] == "validation"


def test_a_key_past_its_calls_a_minute_is_answered_429_with_retry_after(
    db_path: Path, env: dict[str, str]
) -> None:
    key = editor_key(db_path, env)
    with api_server(db_path, env, calls_per_minute=2) as served:
        document = served.document(key)
        answers = [served.post("recall", {"query": "pool"}, key) for _ in range(3)]
        assert [got.status_code for got in answers] == [200, 200, 429]
        body = answers_as_documented(document, "recall", answers[2])
        assert body["error_class"] == "retryable" and body["retry_after"] > 0
        assert int(answers[2].headers["retry-after"]) >= 1


def test_without_keys_loopback_acts_as_the_local_owner(db_path: Path, env: dict[str, str]) -> None:
    with api_server(db_path, env) as served:
        filed = served.post("remember", {"notebook": "n", "kind": "fact", "text": "Before keys"})
        assert filed.status_code == 200, filed.text
        inspected = served.post("inspect", {"id": filed.json()["id"]}).json()
        assert inspected["memory"]["text"] == "Before keys"


def test_the_api_and_mcp_answer_alike(db_path: Path, env: dict[str, str]) -> None:
    """The same call over /mcp and the API: the same answer, the same refusal."""
    key = editor_key(db_path, env)
    with api_server(db_path, env) as served:
        filed = served.post("remember", {"notebook": "n", "kind": "fact", "text": "Same"}, key)
        memory = filed.json()["id"]
        by_api = served.post("inspect", {"id": memory}, key).json()
        refused = served.post("remember", {"notebook": "n", "kind": "rule", "text": "No"}, key)

        async def by_mcp() -> tuple[dict[str, Any], dict[str, Any]]:
            async with keyed(f"{served.base}/mcp", key) as client:
                shown = await call(client, "inspect", id=memory)
                result = await client.call_tool("remember", {"notebook": "n", "kind": "rule",
                                                             "text": "No"})  # fmt: skip
                return shown, json.loads(result.content[0].text)  # type: ignore[union-attr]

        shown, mcp_refusal = anyio.run(by_mcp)
    assert by_api == shown
    assert refused.status_code == 400 and refused.json() == mcp_refusal
    assert mcp_refusal["field"] == "falsifier"


def test_an_answer_schema_refuses_a_key_the_types_lack(db_path: Path, env: dict[str, str]) -> None:
    with api_server(db_path, env) as served:
        document = served.document()
    with pytest.raises(jsonschema.ValidationError, match="ranked_by"):
        jsonschema.validate({"hits": [{"id": "m_1", "ranked_by": "luck"}]},
                            answer_schema(document, "recall"))  # fmt: skip


def test_a_key_holding_its_event_streams_can_still_call_the_api(
    db_path: Path, env: dict[str, str]
) -> None:
    """A GET of the document is no MCP event stream: it does not count as one."""
    key = editor_key(db_path, env)
    with api_server(db_path, env, streams_per_key=1) as served:
        session = open_session(f"{served.base}/mcp", key).headers["mcp-session-id"]
        stream = open_stream(served.port, key, session)
        try:
            assert served.document(key)["openapi"].startswith("3.1.")
        finally:
            stream.close()


def test_a_key_past_its_requests_under_way_is_answered_429_in_the_apis_shape(
    db_path: Path, env: dict[str, str]
) -> None:
    key = editor_key(db_path, env)
    with api_server(db_path, env, requests_per_key=1) as served:
        held = socket.create_connection(("127.0.0.1", served.port), timeout=30)
        try:  # a request whose body is still on its way: under way until it comes
            held.sendall(
                f"POST {API}recall HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
                f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
                "Content-Length: 100\r\n\r\n{".encode()
            )
            refused = wait_for(lambda: served.post("recall", {"query": "x"}, key),
                               lambda got: got.status_code == 429)  # fmt: skip
            assert refused.json()["error_class"] == "retryable"
            assert refused.headers["retry-after"] == "1"
        finally:
            held.close()
        again = wait_for(lambda: served.post("recall", {"query": "x"}, key),
                         lambda got: got.status_code == 200)  # fmt: skip
        assert again.json().get("hits", []) == []  # empty values are left out


def test_every_operations_answers_are_as_the_document_says(
    db_path: Path, env: dict[str, str]
) -> None:
    """A real answer of every operation, in several forms, held to the served document
    with every object closed: a key the answer types lack fails here."""
    key = editor_key(db_path, env)
    with api_server(db_path, env) as served:
        document = served.document(key)
        seen: list[str] = []

        def answer(operation: str, **arguments: Any) -> Any:
            got = served.post(operation, arguments, key)
            assert got.status_code < 500, (operation, got.text)
            seen.append(operation)
            return answers_as_documented(document, operation, got)

        answer("notebook", action="create", name="web", summary="The shop", tags=["infra"])
        filed = answer("remember", notebook="web", kind="fact", text="Port 8080", key="port",
                       why="the proxy sends there")  # fmt: skip
        rule = answer("remember", notebook="web", kind="rule", text="Never force-push",
                      falsifier="a force push that was fine",
                      check={"kind": "forbidden", "literals": ["git push --force"]})  # fmt: skip
        answer("remember", notebook="web", items=[{"kind": "fact", "text": "Port 9090 admin"}])
        answer("remember", notebook="web", kind="fact", text="Port 8080")  # a duplicate
        answer("recall", query="port", near_misses=True, budget=600)
        answer("revise", id=filed["id"], text="Port 8081", dry_run=True)
        answer("revise", ids=[filed["id"], "m_nothing"], status="verified")
        answer("inspect", notebook="web")
        answer("history", id=filed["id"], diff_from=1, diff_to=2)
        answer("revert", id=filed["id"], version=1)
        answer("link", source=filed["id"], target=rule["id"], type="relates_to")
        opened = answer("dispute", action="open", ids=[filed["id"], rule["id"]], reason="which")
        answer("dispute", action="list")
        answer("dispute", action="rule", dispute=opened["id"], holds=rule["id"], reason="so")
        answer("notebook", action="list")
        answer("orient", notebook="web", budget=800)
        answer("guard", command="git push --force origin main", notebook="web")
        answer("check")
        answer("doctor")
        answer("forget", id=filed["id"], because="a test", dry_run=True)
        answer("forget", id=filed["id"], because="a test")
    assert set(seen) == set(TOOL_NAMES)


@needs_postgres
def test_a_store_gone_away_is_a_refusal_that_leaks_nothing(env: dict[str, str]) -> None:
    """The database dropped under a running server: the key cannot be checked, and the
    answer says to retry, in the refusal's shape (on /mcp too), naming no driver,
    database or address (it was a bare 500 before)."""
    with own_postgres_database("api_gone") as url:
        key = team(url).editor
        with api_server(url, env) as served:
            assert served.post("recall", {"query": "x"}, key).status_code == 200
            name = url.rsplit("/", 1)[1]
            with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
                admin.execute(f"DROP DATABASE {name} WITH (FORCE)".encode())
            got = served.post("recall", {"query": "x"}, key)
            assert got.status_code == 503, got.text
            assert got.json()["error_class"] == "retryable"
            by_mcp = httpx2.post(
                f"{served.base}/mcp", json=INITIALIZE, headers=headers(key), timeout=60
            )
            assert by_mcp.status_code == 503
            assert by_mcp.json()["error"]["data"]["error_class"] == "retryable"
            for leak in ("psycopg", "postgres", name, "Traceback", "127.0.0.1"):
                assert leak not in got.text + by_mcp.text
