"""The HTTP API (issue 32): each MCP tool as `POST /api/v1/<tool>`, for scripts, with its
OpenAPI document at `/api/v1/openapi.json` (docs/http-api.md). An adapter over the MCP
server's own tools, so the arguments, roles, answers and refusals are theirs."""

from .app import HttpAPI
from .openapi import DOCUMENT, PREFIX

__all__ = ["DOCUMENT", "PREFIX", "HttpAPI"]
