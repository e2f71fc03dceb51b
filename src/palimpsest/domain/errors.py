"""Every refusal Palimpsest can give, one class per `error_class`.

    PalimpsestError            error_class   what the caller should do
    ├── NotFound               not_found     re-read: the id or name does not exist
    ├── Conflict               conflict      re-read and retry with the current version
    ├── Forbidden              forbidden     ask someone who may, or supersede instead
    ├── ValidationError        validation    change the request as the message says
    ├── Retryable              retryable     try the same request again later
    └── InternalError          internal      report it: a bug, never the caller's fault

Adapters (MCP, CLI, HTTP) render `to_dict()` and nothing else, so a client always sees the
same body: `{"error_class", "message"}` plus `field` or `item` when one is at fault.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Required

# typing_extensions' TypedDict: pydantic (which derives the HTTP API's schema) needs it on 3.11.
from typing_extensions import TypedDict


class Refusal(TypedDict, total=False):
    """The body of every refusal, as each adapter sends it (`to_dict`, and the adapters'
    own: arguments their schema refused, a key past its bound). The HTTP API's OpenAPI
    document derives its error schema from this."""

    error_class: Required[
        Literal["not_found", "conflict", "forbidden", "validation", "retryable", "internal"]
    ]
    message: Required[str]  # what to change, never repeating a refused value
    field: str  # the argument at fault
    item: int  # the batch item at fault
    retry_after: float  # seconds to wait: a key past its calls a minute (`retryable`)


class PalimpsestError(Exception):
    error_class: ClassVar[str] = "internal"

    def __init__(self, message: str, *, field: str | None = None, item: int | None = None):
        super().__init__(message)
        self.message = message
        self.field = field
        self.item = item

    def to_dict(self) -> dict[str, Any]:
        """This refusal as a `Refusal` body (a plain dict: adapters add to it)."""
        body: dict[str, Any] = {"error_class": self.error_class, "message": self.message}
        if self.field is not None:
            body["field"] = self.field
        if self.item is not None:
            body["item"] = self.item
        return body

    def at_item(self, index: int) -> PalimpsestError:
        """The same refusal, saying which batch item caused it."""
        self.item = index
        self.message = f"items[{index}]: {self.message}"
        return self


class NotFound(PalimpsestError):
    error_class = "not_found"


class Conflict(PalimpsestError):
    error_class = "conflict"


class Forbidden(PalimpsestError):
    error_class = "forbidden"


class ValidationError(PalimpsestError):
    error_class = "validation"


class Retryable(PalimpsestError):
    error_class = "retryable"

    def __init__(self, message: str, *, maybe_applied: bool = False, **where: Any):
        super().__init__(message, **where)
        # True when the failure came at commit: retrying blindly could apply it twice.
        self.maybe_applied = maybe_applied


class InternalError(PalimpsestError):
    error_class = "internal"
