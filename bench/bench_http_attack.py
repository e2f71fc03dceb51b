"""What a hostile client can hold of a keyed `palimpsest serve --http` (issue 30).

Run on demand, not by pytest:

    .venv/bin/python bench/bench_http_attack.py
    .venv/bin/python bench/bench_http_attack.py --hostile 256 --sessions 500

Starts the real server process on a new SQLite store with two keys (a viewer's, the
attacker's, and an editor's, the user's), then attacks it as issue 30's attacks did, over
real sockets, and prints:

- sessions: how many of the sessions one key opens still answer, and what the server's
  memory grew by;
- streams: how many of the event streams one key opens stay open;
- initialize: how many of a burst of `initialize` requests one key gets answered 200;
- bodies: what the server's memory grows by while requests without a key send bodies of
  60 MiB each;
- lock-out: how long the editor's call (`initialize` and a recall) takes while `--hostile`
  connections are open (half slow bodies without a key, half the viewer's streams and
  slow requests), against the same call on an idle server;
- revocation: how long after `key revoke` a stream of the revoked key ends, under that
  load.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx2

from bench_serve import http_server

PROTOCOL = "2025-06-18"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}}  # fmt: skip
MIB = 2**20


def palimpsest(db: Path, env: dict[str, str], *args: str) -> Any:
    command = [sys.executable, "-m", "palimpsest", "--db", str(db), *args, "--json"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def headers(key: str, session: str | None = None) -> dict[str, str]:
    given = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {key}"}
    if session:
        given.update({"Mcp-Session-Id": session, "MCP-Protocol-Version": PROTOCOL})
    return given


def open_session(http: httpx2.Client, url: str, key: str) -> tuple[int, str]:
    opened = http.post(url, json=INITIALIZE, headers=headers(key))
    session = opened.headers.get("mcp-session-id", "")
    if opened.status_code == 200:
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        http.post(url, json=done, headers=headers(key, session))
    return opened.status_code, session


def answers(http: httpx2.Client, url: str, key: str, session: str) -> bool:
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    return http.post(url, json=listing, headers=headers(key, session)).status_code == 200


def raw(port: int, request: bytes) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=30)
    client.sendall(request)
    return client


def stream_request(port: int, key: str, session: str) -> bytes:
    return (f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {key}\r\n"
            f"Accept: text/event-stream\r\nMcp-Session-Id: {session}\r\n"
            f"MCP-Protocol-Version: {PROTOCOL}\r\n\r\n").encode()  # fmt: skip


def post_head(port: int, length: int, key: str | None = None) -> bytes:
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json"
            f"\r\n{auth}Content-Length: {length}\r\n\r\n").encode()  # fmt: skip


def status_of(client: socket.socket) -> int:
    client.settimeout(30)
    answer = b""
    while b"\r\n" not in answer:
        chunk = client.recv(1)  # no further than the status line: the rest is the stream's
        if not chunk:
            return 0
        answer += chunk
    return int(answer.split(b" ", 2)[1])


def still_open(client: socket.socket, seconds: float = 0.3) -> bool:
    """Whether the stream is still open: neither ended (its last chunk) nor closed."""
    client.settimeout(seconds)
    received = b""
    try:
        while True:
            chunk = client.recv(65536)
            if not chunk:
                return False
            received += chunk
            if (b"\r\n" + received).endswith(b"\r\n0\r\n\r\n"):
                return False
    except TimeoutError:
        return True
    except OSError:
        return False


def user_call(url: str, key: str) -> float:
    """Seconds for the editor's client to open a session and recall once (-1: refused)."""
    started = time.perf_counter()
    try:
        with httpx2.Client(timeout=60) as http:
            status, session = open_session(http, url, key)
            recall = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "recall", "arguments": {"query": "pool"}}}  # fmt: skip
            answered = http.post(url, json=recall, headers=headers(key, session))
            if status != 200 or answered.status_code != 200:
                return -1.0
    except httpx2.HTTPError:
        return -1.0
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=300, help="sessions one key opens")
    parser.add_argument("--streams", type=int, default=40, help="streams one key opens")
    parser.add_argument("--hostile", type=int, default=256, help="hostile connections")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="palimpsest-attack-"))
    db = folder / "p.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    env.update(PALIMPSEST_EMBEDDER="none", HOME=str(folder))
    palimpsest(db, env, "user", "add", "vic", "--role", "viewer")
    palimpsest(db, env, "user", "add", "ana", "--role", "editor")
    vic = palimpsest(db, env, "key", "create", "--user", "vic")
    spare = palimpsest(db, env, "key", "create", "--user", "vic")
    ana = str(palimpsest(db, env, "key", "create", "--user", "ana")["key"])
    viewer = str(vic["key"])
    palimpsest(db, env, "remember", "-n", "ops", "-k", "fact", "The pool holds 40")
    with (
        http_server(db, env) as (port, process),
        ExitStack() as stack,
        httpx2.Client(timeout=60) as http,
    ):
        url = f"http://127.0.0.1:{port}/mcp"
        idle = statistics.median(user_call(url, ana) for _ in range(5))
        print(f"idle server: the editor's initialize + recall takes {idle * 1000:.0f} ms")

        before, started = rss_mib(process.pid), time.perf_counter()
        opened = [open_session(http, url, viewer) for _ in range(args.sessions)]
        took = time.perf_counter() - started
        live = sum(answers(http, url, viewer, s) for code, s in opened if code == 200)
        print(f"sessions: one key opened {sum(c == 200 for c, _ in opened)} of "
              f"{args.sessions} in {took:.1f} s; {live} still answer; memory "
              f"+{rss_mib(process.pid) - before:.0f} MiB")  # fmt: skip

        streams = []  # each on a session of its own, opened just before it
        for _ in range(args.streams):
            client = raw(port, stream_request(port, viewer, open_session(http, url, viewer)[1]))
            stack.callback(client.close)
            streams.append(client)
        time.sleep(1)
        held = sum(status_of(c) == 200 and still_open(c) for c in streams)
        print(f"streams: one key opened {len(streams)}; {held} stay open")

        time.sleep(61)  # a full bucket again
        burst = [open_session(http, url, viewer)[0] for _ in range(1000)]
        print(f"initialize: a burst of 1000 from one key: {burst.count(200)} answered 200, "
              f"{burst.count(429)} 429")  # fmt: skip

        before = rss_mib(process.pid)
        peak = before
        bodies = [raw(port, post_head(port, 60 * MIB)) for _ in range(4)]
        chunk = b"x" * MIB
        for client in bodies:
            stack.callback(client.close)
            try:
                for _ in range(60):
                    client.sendall(chunk)
                    peak = max(peak, rss_mib(process.pid))
            except OSError:
                pass  # refused and closed before the body was sent: the point
        print(f"bodies: 4 bodies of 60 MiB without a key: memory peaked at "
              f"+{peak - before:.0f} MiB")  # fmt: skip

        half, hostile_refused = args.hostile // 2, 0
        for _ in range(half):  # slow bodies without a key
            stack.callback(raw(port, post_head(port, 100_000) + b"{").close)
        for n in range(args.hostile - half):  # the viewer's streams and slow requests
            if n % 2:
                stack.callback(raw(port, post_head(port, 100_000, viewer) + b"{").close)
            else:
                try:
                    session = open_session(http, url, viewer)[1]
                    stack.callback(raw(port, stream_request(port, viewer, session)).close)
                except (OSError, httpx2.HTTPError):  # the server has no room left
                    hostile_refused += 1
        under = [user_call(url, ana) for _ in range(5)]
        shown = ", ".join("refused" if t < 0 else f"{t * 1000:.0f} ms" for t in under)
        if hostile_refused:
            print(f"({hostile_refused} of the viewer's hostile connections were refused)")
        print(f"lock-out: with {args.hostile} hostile connections open, the editor's "
              f"initialize + recall: {shown}")  # fmt: skip

        # Another key of the viewer's, with a stream of its own, revoked while all that holds.
        session = open_session(http, url, str(spare["key"]))[1]
        watched = raw(port, stream_request(port, str(spare["key"]), session))
        stack.callback(watched.close)
        assert status_of(watched) == 200
        palimpsest(db, env, "key", "revoke", str(spare["id"]))
        revoked = time.perf_counter()
        while still_open(watched, 0.05) and time.perf_counter() - revoked < 60:
            pass
        print(f"revocation: a stream of the key ended {time.perf_counter() - revoked:.1f} s "
              "after `key revoke` returned")  # fmt: skip


if __name__ == "__main__":
    main()
