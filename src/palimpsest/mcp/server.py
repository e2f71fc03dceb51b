"""Palimpsest as an MCP server: the tools of `tools` (and the prompts of `prompts`) over
stdio or streamable HTTP.

Built on the official SDK's `MCPServer`. What is ours:

- Errors. The SDK answers any failure as "Error executing tool X", with its own text. Every
  refusal here reaches the client instead as a tool result with `isError` and the JSON
  body of `PalimpsestError.to_dict()`: service refusals as they are, argument validation
  as `validation` naming the field, anything unexpected as `internal` with a message that
  leaks nothing (the traceback goes to the server's log). That mapping happens in one
  place, `PalimpsestMCP.call_tool`.
- Strict arguments: unknown or oversized arguments are refused, strings stay strings, and
  the published schemas are lean (`schema`).

The service is synchronous (SQLite): each call runs on one of a fixed set of store threads
(`tools` says why not on the SDK's own worker threads). The transports are the SDK's,
with unreadable stdio lines answered (`stdio`) and HTTP connections bounded (`transport`,
loaded only for HTTP: a stdio server's start has no use for uvicorn's pieces).

Over stdio the server answers `initialize` before it has a service (`serve`): importing
this module loads nothing of the service, the store or the tools' models, which the
functions that make the tools import when they run (tests/agents/test_serve_startup.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import anyio
import pydantic
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool, ToolManager
from mcp.types import (
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    TextContent,
    ToolAnnotations,
)
from mcp.types import Prompt as MCPPrompt
from mcp.types import Tool as MCPTool

from ..config import DEFAULT_LIMITS
from ..domain.errors import PalimpsestError
from .bounds import CallBounds
from .descriptions import DESCRIPTIONS, INSTRUCTIONS, TOOL_NAMES
from .stdio import serve_stdio

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

    from ..service import Service
    from .keys import KeyVerifier
    from .tools import PalimpsestTools

HOST = "127.0.0.1"
PATH = "/mcp"
MCP_SESSION_ID = "mcp-session-id"  # the header naming an HTTP client's MCP session
DEFAULT_PORT = 8765

logger = logging.getLogger("palimpsest.mcp")

INTERNAL_MESSAGE = (
    "The server failed unexpectedly (a bug, or a broken database file). Nothing of this "
    "call is known to have been written unless a read shows it; the server logged the "
    "details and keeps serving. Retry once; if it fails again, report it."
)


def _hints(*, read_only: bool, destructive: bool, idempotent: bool, title: str) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


# Destructive means "loses information for good": only forget does. Retiring, reverting,
# moving and unlinking are recorded as events and can be undone. Idempotent means "the same
# call again changes nothing more": true where a repeat answers duplicate, unchanged or a
# refusal; false for revise, whose `append` would append twice.
ANNOTATIONS = {
    "remember": _hints(read_only=False, destructive=False, idempotent=True, title="Remember"),
    "recall": _hints(read_only=True, destructive=False, idempotent=True, title="Recall"),
    "revise": _hints(read_only=False, destructive=False, idempotent=False, title="Revise"),
    "revert": _hints(read_only=False, destructive=False, idempotent=True, title="Revert"),
    "forget": _hints(read_only=False, destructive=True, idempotent=True, title="Forget"),
    "inspect": _hints(read_only=True, destructive=False, idempotent=True, title="Inspect"),
    "history": _hints(read_only=True, destructive=False, idempotent=True, title="History"),
    "notebook": _hints(read_only=False, destructive=False, idempotent=True, title="Notebooks"),
    "link": _hints(read_only=False, destructive=False, idempotent=True, title="Link"),
    # A dispute step repeated is refused (already open, not open, not ruled): idempotent.
    "dispute": _hints(read_only=False, destructive=False, idempotent=True, title="Disputes"),
    # Doctor changes no memory, but it finishes a scrub a forget left pending (it rewrites
    # the database file), so it does not claim to only read.
    "doctor": _hints(read_only=False, destructive=False, idempotent=True, title="Doctor"),
    "check": _hints(read_only=True, destructive=False, idempotent=True, title="Check"),
    "orient": _hints(read_only=True, destructive=False, idempotent=True, title="Orient"),
    # Guard changes no memory, but keeps the command it judged (for trials of new checks).
    "guard": _hints(read_only=False, destructive=False, idempotent=True, title="Guard"),
}


class PalimpsestMCP(MCPServer[Any]):
    """The SDK's server, answering every failed call with our error body."""

    def __init__(
        self,
        name: str,
        *,
        threads: ThreadPoolExecutor,
        bounds: CallBounds | None = None,
        token_verifier: KeyVerifier | None = None,
        equip: Callable[[PalimpsestMCP], object] | None = None,
        **kwargs: Any,
    ):
        super().__init__(name, token_verifier=token_verifier, **kwargs)
        self.threads = threads
        self.bounds = bounds  # over HTTP: how many calls each key may make (bounds.py)
        self.verifier = token_verifier
        self._equip = equip  # makes the tools and prompts, still to make (`make_tools`)
        self.tools: PalimpsestTools | None = None  # once made: for the HTTP API's own too
        # Over stdio one process serves one client: its session, for the served record.
        self.process_session = f"stdio_{uuid.uuid4().hex[:20]}"

    def make_tools(self) -> None:
        """Make and register the tools and prompts left for later (`build_server`,
        `serve`); nothing once they are made. Runs on the event loop, as every request
        does: no lock."""
        equip, self._equip = self._equip, None
        if equip is not None:
            equip(self)

    # A client that asks for tools or prompts before saying `initialized` gets them made.
    async def list_tools(self) -> list[MCPTool]:
        self.make_tools()
        return await super().list_tools()

    async def list_prompts(self) -> list[MCPPrompt]:
        self.make_tools()
        return await super().list_prompts()

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        context: Context[Any, Any] | None = None,
    ) -> GetPromptResult | InputRequiredResult:
        self.make_tools()
        return await super().get_prompt(name, arguments, context)

    def close(self) -> None:
        """Let the store threads finish what they run, then end them; write the failed
        authentications counted since the last write."""
        self.threads.shutdown(wait=True)
        if self.verifier is not None:
            self.verifier.flush()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Run a tool; every failure becomes an `isError` result with our JSON body."""
        return await self.call_in_session(name, arguments, self.client_session(context), context)

    async def call_in_session(
        self,
        name: str,
        arguments: dict[str, Any],
        session: str,
        context: Context[Any, Any] | None = None,
        *,
        among: ToolManager | None = None,
    ) -> CallToolResult | InputRequiredResult:
        """`call_tool` for a caller that names its session itself (the HTTP API, which has
        no MCP request to read one from): the same bound, tool and refusals. `among`: the
        tools to find `name` in, if not this server's (the API's operations that are no
        MCP tool, api/operations.py)."""
        self.make_tools()
        from .keys import request_principal  # loaded by `make_tools`, with the service
        from .tools import CLIENT_SESSION

        principal = request_principal()
        key_id = principal.key_id if principal else None
        wait = self.bounds.admit(key_id) if self.bounds and key_id else None
        if wait is not None:
            return refusal_result({
                "error_class": "retryable",
                "message": f"This key made more tool calls than its bound allows (a server's "
                f"`http.calls_per_minute`): wait {wait} s and call again.",
                "retry_after": wait,
            })  # fmt: skip
        served = CLIENT_SESSION.set(session)
        try:
            if among is None:
                return await super().call_tool(name, arguments, context)
            if context is None:
                context = Context(mcp_server=self, subscriptions=self._subscriptions)
            result: CallToolResult = await among.call_tool(
                name, arguments, context, convert_result=True
            )
            return result
        except ToolError as exc:
            return error_result(name, exc)
        finally:
            CLIENT_SESSION.reset(served)

    def client_session(self, context: Context[Any, Any] | None) -> str:
        """The session the call belongs to, for the served record: over stdio this
        process's; over HTTP the transport's `mcp-session-id` where the protocol keeps
        sessions (before 2026-07-28; the transport checked it against those it holds), else
        (each request self-contained, or `--stateless`) the key's: `http:<key id>`, or
        `http:local` without keys."""

        try:
            headers = context.headers if context is not None else None
        except ValueError:  # called outside a request (a test's direct call)
            return self.process_session
        if headers is None:
            return self.process_session
        return headers.get(MCP_SESSION_ID) or key_session()

    def transport_security(self) -> TransportSecuritySettings | None:
        """The Host, Origin and Content-Type checks the SDK's HTTP app makes (on loopback:
        against DNS rebinding and other sites' pages), for the other HTTP routes to make
        the same. None before that app is built, or when it checks only Content-Type."""
        manager = getattr(self._lowlevel_server, "_session_manager", None)
        return manager.security_settings if manager is not None else None


def key_session() -> str:
    """The session of an HTTP request that keeps none: its key's, `http:<key id>`, or
    `http:local` without keys."""
    from .keys import request_principal  # loaded with the service, for HTTP only

    principal = request_principal()
    key = principal.key_id if principal is not None and principal.key_id else "local"
    return f"http:{key}"


def error_result(tool: str, exc: ToolError) -> CallToolResult:
    """The one place where a failed call becomes what the client sees."""
    from .arguments import argument_error
    from .arguments import short as _short

    cause = exc.__cause__
    if isinstance(cause, PalimpsestError):  # a refusal by the service, raised in the tool
        body = cause.to_dict()
    elif isinstance(exc, UnexpectedToolError):  # a crash, or an answer the schema refused
        logger.error("tool %r failed unexpectedly", _short(tool), exc_info=cause or exc)
        body = {"error_class": "internal", "message": INTERNAL_MESSAGE}
    elif isinstance(cause, pydantic.ValidationError):  # arguments against the input schema
        body = argument_error(tool, cause)
    else:  # the SDK's own refusal: there is no such tool
        body = {
            "error_class": "not_found",
            "message": f"There is no tool {_short(tool)!r}; the tools are {', '.join(TOOL_NAMES)}.",
        }
    if body["error_class"] != "internal":
        logger.info("tool %r refused: %s", _short(tool), body["error_class"])
    return refusal_result(body)


def refusal_result(body: dict[str, Any]) -> CallToolResult:
    text = json.dumps(body, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def build_server(
    service: Service,
    threads: int = DEFAULT_LIMITS.store_threads,
    *,
    http: tuple[str, int] | None = None,
    calls_per_minute: int = DEFAULT_LIMITS.calls_per_minute,
    tools_later: bool = False,
) -> PalimpsestMCP:
    """An MCP server whose tools act on `service` (its store and actor); `close()` it.

    `threads`: how many tool calls reach the store at once (`server.store_threads`).
    `http`: the (host, port) it serves HTTP on: each request then acts as its key's holder
    (mcp/keys.py), and the server as given acts only for a request without one.
    `tools_later`: the tools and prompts are made by `make_tools()` (or the first request
    for them), not now: their schemas and argument models take pydantic a tenth of a
    second.
    """
    from .keys import KeyVerifier, auth_settings

    bounds = CallBounds(calls_per_minute) if http else None
    server = _server(
        threads,
        lambda made: _equip(made, service),
        bounds=bounds,
        token_verifier=KeyVerifier(service) if http else None,
        auth=auth_settings(*http) if http else None,
    )
    if not tools_later:
        server.make_tools()
    return server


def _server(threads: int, equip: Callable[[PalimpsestMCP], object], **kwargs: Any) -> PalimpsestMCP:
    """The server as `initialize` shows it, its tools and prompts made by `equip` later."""
    pool = ThreadPoolExecutor(threads, thread_name_prefix="palimpsest-store")
    return PalimpsestMCP(
        "palimpsest",
        title="Palimpsest",
        instructions=INSTRUCTIONS,
        version=_version(),
        log_level="WARNING",
        threads=pool,
        equip=equip,
        **kwargs,
    )


def _equip(server: PalimpsestMCP, service: Service) -> None:
    """Register on `server` the tools and prompts acting on `service`."""
    from .prompts import PalimpsestPrompts
    from .tools import PalimpsestTools

    tools = server.tools = PalimpsestTools(service, server.threads)
    made = [_registered(tools, name) for name in TOOL_NAMES]
    warn = server.settings.warn_on_duplicate_tools
    server._tool_manager = ToolManager(tools=made, warn_on_duplicate_tools=warn)
    for prompt in PalimpsestPrompts(service, server.threads, server.bounds).registered():
        server.add_prompt(prompt)


def _registered(tools: PalimpsestTools, name: str) -> Tool:
    from .schema import harden

    tool = Tool.from_function(
        getattr(tools, name),
        name=name,
        title=ANNOTATIONS[name].title,
        description=DESCRIPTIONS[name],
        annotations=ANNOTATIONS[name],
        structured_output=True,
    )
    return harden(tool)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("palimpsest")
    except PackageNotFoundError:
        return "0"


def load_model_in_background(service: Service) -> threading.Thread | None:
    """Load the embedder's model on a thread of its own while the server answers, so the
    first recall by meaning does not wait for it (about a second) and no answer that needs
    no meaning ever does. None when the embedder has nothing to load."""
    load = getattr(service.embedder, "load", None)
    if load is None:
        return None
    return _in_background("palimpsest-model", load, "the embedding model")


def prepare_in_background(service: Service) -> list[threading.Thread]:
    """What first answers would wait for, done on threads of their own once the client has
    its first answer: the secret detector's patterns (a tenth of a second, else paid by the
    first screened write) and the embedder's model."""
    from ..service import prepare_screening

    threads = [_in_background("palimpsest-secrets", prepare_screening, "the secret patterns")]
    model = load_model_in_background(service)
    return threads if model is None else [*threads, model]


def _in_background(name: str, work: Callable[[], object], what: str) -> threading.Thread:
    def running() -> None:
        try:
            work()
        except Exception:  # the first call that needs it raises it again, to its caller
            logger.warning("%s could not be made ready ahead", what, exc_info=True)

    thread = threading.Thread(target=running, name=name, daemon=True)
    thread.start()
    return thread


def serve(open_service: Callable[[], Service], threads: int = DEFAULT_LIMITS.store_threads) -> None:
    """Serve over stdio until the client hangs up.

    `initialize` is answered first: the service is opened (`open_service`), and the tools
    and prompts made, once that answer is written (over pipes; else once the client says
    `initialized` or first asks for them), so a client waits for little more than the
    SDK's import; the secret patterns and the model are then made ready on threads of
    their own. A service that
    cannot be opened ends the server, and its error is raised here; so it is when the
    input ends before the client asked for anything (or none was there), as at once.
    """
    failed: list[Exception] = []
    serving: anyio.CancelScope | None = None  # cancelled when the service cannot be opened
    opened: list[Service] = []

    def open_once() -> Service:
        if not opened:
            opened.append(open_service())
        return opened[0]

    def open_and_equip(server: PalimpsestMCP) -> None:
        try:
            service = open_once()
            # Tools first: made beside the model's load, both took longer than in turn
            # (the model's runtime threads and pydantic contend for two cores).
            _equip(server, service)
        except Exception as exc:
            failed.append(exc)
            if serving is not None:
                serving.cancel()
            raise
        prepare_in_background(service)

    server = _server(threads, open_and_equip)

    def once_initialized() -> None:
        with contextlib.suppress(Exception):  # in `failed`: the server stops
            server.make_tools()

    async def run() -> None:
        nonlocal serving
        with anyio.CancelScope() as serving:
            await serve_stdio(server, once_initialized)

    try:
        anyio.run(run)
        if not failed:
            open_once()  # a store that cannot be opened is refused, even to no client
    finally:
        server.close()
    if failed:
        raise failed[0]
