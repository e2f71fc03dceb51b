"""What a request brings: a small form, read under bounds, and the search's filters as
recall's arguments; and `Refused`, a request answered with a status and an error body."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

import anyio
from starlette.requests import Request

FORM_BYTES = 16 * 1024  # a sign-in holds a key: far less; read before anyone is known
# A signed-in person's form may hold a memory's text (8,000 characters), why (2,000), the
# reason (2,000) and the rest: in any script, up to 12 bytes a character once encoded.
SIGNED_FORM_BYTES = 192 * 1024
FORM_SECONDS = 30.0  # to send a form's body, once its head is in


class Refused(Exception):
    """A request answered with `status` and the service's kind of error body."""

    def __init__(
        self, status: int, error_class: str, message: str, headers: dict[str, str] | None = None
    ):
        super().__init__(message)
        self.status = status
        self.body = {"error_class": error_class, "message": message}
        self.headers = headers or {}


SEARCH_FIELDS = ("q", "notebook", "kind", "tags", "status", "as_of")


def recall_arguments(given: dict[str, str]) -> dict[str, Any]:
    arguments: dict[str, Any] = {"query": given.get("q", ""), "limit": 20}
    for name in ("notebook", "kind", "status", "as_of"):
        if given.get(name):
            arguments[name] = given[name]
    tags = [t.strip() for t in given.get("tags", "").split(",") if t.strip()]
    if tags:
        arguments["tags"] = tags
    if given.get("status") and given["status"] != "active":
        arguments["include_retired"] = True  # a retired status asked for is shown
    return arguments


async def read_form(request: Request, limit: int = FORM_BYTES) -> dict[str, str]:
    """A small urlencoded form, its size bounded (`limit`) before and while it is read."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        raise Refused(
            400, "validation", "Send this page's form as it is (application/x-www-form-urlencoded)."
        )
    declared = request.headers.get("content-length", "0")
    if declared.isdigit() and int(declared) > limit:
        raise Refused(413, "validation", f"A form here holds at most {limit} bytes.")
    body = bytearray()
    try:
        with anyio.fail_after(FORM_SECONDS):
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    raise Refused(413, "validation", f"A form here holds at most {limit} bytes.")
    except TimeoutError:
        raise Refused(
            408, "validation", f"The form must arrive within {FORM_SECONDS:.0f} seconds."
        ) from None
    try:
        fields = parse_qs(
            body.decode("utf-8"), keep_blank_values=True, max_num_fields=20, strict_parsing=False
        )
    except (UnicodeDecodeError, ValueError):
        raise Refused(
            400, "validation", "The form is not readable: send it from the page."
        ) from None
    return {name: values[0] for name, values in fields.items()}
