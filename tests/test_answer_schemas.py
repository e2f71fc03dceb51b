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

from palimpsest.mcp.schema import lean_answer
from palimpsest.mcp.tools import PalimpsestTools

from .mcp_helpers import call

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


async def test_real_answers_validate_against_their_schemas(client: Client) -> None:
    listed = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
    first = await call(client, "remember", notebook="web", kind="fact", text="Port 8080",
                       tags=["infra"], dry_run=True)  # fmt: skip
    filed = await call(client, "remember", notebook="web", kind="fact", text="Port 8080")
    rule = await call(client, "remember", notebook="web", kind="rule", text="Never push on red",
                      falsifier="a red push that was fine")  # fmt: skip
    batch = await call(client, "remember", items=[{"kind": "fact", "text": "Port 9090"},
                                                  {"kind": "fact", "text": "Port 8080"}],
                       notebook="web")  # fmt: skip
    answers: list[tuple[str, dict[str, Any]]] = [
        ("remember", first),
        ("remember", filed),
        ("remember", rule),
        ("remember", batch),
        ("recall", await call(client, "recall", query="port")),
        ("revise", await call(client, "revise", id=filed["id"], text="Port 8081", dry_run=True)),
        ("revise", await call(client, "revise", id=filed["id"], text="Port 8081")),
        ("revise", await call(client, "revise", ids=[filed["id"], "m_nothing"], status="verified")),
        ("inspect", await call(client, "inspect", id=filed["id"])),
        ("inspect", await call(client, "inspect", notebook="web")),
        ("history", await call(client, "history", id=filed["id"])),
        ("history", await call(client, "history", id=filed["id"], diff_from=1, diff_to=2)),
        ("revert", await call(client, "revert", id=filed["id"], version=1)),
        (
            "link",
            await call(client, "link", source=filed["id"], target=rule["id"], type="relates_to"),
        ),
        ("notebook", await call(client, "notebook", action="list")),
        ("dispute", await call(client, "dispute", action="list")),
        ("doctor", await call(client, "doctor")),
        ("orient", await call(client, "orient", notebook="web")),
        ("guard", await call(client, "guard", command="git push", notebook="web")),
        ("forget", await call(client, "forget", id=filed["id"], because="a test")),
    ]
    for tool, answer in answers:
        schema = listed[tool]
        assert schema is not None, tool
        jsonschema.validate(answer, schema)  # what the client checks, as published
        jsonschema.validate(answer, typed(tool))  # every key typed, at every depth


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
    monkeypatch.setenv("MYPYPATH", str(Path(__file__).resolve().parents[1] / "src"))
    out, _, status = mypy.api.run([
        "--strict", "--config-file", "", "--cache-dir", str(tmp_path / "cache"),
        "--python-version", "3.11", "--follow-imports", "silent", str(snippet),
    ])  # fmt: skip
    assert status == 1, out
    flagged = {int(line.split(":")[1]) for line in out.splitlines() if ": error:" in line}
    assert flagged == {3, 4, 6}, out
