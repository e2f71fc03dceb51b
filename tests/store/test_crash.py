"""Crash tests: a real `palimpsest serve` killed mid-stream, and the database server killed too.

A client streams remember and revise calls (each revise with the `expected_version` it
was last told) to a `palimpsest serve` process over stdio, with the official MCP client,
and notes a write — id, version, text — only once its success reply has arrived.
At a random moment (seeded) the server gets SIGKILL, usually with a call in flight. Then:

- for SQLite, `PRAGMA integrity_check` on the file must say ok;
- every write noted so far must be in the store exactly as acknowledged: that version of
  that memory, written by the event with that seq, with that text (read through the
  store, and through `inspect` on the restarted server);
- a call in flight at the kill was never acknowledged: it may or may not have landed,
  and the next revise of that memory expects whatever version the store now holds.

20 such rounds run on a SQLite file and 20 on PostgreSQL. On PostgreSQL, further rounds
kill the database server itself (SIGKILL to the postmaster, by the pid in its
`postmaster.pid`) while the stream goes on, restart it on the same port and directory, and
require the same `palimpsest serve` process to write again, with its connection pool,
within a bound; a call refused meanwhile must be refused as `retryable`, and is not
noted. The database server is started again at the end whatever happens. Only the test
run's own server is ever killed (tests/local_postgres.py): with PALIMPSEST_TEST_POSTGRES
naming a developer's server, these rounds skip and say why.

`serve` has no workspace option, so on PostgreSQL the writes go to the `default`
workspace of the test database; the texts carry a run id, so nothing collides.
"""

from __future__ import annotations

import os
import random
import select
import signal
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from palimpsest.service import Service
from palimpsest.store import open_store

from .. import conftest
from ..agents.test_mcp_e2e import command, stdio
from ..conftest import POSTGRES_URL, needs_postgres
from ..local_postgres import LocalPostgres
from ..mcp_helpers import call, refused, versions_whole

pytestmark = pytest.mark.anyio

SEED = 20_260_530
ROUNDS = 20
DATABASE_ROUNDS = 3
KILL_AFTER = (0.05, 0.5)  # seconds of streaming before the kill
ROUND_SECONDS = 30  # a generous bound on one round: a hang fails instead of stalling CI
RECOVERY_SECONDS = 20  # the server must write again this soon after the database is back
WORKSPACE = "default"
# test_mcp_e2e's `stdio` and `command` take the store as a Path; a str (a file path, or a
# postgresql:// URL, which a Path would mangle) reaches `--db` just the same.


@dataclass(frozen=True)
class Write:
    id: str
    version: int
    text: str


@dataclass
class Ledger:
    """What the client was told: a write is noted only once its success reply is in."""

    run: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    writes: list[Write] = field(default_factory=list)
    current: dict[str, int] = field(default_factory=dict)  # the version to expect next
    unanswered: set[str] = field(default_factory=set)  # revised without a success reply
    calls: int = 0
    goal: tuple[int, anyio.Event] | None = None  # wake a waiter once this many are noted
    server_killed: bool = False

    def note(self, write: Write) -> None:
        self.writes.append(write)
        self.current[write.id] = write.version
        self.unanswered.discard(write.id)
        if self.goal and len(self.writes) >= self.goal[0]:
            self.goal[1].set()

    async def wait_for(self, count: int) -> None:
        self.goal = (count, anyio.Event())
        if len(self.writes) < count:
            await self.goal[1].wait()

    def next_call(self, rng: random.Random) -> tuple[str, dict[str, Any]]:
        self.calls += 1
        text = f"crash test {self.run} call {self.calls}"
        if not self.current or rng.random() < 0.35:
            notebook = rng.choice(["crash-a", "crash-b"])
            return "remember", {"notebook": notebook, "kind": "fact", "text": text}
        memory_id = rng.choice(sorted(self.current))
        # Until a reply says otherwise, this revise may have landed or not: no more
        # revises of that memory until the store has been read again.
        expected = self.current.pop(memory_id)
        self.unanswered.add(memory_id)
        return "revise", {"id": memory_id, "text": text, "expected_version": expected}


def acknowledged(tool: str, arguments: dict[str, Any], answer: dict[str, Any]) -> Write:
    if tool == "remember":
        return Write(answer["id"], answer["version"], arguments["text"])
    [result] = answer["results"]
    return Write(result["id"], result["version"], arguments["text"])


async def stream(client: Client, ledger: Ledger, rng: random.Random, outage: bool) -> None:
    """Write until the connection to the server breaks (or the caller cancels).

    Without a database outage every answer must be a success; during one, a refusal
    must be `retryable`, and it is not noted.
    """
    while True:
        tool, arguments = ledger.next_call(rng)
        try:
            result = await client.call_tool(tool, arguments)
        except MCPError as exc:  # the server is gone: this call's outcome is unknown
            assert ledger.server_killed, f"the connection broke before the kill: {exc}"
            return
        if result.is_error:
            body = refused(result)
            assert outage and body["error_class"] == "retryable", (tool, arguments, body)
            continue
        assert result.structured_content is not None
        ledger.note(acknowledged(tool, arguments, result.structured_content))


def server_pid(args: list[str]) -> int:
    """The pid of this process's own child running exactly `args` (the served store)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")[:-1]
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and [a.decode() for a in argv] == args:
            found.append(int(entry.name))
    assert len(found) == 1, found
    return found[0]


def kill_and_wait(pid: int) -> None:
    """SIGKILL `pid` and wait until it has died."""
    fd = os.pidfd_open(pid)  # pins the process: a reused pid cannot be hit
    try:
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        readable, _, _ = select.select([fd], [], [], 30)  # readable once it has exited
        assert readable, f"{pid} survived SIGKILL"
    finally:
        os.close(fd)


def check_store(url: str, ledger: Ledger, writes: list[Write]) -> None:
    """Each noted write is there as acknowledged; then learn what each memory is at now."""
    store = open_store(url)
    try:
        with store.read(WORKSPACE) as tx:
            for memory_id in sorted({w.id for w in writes} | ledger.unanswered):
                versions = {v.version: v for v in tx.memory_versions(memory_id)}
                for write in (w for w in writes if w.id == memory_id):
                    row = versions.get(write.version)
                    assert row is not None, ("an acknowledged write is missing", write)
                    assert row.memory is not None and row.memory.text == write.text, (write, row)
                ledger.current[memory_id] = max(versions)  # an unanswered write may have landed
        ledger.unanswered.clear()
    finally:
        store.close()


async def check_inspect(client: Client, writes: list[Write]) -> None:
    """The restarted server shows each of these writes as acknowledged."""
    for memory_id in sorted({w.id for w in writes}):
        shown = await call(client, "inspect", id=memory_id)
        versions = {v["version"]: v for v in shown["versions"]}
        texts = versions_whole(shown)
        for write in (w for w in writes if w.id == memory_id):
            assert write.version in versions, ("inspect misses a write", write)
            content = texts[write.version]
            assert content is not None
            assert content["text"] == write.text, (write, versions[write.version])


def check_sqlite_file(db: Path) -> None:
    with closing(sqlite3.connect(db)) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


async def server_kill_round(
    url: str, env: dict[str, str], ledger: Ledger, rng: random.Random, last: list[Write]
) -> list[Write]:
    """Restart the server, check the last round's writes, stream, SIGKILL it; return ours."""
    before = len(ledger.writes)
    ledger.server_killed = False
    with anyio.fail_after(ROUND_SECONDS):
        async with stdio(url, env) as client:
            await check_inspect(client, last)
            pid = server_pid(command(url, "serve"))  # type: ignore[arg-type]  # a URL too
            async with anyio.create_task_group() as group:
                group.start_soon(stream, client, ledger, rng, False)
                await anyio.sleep(rng.uniform(*KILL_AFTER))  # the random moment itself
                ledger.server_killed = True
                kill_and_wait(pid)
    return ledger.writes[before:]


async def crash_rounds(url: str, env: dict[str, str], sqlite_file: Path | None) -> Ledger:
    ledger = Ledger()
    rng = random.Random(SEED)
    last: list[Write] = []
    for _ in range(ROUNDS):
        last = await server_kill_round(url, env, ledger, rng, last)
        if sqlite_file is not None:
            check_sqlite_file(sqlite_file)
        check_store(url, ledger, last)
    async with stdio(url, env) as client:
        await check_inspect(client, last)
    check_store(url, ledger, ledger.writes)
    assert len(ledger.writes) > ROUNDS, "too few writes were acknowledged to test anything"
    return ledger


async def test_sqlite_survives_serve_killed_mid_stream(db_path: Path, env: dict[str, str]) -> None:
    await crash_rounds(str(db_path), env, db_path)


@needs_postgres
async def test_postgres_survives_serve_killed_mid_stream(env: dict[str, str]) -> None:
    assert POSTGRES_URL
    await crash_rounds(POSTGRES_URL, env, None)


# -- killing the database server --------------------------------------------------------------


@pytest.fixture
def cluster() -> Iterator[LocalPostgres]:
    """The run's own server, to crash; running again afterwards, whatever happened."""
    if conftest.LOCAL_POSTGRES is None:
        pytest.skip(
            "PALIMPSEST_TEST_POSTGRES names a server this run did not start, and the test"
            " kills only the run's own: unset it to run this test"
        )
    try:
        yield conftest.LOCAL_POSTGRES
    finally:
        conftest.LOCAL_POSTGRES.ensure_running()


async def database_kill_round(
    cluster: LocalPostgres, env: dict[str, str], ledger: Ledger, rng: random.Random
) -> list[Write]:
    """Crash and restart the database under a streaming server; it must write again."""
    before = len(ledger.writes)
    with anyio.fail_after(ROUND_SECONDS + RECOVERY_SECONDS):
        async with stdio(cluster.url, env) as client, anyio.create_task_group() as group:
            group.start_soon(stream, client, ledger, rng, True)
            # Under a server that has opened its store (it does so once `initialize` is
            # answered): its first write answered, then the random moment itself.
            await ledger.wait_for(before + 1)
            await anyio.sleep(rng.uniform(*KILL_AFTER))
            cluster.kill()
            crashed_at = len(ledger.writes)
            await anyio.to_thread.run_sync(cluster.ensure_running)
            with anyio.move_on_after(RECOVERY_SECONDS) as waiting:
                # three answered after the crash, of which at most one was in flight at it
                await ledger.wait_for(crashed_at + 3)
            assert not waiting.cancelled_caught, "serve did not write again after the restart"
            group.cancel_scope.cancel()
    return ledger.writes[before:]


@needs_postgres
async def test_postgres_survives_the_database_server_killed(
    cluster: LocalPostgres, env: dict[str, str]
) -> None:
    ledger = Ledger()
    rng = random.Random(SEED + 1)
    for _ in range(DATABASE_ROUNDS):
        written = await database_kill_round(cluster, env, ledger, rng)
        check_store(cluster.url, ledger, written)
    check_store(cluster.url, ledger, ledger.writes)
    async with stdio(cluster.url, env) as client:
        await check_inspect(client, ledger.writes)


@needs_postgres
def test_connections_the_server_dropped_are_replaced_before_the_next_call() -> None:
    """A restarted or failed-over server leaves every pooled connection dead: the next call
    must get a fresh one, not an error."""
    assert POSTGRES_URL
    name = f"palimpsest-dropped-{uuid.uuid4().hex[:8]}"
    separator = "&" if "?" in POSTGRES_URL else "?"
    store = open_store(f"{POSTGRES_URL}{separator}application_name={name}")
    try:
        service = Service(store, workspace=f"test-{uuid.uuid4().hex[:12]}")
        service.remember(notebook="n", kind="fact", text="Filed before the drop")
        with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
            dropped = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = %s",
                (name,),
            ).fetchone()
        assert dropped is not None and dropped[0] >= 1
        service.remember(notebook="n", kind="fact", text="Filed after the drop")
        assert len(service.recall(query="filed the drop")["hits"]) == 2
    finally:
        store.close()
