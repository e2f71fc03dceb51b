"""A NUL character in any string argument of any tool: refused as `validation`, on both stores.

PostgreSQL cannot hold a NUL in a text value, so a NUL that reached its driver failed as
`internal` while SQLite answered cleanly. The service refuses it first, naming the field,
so both stores answer the same. The cases are checked against the published schemas: a
new string parameter without a case here fails the test.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.types import Tool

from palimpsest.service import Service

from ..mcp_helpers import call, refused

pytestmark = pytest.mark.anyio

NUL = "a\x00b"
REMEMBER_STRINGS = (
    "notebook kind text title why key occurred_at expires_at source severity falsifier scope "
    "because idempotency_key"
).split()
RECALL_STRINGS = "query notebook domain kind status since until as_of".split()
REVISE_STRINGS = (
    "kind text title why key occurred_at expires_at source append remove move_to status"
).split()


def string_parameters(tool: Tool) -> set[str]:
    """The parameters that take a string somewhere: plain, in a list, or in an object."""
    found = set()
    for name, schema in tool.input_schema["properties"].items():
        options = schema.get("anyOf", [schema])
        if any(
            o.get("type") in ("string", "array", "object") or "enum" in o or "$ref" in o
            for o in options
        ):
            found.add(name)
    return found


def nul_cases(memory: str, rule: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Per tool and parameter: a call that is valid but for a NUL in that parameter."""
    note = {"why": "a reason"}
    created = {"action": "create", "name": "fresh"}
    merge = {"action": "merge_domains", "from_domain": "web", "to_domain": "ops",
             "because": "one team"}  # fmt: skip
    ruling = {"action": "rule", "dispute": "dp_x", "holds": memory, "reason": "r"}
    remember = {"notebook": "n", "kind": "rule", "text": "Never deploy on Fridays",
                "falsifier": "a Friday deploy that went well"}  # fmt: skip
    return {
        "remember": {
            **{name: {**remember, name: NUL} for name in REMEMBER_STRINGS},
            "tags": {**remember, "tags": [NUL]},
            "anchors": {**remember, "anchors": [NUL]},
            "supersedes": {**remember, "supersedes": [memory + "\x00"]},
            "check": {**remember, "check": {"kind": "contains", "path": NUL, "literal": "x"}},
            "bindings": {**remember, "bindings": {"targets": [NUL]}},
            "accept_refusing": {**remember, "accept_refusing": [NUL], "because": "b"},
            "items": {"notebook": "n", "items": [{"kind": "fact", "text": NUL}]},
        },
        "recall": {
            **{name: {name: NUL} for name in RECALL_STRINGS},
            "tags": {"tags": [NUL]},
        },
        "revise": {
            **{name: {"id": memory, name: NUL} for name in REVISE_STRINGS},
            **{name: {"id": rule, name: NUL} for name in ("severity", "falsifier", "scope")},
            "id": {"id": memory + "\x00", **note},
            "ids": {"ids": [memory + "\x00"], **note},
            "texts": {"texts": [NUL], "notebook": "n", **note},
            "notebook": {"texts": ["Kept"], "notebook": NUL, **note},
            "items": {"items": [{"id": memory + "\x00", **note}]},
            "tags": {"id": memory, "tags": [NUL]},
            "anchors": {"id": memory, "anchors": [NUL]},
            "check": {"id": memory, "check": {"kind": "contains", "path": "a", "literal": NUL}},
            "bindings": {"id": rule, "bindings": {"targets": [NUL]}},
            "clear": {"id": memory, "clear": [NUL]},
            "replace_from": {"id": memory, "replace_from": NUL, "replace_to": "x"},
            "replace_to": {"id": memory, "replace_from": "Kept", "replace_to": NUL},
            "note": {"id": memory, "status": "verified", "note": NUL},
            "feedback": {"id": memory, "feedback": NUL},
            "because": {"id": memory, "because": NUL, **note},
            "override_reason": {"id": memory, "override_reason": NUL, **note},
            "idempotency_key": {"id": memory, "idempotency_key": NUL, **note},
            "accept_refusing": {"id": rule, "accept_refusing": [NUL], "because": "b"},
            "superseded_by": {"id": memory, "status": "superseded", "superseded_by": NUL},
        },
        "revert": {
            "id": {"id": memory + "\x00", "version": 1},
            "notebook": {"notebook": NUL, "as_of": "2026-01-01"},
            "as_of": {"notebook": "n", "as_of": NUL},
            "because": {"id": memory, "version": 1, "because": NUL},
            "note": {"id": memory, "version": 1, "note": NUL},
            "idempotency_key": {"id": memory, "version": 1, "idempotency_key": NUL},
        },
        "forget": {
            "id": {"id": memory + "\x00", "because": "a reason"},
            "ids": {"ids": [memory + "\x00"], "because": "a reason"},
            "because": {"id": memory, "because": NUL},
            "idempotency_key": {"id": memory, "because": "a reason", "idempotency_key": NUL},
            "notebook": {"notebook": NUL, "field": "summary", "because": "a reason"},
            "field": {"notebook": "n", "field": NUL, "because": "a reason"},
        },
        "inspect": {"id": {"id": memory + "\x00"}, "notebook": {"notebook": NUL}},
        "history": {
            name: {name: NUL if name != "id" else memory + "\x00"}
            for name in ("id", "notebook", "actor", "since", "until")
        },
        "notebook": {
            "action": {"action": NUL},
            "name": {"action": "create", "name": NUL},
            "notebook": {"action": "edit", "notebook": NUL, "summary": "s"},
            "summary": {**created, "summary": NUL},
            "domain": {**created, "domain": NUL},
            "tags": {**created, "tags": [NUL]},
            "clear": {"action": "edit", "notebook": "n", "clear": [NUL]},
            "from_domain": {**merge, "from_domain": NUL},
            "to_domain": {**merge, "to_domain": NUL},
            "because": {**merge, "because": NUL},
            "idempotency_key": {**created, "idempotency_key": NUL},
        },
        "link": {
            "source": {"source": memory + "\x00", "target": rule, "type": "relates_to"},
            "target": {"source": memory, "target": rule + "\x00", "type": "relates_to"},
            "type": {"source": memory, "target": rule, "type": NUL},
            "idempotency_key": {
                "source": memory,
                "target": rule,
                "type": "relates_to",
                "idempotency_key": NUL,
            },
        },
        "dispute": {
            "action": {"action": NUL},
            "ids": {"action": "open", "ids": [memory, rule + "\x00"], "reason": "r"},
            "reason": {"action": "open", "ids": [memory, rule], "reason": NUL},
            "dispute": {"action": "undo", "dispute": NUL, "reason": "r"},
            "holds": {"action": "rule", "dispute": "dp_x", "holds": NUL, "reason": "r"},
            "evidence": {**ruling, "evidence": NUL},
            "because": {**ruling, "because": NUL},
            "idempotency_key": {
                "action": "open",
                "ids": [memory, rule],
                "reason": "r",
                "idempotency_key": NUL,
            },
        },
        "doctor": {"dir": {"dir": NUL}},
        "check": {"dir": {"dir": NUL}},
        "orient": {"notebook": {"notebook": NUL}, "dir": {"dir": NUL}},
        "guard": {
            "command": {"command": NUL},
            "dir": {"command": "ls", "dir": NUL},
            "notebook": {"command": "ls", "notebook": NUL},
        },
    }


def names_the_field(body: dict[str, Any], parameter: str) -> bool:
    field = str(body.get("field", ""))
    if parameter == "items":  # a batch names the item, and the field within it
        return body.get("item") == 0 and field in ("id", "text")  # revise's items, remember's
    return field == parameter or field.startswith(f"{parameter}.")


async def refusal_is_right(
    client: Client, tool: str, parameter: str, arguments: dict[str, Any], bad: str
) -> tuple[bool, dict[str, Any]]:
    """Whether a call with a bad string in `parameter` is refused as `validation` naming that
    field, without the bad string in the message; and the answer's body."""
    result = await client.call_tool(tool, arguments)
    body = refused(result) if result.is_error else {"accepted": result.structured_content}
    right = body.get("error_class") == "validation" and names_the_field(body, parameter)
    return right and bad not in body.get("message", ""), body


async def test_a_nul_in_any_string_argument_is_refused_naming_the_field(
    client: Client, service: Service
) -> None:
    memory = (await call(client, "remember", notebook="n", kind="fact", text="Kept"))["id"]
    rule = (await call(client, "remember", notebook="n", kind="rule", text="Test before merging",
                       falsifier="a broken main after a tested merge"))["id"]  # fmt: skip
    await call(client, "notebook", action="edit", notebook="n", domain="web")
    before = service.history(limit=1000)["events"]
    cases = nul_cases(memory, rule)
    wrong = []
    for tool in (await client.list_tools()).tools:
        assert set(cases[tool.name]) == string_parameters(tool), tool.name
        for parameter, arguments in cases[tool.name].items():
            right, body = await refusal_is_right(client, tool.name, parameter, arguments, "\x00")
            if not right:
                wrong.append((tool.name, parameter, body))
    assert wrong == []
    assert service.history(limit=1000)["events"] == before
