"""Each tool's real answer, through the official MCP client, against its published output
schema and against the service's answer type, closed: a key the service adds without typing
it fails here (and, where the service builds the answer as a TypedDict, fails mypy)."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import jsonschema
import mypy.api
import pydantic
import pytest
from mcp import Client

from palimpsest.domain.projects import Places
from palimpsest.mcp import TOOL_NAMES
from palimpsest.mcp.schema import lean_answer
from palimpsest.mcp.server import build_server
from palimpsest.mcp.tools import PalimpsestTools
from palimpsest.service import Service

from ..mcp_helpers import call

pytestmark = pytest.mark.anyio


def closed(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every object closed to the keys it lists."""
    if schema.get("type") == "object" and "properties" in schema:
        properties = {k: closed(v) for k, v in schema["properties"].items()}
        return {**schema, "properties": properties, "additionalProperties": False}
    if schema.get("type") == "array" and "items" in schema:
        return {**schema, "items": closed(schema["items"])}
    return schema


def typed(tool: str) -> dict[str, Any]:
    answer = typing.get_type_hints(getattr(PalimpsestTools, tool))["return"]
    full = pydantic.TypeAdapter(answer).json_schema()
    return closed(lean_answer(full, full.get("$defs", {})))


async def test_real_answers_validate_against_their_schemas(
    service: Service, tmp_path: Path
) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    (project / "setup.cfg").write_text("[tool]\nport = 8080\n")
    service.places = Places(working_dir=None, allowed=(project,))
    service.create_notebook(name="web", summary="The shop")
    service.bind_project(dir=str(project), notebook="web")
    server = build_server(service)
    async with Client(server) as client:
        answers = await _answers(client, project)
        listed = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
    server.close()
    assert {tool for tool, _ in answers} == set(TOOL_NAMES)
    for tool, answer in answers:
        schema = listed[tool]
        assert schema is not None, tool
        jsonschema.validate(answer, schema)  # what the client checks, as published
        jsonschema.validate(answer, typed(tool))  # every key typed, at every depth


async def _answers(client: Client, project: Path) -> list[tuple[str, dict[str, Any]]]:
    """Real answers of every tool, in their several forms."""
    answers: list[tuple[str, dict[str, Any]]] = []

    async def answer(tool: str, **arguments: Any) -> dict[str, Any]:
        got = await call(client, tool, **arguments)
        answers.append((tool, got))
        return got

    await answer("notebook", action="create", name="docs", summary="How to", tags=["infra"])
    await answer("remember", notebook="web", kind="fact", text="Port 8080", dry_run=True)
    filed = await answer("remember", notebook="web", kind="fact", text="Port 8080", key="port",
                         anchors=["setup.cfg"], why="the proxy sends there")  # fmt: skip
    await answer("remember", notebook="web", kind="fact", text="Port 8080")  # a duplicate
    rule = await answer("remember", notebook="web", kind="rule", text="Port stays 8080",
                        falsifier="another port that works",
                        check={"kind": "contains", "path": "setup.cfg", "literal": "9090"},
                        severity="costly")  # fmt: skip
    await answer("remember", notebook="web", kind="rule", text="Never force-push",
                 falsifier="a force push that was fine",
                 check={"kind": "forbidden", "literals": ["git push --force"]})  # fmt: skip
    batch = await answer("remember", notebook="web", items=[
        {"kind": "fact", "text": "Port 9090 is the admin's"}, {"kind": "fact", "text": "Port 8080"}
    ])  # fmt: skip
    other = batch["results"][0]["id"]
    await answer("recall", query="port", near_misses=True, budget=600)
    await answer("recall", query="nothing like it at all")
    await answer("revise", id=filed["id"], text="Port 8081", dry_run=True)
    await answer("revise", id=filed["id"], text="Port 8081", expected_version=1)
    await answer("revise", ids=[filed["id"], "m_nothing"], status="verified")
    await answer("revise", id=other, feedback="helped")
    await answer("revise", id=other, text="Port 9090 serves the admin", supersede=True)
    await answer("inspect", id=filed["id"])
    await answer("inspect", notebook="web")
    await answer("history", id=filed["id"])
    await answer("history", id=filed["id"], diff_from=1, diff_to=2)
    await answer("revert", id=filed["id"], version=1, dry_run=True)
    await answer("revert", id=filed["id"], version=1)
    await answer("link", source=filed["id"], target=rule["id"], type="relates_to")
    await answer("notebook", action="edit", notebook="web", summary="The shop's web")
    await answer("notebook", action="list")
    opened = await answer("dispute", action="open", ids=[filed["id"], rule["id"]],
                          reason="which port")  # fmt: skip
    await answer("dispute", action="list")
    await answer("dispute", action="rule", dispute=opened["id"], holds=rule["id"],
                 reason="the config says so", evidence="setup.cfg")  # fmt: skip
    await answer("doctor", dir=str(project))
    await answer("check", dir=str(project))
    await answer("orient", notebook="web", budget=800)
    await answer("guard", command="git push --force origin main", notebook="web")
    await answer("forget", id=filed["id"], version=1, because="a test", dry_run=True)
    await answer("forget", id=filed["id"], because="a test")
    return answers


def test_a_key_the_types_lack_fails() -> None:
    answer = {"hits": [{"id": "m_1", "matched": "words", "ranked_by": "luck"}], "rules": []}
    with pytest.raises(jsonschema.ValidationError, match="ranked_by"):
        jsonschema.validate(answer, typed("recall"))


def test_mypy_refuses_an_answer_key_that_is_not_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """How the service is held to its types: an answer built with a key its type lacks, or
    a value of the wrong type, fails the type check (as `./scripts/test` runs it on the source)."""
    snippet = tmp_path / "answer.py"
    snippet.write_text(
        "from palimpsest.service.answers import Recalled\n"
        "ok: Recalled = {'hits': [], 'rules': [], 'as_of': None}\n"
        "extra: Recalled = {'hits': [], 'rules': [], 'as_of': None, 'ranked_by': 'luck'}\n"
        "wrong: Recalled = {'hits': [], 'rules': [], 'as_of': None, 'left_out': 3}\n"
        "ok['note'] = 'nothing answers'\n"
        "ok['mood'] = 'sure'\n"
    )
    monkeypatch.setenv("MYPYPATH", str(Path(__file__).resolve().parents[2] / "src"))
    out, _, status = mypy.api.run([
        "--strict", "--config-file", "", "--cache-dir", str(tmp_path / "cache"),
        "--python-version", "3.11", "--follow-imports", "silent", str(snippet),
    ])  # fmt: skip
    assert status == 1, out
    flagged = {int(line.split(":")[1]) for line in out.splitlines() if ": error:" in line}
    assert flagged == {3, 4, 6}, out
