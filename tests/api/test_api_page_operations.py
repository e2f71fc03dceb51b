"""The web page's operations that are no MCP tool, over the HTTP API through a real
`serve --http`: a script does what the page does, with the same roles and refusals, each
answer held to the served OpenAPI document."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from palimpsest.api import operations
from palimpsest.mcp.descriptions import TOOL_NAMES
from palimpsest.service import Service
from palimpsest.store import open_store
from palimpsest.web import actions, routes

from ..team.test_attack_matrix import fingerprint
from .scripts import API, LAB_TEXT, Served, Team, answers_as_documented, api_server, team

DUPLICATED = "Deploys go out on Tuesdays after the standup"
# The service's calls the page makes that an MCP tool makes under another name.
AS_TOOL = {"notebooks": "notebook"}  # the notebook tool's `action: list`


def owner_key(store: Path) -> str:
    opened = open_store(str(store))
    try:
        here = Service(opened, workspace="default")
        here.add_user(name="olive", role="owner")
        key: str = here.create_key(user="olive")["key"]
        return key
    finally:
        opened.close()


class Script:
    """One key's calls, each answer checked against the served document."""

    def __init__(self, served: Served, key: str, document: dict[str, Any]):
        self.served, self.key, self.document = served, key, document

    def call(self, operation: str, status: int = 200, **arguments: Any) -> Any:
        got = self.served.post(operation, arguments, self.key)
        assert got.status_code == status, (operation, got.text)
        body = answers_as_documented(self.document, operation, got)
        assert LAB_TEXT not in got.text
        return body


def scripts(served: Served, world: Team, owner: str) -> dict[str, Script]:
    document = served.document(world.editor)
    keys = {"owner": owner, "editor": world.editor, "viewer": world.viewer,
            "stranger": world.stranger}  # fmt: skip
    return {who: Script(served, key, document) for who, key in keys.items()}


@contextmanager
def scripted(store: Path, env: dict[str, str]) -> Iterator[tuple[dict[str, Script], Team]]:
    """A team on `store` with an owner's key too, served: each person's script, and the team."""
    world = team(store)
    owner = owner_key(store)
    with api_server(store, env) as served:
        yield scripts(served, world, owner), world


def page_service_calls() -> set[str]:
    """The names of the service's methods the page's routes (and the forms they read,
    actions.py) call: `service.<name>` wherever it is written."""
    called = set()
    for module in (routes, actions):
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if not isinstance(node, ast.Attribute):
                continue
            holder = node.value
            if isinstance(holder, ast.Attribute) and holder.attr == "service":
                called.add(node.attr)  # signed.service.<name>
            elif isinstance(holder, ast.Name) and holder.id == "service":
                called.add(node.attr)
    return called


def test_every_service_call_of_the_page_is_an_api_operation(
    db_path: Path, env: dict[str, str]
) -> None:
    called = page_service_calls()
    # The reading above finds them all: the page's own and those it shares with the tools.
    assert {"served", "forget_served", "merge", "recall", "revise_with_reason"} <= called
    with api_server(db_path, env) as served:  # no keys yet: loopback acts as the owner
        document = served.document()
    listed = {path.removeprefix(API) for path in document["paths"]} - {"openapi.json"}
    assert {AS_TOOL.get(name, name) for name in called} <= listed
    # The page's own are the API's only (not MCP tools: the tool list is at its budget).
    assert listed == set(TOOL_NAMES) | set(operations.NAMES)
    assert not set(operations.NAMES) & set(TOOL_NAMES)
    for name in operations.NAMES:
        post = document["paths"][f"{API}{name}"]["post"]
        assert post["description"] == operations.DESCRIPTIONS[name]
        assert post["requestBody"]["content"]["application/json"]["schema"]["type"] == "object"


def test_a_script_lists_sessions_reads_one_and_an_owner_forgets_its_record(
    db_path: Path, env: dict[str, str]
) -> None:
    with scripted(db_path, env) as (by, _):
        by["editor"].call("recall", query="pool")  # recorded under the editor's key
        listed = by["owner"].call("served")["sessions"]
        session = next(s["session"] for s in listed if s["actor"] == "user:ed")
        assert session.startswith("http:")
        steps = by["owner"].call("served", session=session)
        assert steps["session"] == session
        assert [step["what"] for step in steps["entries"]] == ["recall"]
        assert by["editor"].call("served", session=session)["entries"]  # their own
        # Anyone else reads only their own; another workspace knows no such session.
        by["viewer"].call("served", 404, session=session)
        by["stranger"].call("served", 404, session=session)
        refused = by["editor"].call("forget_served", 403, session=session, because="tidy")
        assert refused["error_class"] == "forbidden"
        no_reason = by["owner"].call("forget_served", 400, session=session)
        assert no_reason["field"] == "because"
        gone = by["owner"].call("forget_served", session=session, because="held a secret")
        assert gone["forgotten"] is True and gone["servings"] == 1
        by["owner"].call("served", 404, session=session)


def test_a_script_finds_a_notebooks_duplicates_and_merges_them(
    db_path: Path, env: dict[str, str]
) -> None:
    with scripted(db_path, env) as (by, world):
        editor = by["editor"]
        ids = [editor.call("remember", notebook="deploys", kind="fact", text=text)["id"]
               for text in (DUPLICATED, DUPLICATED + ", as agreed.")]  # fmt: skip
        groups = editor.call("duplicates", notebook="deploys")["groups"]
        assert [sorted(m["id"] for m in group["memories"]) for group in groups] == [sorted(ids)]
        keep, other = ids
        before = fingerprint(str(db_path))
        viewer = by["viewer"].call("merge", 403, keep=keep, ids=[other], because="same")
        assert viewer["error_class"] == "forbidden"
        elsewhere = editor.call("merge", 404, keep=keep, ids=[world.theirs], because="same")
        assert elsewhere["error_class"] == "not_found"
        assert editor.call("merge", 400, keep=keep, ids=[other])["field"] == "because"
        assert fingerprint(str(db_path)) == before
        merged = editor.call("merge", keep=keep, ids=[other], because="the same fact")
        assert merged["id"] == keep and [s["id"] for s in merged["superseded"]] == [other]
        retired = editor.call("inspect", id=other)["memory"]
        assert retired["status"] == "superseded" and retired["superseded_by"] == keep
        assert editor.call("inspect", id=keep)["memory"]["status"] == "active"
        assert not editor.call("duplicates", notebook="deploys").get("groups")


def test_a_script_reads_a_notebooks_overview_rules_and_activity(
    db_path: Path, env: dict[str, str]
) -> None:
    with scripted(db_path, env) as (by, _):
        viewer, editor = by["viewer"], by["editor"]
        forbidden = {"kind": "forbidden", "literals": ["git push --force"]}
        rule = editor.call("remember", notebook="web", kind="rule", text="Never force-push",
                           falsifier="a force push that was fine", check=forbidden)  # fmt: skip
        listed = {nb["notebook"]["name"]: nb for nb in viewer.call("notebook_list")["notebooks"]}
        assert listed["web"]["rules"] == 1 and listed["web"]["active"] == 1
        assert "lab" not in listed  # another workspace's notebook
        rules = viewer.call("notebook_rules", notebook="web")
        assert [r["id"] for r in rules["rules"]] == [rule["id"]] and rules["rules"][0]["guards"]
        activity = viewer.call("activity", notebook="web", days=7)
        assert activity["days"] == 7 and len(activity["activity"]) == 7
        assert activity["total"] >= 1 and activity["activity"][-1]["ops"].get("remember") == 1
        assert viewer.call("activity", 400, notebook="web", days=0)["field"] == "days"
        assert viewer.call("activity", 400, notebook="web", days="7")["field"] == "days"
        viewer.call("notebook_rules", 404, notebook="lab")
        by["stranger"].call("activity", 404, notebook="web")


def test_a_script_changes_a_memory_with_a_reason_as_the_page_does(
    db_path: Path, env: dict[str, str]
) -> None:
    with scripted(db_path, env) as (by, world):
        editor = by["editor"]
        filed = editor.call("remember", notebook="ops", kind="fact", text="The cache keeps 40")
        memory = filed["id"]
        unsaid = editor.call("revise_with_reason", 400, id=memory, text="The cache keeps 60")
        assert unsaid["field"] == "note"
        by["viewer"].call("revise_with_reason", 403, id=memory, text="x", note="because")
        editor.call("revise_with_reason", 404, id=world.theirs, text="x", note="because")
        revised = editor.call("revise_with_reason", id=memory, text="The cache keeps 60",
                              note="measured again", expected_version=1)  # fmt: skip
        assert revised["results"][0]["version"] == 2
        stale = editor.call("revise_with_reason", 409, id=memory, text="y", note="n",
                            expected_version=1)  # fmt: skip
        assert stale["error_class"] == "conflict"
        assert editor.call("revert_with_reason", 400, id=memory, version=1)["field"] == "note"
        back = editor.call("revert_with_reason", id=memory, version=1, note="the old was right")
        assert back["results"][0]["version"] == 3
        assert editor.call("inspect", id=memory)["memory"]["text"] == "The cache keeps 40"


def test_the_pages_operations_count_against_the_keys_calls_a_minute(
    db_path: Path, env: dict[str, str]
) -> None:
    """One bound for a key's calls, whichever operation: a tool's or the page's own."""
    world = team(db_path)
    with api_server(db_path, env, calls_per_minute=2) as served:
        document = served.document(world.viewer)
        assert served.post("recall", {"query": "pool"}, world.viewer).status_code == 200
        assert served.post("notebook_list", {}, world.viewer).status_code == 200
        refused = served.post("duplicates", {"notebook": "ops"}, world.viewer)
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        assert answers_as_documented(document, "duplicates", refused)["retry_after"] > 0
