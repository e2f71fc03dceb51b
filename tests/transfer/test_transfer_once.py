"""An import reads its file once (issue 30, item 13): what it loads is what it checked.

The attack: a restore read the file to check it, then again to load it, so a file swapped
in between (after its check) landed unchecked, a GitHub token and a `kind: bogus` with it.
Each test swaps or withholds the file at a real seam: the progress callback, which an
import calls while it checks; a named pipe, which gives its content to one reader only;
standard input.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from palimpsest.domain.errors import ValidationError
from palimpsest.service import Service
from palimpsest.store import open_store

from .test_transfer_attack import GITHUB, Records, _many, current, edited, leaked

MEMORIES = 600  # enough records that the import reports its checking before it loads


def _swapped(file: Path) -> tuple[Path, set[str]]:
    """The file with a GitHub token in one memory and a kind not ours in another, its
    header's counts agreeing; and those two memories' ids."""
    records = [json.loads(text) for text in file.read_text(encoding="utf-8").splitlines()]
    first, second = [r["memory_id"] for r in records if r["record"] == "version"][:2]

    def change(records: Records) -> None:
        current(records, first)["text"] = f"The deploy token is {GITHUB}"
        current(records, second)["kind"] = "bogus"

    return edited(file, change, name="swapped"), {first, second}


def test_a_file_swapped_once_it_was_checked_is_not_what_a_restore_loads(
    service: Service, tmp_path: Path
) -> None:
    file = _many(tmp_path, MEMORIES)
    swapped, _ = _swapped(file)
    steps: list[str] = []

    def swap_while_checking(step: str, done: int, total: int) -> None:
        if step == "checking" and "checking" not in steps:
            os.replace(swapped, file)  # the check has begun: the file is another now
        steps.append(step)

    answer = service.import_file(file, progress=swap_while_checking)
    assert "checking" in steps and "writing" in steps  # the swap came between the two
    assert answer["mode"] == "restore" and "refused" not in answer
    with service.store.read(service.workspace) as tx:
        memories = tx.memories_at(None)
    assert len(memories) == MEMORIES
    assert {m.kind for m in memories} == {"fact"}
    assert all(m.text.startswith("Service ") for m in memories)
    assert leaked(service, GITHUB, tmp_path) == []


def test_the_swapped_file_given_itself_is_refused_memory_by_memory(
    service: Service, tmp_path: Path
) -> None:
    swapped, bad = _swapped(_many(tmp_path, 3))
    answer = service.import_file(swapped)
    assert {r["id"] for r in answer["refused"]} == bad
    assert GITHUB not in json.dumps(answer)
    assert leaked(service, GITHUB, tmp_path) == []


# -- files that can be read once only ---------------------------------------------------------


def _serve_once(path: Path, content: bytes) -> threading.Thread:
    """Make `path` a named pipe that gives `content` to its first reader, and nothing to
    any later one (who waits for ever: the test's time-out says so)."""
    os.mkfifo(path)

    def serve() -> None:
        out = os.open(path, os.O_WRONLY)  # waits for the reader
        data = memoryview(content)
        try:
            while data:
                data = data[os.write(out, data) :]
        except BrokenPipeError:
            pass  # the reader stopped reading: it wanted part of the file only
        finally:
            os.close(out)

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    return server


def _release(path: Path, server: threading.Thread) -> None:
    """A server still waiting for its reader (the command failed first) stops waiting."""
    if server.is_alive():
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    server.join(timeout=10)


def _import(db: Path, file: str, env: dict[str, str], stdin: bytes | None = None
            ) -> dict[str, object]:  # fmt: skip
    command = [sys.executable, "-m", "palimpsest", "--db", str(db), "--json", "import", file]
    done = subprocess.run(command, env=env, capture_output=True, timeout=120, input=stdin)
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_a_restore_from_a_named_pipe_reads_it_once(tmp_path: Path, env: dict[str, str]) -> None:
    file = _many(tmp_path, 3)
    pipe = tmp_path / "pipe.jsonl"
    server = _serve_once(pipe, file.read_bytes())
    try:
        answer = _import(tmp_path / "target.db", str(pipe), env)
    finally:
        _release(pipe, server)
    assert answer["mode"] == "restore" and "refused" not in answer
    assert answer["counts"] == json.loads(file.read_text().splitlines()[0])["counts"]


def test_a_restore_from_standard_input(tmp_path: Path, env: dict[str, str]) -> None:
    file = _many(tmp_path, 3)
    answer = _import(tmp_path / "target.db", "/dev/stdin", env, stdin=file.read_bytes())
    assert answer["mode"] == "restore" and "refused" not in answer
    store = open_store(str(tmp_path / "target.db"))
    try:
        with store.read("default") as tx:
            assert len(tx.memories_at(None)) == 3
    finally:
        store.close()


def test_a_file_with_no_end_of_line_is_refused_before_it_is_held_whole(
    service: Service, tmp_path: Path, env: dict[str, str]
) -> None:
    """Read once, a file must not be held whole to be refused: /dev/zero has no end."""
    with pytest.raises(ValidationError) as refused:
        service.import_file(Path("/dev/zero"))
    assert refused.value.to_dict()["field"] == "file"
    command = [sys.executable, "-m", "palimpsest", "--db", str(tmp_path / "t.db"), "--json",
               "import", "/dev/zero"]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert json.loads(done.stdout or done.stderr)["error_class"] == "validation"
