"""The HTTP API as an ASGI app: `POST /api/v1/<tool>` runs the MCP server's own tool, and
`POST /api/v1/<operation>` one of the page's operations that are no tool (operations.py)
the same way; `GET /api/v1/openapi.json` describes them all (openapi.py).

It is served by `serve --http` behind the same steps as /mcp (mcp/transport.py): the key
is checked from the request's head before any of its body is read (keys.KeyFirst), and
held to its share of requests under way (shares.KeyShares); a store without keys lets
keyless requests act as its local owner, on loopback only (`serve --http` listens further
only once keys exist). Then, in this order, so that nothing is read or run in vain:

1. the key's holder is set as the SDK sets it for /mcp (its own auth middleware), so the
   tools act as that holder, in its workspace (mcp/keys.request_principal);
2. the path names an operation (else 404) and the method is its own (else 405: no method
   override header is read);
3. the SDK's own Host, Origin and Content-Type checks for its HTTP transport, with the
   settings it chose for /mcp (on loopback they keep other sites' pages out: a browser
   cannot send `application/json` elsewhere without asking first);
4. the body, within the transport's time and size (408, 413), read strictly (bodies.py);
5. the MCP server's `call_in_session`: the same bound on calls a minute, the same argument
   checking, service call and refusals as a `tools/call` on /mcp. The answer is the
   tool's structured content; a refusal its body, under the status of its error class.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.mcpserver.tools import ToolManager
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.types import CallToolResult
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..domain.errors import Forbidden, NotFound, PalimpsestError, ValidationError
from ..domain.views import compact
from ..mcp.arguments import short
from ..mcp.server import INTERNAL_MESSAGE, key_session
from ..mcp.transport import body_in_bounds
from . import operations
from .bodies import arguments_of
from .openapi import DOCUMENT, PREFIX, document
from .status import STATUS, TOO_MANY

if TYPE_CHECKING:
    from ..mcp.server import PalimpsestMCP


class HttpAPI:
    """The API of one MCP server (built by `build_server` with `http`)."""

    def __init__(self, server: PalimpsestMCP):
        assert server.verifier is not None, "an HTTP server is built with `http`"
        self._server = server
        self._operations: list[str] | None = None
        self._tool_names: set[str] = set()
        self._pages: ToolManager | None = None
        self._document: bytes | None = None
        # The SDK's steps for /mcp, in its order: who the key's holder is, kept for the
        # tools to read; a request without one goes no further (KeyFirst saw to that).
        holder = RequireAuthMiddleware(self._answer, [], None)
        self._app: ASGIApp = AuthenticationMiddleware(
            AuthContextMiddleware(holder), backend=BearerAuthBackend(server.verifier)
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self._response(scope, receive, send)
        if response is not None:  # else answered already (a body too slow or too large)
            await response(scope, receive, send)

    async def _response(self, scope: Scope, receive: Receive, send: Send) -> Response | None:
        path, method = scope["path"], scope["method"]
        operation = path.removeprefix(PREFIX)
        if path == DOCUMENT:
            allowed = "GET"
        elif path.startswith(PREFIX) and operation in await self.operations():
            allowed = "POST"
        else:
            return refused(NotFound(
                f"There is no operation at {short(path.strip('/').replace('/', '.'))}; the "
                f"operations are POST {PREFIX}<tool> for each MCP tool and the web page's own "
                f"operations, listed with their arguments in the OpenAPI document, GET {DOCUMENT}."
            ))  # fmt: skip
        if method != allowed:
            wrong = ValidationError(f"{path} answers {allowed} only.")
            return refused(wrong, status=405, headers={"allow": allowed})
        unsafe = await self._unsafe(scope, is_post=allowed == "POST")
        if unsafe is not None:
            return unsafe
        if allowed == "GET":
            return Response(await self.document(), media_type="application/json",
                            headers=dict(KEPT_FROM_CACHES))  # fmt: skip
        body = await body_in_bounds(scope, receive, send)
        if body is None:
            return None
        try:
            arguments = arguments_of(body)
        except ValidationError as exc:
            return refused(exc)
        among = None if operation in self._tool_names else self._page_operations()
        result = await self._server.call_in_session(
            operation, arguments, key_session(), among=among
        )
        return answered(result)

    async def operations(self) -> list[str]:
        """The operations: the MCP server's tools, as it lists them, then the page's own
        (operations.py)."""
        if self._operations is None:
            self._tool_names = {tool.name for tool in await self._server.list_tools()}
            self._operations = [*self._tool_names, *operations.NAMES]
        return self._operations

    def _page_operations(self) -> ToolManager:
        """Made on the first call or document that needs them: a server that only serves
        MCP never pays for their argument models."""
        if self._pages is None:
            assert self._server.tools is not None, "the tools are made first (operations)"
            self._pages = operations.page_operations(self._server.tools)
        return self._pages

    async def document(self) -> bytes:
        """The OpenAPI document, built once (the operations do not change while serving)."""
        if self._document is None:
            tools = await self._server.list_tools()
            tools += operations.listed(self._page_operations())
            built = document(tools, self._server.version or "0")
            self._document = json.dumps(built, ensure_ascii=False).encode()
        return self._document

    async def _unsafe(self, scope: Scope, *, is_post: bool) -> Response | None:
        """The SDK's Host, Origin and Content-Type checks, said as our refusals."""
        checks = TransportSecurityMiddleware(self._server.transport_security())
        failed = await checks.validate_request(Request(scope), is_post=is_post)
        if failed is None:
            return None
        if failed.status_code == 400:  # the SDK's only 400 here: not application/json
            wrong = ValidationError("Send the body as JSON, with Content-Type: application/json.")
            return refused(wrong, status=415)
        if failed.status_code == 403:
            return refused(Forbidden("Requests from another site's page are refused here."))
        return refused(
            ValidationError(
                "The Host header names no address this server answers at; on this machine "
                "use 127.0.0.1 or localhost."
            ),
            status=failed.status_code,
        )


def answered(result: Any) -> Response:
    """A tool's result as HTTP: its structured content, or its refusal under the status of
    the refusal's error class (429 and `Retry-After` for a key past its calls a minute)."""
    if not isinstance(result, CallToolResult):  # no tool of ours asks the client for input
        return _json(500, {"error_class": "internal", "message": INTERNAL_MESSAGE})
    if not result.is_error:
        return _json(200, result.structured_content or {})
    # Every refusal of server.call_tool is one text block: the JSON of its body.
    body = json.loads(getattr(result.content[0], "text", "{}"))
    if "retry_after" in body:
        wait = {"retry-after": str(math.ceil(body["retry_after"]))}
        return _json(TOO_MANY, body, wait)
    return _json(STATUS.get(body.get("error_class"), 500), body)


def refused(
    error: PalimpsestError, *, status: int | None = None, headers: dict[str, str] | None = None
) -> Response:
    return _json(status or STATUS[error.error_class], error.to_dict(), headers)


# An answer holds what agents wrote, read with someone's key: no cache keeps it, and no
# browser reads it as anything but JSON (as the web page's answers, web/guard.py).
KEPT_FROM_CACHES = {"cache-control": "no-store", "x-content-type-options": "nosniff"}


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    return Response(compact(body), status_code=status, media_type="application/json",
                    headers=KEPT_FROM_CACHES | (headers or {}))  # fmt: skip
