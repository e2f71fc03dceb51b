"""What the MCP tests share: reading a tool's answer, and checking every schema."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool

from palimpsest.mcp import TOOL_NAMES

ERROR_CLASSES = {"not_found", "conflict", "forbidden", "validation", "retryable", "internal"}

# doctor may finish a scrub a forget left pending, so it is not read-only.
READ_ONLY = {"recall", "inspect", "history", "check", "orient"}
NO_PARAMETERS: set[str] = set()  # doctor took none until it read a project (`dir`)


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured answer of a call that must have succeeded."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    text = result.content[0]
    assert isinstance(text, TextContent)
    assert json.loads(text.text) == result.structured_content
    return result.structured_content


def refused(result: CallToolResult) -> dict[str, Any]:
    """The JSON error body of a call that must have been refused."""
    assert result.is_error, result.structured_content
    assert len(result.content) == 1
    text = result.content[0]
    assert isinstance(text, TextContent)
    body = json.loads(text.text)
    assert isinstance(body, dict)
    assert body["error_class"] in ERROR_CLASSES
    assert isinstance(body["message"], str) and body["message"]
    assert "Error executing tool" not in body["message"]
    return body


def tool_list_size(result: ListToolsResult) -> int:
    """Characters of JSON an agent reads in `tools/list`, as the official client receives it."""
    return len(json.dumps(result.model_dump(by_alias=True, exclude_none=True)))


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    return ok(await client.call_tool(tool, arguments))


async def refuse(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    return refused(await client.call_tool(tool, arguments))


# Described once for all tools, in the server instructions.
DESCRIBED_IN_INSTRUCTIONS = {"idempotency_key", "dry_run", "expected_version"}


def described_elsewhere(tools: list[Tool], tool: Tool) -> set[str]:
    """The parameters of `tool` its schema may leave undescribed: those the instructions
    explain, and on revise the fields of remember, which remember's schema describes (and
    revise's description says so)."""
    if tool.name != "revise":
        return DESCRIBED_IN_INSTRUCTIONS
    (remember,) = [t for t in tools if t.name == "remember"]
    return DESCRIBED_IN_INSTRUCTIONS | set(remember.input_schema["properties"])


def check_tool_schemas(tools: list[Tool]) -> None:
    """Every tool listed, every parameter described, annotations and output schema present."""
    assert sorted(t.name for t in tools) == sorted(TOOL_NAMES)
    for tool in tools:
        assert tool.description and len(tool.description) > 200, tool.name
        assert tool.title, tool.name
        schema = tool.input_schema
        assert schema["type"] == "object"
        assert schema.get("additionalProperties") is False, tool.name
        assert bool(schema["properties"]) is (tool.name not in NO_PARAMETERS), tool.name
        elsewhere = described_elsewhere(tools, tool)
        for name, prop in schema["properties"].items():
            if name not in elsewhere:
                assert prop.get("description"), f"{tool.name}.{name} has no description"
        for definition in schema.get("$defs", {}).values():
            for name, prop in definition.get("properties", {}).items():
                assert prop.get("description"), f"{tool.name}: {name} has no description"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        hints = tool.annotations
        assert hints is not None
        assert hints.read_only_hint is (tool.name in READ_ONLY), tool.name
        if not hints.read_only_hint:  # the spec gives these meaning for writes only
            assert hints.destructive_hint is (tool.name == "forget"), tool.name
            assert hints.idempotent_hint is (tool.name != "revise"), tool.name
        assert hints.open_world_hint is False


def versions_whole(inspected: dict[str, Any]) -> dict[int, dict[str, Any] | None]:
    """Each version's content rebuilt from inspect's `versions` (each lists what changed
    since the last readable version before it, and what it `cleared`), its empty fields
    absent; None for a scrubbed one."""
    whole: dict[int, dict[str, Any] | None] = {}
    content: dict[str, Any] = {}
    for version in inspected["versions"]:
        if version.get("scrubbed"):
            whole[version["version"]] = None
            continue
        content = {**content, **version.get("changed", {})}
        content = {k: v for k, v in content.items() if k not in version.get("cleared", [])}
        whole[version["version"]] = content
    return whole
