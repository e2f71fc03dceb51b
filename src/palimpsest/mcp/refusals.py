"""How the HTTP server refuses a request before it reaches the MCP app, and what it logs.

A refusal is a JSON-RPC error without an id (the body, which holds the id, is not read),
its `data` the structured error every other refusal carries (`error_class`, `message`);
on the HTTP API's paths it is that structured error alone, as the API answers every error.
An authentication refusal has the shape the SDK's own has (an OAuth `invalid_token` and a
`WWW-Authenticate` header), which clients already know.

Nothing is logged per refused request: anyone can send those, and a line each would let
them fill the disk. `QuietRefusals` turns uvicorn's own warnings for such requests (an
upgrade it cannot serve, a request it cannot parse) into one line a minute at most, with
the count.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from typing import Any

import mcp_types as types
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

SUMMARY_SECONDS = 60.0
# Where the HTTP API answers (api/): its refusals are no JSON-RPC messages.
API_PREFIX = "/api/"


def refusal(
    status: int,
    message: str,
    *,
    error_class: str = "validation",
    headers: dict[str, str] | None = None,
    close: bool = False,
    **more: Any,
) -> Refusal:
    """The answer to a request refused for its head or its body. `close`: the connection is
    closed after it (its body, unread, may still be on the way)."""
    given = {**(headers or {}), **({"connection": "close"} if close else {})}
    return Refusal(status, message, error_class, given, more)


class Refusal:
    """A refusal in the form its path speaks: under API_PREFIX the HTTP API's error body,
    `{"error_class", "message", ...}` (what a tool's refusal says); anywhere else a
    JSON-RPC error without an id, that body its `data`."""

    def __init__(
        self, status: int, message: str, error_class: str, headers: dict[str, str], more: Any
    ):
        self.status = status
        self.message = message
        self.error_class = error_class
        self.headers = headers
        self.more = more

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if str(scope.get("path", "")).startswith(API_PREFIX):
            text = f"{self.message[:1].upper()}{self.message[1:]}."
            body = {"error_class": self.error_class, "message": text, **self.more}
            content = json.dumps(body, ensure_ascii=False)
        else:
            text = f"Invalid Request: {self.message}."
            detail = {"error_class": self.error_class, "message": text, **self.more}
            data = types.ErrorData(code=types.INVALID_REQUEST, message=text, data=detail)
            error = types.JSONRPCError(jsonrpc="2.0", id=None, error=data)
            content = error.model_dump_json(by_alias=True, exclude_unset=True)
        response = Response(content, status_code=self.status, media_type="application/json",
                            headers=self.headers)  # fmt: skip
        await response(scope, receive, send)


def unauthorized(description: str) -> Response:
    """401 as the SDK gives it, and the connection closed: its body is never read."""
    body = {"error": "invalid_token", "error_description": description}
    challenge = f'Bearer error="invalid_token", error_description="{description}"'
    headers = {"www-authenticate": challenge, "connection": "close"}
    return Response(json.dumps(body), status_code=401, media_type="application/json",
                    headers=headers)  # fmt: skip


class QuietRefusals(logging.Filter):
    """Lets through at most one of these warnings each SUMMARY_SECONDS, with a count."""

    QUIETED = (
        "Unsupported upgrade request",
        "No supported WebSocket library detected",
        "Invalid HTTP request received",
    )

    def __init__(self, clock: Any = time.monotonic):
        super().__init__()
        self._clock = clock
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._last = -SUMMARY_SECONDS

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        quieted = next((q for q in self.QUIETED if text.startswith(q)), None)
        if quieted is None:
            return True
        with self._lock:
            self._counts[quieted] += 1
            now = self._clock()
            if now - self._last < SUMMARY_SECONDS:
                return False
            counts, self._counts, self._last = dict(self._counts), Counter(), now
        summary = "; ".join(f"{what} ({n})" for what, n in counts.items())
        record.msg, record.args = f"Refused requests in the last minute at most: {summary}", ()
        return True
