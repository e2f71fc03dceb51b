"""The real `palimpsest serve` process, driven by the official MCP client over stdio and HTTP."""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import select
import selectors
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Tool

from palimpsest.mcp.transport import BODY_SECONDS, HEAD_SECONDS, MAX_BODY_BYTES

from ..mcp_helpers import call, check_tool_schemas, refuse, refused

pytestmark = pytest.mark.anyio

STARTUP_SECONDS = 30


def command(db: Path | str, *args: str) -> list[str]:
    """`palimpsest --db DB ARGS` as a process runs it (DB: a SQLite file or a URL)."""
    return [sys.executable, "-m", "palimpsest", "--db", str(db), *args]


@asynccontextmanager
async def stdio(db: Path, env: dict[str, str]) -> AsyncIterator[Client]:
    """A client over a `palimpsest serve` child process (the SDK ends the process on exit)."""
    args = command(db, "serve")
    params = StdioServerParameters(command=args[0], args=args[1:], env=env)
    async with Client(params, read_timeout_seconds=STARTUP_SECONDS) as client:
        yield client


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def accepts_connections(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


@contextmanager
def http_server(
    db: Path, env: dict[str, str], *, open_files: int | None = None
) -> Iterator[tuple[str, int]]:
    """`palimpsest serve --http` on a free port, ready to answer; killed afterwards.

    `open_files` caps the server's file descriptors (RLIMIT_NOFILE), as many systems do.
    """

    def limit() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    port = free_port()
    process = subprocess.Popen(
        command(db, "serve", "--http", "--port", str(port)),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit,
    )
    with serving(process, port):
        yield f"http://127.0.0.1:{port}/mcp", port


@contextmanager
def serving(process: subprocess.Popen[str], port: int) -> Iterator[None]:
    """Wait until `process` (a `serve --http`) answers on `port`; stop it afterwards."""
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not accepts_connections(port):
            assert time.monotonic() < deadline, "the HTTP server did not start in time"
            try:  # waits a moment, and notices at once if the server died instead
                process.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                continue
            said = process.stderr.read() if process.stderr else ""
            raise AssertionError(f"serve --http exited: {said!r}")
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


@pytest.fixture
def http_url(db_path: Path, env: dict[str, str]) -> Iterator[str]:
    with http_server(db_path, env) as (url, _):
        yield url


def cli(db: Path, env: dict[str, str], *args: str) -> Any:
    done = subprocess.run(
        command(db, *args, "--json"), env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def event_count(db: Path) -> int:
    with sqlite3.connect(db) as raw:
        return int(raw.execute("SELECT count(*) FROM events").fetchone()[0])


async def every_tool(client: Client) -> None:
    """Each tool's happy path and one of its refusals, as an agent would meet them."""
    check_tool_schemas((await client.list_tools()).tools)
    filed = await call(client, "remember", notebook="shop", kind="decision",
                       text="Payments go through Stripe", why="it handles VAT")  # fmt: skip
    memory = filed["id"]
    assert (await refuse(client, "remember", notebook="shop", kind="rule", text="No cash"))[
        "field"
    ] == "falsifier"
    other = (await call(client, "remember", notebook="shop", kind="fact",
                        text="Stripe webhooks arrive at /hooks/stripe"))["id"]  # fmt: skip

    hits = (await call(client, "recall", query="Stripe", notebook="shop"))["hits"]
    assert {h["id"] for h in hits} == {memory, other}
    assert (await refuse(client, "recall", limit=0))["field"] == "limit"

    revised = await call(client, "revise", id=memory, append="and refunds", expected_version=1)
    assert revised["results"][0]["version"] == 2
    assert (await refuse(client, "revise", id=memory, expected_version=1, why="stale"))[
        "error_class"
    ] == "conflict"

    assert (await call(client, "revert", id=memory, version=1))["results"][0]["version"] == 3
    assert (await refuse(client, "revert", id=memory, version=42))["error_class"] == "not_found"

    shown = await call(client, "inspect", id=memory)
    assert [v["version"] for v in shown["versions"]] == [1, 2, 3]
    assert (await refuse(client, "inspect"))["error_class"] == "validation"

    events = (await call(client, "history", id=memory))["events"]
    assert [e["op"] for e in events] == ["remember", "revise", "revert"]
    assert (await refuse(client, "history", id="m_nope"))["error_class"] == "not_found"

    linked = await call(client, "link", source=other, target=memory, type="depends_on")
    assert set(linked["versions"]) == {memory, other}
    assert (await refuse(client, "link", source=other, target=other, type="relates_to"))[
        "error_class"
    ] == "validation"

    assert [n["name"] for n in (await call(client, "notebook", action="list"))["notebooks"]] == [
        "shop"
    ]
    assert (await refuse(client, "notebook", action="create", name="shop"))[
        "error_class"
    ] == "conflict"

    forgotten = await call(client, "forget", id=other, because="test data")
    assert forgotten["results"][0]["forgotten"] is True
    assert (await refuse(client, "forget", id=other, because="twice"))["error_class"] == (
        "not_found"
    )

    report = await call(client, "doctor")
    assert "secrets" not in report and report["scrub_pending"] is False
    secret_note = "ghp_" + "".join(reversed("bC7dE8fG9hI0jK1lM2nO3pQ4rS5tU6vW7xY8qZ"))
    refused_secret = await refuse(client, "remember", notebook="shop", kind="fact",
                                  text=f"CI uses {secret_note}")  # fmt: skip
    assert refused_secret["field"] == "text" and secret_note not in json.dumps(refused_secret)
    assert (await refuse(client, "doctor", verbose=True))["error_class"] == "validation"


async def test_every_tool_over_stdio(db_path: Path, env: dict[str, str]) -> None:
    async with stdio(db_path, env) as client:
        await every_tool(client)


async def test_every_tool_over_streamable_http(http_url: str) -> None:
    async with Client(http_url, read_timeout_seconds=STARTUP_SECONDS) as client:
        await every_tool(client)


async def test_http_serves_several_clients_at_once_and_older_protocols(http_url: str) -> None:
    async with Client(http_url) as first, Client(http_url, mode="legacy") as second:
        assert first.protocol_version != second.protocol_version
        filed = await call(first, "remember", notebook="n", kind="fact", text="Shared over HTTP")
        hits = (await call(second, "recall", query="Shared"))["hits"]
        assert [h["id"] for h in hits] == [filed["id"]]


async def test_mcp_and_the_cli_see_each_other_s_changes(db_path: Path, env: dict[str, str]) -> None:
    async with stdio(db_path, env) as client:
        memory = (await call(client, "remember", notebook="ops", kind="fact",
                             text="Backups run at 02:00"))["id"]  # fmt: skip
        await call(client, "revise", id=memory, replace_from="02:00", replace_to="03:00",
                   note="moved off the batch window")  # fmt: skip
        events = cli(db_path, env, "history", memory)["events"]
        assert [(e["op"], e["note"]) for e in events][-1] == (
            "revise", "moved off the batch window",
        )  # fmt: skip
        assert events[-1]["changes"]["text"]["new"] == "Backups run at 03:00"

        by_cli = cli(db_path, env, "remember", "-n", "ops", "-k", "decision",
                     "Restores are tested monthly")["id"]  # fmt: skip
        hits = (await call(client, "recall", query="Restores tested", notebook="ops"))["hits"]
        assert [h["id"] for h in hits] == [by_cli]


async def test_two_stdio_servers_on_one_file_write_and_see_each_other(
    db_path: Path, env: dict[str, str]
) -> None:
    async with stdio(db_path, env) as first, stdio(db_path, env) as second:
        mine = await call(first, "remember", notebook="n", kind="fact", text="Written by one")
        hits = (await call(second, "recall", query="Written"))["hits"]
        assert [h["id"] for h in hits] == [mine["id"]]
        await call(second, "revise", id=mine["id"], text="Rewritten by two")
        shown = await call(first, "inspect", id=mine["id"])
        assert (shown["memory"]["text"], shown["memory"]["version"]) == ("Rewritten by two", 2)

        answers: list[dict[str, Any]] = []

        async def burst(client: Client, who: str) -> None:
            for n in range(15):
                answers.append(await call(client, "remember", notebook="n", kind="note",
                                          text=f"{who} note {n}"))  # fmt: skip

        async with anyio.create_task_group() as group:
            group.start_soon(burst, first, "first")
            group.start_soon(burst, second, "second")
        assert len({a["id"] for a in answers}) == 30
        times = [e["at"] for e in (await call(first, "history", limit=1000))["events"]]
        assert times == sorted(times) and len(times) == event_count(db_path)


# -- malformed arguments --------------------------------------------------------------------

HUGE = "x" * 1_000_000
BAD_IDS = ["", "m_does_not_exist", "../../etc/passwd", "m_" + "x" * 300, "\x00", " "]


def admits_string(schema: dict[str, Any]) -> bool:
    options = schema.get("anyOf", [schema])
    return any(o.get("type") == "string" or "enum" in o for o in options)


def malformed(tool: Tool, base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Wrong types, unknown fields and huge strings, derived from the tool's input schema."""
    properties = tool.input_schema["properties"]
    for name, schema in properties.items():
        yield {**base, name: 1.5}  # no parameter takes a fraction
        if admits_string(schema):
            yield {**base, name: {"not": ["a", "string"]}}
            yield {**base, name: HUGE}
        types = {o.get("type") or "object" for o in schema.get("anyOf", [schema])}
        if "array" in types:
            yield {**base, name: [HUGE]}
            yield {**base, name: [{"not": "an item"}]}
            yield {**base, name: [{"id": HUGE}, {HUGE: "a huge key"}]}
        if "object" in types:
            yield {**base, name: {"kind": "contains", "path": "a", "literal": HUGE}}
            yield {**base, name: {HUGE: "a huge key"}}
    yield {**base, "no_such_parameter": "x"}
    yield {**base, HUGE: "a huge parameter name"}
    yield {**base, "Id": "wrong case"}


def bad_ids(tool: str, memory: str) -> Iterator[dict[str, Any]]:
    for bad in BAD_IDS:
        yield {
            "remember": {"notebook": "n", "kind": "fact", "text": "t", "supersedes": [bad]},
            "recall": {"notebook": bad or " "},
            "revise": {"id": bad, "why": "a reason"},
            "revert": {"id": bad, "version": 1},
            "forget": {"id": bad, "because": "a reason"},
            "inspect": {"id": bad},
            "history": {"id": bad or " "},
            "notebook": {"action": "edit", "notebook": bad or " ", "summary": "s"},
            "link": {"source": memory, "target": bad, "type": "relates_to"},
            "dispute": {"action": "rule", "dispute": bad or " ", "holds": memory, "reason": "r"},
            "doctor": {"id": bad},
            "guard": {"command": "ls", "notebook": bad or " "},
            "check": {"dir": bad or " "},
            "orient": {"notebook": bad or " "},
        }[tool]


async def test_malformed_arguments_are_refused_and_change_nothing(
    db_path: Path, env: dict[str, str]
) -> None:
    async with stdio(db_path, env) as client:
        memory = (await call(client, "remember", notebook="n", kind="fact", text="Kept"))["id"]
        other = (await call(client, "remember", notebook="n", kind="fact", text="Also"))["id"]
        valid = {
            "remember": {"notebook": "n", "kind": "fact", "text": "A new memory"},
            "recall": {"query": "Kept"},
            "revise": {"id": memory, "why": "a reason"},
            "revert": {"id": memory, "version": 1},
            "forget": {"id": memory, "because": "a reason"},
            "inspect": {"id": memory},
            "history": {"id": memory},
            "notebook": {"action": "create", "name": "fresh"},
            "link": {"source": memory, "target": other, "type": "relates_to"},
            "dispute": {"action": "list"},
            "doctor": {},
            "guard": {"command": "ls"},
            "check": {},
            "orient": {},
        }
        before = event_count(db_path)
        classes: Counter[str] = Counter()
        for tool in (await client.list_tools()).tools:
            name = tool.name
            cases = [*malformed(tool, valid[name]), *bad_ids(name, memory)]
            if tool.input_schema.get("required") or name in ("revise", "revert", "forget"):
                cases.append({})
            for arguments in cases:
                result = await client.call_tool(name, arguments)
                body = refused(result)
                assert "x" * 1000 not in body["message"], (name, body["error_class"])
                classes[body["error_class"]] += 1
        assert sum(classes.values()) > 200 and {"validation", "not_found"} <= set(classes)
        assert event_count(db_path) == before
        assert (await call(client, "inspect", id=memory))["memory"]["version"] == 1


# -- lines that are no JSON-RPC message, over stdio -----------------------------------------


def answer_line(process: subprocess.Popen[bytes], timeout: float = STARTUP_SECONDS) -> Any:
    """The next line the server writes, as JSON; fails if none comes within `timeout`."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, "the server gave no answer"
    return json.loads(process.stdout.readline())


RECALL = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall", '
UNREADABLE = {  # past the parser's depth: 199 levels inside the arguments, 202 in all
    "not JSON": b"this is not json",
    "a lone surrogate": RECALL + b'"arguments": {"query": "\\ud800"}}}',
    "a byte that is not UTF-8": RECALL + b'"arguments": {"query": "caf\xe9"}}}',
    "nesting 199 deep": RECALL + b'"arguments": {"query": ' + b"[" * 199 + b"]" * 199 + b"}}}",
}


def test_stdio_answers_a_line_it_cannot_parse_with_a_parse_error(
    db_path: Path, env: dict[str, str]
) -> None:
    process = subprocess.Popen(
        command(db_path, "serve"), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, bufsize=0,  # unbuffered: `select` sees every answer
    )  # fmt: skip
    assert process.stdin is not None
    try:
        for label, line in [*UNREADABLE.items(), ("not a message", b'{"id": 3}')]:
            process.stdin.write(line + b"\n")
            process.stdin.flush()
            answer = answer_line(process)
            code = -32600 if label == "not a message" else -32700
            # The id is answered wherever the line still shows it, so the caller is not
            # left waiting; bytes that are not UTF-8 are refused, never stored as U+FFFD.
            ident = 1 if line.startswith(RECALL) else None
            assert (answer["jsonrpc"], answer["id"], answer["error"]["code"]) == (
                "2.0",
                ident,
                code,
            )
            assert line.decode(errors="replace")[:40] not in answer["error"]["message"], label
        process.stdin.write(b'{"jsonrpc": "2.0", "id": 9, "method": "ping"}\n')
        process.stdin.flush()
        assert answer_line(process) == {"jsonrpc": "2.0", "id": 9, "result": {}}
    finally:
        process.stdin.close()
        process.wait(timeout=STARTUP_SECONDS)
        if process.stdout is not None:
            process.stdout.close()


def test_stdio_reads_a_line_of_any_length_from_a_pipe_or_a_file(
    db_path: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """A pipe (as a client starts a server) is read by the event loop, a file as the SDK
    reads it: both answer a line longer than asyncio's 64 KiB default, and the next."""
    query = "word " * 40_000
    long_line = RECALL + b'"arguments": {"query": "' + query.encode() + b'"}}}\n'
    ping = b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n'
    process = subprocess.Popen(
        command(db_path, "serve"), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, bufsize=0,
    )  # fmt: skip
    assert process.stdin is not None
    try:
        piped = []
        for line in (long_line, ping):
            process.stdin.write(line)
            process.stdin.flush()
            piped.append(answer_line(process))
    finally:
        process.stdin.close()
        process.wait(timeout=STARTUP_SECONDS)
        if process.stdout is not None:
            process.stdout.close()
    sent = tmp_path / "lines.jsonl"
    sent.write_bytes(long_line + ping)
    with sent.open("rb") as stdin:
        run = subprocess.run(command(db_path, "serve"), env=env, stdin=stdin,
                             capture_output=True, timeout=STARTUP_SECONDS)  # fmt: skip
    from_file = [json.loads(line) for line in run.stdout.splitlines()]
    for answers in (piped, from_file[:1]):  # at the file's end the SDK stops, mid-request
        assert answers[0]["id"] == 1 and query[:50] not in json.dumps(answers[0])
    assert piped[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}


CLIENT = {"name": "t", "version": "1"}
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLIENT}}  # fmt: skip
INITIALIZED = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'


def test_stdio_answers_over_one_socket_for_both_directions(
    db_path: Path, env: dict[str, str]
) -> None:
    """stdin and stdout one socket, as inetd or socat give a server: every line answered."""
    mine, theirs = socket.socketpair()
    process = subprocess.Popen(command(db_path, "serve"), env=env, stdin=theirs, stdout=theirs,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    theirs.close()
    try:
        wire = mine.makefile("rwb", buffering=0)
        mine.sendall(json.dumps(INITIALIZE).encode() + b"\n" + INITIALIZED)
        answers = [json.loads(wire.readline())["id"]]
        for ident in (1, 2, 3):
            mine.sendall(b'{"jsonrpc": "2.0", "id": %d, "method": "ping"}\n' % ident)
            answers.append(json.loads(wire.readline())["id"])
        assert answers == [0, 1, 2, 3]
    finally:
        mine.shutdown(socket.SHUT_WR)  # the end of input: the server stops
        process.wait(timeout=STARTUP_SECONDS)
        mine.close()


def pipe_inode(file: Any) -> int:
    return os.fstat(file.fileno()).st_ino


def holds(pid: int, pipe: int) -> bool:
    """Process `pid` still has the pipe `pipe` (an inode) open: it has not seen its end."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:  # gone
        return False
    for fd in fds:
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{fd}") == f"pipe:[{pipe}]":
                return True
    return False


def waits_for_room(pid: int, pipe: int) -> bool:
    """Process `pid`'s event loop waits for room in `pipe` (EPOLLOUT): it holds output the
    pipe would not take yet."""
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:[eventpoll]":
                continue
            for line in Path(f"/proc/{pid}/fdinfo/{fd}").read_text().splitlines():
                found = re.search(r"events:\s*([0-9a-f]+) .* ino:([0-9a-f]+) ", line)
                if found and int(found[2], 16) == pipe and int(found[1], 16) & select.EPOLLOUT:
                    return True
    return False


def wait_until(condition: Callable[[], bool], what: str, seconds: float = STARTUP_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


@pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="reads /proc (Linux)")
def test_stdio_answers_written_before_the_end_of_input_reach_a_late_reader(
    db_path: Path, env: dict[str, str]
) -> None:
    """Answers larger than the pipe holds, to a client that reads only after it closed
    its input: none is lost or cut, as when each was written on a thread of its own."""
    process = subprocess.Popen(command(db_path, "serve"), env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    wire_in, wire_out = pipe_inode(process.stdin), pipe_inode(process.stdout)
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n" + INITIALIZED)
    for ident in (1, 2, 3):  # about 27 KB each: more than the pipe's 64 KiB in all
        process.stdin.write(b'{"jsonrpc": "2.0", "id": %d, "method": "tools/list"}\n' % ident)
    process.stdin.flush()
    # The server answers into a pipe nobody reads, until it holds answers the pipe will
    # not take (an answer still being made when the input ends is not sent: the SDK's).
    wait_until(lambda: waits_for_room(process.pid, wire_out), "no answer waits for room")
    process.stdin.close()
    # It sees the end of its input (closes its end of the pipe, or exits) before anyone reads.
    wait_until(lambda: not holds(process.pid, wire_in), "the server never saw its input end")
    with process.stdout:
        out = process.stdout.read()
    process.wait(timeout=STARTUP_SECONDS)
    assert out.endswith(b"\n")
    assert [json.loads(line)["id"] for line in out.splitlines()] == [0, 1, 2, 3]


def test_stdio_takes_a_lone_carriage_return_as_the_end_of_a_line(
    db_path: Path, env: dict[str, str]
) -> None:
    """As the SDK's reader does (universal newlines): two messages split by \\r alone."""
    ping = b'{"jsonrpc": "2.0", "id": %d, "method": "ping"}'
    lines = ping % 1 + b"\r" + ping % 2 + b"\n"
    process = subprocess.Popen(command(db_path, "serve"), env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               bufsize=0)  # fmt: skip
    assert process.stdin is not None
    try:
        process.stdin.write(lines)
        assert [answer_line(process)["id"], answer_line(process)["id"]] == [1, 2]
    finally:
        process.stdin.close()
        process.wait(timeout=STARTUP_SECONDS)
        if process.stdout is not None:
            process.stdout.close()


# -- slow clients over HTTP -----------------------------------------------------------------

SLOW_CLIENTS = 1_100  # more than the server's 1,024 file descriptors below


def open_slow_clients(port: int, count: int) -> list[socket.socket]:
    """Connections that start a request and never finish its headers."""
    clients = []
    for _ in range(count):
        client = socket.create_connection(("127.0.0.1", port), timeout=10)
        client.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
        clients.append(client)
    return clients


def wait_closed_by_server(clients: list[socket.socket], seconds: float) -> list[socket.socket]:
    """Wait up to `seconds` for the server to close each connection; return those left open."""
    open_ = {c.fileno(): c for c in clients}
    with selectors.DefaultSelector() as selector:
        for client in clients:
            client.setblocking(False)
            selector.register(client, selectors.EVENT_READ)
        deadline = time.monotonic() + seconds
        while open_ and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=deadline - time.monotonic()):
                client = open_[key.fd]
                try:
                    closed = client.recv(4096) == b""
                except ConnectionResetError:
                    closed = True
                if closed:
                    selector.unregister(client)
                    del open_[key.fd]
    return list(open_.values())


async def test_http_slow_headers_neither_lock_out_other_clients_nor_stay_open(
    db_path: Path, env: dict[str, str]
) -> None:
    with http_server(db_path, env, open_files=1024) as (url, port):
        slow = open_slow_clients(port, SLOW_CLIENTS)
        try:
            with anyio.fail_after(STARTUP_SECONDS):
                async with Client(url) as client:
                    filed = await call(client, "remember", notebook="n", kind="fact",
                                       text="Answered despite slow clients")  # fmt: skip
                    hits = (await call(client, "recall", query="slow clients"))["hits"]
                    assert [h["id"] for h in hits] == [filed["id"]]
            left_open = wait_closed_by_server(slow, HEAD_SECONDS + 10)
            assert left_open == [], f"{len(left_open)} slow connections still open"
        finally:
            for client in slow:
                client.close()


JSON_POST = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\n"
)


def read_status(client: socket.socket, seconds: float = STARTUP_SECONDS) -> int:
    """The status code of the server's answer, read off its status line."""
    client.settimeout(seconds)
    answer = b""
    while b"\r\n" not in answer:
        chunk = client.recv(4096)
        assert chunk, "the server closed the connection without an answer"
        answer += chunk
    return int(answer.split(b" ", 2)[1])


def test_http_bodies_that_trickle_are_cut_off(db_path: Path, env: dict[str, str]) -> None:
    """A client that sends its head and then only part of its body holds a connection no
    longer than BODY_SECONDS: it is answered 408 and closed."""
    with http_server(db_path, env) as (_, port):
        slow = []
        for second_type in [b""] * 4 + [b"Content-Type: text/plain\r\n"]:  # and a repeated one
            client = socket.create_connection(("127.0.0.1", port), timeout=10)
            client.sendall(JSON_POST + second_type + b"Content-Length: 1000\r\n\r\n{")
            slow.append(client)
        try:
            # Answered once BODY_SECONDS have passed: waited for a little longer, as a busy
            # machine may take a moment past the limit to get to it.
            assert [read_status(client, BODY_SECONDS + 10) for client in slow] == [408] * 5
            assert wait_closed_by_server(slow, BODY_SECONDS + 10) == []
        finally:
            for client in slow:
                client.close()


def test_http_bodies_past_the_cap_are_refused_unread(db_path: Path, env: dict[str, str]) -> None:
    """A body declared, or sent in chunks, past MAX_BODY_BYTES is answered 413: the server
    never holds it in memory."""
    with http_server(db_path, env) as (_, port):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as declared:
            declared.sendall(JSON_POST + f"Content-Length: {10**12}\r\n\r\n".encode())
            assert read_status(declared) == 413
        with socket.create_connection(("127.0.0.1", port), timeout=10) as chunked:
            chunked.sendall(JSON_POST + b"Transfer-Encoding: chunked\r\n\r\n")
            chunk = b"x" * 2**20
            try:
                for _ in range(MAX_BODY_BYTES // len(chunk) + 2):
                    chunked.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server answered and closed before the last chunks
            assert read_status(chunked) == 413
        with socket.create_connection(("127.0.0.1", port), timeout=30) as big:
            # Past the SDK's own default of 4 MiB but within ours: not refused for its size.
            body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"p": "%s"}}' % (
                b"x" * 5 * 2**20
            )
            big.sendall(JSON_POST + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            assert read_status(big) != 413
