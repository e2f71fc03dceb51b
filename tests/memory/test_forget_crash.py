"""Forget must finish even when the server dies: DESIGN section 2, "forget", on SQLite.

A forget commits, then folds the WAL into the database file and truncates it. A server
killed between the two leaves the forgotten text in the `-wal` file; so does one whose
checkpoint was held up by another process's open read. These tests kill a real
`palimpsest serve` (SIGKILL) at such moments, start it again, and scan every file of the
store, while the new server runs, for any byte of the forgotten text (UTF-8 and UTF-16,
as written and case-folded).
"""

from __future__ import annotations

import contextlib
import random
import subprocess
import sys
import uuid
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from ..agents.test_mcp_e2e import command, stdio
from ..mcp_helpers import call, refuse
from ..store.test_crash import kill_and_wait, server_pid

pytestmark = pytest.mark.anyio

SEED = 20_261_130
ROUNDS = 20
KILL_WITHIN = 0.05  # seconds after the forget is sent
ROUND_SECONDS = 30


def secret_word() -> str:
    # Mixed case, so the case-folded copy in the full-text index is a form of its own.
    return f"Qzxj{uuid.uuid4().hex[:10]}K7"


def forms(word: str) -> list[bytes]:
    """The byte patterns a copy of `word` could take in any file of the store."""
    texts = {word, word.casefold(), word[4:], word[4:].casefold()}
    encodings = ("utf-8", "utf-16-le", "utf-16-be")
    return sorted({text.encode(encoding) for text in texts for encoding in encodings})


def files_holding(folder: Path, word: str) -> list[str]:
    """Every file of `folder` (database, -wal, -shm, anything else) holding a form of `word`."""
    patterns = forms(word)
    return sorted(
        p.name
        for p in folder.iterdir()
        if p.is_file() and any(pattern in p.read_bytes() for pattern in patterns)
    )


def hold_a_read(db: Path) -> subprocess.Popen[str]:
    """Another process with a read transaction open on `db`: a checkpoint must wait for it."""
    script = (
        "import sqlite3, sys, time\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "conn.execute('BEGIN')\n"
        "conn.execute('SELECT count(*) FROM memory_versions').fetchone()\n"
        "print('reading', flush=True)\n"
        "time.sleep(600)\n"
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", script, str(db)], stdout=subprocess.PIPE, text=True
    )
    assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
    return reader


def end_read(reader: subprocess.Popen[str]) -> None:
    """SIGKILL the reading process, so it does not checkpoint on its way out."""
    if reader.poll() is None:
        kill_and_wait(reader.pid)
    reader.wait()
    assert reader.stdout is not None
    reader.stdout.close()


async def fill(client: Client, count: int) -> None:
    """Neighbours, so the forget's index merge and checkpoint take a little time."""
    for n in range(count):
        text = f"Deploy step {n} runs the migration for shard{n % 7} before traffic"
        await call(client, "remember", notebook=f"nb{n % 3}", kind="fact", text=text)


async def remember_secret(client: Client, word: str) -> str:
    filed = await call(
        client,
        "remember",
        notebook="people",
        kind="note",
        text=f"Ana's private number is {word}, call after six",
        title=f"Number {word}",
        tags=["people", word.casefold()],
    )
    return str(filed["id"])


async def test_a_forget_cut_off_before_its_checkpoint_is_finished_when_serve_starts(
    db_path: Path, env: dict[str, str]
) -> None:
    word = secret_word()
    async with stdio(db_path, env) as client:
        await fill(client, 30)
        memory = await remember_secret(client, word)
        reader = hold_a_read(db_path)
        try:
            answer = await call(client, "forget", id=memory, because="personal data")
            # The read held the checkpoint up: the text is still in the files, and we are told.
            assert answer["scrub_pending"] is True
            assert files_holding(db_path.parent, word)
            kill_and_wait(server_pid(command(db_path, "serve")))
        finally:
            end_read(reader)
    assert files_holding(db_path.parent, word), "the crash should leave the text on disk"

    async with stdio(db_path, env) as client:
        # Opening the store finishes the scrub: no call is needed. `serve` opens it as
        # soon as the client has its answer to `initialize`, which it then reads on.
        with anyio.fail_after(30):
            while files_holding(db_path.parent, word):
                await anyio.sleep(0.05)
        assert (await call(client, "inspect", id=memory))["tombstone"]["reason"] == (
            "personal data"
        )
        report = await call(client, "doctor")
        assert report["scrub_pending"] is False and "pending_scrubs" not in report


async def test_forgetting_again_finishes_a_scrub_left_pending(
    db_path: Path, env: dict[str, str]
) -> None:
    word = secret_word()
    async with stdio(db_path, env) as client:
        memory = await remember_secret(client, word)
        reader = hold_a_read(db_path)
        try:
            first = await call(client, "forget", id=memory, because="personal data")
            assert first["scrub_pending"] is True
            kill_and_wait(server_pid(command(db_path, "serve")))
            # The read is still open when the server starts again: it cannot finish yet.
            async with stdio(db_path, env) as again:
                assert files_holding(db_path.parent, word)
                report = await call(again, "doctor")
                assert report["scrub_pending"] is True
                assert [p["id"] for p in report["pending_scrubs"]] == [memory]
                end_read(reader)
                # The client retries the forget it never saw finish: it finishes, and says so.
                retried = await call(again, "forget", id=memory, because="personal data")
                assert retried["results"] == [
                    {"id": memory, "forgotten": True, "unchanged": True, "scrub_finished": True}
                ]
                assert retried["scrub_pending"] is False
                assert files_holding(db_path.parent, word) == []
                # Nothing pends any more: a third forget is an unknown id again.
                gone = await refuse(again, "forget", id=memory, because="personal data")
                assert gone["error_class"] == "not_found"
        finally:
            end_read(reader)


async def forget_then_kill(
    client: Client, args: list[str], memory: str, rng: random.Random
) -> None:
    """Send the forget, and SIGKILL the server at a random moment within KILL_WITHIN."""
    pid = server_pid(args)

    async def forget() -> None:
        # If the server dies first, the outcome is unknown to the client.
        with contextlib.suppress(MCPError):
            await client.call_tool("forget", {"id": memory, "because": "personal data"})

    async with anyio.create_task_group() as group:
        group.start_soon(forget)
        await anyio.sleep(rng.uniform(0, KILL_WITHIN))
        kill_and_wait(pid)
        group.cancel_scope.cancel()


async def test_serve_killed_within_50ms_of_a_forget_leaves_no_byte_of_the_text(
    db_path: Path, env: dict[str, str]
) -> None:
    """Each round starts the server again: its first call asks after the memory the last
    round tried to forget; then no byte of that text may be left. Then the next one."""
    rng = random.Random(SEED)
    args = command(db_path, "serve")
    killed_after_commit = 0
    last: tuple[str, str] | None = None  # the memory forgotten (or not) at the last kill
    for round_number in range(ROUNDS + 1):
        with anyio.fail_after(ROUND_SECONDS):
            async with stdio(db_path, env) as client:
                if last is None:
                    await fill(client, 150)
                else:
                    memory, word = last
                    shown = await call(client, "inspect", id=memory)  # the first call
                    if "tombstone" in shown:
                        killed_after_commit += 1
                    else:  # killed before the forget committed: the client forgets again
                        await call(client, "forget", id=memory, because="personal data")
                    assert files_holding(db_path.parent, word) == [], (round_number, shown)
                if round_number == ROUNDS:
                    break
                word = secret_word()
                memory = await remember_secret(client, word)
                await forget_then_kill(client, args, memory, rng)
                last = (memory, word)
    assert killed_after_commit > 0, "no round killed the server after the forget committed"
