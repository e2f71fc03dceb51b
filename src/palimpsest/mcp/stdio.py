"""How `server` runs over stdio: the SDK's stdio transport, with one gap closed, and read
and written by the event loop itself when both ends are pipes (`_pipes`).

The SDK's stdio transport drops a line it cannot read (not JSON, a lone surrogate escape,
nesting past the parser's depth) without a word, and the client waits for its timeout; and
it reads bytes that are not UTF-8 as U+FFFD, so damaged text was stored. Here such bytes are
refused, and every such line gets the JSON-RPC answer HTTP gives: -32700 (parse error), or
-32600 when the line is JSON but no JSON-RPC message; `id` is the request's where the line
still shows it, else null.

Nothing here loads HTTP's pieces (uvicorn's connections, h11, `transport`, `shares`): a
stdio server's start waits for no more than it uses (tests/agents/test_serve_startup.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import stat
import sys
from asyncio.streams import FlowControlMixin
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

import anyio
import mcp_types as types
import pydantic
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.shared._stream_protocols import ReadStream, WriteStream


def unreadable_answer(error: Exception) -> SessionMessage:
    """The JSON-RPC error for a line or body that is no message; it never quotes it.

    Where the message is still JSON to the standard library (it was refused only for bytes
    that are not UTF-8, a lone surrogate or its depth), the answer carries the request's id,
    so the caller is not left waiting for one.
    """
    problems = error.errors() if isinstance(error, pydantic.ValidationError) else []
    unparsable = bool(problems) and all(
        p["type"] in ("json_invalid", "string_unicode") for p in problems
    )
    if not unparsable:
        data = types.ErrorData(
            code=types.INVALID_REQUEST,
            message="Invalid Request: the message is JSON but not a JSON-RPC 2.0 message.",
        )
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=data))
    data = types.ErrorData(
        code=types.PARSE_ERROR,
        message="Parse error: the message is not valid JSON in UTF-8 (bytes that are not "
        "UTF-8 and lone surrogates such as \\ud800 are refused), or is nested too deeply.",
    )
    ident = _request_id(problems[0].get("input"))
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=ident, error=data))


def _request_id(raw: Any) -> str | int | None:
    """The id of a message pydantic could not read, if the standard library still can."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "surrogateescape")
    try:
        message = json.loads(raw) if isinstance(raw, str) else None
    except (ValueError, RecursionError):
        return None
    ident = message.get("id") if isinstance(message, dict) else None
    if isinstance(ident, int) and not isinstance(ident, bool):
        return ident
    if isinstance(ident, str) and ident.isprintable() and ident.isascii():
        return ident  # other ids may hold the very characters that could not be read
    return None


class AnsweringUnreadable:
    """The stdio read stream, minus unreadable lines: each one is answered on the spot."""

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        answers: WriteStream[SessionMessage],
        on_second: Callable[[], object] | None = None,
    ):
        self._inner = inner
        self._answers = answers
        # Called once, on the second message: a client sends it (`initialized`) only
        # once it has the answer to the first (`initialize`), so work started then never
        # delays that first answer.
        self._on_second = on_second
        self._received = 0

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message, which the SDK reads when present."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            self._received += 1
            if self._received == 2 and self._on_second is not None:
                self._on_second()
            if not isinstance(item, Exception):
                return item
            await self._answers.send(unreadable_answer(item))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringUnreadable:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> AnsweringUnreadable:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


def _stdin_lines() -> anyio.AsyncFile[str]:
    """Standard input as UTF-8 text in which a byte that is not UTF-8 stays recognisable
    (a lone surrogate, which the parser refuses) where the SDK's own reader replaces it
    with U+FFFD and stores damaged text. fd 0 then reads the null device, as the SDK's
    own claim does, so nothing else reads from the wire."""
    wire = os.fdopen(os.dup(0), "rb")
    _stdin_from_null()
    return anyio.wrap_file(io.TextIOWrapper(wire, encoding="utf-8", errors="surrogateescape"))


class _PipeLines:
    """The lines of a pipe, read by the event loop itself, as `_stdin_lines` gives them:
    a line ends at \\n, \\r\\n or a lone \\r (universal newlines, as the SDK reads)."""

    def __init__(self, reader: asyncio.StreamReader):
        self._reader = reader
        self._lines: list[str] = []  # read, not yet given

    def __aiter__(self) -> _PipeLines:
        return self

    async def __anext__(self) -> str:
        if not self._lines:
            line = await self._reader.readline()  # the last one may end without a newline
            if not line:
                raise StopAsyncIteration
            text = line.decode("utf-8", errors="surrogateescape")
            self._lines = _LINE.findall(text.replace("\r\n", "\n").replace("\r", "\n"))
        return self._lines.pop(0)


class _PipeWriter:
    """A pipe the event loop writes to; `flush` waits while the reader is behind.
    `after_first` is called on the loop once the first answer is in the pipe."""

    def __init__(self, writer: asyncio.StreamWriter):
        self._writer = writer
        self.after_first: Callable[[], object] | None = None

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()  # until all is written: see `_pipes`
        follow, self.after_first = self.after_first, None
        if follow is not None:
            asyncio.get_running_loop().call_soon(follow)


async def _pipes() -> tuple[_PipeLines, _PipeWriter] | None:
    """stdin and stdout as the event loop's own pipes, when both are pipes (as an MCP
    client starts a server): each line read and each answer written then costs no hop to
    a worker thread and back (three a call, a few tenths of a millisecond on a small
    machine). None otherwise: a terminal or a file is read and written as the SDK does,
    since the loop would make it non-blocking for whoever shares it, and a socket too
    (asyncio takes a socket it writes to that turns readable for one the peer closed)."""
    if sys.platform == "win32" or not all(_is_pipe(fd) for fd in (0, 1)):
        return None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=sys.maxsize, loop=loop)  # a line of any length
    wire_in = os.fdopen(os.dup(0), "rb", buffering=0)
    wire_out = os.fdopen(os.dup(1), "wb", buffering=0)
    # As the SDK's claim: fd 0 reads the null device, and fd 1 (a stray print) goes to
    # stderr, so nothing else reads or writes the wire.
    _stdin_from_null()
    os.dup2(2, 1)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), wire_in)
    transport, protocol = await loop.connect_write_pipe(FlowControlMixin, wire_out)
    # A flush waits until every byte is in the pipe, as a write on a thread did: answers
    # still queued here when the input ends would be lost, or cut mid-line.
    transport.set_write_buffer_limits(high=0)
    return _PipeLines(reader), _PipeWriter(asyncio.StreamWriter(transport, protocol, None, loop))


def _stdin_from_null() -> None:
    """fd 0 reads the null device from now on (the wire was duplicated first)."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)


def _is_pipe(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


_LINE = re.compile(r"[^\n]*\n|[^\n]+$")  # each line with its end, the last one without


async def serve_stdio(server: MCPServer[Any], on_ready: Callable[[], object] | None = None) -> None:
    """What the SDK's `run("stdio")` does, with unreadable lines answered; `on_ready` is
    called once the client has its first answer."""
    lowlevel = server._lowlevel_server
    # fd 1 writes to stderr while serving (`_pipes`); once serving ends it is standard output
    # again, so that a refusal after it (`serve --json`) is printed where a command's is.
    stdout_fd = os.dup(1)
    try:
        pipes = await _pipes()
        stdin, stdout = (_stdin_lines(), None) if pipes is None else pipes
        if stdout is not None:
            # The client has its answer to `initialize`: a client of the spec's later
            # versions sends no `initialized`, and its next request may be a while off.
            stdout.after_first = on_ready
        # The pipes do what the SDK asks of its files: lines by `async for`, `write`, `flush`.
        wire = stdio_server(stdin=cast(Any, stdin), stdout=cast(Any, stdout))
        async with wire as (read_stream, write_stream):
            await lowlevel.run(
                AnsweringUnreadable(read_stream, write_stream, on_ready),
                write_stream,
                lowlevel.create_initialization_options(),
            )
    finally:
        with contextlib.suppress(OSError, ValueError):  # a stray print goes where fd 1 went
            sys.stdout.flush()
        os.dup2(stdout_fd, 1)
        os.close(stdout_fd)
