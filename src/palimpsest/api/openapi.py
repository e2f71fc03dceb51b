"""The OpenAPI 3.1 document of the HTTP API, built from what the MCP server registered and
the service's answer types: nothing in it is written twice.

- One operation per tool: `POST /api/v1/<tool>`, described by the tool's description; and
  one per operation of the web page that is no tool (operations.py), built the same way.
- Its request body: the tool's input schema, as MCP clients get it in `tools/list`.
- Its answer (200): the whole JSON Schema of the service's answer type (service/answers.py,
  findings.py), nested shapes and descriptions included. The MCP tool list must fit
  30,000 characters and so lists only each key's type; this document has no such budget.
  No key is marked required: an answer comes as MCP clients get it, with its empty values
  (None, "", [], {}) left out at every depth.
- Its refusals: the `Refusal` body (domain/errors.py) under the status of its
  `error_class`; 401 in the form of RFC 6750 (a bearer challenge), as /mcp gives it.
"""

from __future__ import annotations

import json
import typing
from typing import Any

import pydantic
from mcp.types import Tool

from ..domain.errors import Refusal
from ..mcp.refusals import API_PREFIX
from ..mcp.tools import PalimpsestTools
from ..service.answers import INTERNAL_KEYS
from .operations import PageOperations
from .status import STATUS

PREFIX = f"{API_PREFIX}v1/"  # the version in the path: a v2 may stand beside it
DOCUMENT = f"{PREFIX}openapi.json"
REFS = "#/components/schemas/"

DESCRIPTION = """\
Palimpsest's memory over HTTP: one operation per MCP tool, with the same arguments, \
roles, answers and refusals, and the web page's operations that are no MCP tool (sessions \
served, duplicates and merge, a notebook's overview, rules and activity, changes with a \
reason), run the same way. Send each operation a JSON object of its arguments \
(`{}` for none) with `Authorization: Bearer <key>`; while the store has no key, a server \
on loopback acts for its local owner without one. An answer leaves out its empty values \
(as MCP structured content does). A refusal is `{"error_class", "message", "field"?, \
"item"?}` under the HTTP status of its error class; 429 carries `Retry-After`."""

# Statuses any operation may answer besides 200 and what its error classes give.
_ALWAYS = {
    "405": "Another method than the operation's (`Allow` names it).",
    "408": "The body did not arrive within the server's time for it.",
    "413": "The body is larger than the server reads.",
    "415": "The body was not sent as `Content-Type: application/json`.",
    "421": "On loopback: the Host header names no address of this machine (DNS rebinding).",
    "429": "This key is past its calls a minute or its requests under way: wait "
    "`Retry-After` seconds.",
    "500": "The server failed unexpectedly; nothing of the call is known to be written.",
}
_CLASS_SAYS = {
    "validation": "The arguments, or the body, are refused: the message says what to change, "
    "`field` names the argument.",
    "forbidden": "The key's role or ownership does not allow it; or, on loopback, another "
    "site's page sent the request (`Origin`).",
    "not_found": "No such memory, notebook, session or operation in the key's workspace.",
    "conflict": "The memory changed since it was read (`expected_version`), or a key is taken.",
    "retryable": "The store is busy or unreachable: send the same request again.",
}


def document(tools: list[Tool], version: str) -> dict[str, Any]:
    """The document for `tools` (as the MCP server lists them)."""
    schemas: dict[str, Any] = {}
    _add(schemas, {"Refusal": pydantic.TypeAdapter(Refusal).json_schema()})
    schemas["Unauthenticated"] = _UNAUTHENTICATED
    paths = {f"{PREFIX}{tool.name}": {"post": _operation(tool, schemas)} for tool in tools}
    paths[DOCUMENT] = {"get": _document_operation()}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Palimpsest HTTP API", "version": version, "description": DESCRIPTION},
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": dict(sorted(schemas.items())),
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A key from `palimpsest key create`.",
                }
            },
        },
    }


def answer_type(operation: str) -> Any:
    """The service's answer type an operation declares it returns (what MCP derives its
    output schema from too): a tool's, or one of the page's own (operations.py)."""
    declared = getattr(PalimpsestTools, operation, None) or getattr(PageOperations, operation)
    return typing.get_type_hints(declared)["return"]


def _operation(tool: Tool, schemas: dict[str, Any]) -> dict[str, Any]:
    answer = _schema_of(answer_type(tool.name), schemas)
    responses: dict[str, Any] = {
        "200": {"description": "The answer.", "content": _json(answer)},
        "401": _unauthenticated(),
    }
    for error_class, says in _CLASS_SAYS.items():
        status = str(STATUS[error_class])
        responses[status] = _refused(says)
    for status, says in _ALWAYS.items():
        responses[status] = _refused(says)
    return {
        "operationId": tool.name,
        "summary": tool.title or tool.name,
        "description": tool.description or "",
        "requestBody": {"required": True, "content": _json(_hoisted(tool.input_schema, schemas))},
        "responses": dict(sorted(responses.items())),
    }


def _document_operation() -> dict[str, Any]:
    return {
        "operationId": "openapi",
        "summary": "This document",
        "responses": {
            "200": {"description": "The OpenAPI document.", "content": _json({"type": "object"})},
            "401": _unauthenticated(),
            "429": _refused(_ALWAYS["429"]),
        },
    }


def _schema_of(answer: Any, schemas: dict[str, Any]) -> dict[str, Any]:
    """`answer`'s JSON Schema, its named parts among `schemas`, as answers come (see the
    module's docstring)."""
    full = pydantic.TypeAdapter(answer).json_schema(ref_template=REFS + "{model}")
    named = full.pop("$defs", {})
    _add(schemas, {name: _as_sent(part) for name, part in named.items()})
    sent: dict[str, Any] = _as_sent(full)
    return sent


def _as_sent(node: Any) -> Any:
    """A schema without `required` (empty values are left out) and without the keys the
    service keeps for itself (INTERNAL_KEYS, dropped before an answer leaves it)."""
    if isinstance(node, list):
        return [_as_sent(item) for item in node]
    if not isinstance(node, dict):
        return node
    sent: dict[str, Any] = {}
    for key, value in node.items():
        if key == "required":
            continue
        if key == "properties":  # names, not keywords, at this level
            sent[key] = {n: _as_sent(v) for n, v in value.items() if n not in INTERNAL_KEYS}
        else:
            sent[key] = _as_sent(value)
    return sent


def _hoisted(schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """An input schema whose own definitions (`$defs`) move among the document's: in an
    OpenAPI document `#/$defs/...` would be read from the document's root."""
    if "$defs" not in schema:
        return schema
    moved = json.loads(json.dumps(schema).replace('"#/$defs/', f'"{REFS}'))
    _add(schemas, moved.pop("$defs"))
    return dict(moved)


def _add(schemas: dict[str, Any], named: dict[str, Any]) -> None:
    for name, schema in named.items():
        if schemas.setdefault(name, schema) != schema:  # the tests build every tool's
            raise RuntimeError(f"two different schemas are named {name!r}: rename one type")


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _refused(says: str) -> dict[str, Any]:
    return {"description": says, "content": _json({"$ref": f"{REFS}Refusal"})}


def _unauthenticated() -> dict[str, Any]:
    return {
        "description": "No key, or a key unknown, revoked or expired (RFC 6750's challenge "
        "in `WWW-Authenticate`). The body was not read.",
        "content": _json({"$ref": f"{REFS}Unauthenticated"}),
    }


# What the SDK answers without a valid key (mcp/refusals.unauthorized): not ours to type.
_UNAUTHENTICATED = {
    "type": "object",
    "properties": {
        "error": {"type": "string", "const": "invalid_token"},
        "error_description": {"type": "string"},
    },
    "required": ["error", "error_description"],
}
