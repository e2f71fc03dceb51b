"""What an agent reads of an answer: the service's dict, without what is empty, as compact
JSON.

Every character of an answer is paid for in the agent's context. A key whose value is
None, an empty string, list or object says nothing, so it is left out (at any depth);
false and 0 say something and stay. The text block most clients hand the model is the same
object as the structured content (the MCP spec asks for both), written without spaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult, TextContent

from ..domain.views import compact, lean


def answered(answer: Mapping[str, Any], *, whole: bool = False) -> CallToolResult:
    """The tool result of a service answer: lean structured content, and the same as text;
    `whole` keeps its empty values (a sync answer's rows, where null is a value)."""
    body = dict(answer) if whole else lean(answer)
    return CallToolResult(
        content=[TextContent(type="text", text=compact(body))], structured_content=body
    )
