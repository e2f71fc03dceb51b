"""Every MCP tool through the SDK's in-process client: its happy path and its refusals."""

from __future__ import annotations

import json
import os
import sqlite3
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from palimpsest.domain.model import (
    CHECK_KINDS,
    KINDS,
    LINK_TYPES,
    MOMENTS,
    SCOPES,
    SEVERITIES,
    STATUSES,
)
from palimpsest.mcp import TOOL_NAMES, build_server
from palimpsest.mcp import params as mcp_params
from palimpsest.mcp.descriptions import DESCRIPTIONS, INSTRUCTIONS
from palimpsest.mcp.tools import STORE_THREADS
from palimpsest.revise import CLEARABLE, REVISE_STATUSES
from palimpsest.service import Service
from palimpsest.store import Store, open_store

from ..mcp_helpers import call, check_tool_schemas, refuse

pytestmark = pytest.mark.anyio


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    """SQLite only: these test the MCP adapter (two read or break the SQLite file itself);
    the store rules run on both stores in the service tests."""
    opened = open_store(str(db_path))
    yield opened
    opened.close()


async def remember(client: Client, text: str, **fields: Any) -> str:
    filed = await call(client, "remember", notebook="web", kind="fact", text=text, **fields)
    return str(filed["id"])


# -- the surface ----------------------------------------------------------------------------


async def test_every_tool_is_listed_with_described_parameters_and_annotations(
    client: Client,
) -> None:
    check_tool_schemas((await client.list_tools()).tools)
    assert client.instructions == INSTRUCTIONS
    assert set(DESCRIPTIONS) == set(TOOL_NAMES)


def test_schema_vocabularies_are_the_model_s() -> None:
    pairs = [
        (mcp_params.Kind, KINDS),
        (mcp_params.Status, STATUSES),
        (mcp_params.ReviseStatus, REVISE_STATUSES),
        (mcp_params.Severity, SEVERITIES),
        (mcp_params.Scope, SCOPES),
        (mcp_params.CheckKind, CHECK_KINDS),
        (mcp_params.Moment, MOMENTS),
        (mcp_params.LinkType, LINK_TYPES),
    ]
    for literal, vocabulary in pairs:
        assert typing.get_args(literal) == tuple(vocabulary)
    assert set(typing.get_args(mcp_params.Clearable)) == CLEARABLE


async def test_an_unknown_tool_is_a_structured_refusal(client: Client) -> None:
    assert (await refuse(client, "delete_everything"))["error_class"] == "not_found"
    assert len((await refuse(client, "x" * 100_000))["message"]) < 1000


# -- remember -------------------------------------------------------------------------------


async def test_remember_files_and_answers_a_duplicate_without_writing(client: Client) -> None:
    filed = await call(
        client, "remember", notebook="web", kind="decision", text="We deploy with make deploy",
        why="it runs the migrations", tags=["ops"], key="deploy",
    )  # fmt: skip
    assert (filed["version"], filed["notebook"]) == (1, "web")
    again = await call(client, "remember", notebook="web", kind="decision",
                       text="We deploy with make deploy")  # fmt: skip
    assert again["duplicate_of"] == filed["id"] and again["written"] is False


async def test_remember_with_supersedes_retires_the_old_one(client: Client) -> None:
    old = await remember(client, "The API listens on 8080")
    new = await call(client, "remember", notebook="web", kind="fact",
                     text="The API listens on 9090", supersedes=[old])  # fmt: skip
    assert [s["id"] for s in new["superseded"]] == [old]
    shown = await call(client, "inspect", id=old)
    assert shown["memory"]["status"] == "superseded"
    assert shown["memory"]["superseded_by"] == new["id"]


async def test_remember_refusals_name_the_field(client: Client) -> None:
    await remember(client, "Port 8080", key="port")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"kind": "rule", "text": "Never push to main"}, "falsifier"),
        ({"kind": "fact", "text": "Port 9090", "key": "port"}, "key"),
        ({"kind": "fact", "text": "x" * 9000}, "text"),
        ({"kind": "fact", "text": "Port 1", "tags": []}, "tags"),
        ({"kind": "fact", "text": "Port 2", "title": ""}, "title"),
        ({"kind": "fact", "text": "Port 3", "expected_version": 1}, "expected_version"),
        ({"kind": "feeling", "text": "Port 4"}, "kind"),
        ({"kind": "fact"}, "text"),
        ({"kind": "fact", "text": "Port 5", "supersedes": ["m_nope"]}, "supersedes"),
        ({"kind": "fact", "text": "Port 6", "check": {"kind": "contains", "pathh": "a"}}, "check"),
    ]
    for arguments, field in cases:
        body = await refuse(client, "remember", notebook="web", **arguments)
        assert body["field"] == field, (arguments, body)
        assert body["error_class"] == ("not_found" if field == "supersedes" else "validation")


async def test_a_text_that_looks_like_json_stays_a_string(client: Client) -> None:
    for text in ('{"port": 8080}', '["a", "b"]', "42"):
        memory = await remember(client, text)
        assert (await call(client, "inspect", id=memory))["memory"]["text"] == text
    revised = await call(client, "revise", id=memory, text='{"port": 9090}')
    assert revised["results"][0]["changed"] == ["text"]


async def test_a_list_sent_as_a_json_string_is_still_understood(client: Client) -> None:
    memory = await remember(client, "Tagged by a client that sends lists as strings",
                            tags='["a", "b"]')  # fmt: skip
    assert (await call(client, "inspect", id=memory))["memory"]["tags"] == ["a", "b"]


async def test_an_explicit_null_means_not_given(client: Client) -> None:
    memory = await remember(client, "Nulls are omissions", why="clients send them")
    await call(client, "revise", id=memory, why=None, title="Null handling", tags=None)
    shown = (await call(client, "inspect", id=memory))["memory"]
    assert (shown["why"], shown["title"]) == ("clients send them", "Null handling")


# -- recall ---------------------------------------------------------------------------------


async def test_recall_finds_filters_and_lists_the_rules(client: Client) -> None:
    fact = await remember(client, "The database is PostgreSQL 16", tags=["db"])
    await call(client, "remember", notebook="web", kind="rule",
               text="Never edit applied migrations",
               falsifier="an edited migration that broke nothing")  # fmt: skip
    await call(client, "remember", notebook="other", kind="fact", text="PostgreSQL runs on db1")
    found = await call(client, "recall", query="PostgreSQL", notebook="web", kind=["fact"])
    assert [h["id"] for h in found["hits"]] == [fact]
    assert [r["text"] for r in found["rules"]] == ["Never edit applied migrations"]
    assert "possibly_stale" not in found["hits"][0]  # a flag, present when it holds
    assert [h["id"] for h in (await call(client, "recall", tags=["db"]))["hits"]] == [fact]
    assert len((await call(client, "recall", query="PostgreSQL", limit=1))["hits"]) == 1


async def test_recall_as_of_and_include_retired(client: Client) -> None:
    memory = await remember(client, "Deploys happen on Fridays")
    before = (await call(client, "inspect", id=memory))["memory"]["recorded_at"]
    await call(client, "revise", id=memory, status="retracted", note="never true")
    assert "hits" not in await call(client, "recall", query="Fridays")  # empty: left out
    retired = await call(client, "recall", query="Fridays", include_retired=True)
    assert retired["hits"][0]["status"] == "retracted"
    then = await call(client, "recall", query="Fridays", as_of=before)
    assert [(h["id"], h["status"]) for h in then["hits"]] == [(memory, "active")]


async def test_recall_refusals(client: Client) -> None:
    for arguments, field in [
        ({"limit": 0}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"as_of": "last tuesday"}, "as_of"),
        ({"notebook": "nowhere"}, "notebook"),
        ({"status": "gone"}, "status"),
        ({"filter": "x"}, "filter"),
    ]:
        assert (await refuse(client, "recall", **arguments))["field"] == field, arguments


@pytest.mark.parametrize(
    ("tool", "arguments", "where"),
    [
        ("dispute", {"action": "list", "include_closed": "yes"}, "include_closed"),
        ("recall", {"include_retired": "yes"}, "include_retired"),
        ("recall", {"include_retired": 1}, "include_retired"),
        ("recall", {"limit": "5"}, "limit"),
        ("history", {"limit": 5.0}, "limit"),
        ("forget", {"id": "m_x", "because": "b", "dry_run": "false"}, "dry_run"),
        (
            "remember",
            {
                "notebook": "web",
                "kind": "rule",
                "text": "Never force-push main",
                "falsifier": "a release needs it",
                "bindings": {"always": "yes"},
            },
            "bindings.always",
        ),
    ],
)
async def test_every_typed_parameter_takes_its_json_type_only(
    client: Client, tool: str, arguments: dict[str, Any], where: str
) -> None:
    """pydantic's lax mode would read "yes" as true and "5" as 5: a caller that sent the
    wrong type is told so, naming the field, and nothing is written."""
    body = await refuse(client, tool, **arguments)
    assert (body["error_class"], body["field"]) == ("validation", where.split(".")[0])
    assert f"`{where}` must be" in body["message"]
    assert "hits" not in await call(client, "recall", query="force", include_retired=True)


async def test_a_query_too_long_is_told_how_to_search_not_how_to_file(client: Client) -> None:
    body = await refuse(client, "recall", query="word " * 1_601)
    assert (body["error_class"], body["field"]) == ("validation", "query")
    assert "8,000" in body["message"] and "memory should hold one idea" not in body["message"]


# -- revise ---------------------------------------------------------------------------------


async def test_revise_omit_keeps_clear_clears_and_small_edits_apply(client: Client) -> None:
    memory = await remember(client, "Builds take 4 minutes", why="measured", tags=["ci"],
                            expires_at="2099-01-01")  # fmt: skip
    await call(client, "revise", id=memory, append="on the big runner")
    await call(client, "revise", id=memory, replace_from="4", replace_to="6")
    await call(client, "revise", id=memory, clear=["expires_at"], title="Build time")
    shown = (await call(client, "inspect", id=memory))["memory"]
    assert shown["text"] == "Builds take 6 minutes on the big runner"
    assert (shown["why"], shown["tags"], shown["title"]) == ("measured", ["ci"], "Build time")
    assert "expires_at" not in shown and shown["version"] == 4
    same = await call(client, "revise", id=memory, title="Build time")
    assert same["results"][0]["unchanged"] is True


async def test_revise_reports_unmatched_targets_and_changes_the_rest(client: Client) -> None:
    first = await remember(client, "Cache TTL is 60 s")
    second = await remember(client, "Queue depth is 100")
    answer = await call(client, "revise", ids=[first, second, "m_missing"], status="retracted",
                        note="measured wrong")  # fmt: skip
    assert [r["id"] for r in answer["results"]] == [first, second]
    assert answer["unmatched"] == [{"target": "m_missing", "reason": "no such memory"}]
    assert answer["warnings"]
    by_text = await call(client, "revise", texts=["cache ttl is 60 s ", "Nope"], notebook="web",
                         status="active")  # fmt: skip
    assert [r["id"] for r in by_text["results"]] == [first]
    assert [u["target"] for u in by_text["unmatched"]] == ["Nope"]
    missing = await call(client, "revise", ids=[second], replace_from="absent", replace_to="x")
    assert "results" not in missing and missing["unmatched"][0]["target"] == second
    alone = await refuse(client, "revise", id=second, replace_from="absent", replace_to="x")
    assert alone["error_class"] == "validation"


async def test_revise_batch_is_all_or_nothing(client: Client) -> None:
    first = await remember(client, "Alpha is on")
    second = await remember(client, "Beta is on")
    body = await refuse(client, "revise", items=[
        {"id": first, "text": "Alpha is off"},
        {"id": second, "text": "Beta is off", "tags": []},
    ])  # fmt: skip
    assert (body["error_class"], body["item"]) == ("validation", 1)
    body = await refuse(client, "revise", items=[
        {"id": first, "text": "Alpha is off"},
        {"id": second, "text": "Beta is off", "expected_version": 7},
    ])  # fmt: skip
    assert body["error_class"] == "conflict" and second in body["message"]
    assert (await call(client, "inspect", id=first))["memory"]["text"] == "Alpha is on"
    done = await call(client, "revise", items=[{"id": first, "text": "Alpha is off"},
                                               {"id": second, "tags": ["b"]}])  # fmt: skip
    assert [r["version"] for r in done["results"]] == [2, 2]


async def test_revise_refusals(client: Client) -> None:
    memory = await remember(client, "Logs rotate daily")
    rule = (await call(client, "remember", notebook="web", kind="rule",
                       text="Never force-push main", falsifier="a force-push that lost nothing",
                       severity="costly"))["id"]  # fmt: skip
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"id": memory, "expected_version": 3, "why": "x"}, "conflict", "expected_version"),
        ({"id": memory, "text": "New", "append": "more"}, "validation", "append"),
        ({"id": memory, "title": "T", "clear": ["title"]}, "validation", "title"),
        ({"id": memory, "tags": []}, "validation", "tags"),
        ({"id": memory, "clear": ["text"]}, "validation", "clear"),
        ({"id": memory, "clear": ""}, "validation", "clear"),
        ({"id": memory}, "validation", ""),
        ({"id": memory, "ids": [memory], "why": "x"}, "validation", "id"),
        ({"id": rule, "severity": "house_style"}, "validation", "because"),
        ({"id": rule, "status": "retracted"}, "validation", "because"),
        ({"id": "m_missing", "why": "x"}, "not_found", "id"),
        ({"id": memory, "expected_versoin": 1, "why": "x"}, "validation", "expected_versoin"),
        ({"id": memory, "status": "deleted"}, "validation", "status"),
    ]
    for arguments, error_class, field in cases:
        body = await refuse(client, "revise", **arguments)
        assert body["error_class"] == error_class, (arguments, body)
        assert body.get("field", "") == field, (arguments, body)
    assert (await call(client, "inspect", id=memory))["memory"]["version"] == 1
    weakened = await call(client, "revise", id=rule, severity="house_style", because="a tweak")
    assert weakened["results"][0]["changed"] == ["severity"]


async def test_revise_supersede_and_move(client: Client) -> None:
    memory = await remember(client, "Staging is at stage.example.com")
    moved = await call(client, "revise", id=memory, move_to="infra")
    assert moved["results"][0]["changed"] == ["notebook_id"]
    successor = await call(client, "revise", id=memory, supersede=True,
                           text="Staging is at staging.example.com")  # fmt: skip
    new_id = successor["results"][0]["id"]
    assert new_id != memory and successor["results"][0]["superseded"]["id"] == memory
    assert (await call(client, "inspect", id=new_id))["memory"]["notebook"] == "infra"


async def test_dry_run_writes_nothing(client: Client, db_path: Path) -> None:
    memory = await remember(client, "Workers: 4")
    before = event_count(db_path)
    planned = await call(client, "revise", id=memory, text="Workers: 8", dry_run=True)
    assert planned["dry_run"] is True and "diff" in planned["results"][0]
    await call(client, "remember", notebook="web", kind="fact", text="New", dry_run=True)
    assert event_count(db_path) == before


# -- revert, forget -------------------------------------------------------------------------


async def test_revert_goes_back_as_a_new_version(client: Client) -> None:
    memory = await remember(client, "Timeout is 30 s")
    await call(client, "revise", id=memory, text="Timeout is 5 s")
    back = await call(client, "revert", id=memory, version=1)
    assert back["results"][0]["version"] == 3
    assert (await call(client, "inspect", id=memory))["memory"]["text"] == "Timeout is 30 s"
    again = await call(client, "revert", id=memory, version=1)
    assert again["results"][0]["unchanged"] is True
    for arguments, error_class in [
        ({"id": memory, "version": 9}, "not_found"),
        ({"id": memory}, "validation"),
        ({"notebook": "web"}, "validation"),
        ({"id": memory, "version": 0}, "validation"),
        ({"id": memory, "version": "one"}, "validation"),
    ]:
        assert (await refuse(client, "revert", **arguments))["error_class"] == error_class


async def test_forget_leaves_only_a_tombstone(client: Client) -> None:
    memory = await remember(client, "Ana's home address is 12 hunter2 street")
    await refuse(client, "forget", id=memory)  # no reason given
    gone = await call(client, "forget", id=memory, because="personal data was pasted")
    assert gone["results"][0]["forgotten"] is True and "scrub_pending" in gone
    assert (await call(client, "inspect", id=memory))["tombstone"]["reason"] == (
        "personal data was pasted"
    )
    assert "hits" not in await call(client, "recall", query="hunter2", include_retired=True)
    again = await refuse(client, "forget", id=memory, because="again")
    assert again["error_class"] == "not_found"
    assert (await refuse(client, "forget", because="none named"))["field"] == "id"


async def test_forget_one_version(client: Client) -> None:
    memory = await remember(client, "Token abc123 is in the config")
    await call(client, "revise", id=memory, text="The token is in the config")
    await refuse(client, "forget", id=memory, version=2, because="current")
    await call(client, "forget", id=memory, version=1, because="a token was pasted")
    versions = (await call(client, "inspect", id=memory))["versions"]
    assert versions[0].get("scrubbed") is True and "changed" in versions[1]


# -- inspect, history -----------------------------------------------------------------------


async def test_inspect_a_memory_and_a_notebook(client: Client) -> None:
    memory = await remember(client, "Feature flags live in flags.yaml")
    shown = await call(client, "inspect", id=memory)
    assert [v["version"] for v in shown["versions"]] == [1] and "links" not in shown
    book = await call(client, "inspect", notebook="web")
    assert book["notebook"]["name"] == "web"
    assert [m["id"] for m in book["memories"]] == [memory]
    for arguments, error_class in [
        ({}, "validation"),
        ({"id": memory, "notebook": "web"}, "validation"),
        ({"id": "m_missing"}, "not_found"),
        ({"notebook": "nowhere"}, "not_found"),
        ({"id": 7}, "validation"),
    ]:
        assert (await refuse(client, "inspect", **arguments))["error_class"] == error_class


async def test_history_lists_events_and_diffs_versions(client: Client) -> None:
    memory = await remember(client, "Retries: 3")
    await call(client, "revise", id=memory, text="Retries: 5", note="too many timeouts")
    events = (await call(client, "history", id=memory))["events"]
    assert [e["op"] for e in events] == ["remember", "revise"]
    assert events[1]["note"] == "too many timeouts"
    assert events[1]["changes"]["text"] == {"old": "Retries: 3", "new": "Retries: 5"}
    diff = await call(client, "history", id=memory, diff_from=1, diff_to=2)
    assert "-Retries: 3" in diff["text_diff"]
    assert (await call(client, "history", notebook="web", limit=1))["events"] == [events[1]]
    for arguments, error_class in [
        ({"id": memory, "diff_from": 1}, "validation"),
        ({"id": memory, "diff_from": 1, "diff_to": 9}, "not_found"),
        ({"limit": 0}, "validation"),
        ({"since": "yesterday-ish"}, "validation"),
        ({"id": "m_missing"}, "not_found"),
    ]:
        assert (await refuse(client, "history", **arguments))["error_class"] == error_class


# -- notebook, link -------------------------------------------------------------------------


async def test_notebook_actions(client: Client) -> None:
    made = await call(client, "notebook", action="create", name="shop", domain="web",
                      summary="The online shop")  # fmt: skip
    book_id = made["notebook"]["id"]
    renamed = await call(client, "notebook", action="edit", notebook="shop", name="web-shop",
                         clear=["summary"])  # fmt: skip
    assert renamed["notebook"]["id"] == book_id and "summary" not in renamed["notebook"]
    await call(client, "notebook", action="create", name="blog", domain="www")
    merged = await call(client, "notebook", action="merge_domains", from_domain="www",
                        to_domain="web", because="one team")  # fmt: skip
    assert merged == {"moved": ["blog"], "domain": "web"}
    listed = await call(client, "notebook", action="list")
    assert {(n["name"], n["domain"]) for n in listed["notebooks"]} == {
        ("web-shop", "web"), ("blog", "web"),
    }  # fmt: skip
    for arguments, error_class, field in [
        ({"action": "create", "name": "blog"}, "conflict", "name"),
        ({"action": "create"}, "validation", "name"),
        ({"action": "list", "name": "x"}, "validation", "name"),
        ({"action": "edit", "notebook": "blog"}, "validation", ""),
        ({"action": "edit", "notebook": "nowhere", "summary": "s"}, "not_found", "notebook"),
        ({"action": "merge_domains", "from_domain": "a", "to_domain": "b"}, "validation",
         "because"),
        ({"action": "merge_domains", "from_domain": "zzz", "to_domain": "web", "because": "x"},
         "not_found", "source"),
        ({"action": "rename"}, "validation", "action"),
        ({}, "validation", "action"),
    ]:  # fmt: skip
        body = await refuse(client, "notebook", **arguments)
        assert (body["error_class"], body.get("field", "")) == (error_class, field), arguments


async def test_link_adds_removes_and_refuses(client: Client) -> None:
    first = await remember(client, "The cache depends on Redis")
    second = await remember(client, "Redis runs on cache1")
    made = await call(client, "link", source=first, target=second, type="depends_on")
    assert made["versions"] == {first: 2, second: 2}
    again = await call(client, "link", source=first, target=second, type="depends_on")
    assert again["unchanged"] is True
    removed = await call(client, "link", source=first, target=second, type="depends_on",
                         remove=True)  # fmt: skip
    assert removed["removed"] is True
    book = (await call(client, "notebook", action="list"))["notebooks"][0]["id"]
    for arguments, error_class in [
        ({"source": first, "target": second, "type": "depends_on", "remove": True}, "not_found"),
        ({"source": first, "target": first, "type": "relates_to"}, "validation"),
        ({"source": first, "target": book, "type": "part_of"}, "validation"),
        ({"source": first, "target": "m_missing", "type": "relates_to"}, "not_found"),
        ({"source": first, "target": second, "type": "likes"}, "validation"),
        ({"source": first, "target": second}, "validation"),
    ]:
        assert (await refuse(client, "link", **arguments))["error_class"] == error_class


# -- failures the caller did not cause -------------------------------------------------------


async def test_an_unexpected_failure_is_internal_leaks_nothing_and_the_server_goes_on(
    client: Client, db_path: Path
) -> None:
    memory = await remember(client, "Links are kept in their own table")
    with sqlite3.connect(db_path) as raw:  # break the file the way a bad disk or a bug would
        raw.execute("DROP TABLE links")
    body = await refuse(client, "inspect", id=memory)
    assert body["error_class"] == "internal"
    assert "links" not in body["message"] and "table" not in body["message"]
    found = await call(client, "recall", query="table")
    assert [h["id"] for h in found["hits"]] == [memory]


async def test_calls_run_on_a_fixed_set_of_store_threads(service: Service, db_path: Path) -> None:
    """The store opens a connection per thread: bursts of calls must not add threads."""
    server = build_server(service)
    async with Client(server) as client:
        await remember(client, "Concurrency is bounded")

        async def one_recall() -> None:
            await call(client, "recall", query="bounded")

        for _ in range(3):
            async with anyio.create_task_group() as group:
                for _ in range(4 * STORE_THREADS):
                    group.start_soon(one_recall)
        # the fixture's own connection, and at most one per store thread
        assert open_connections(db_path) <= STORE_THREADS + 1
    server.close()


def open_connections(db_path: Path) -> int:
    """How many open file descriptors of this process point at the database file."""
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("needs /proc to count open files")
    targets = []
    for fd in fds.iterdir():
        try:
            targets.append(Path(os.readlink(fd)))
        except OSError:
            continue
    return sum(1 for target in targets if target == db_path.resolve())


def event_count(db_path: Path) -> int:
    with sqlite3.connect(db_path) as raw:
        return int(raw.execute("SELECT count(*) FROM events").fetchone()[0])


def test_the_docs_document_every_tool_and_the_client_configuration() -> None:
    repo = Path(__file__).resolve().parents[2]
    readme = (repo / "README.md").read_text(encoding="utf-8")
    first_screen = readme.split("\n---\n")[0]
    snippet = first_screen.split("```json\n")[1]
    server = json.loads(snippet.split("```")[0])["mcpServers"]["palimpsest"]
    assert server["args"][-1] == "serve" and "--actor" in server["args"]  # one name per agent
    assert "| `serve` |" in readme  # in the CLI's table too
    operations = (repo / "docs" / "operations.md").read_text(encoding="utf-8")
    section = operations.split("## From an MCP client")[1].split("\n## ")[0]
    for name in TOOL_NAMES:
        assert f"| `{name}` |" in section, name
    assert "http://127.0.0.1:8765/mcp" in section


async def test_redact_keeps_a_note_and_a_summary_without_their_credentials(client: Client) -> None:
    token = "-".join(
        ["xoxb", "1234567890" + "12", "1234567890" + "123", "7Sr5Qp3Nm1Lk9Jh7Gf5Ed3Ba"]
    )
    memory = await remember(client, "The alerts bot posts to #ops")
    refused_note = await refuse(client, "revise", id=memory, status="retracted", note=token)
    assert refused_note["field"] == "note" and token not in json.dumps(refused_note)
    revised = await call(client, "revise", id=memory, status="retracted", note=token, redact=True)
    assert revised["redacted"][0]["field"] == "note"
    shown = await call(client, "inspect", id=memory)
    assert token not in json.dumps(shown) and "[REDACTED:" in shown["memory"]["status_note"]
    created = await call(client, "notebook", action="create", name="ops", summary=token,
                         redact=True)  # fmt: skip
    assert token not in json.dumps(created)


async def test_someone_elses_memory_needs_an_override(client: Client, service: Service) -> None:
    bob = Service(service.store, actor="user:bob", workspace=service.workspace)
    memory = bob.remember(notebook="n", kind="fact", text="Bob's note on caching")["id"]
    denied = await refuse(client, "revise", id=memory, tags=["cache"])
    assert denied["error_class"] == "forbidden"
    allowed = await call(client, "revise", id=memory, tags=["cache"],
                         override_reason="tagging for search", override_confirm=True)  # fmt: skip
    assert allowed["results"][0]["version"] == 2
