"""A team server: two `serve --http` processes on one PostgreSQL, with keys (issue 12).

Neither process keeps anything of its own: each reads the store on every request, so a
key revoked, a user removed or a memory filed through one is seen by the other at once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import Client

from ..agents.test_mcp_e2e import accepts_connections, command, free_port, serving
from ..conftest import needs_postgres, own_postgres_database
from ..mcp_helpers import call
from .test_access import cli, keyed, sending, status_of


@pytest.fixture
def team_store() -> Iterator[str]:
    with own_postgres_database("team") as url:
        yield url


@contextmanager
def servers(url: str, env: dict[str, str], count: int, *flags: str) -> Iterator[list[str]]:
    """`count` processes of `serve --http` on the same store, each on a port of its own."""
    with ExitStack() as stack:
        urls = []
        for _ in range(count):
            port = free_port()
            process = subprocess.Popen(
                command(url, "serve", "--http", "--port", str(port), *flags),
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            stack.enter_context(serving(process, port))
            urls.append(f"http://127.0.0.1:{port}/mcp")
        yield urls


@needs_postgres
@pytest.mark.anyio
async def test_two_server_processes_share_keys_revocations_and_memories(
    team_store: str, env: dict[str, str]
) -> None:
    cli(team_store, env, "user", "add", "ana", "--role", "editor")
    cli(team_store, env, "user", "add", "bo", "--role", "viewer")
    ana = str(cli(team_store, env, "key", "create", "--user", "ana")["key"])
    bo = cli(team_store, env, "key", "create", "--user", "bo")
    with servers(team_store, env, 2) as (first, second):
        async with keyed(first, ana) as client:
            filed = await call(client, "remember", notebook="ops", kind="fact",
                               text="The pool holds forty connections")  # fmt: skip
        async with keyed(second, str(bo["key"])) as client:  # filed through one, read on the other
            hits = (await call(client, "recall", query="pool connections"))["hits"]
            assert [h["id"] for h in hits] == [filed["id"]]
        assert status_of(first, str(bo["key"])) == status_of(second, str(bo["key"])) == 200
        cli(team_store, env, "key", "revoke", str(bo["id"]))
        assert status_of(first, str(bo["key"])) == status_of(second, str(bo["key"])) == 401
        cli(team_store, env, "user", "remove", "ana")
        assert status_of(second, ana) == 401  # a removed user's keys stop everywhere too


NGINX_CONF = """\
{user}worker_processes 1;
daemon off;
pid {folder}/nginx.pid;
error_log {folder}/error.log;
events {{ worker_connections 64; }}
http {{
    log_format upstream '$request $status $upstream_addr';
    access_log {folder}/access.log upstream;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
{upstream}
{site}
}}
"""


def nginx_site(section: str) -> tuple[str, str]:
    """docs/team.md's reverse proxy, `upstream` and `server` blocks, as the page shows them."""
    page = (Path(__file__).parents[2] / "docs" / "team.md").read_text(encoding="utf-8")
    block = page.split(section, 1)[1].split("```nginx\n", 1)[1].split("```", 1)[0]
    upstream, site = block.split("\n\n", 1)
    return upstream, site


@contextmanager
def nginx(folder: Path, ports: list[int], listen: int) -> Iterator[str]:
    """nginx in front of `ports`, on `listen`, with docs/team.md's configuration."""
    upstream, site = nginx_site("\n## A team server\n")
    for n, port in enumerate(ports):
        upstream = upstream.replace(f"127.0.0.1:{8765 + n}", f"127.0.0.1:{port}")
    site = site.replace("listen 8080", f"listen 127.0.0.1:{listen}")
    user = "user root;\n" if os.geteuid() == 0 else ""  # its workers may use the folder
    conf = folder / "nginx.conf"
    conf.write_text(NGINX_CONF.format(user=user, folder=folder, upstream=upstream, site=site))
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    process = subprocess.Popen([binary, "-c", str(conf), "-p", str(folder)],
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while not accepts_connections(listen):
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "nginx did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{listen}/mcp"
    finally:
        process.terminate()
        process.communicate(timeout=10)


@asynccontextmanager
async def documented_client(proxy: str, key: str) -> AsyncIterator[Client]:
    """A client configured as docs/team.md's team server section shows (its `headers`)."""
    page = (Path(__file__).parents[2] / "docs" / "team.md").read_text(encoding="utf-8")
    block = page.split("\n## A team server\n", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    server = json.loads(block)["mcpServers"]["palimpsest"]
    assert server["type"] == "http" and server["url"].endswith("/mcp")
    headers = {k: v.replace("palimpsest_k_...", key) for k, v in server["headers"].items()}
    async with sending(proxy, headers) as client:
        yield client


def session_statuses(url: str, key: str) -> list[int]:
    """What a client speaking protocol 2025-06-18 gets: it opens a session (its id in the
    `Mcp-Session-Id` header) and sends that id with every later request."""
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {key}",
               "MCP-Protocol-Version": "2025-06-18"}  # fmt: skip
    opening = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "older", "version": "1"}}}  # fmt: skip
    with httpx2.Client(timeout=30) as http:
        first = http.post(url, json=opening, headers=headers)
        headers["Mcp-Session-Id"] = first.headers.get("mcp-session-id", "")
        later = [{"jsonrpc": "2.0", "method": "notifications/initialized"}] + [
            {"jsonrpc": "2.0", "id": n, "method": "tools/list"} for n in range(2, 5)
        ]
        return [first.status_code] + [http.post(url, json=m, headers=headers).status_code
                                      for m in later]  # fmt: skip


@needs_postgres
@pytest.mark.anyio
async def test_the_documented_team_server_answers_through_its_reverse_proxy(
    team_store: str, env: dict[str, str], tmp_path: Path
) -> None:
    cli(team_store, env, "workspace", "create", "team")
    team = ("--workspace", "team")
    cli(team_store, env, *team, "user", "add", "ana", "--role", "editor")
    made = cli(team_store, env, *team, "key", "create", "--user", "ana", "--note", "laptop")
    key = str(made["key"])
    with servers(team_store, env, 2, "--stateless") as urls:
        ports = [int(url.split(":")[2].split("/")[0]) for url in urls]
        with nginx(tmp_path, ports, free_port()) as proxy:
            async with keyed(proxy, key) as client:  # every call may reach either process
                filed = await call(client, "remember", notebook="ops", kind="fact",
                                   text="The pool holds forty connections")  # fmt: skip
                for _ in range(4):
                    hits = (await call(client, "recall", query="pool connections"))["hits"]
                    assert [h["id"] for h in hits] == [filed["id"]]
            # docs/team.md's client configuration, with this key in it, as a client reads it.
            async with documented_client(proxy, key) as client:
                assert (await call(client, "recall", query="pool"))["hits"]
            # A client of an earlier protocol keeps a session: it too may reach either one.
            assert session_statuses(proxy, key) == [200, 202, 200, 200, 200]
            # Clients reach it by the proxy's own name, not a loopback one.
            by_name = httpx2.post(proxy, headers={
                "Host": "memory.example.org", "Authorization": f"Bearer {key}",
                "Accept": "application/json, text/event-stream"},
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)  # fmt: skip
            assert by_name.status_code == 200, by_name.text
            assert status_of(proxy, None) == 401
            cli(team_store, env, *team, "key", "revoke", str(made["id"]))
            assert status_of(proxy, key) == 401
    log = (tmp_path / "access.log").read_text()
    assert log.count("POST /mcp") >= 6
    # No request reached a process that did not know its session (404, then a new one).
    assert " 404 " not in log, log
    assert len({line.split()[-1] for line in log.splitlines()}) == 2, "both processes answered"
