"""The HTTP API (issue 32): each MCP tool as `POST /api/v1/<tool>`, for scripts, and each
operation of the web page that is no tool (operations.py), with its OpenAPI document at
`/api/v1/openapi.json` (docs/http-api.md). An adapter over the MCP server's own tools, and
operations built and run as they are, so the arguments, roles, answers and refusals are
theirs."""

from .app import HttpAPI
from .openapi import DOCUMENT, PREFIX

__all__ = ["DOCUMENT", "PREFIX", "HttpAPI"]
