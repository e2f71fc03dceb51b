"""A team server: two `serve --http` processes on one PostgreSQL, with keys (issue 12).

Neither process keeps anything of its own: each reads the store on every request, so a
key revoked, a user removed or a memory filed through one is seen by the other at once.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

from .conftest import needs_postgres, own_postgres_database
from .mcp_helpers import call
from .test_access import keyed, status_of
from .test_mcp_e2e import command, free_port, serving


@pytest.fixture
def team_store() -> Iterator[str]:
    with own_postgres_database("team") as url:
        yield url


def cli(url: str, env: dict[str, str], *args: str) -> dict[str, object]:
    done = subprocess.run(command(url, *args, "--json"), env=env, capture_output=True, text=True)  # type: ignore[arg-type]
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


@contextmanager
def servers(url: str, env: dict[str, str], count: int) -> Iterator[list[str]]:
    """`count` processes of `serve --http` on the same store, each on a port of its own."""
    with ExitStack() as stack:
        urls = []
        for _ in range(count):
            port = free_port()
            process = subprocess.Popen(
                command(url, "serve", "--http", "--port", str(port)),  # type: ignore[arg-type]
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
