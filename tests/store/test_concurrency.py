"""Four writer processes on one store, then the history is audited against what they were told.

Each worker (tests/concurrency_worker.py) makes 500 mixed writes — remember, revise of the
text, retire and reactivate through `status` — most revises aimed at a few shared "hot"
memories so that they race, every revise carrying the `expected_version` read just
before (one in ten deliberately stale). Each worker logs every answer it got. Afterwards
the events and the version rows are the ground truth, and the test checks:

1. The current state equals the replay of the events: for every memory event in `seq`
   order, the memory becomes the version row that event wrote.
2. The history is well formed: each memory's versions run 1..n, each written by exactly
   one event, in increasing `seq`.
3. No acknowledged write is missing, and nothing was written that nobody was told about:
   the version rows are exactly the seeds plus the acknowledged writes, each with the
   `seq`, the actor and the content (carrying the worker's token) it was acknowledged with.
4. A revise succeeded exactly when its `expected_version` equalled the memory's version
   just before its event, and every other one came back as `conflict`. This is exact:
   each write transaction notes the last event it saw when it began (`seen`: inside the
   transaction, after the writer lock, so precisely the state the check ran against),
   and the replay gives the memory's version at that event. A success must have had
   expected == that version, its event must be the first of the workspace after `seen`
   (nothing slipped in between), and its new version must be expected + 1. A conflict
   must have had expected != that version and must have written nothing. That `seen`
   is not stale is checked against the worker's own reads: it lies between the snapshot
   the version was read from (`before`) and the one read after the answer (`after`).

SQLite writers wait for the file lock (busy timeout); an answer of `retryable` (busy) is
counted separately, must be rare, and must not have written anything.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from palimpsest.domain.model import Event, Memory, MemoryVersion
from palimpsest.service import Service
from palimpsest.store import EventFilter, Store, open_store

from ..concurrency_worker import ACTOR
from ..conftest import POSTGRES_URL, needs_postgres

REPO = Path(__file__).resolve().parents[2]
WORKERS = 4
OPS = 500
HOT = 8  # shared memories most revises aim at
WRITE_SECONDS = 40  # each worker stops here, whatever it has done
MAX_RETRYABLE_SHARE = 0.01
ALL_EVENTS = EventFilter(limit=10_000_000)


def test_four_processes_on_one_sqlite_file(tmp_path: Path) -> None:
    run_and_audit(str(tmp_path / "palimpsest.db"), "default", tmp_path)


@needs_postgres
def test_four_processes_on_one_postgres_workspace(tmp_path: Path) -> None:
    assert POSTGRES_URL
    run_and_audit(POSTGRES_URL, f"conc-{uuid.uuid4().hex[:12]}", tmp_path)


def run_and_audit(url: str, workspace: str, tmp_path: Path) -> None:
    store = open_store(url)
    try:
        seeds = seed(store, workspace)
        logs = run_workers(url, workspace, [s.id for s in seeds], tmp_path)
        audit(store, workspace, seeds, logs)
    finally:
        store.close()


def seed(store: Store, workspace: str) -> list[Memory]:
    service = Service(store, workspace=workspace, actor=ACTOR)
    ids = [
        service.remember(notebook="hot", kind="fact", text=f"hot memory {n}")["id"]
        for n in range(HOT)
    ]
    with store.read(workspace) as tx:
        found = [tx.get_memory(i) for i in ids]
    return [m for m in found if m is not None]


def run_workers(
    url: str, workspace: str, hot: list[str], tmp_path: Path
) -> dict[int, list[dict[str, Any]]]:
    """Start the workers, let them all go at once, and return each one's log."""
    deadline = time.time() + WRITE_SECONDS
    errors = tmp_path / "workers.stderr"
    processes: dict[int, subprocess.Popen[str]] = {}
    with errors.open("w", encoding="utf-8") as stderr:
        try:
            for n in range(WORKERS):
                spec = {
                    "url": url,
                    "workspace": workspace,
                    "worker": n,
                    "ops": OPS,
                    "seed": 1000 + n,
                    "hot": hot,
                    "log": str(tmp_path / f"worker-{n}.jsonl"),
                    "deadline": deadline,
                }
                processes[n] = subprocess.Popen(
                    [sys.executable, "-m", "tests.concurrency_worker", json.dumps(spec)],
                    cwd=REPO,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    text=True,
                )
            for n, process in processes.items():
                assert process.stdout is not None
                line = process.stdout.readline()  # the worker has its store open
                assert line.strip() == "ready", (n, line, errors.read_text(encoding="utf-8"))
            for process in processes.values():
                assert process.stdin is not None
                process.stdin.write("go\n")
                process.stdin.close()
            for n, process in processes.items():
                process.wait(timeout=max(1.0, deadline - time.time() + 20))
                assert process.returncode == 0, (n, errors.read_text(encoding="utf-8"))
        finally:
            for process in processes.values():
                if process.poll() is None:
                    process.kill()
                    process.wait()
                if process.stdout:
                    process.stdout.close()
    logs = {}
    for n in range(WORKERS):
        lines = (tmp_path / f"worker-{n}.jsonl").read_text(encoding="utf-8").splitlines()
        logs[n] = [json.loads(line) for line in lines]
    return logs


def audit(
    store: Store, workspace: str, seeds: list[Memory], logs: dict[int, list[dict[str, Any]]]
) -> None:
    entries = [dict(e, worker=n) for n, log in logs.items() for e in log]
    answers = Counter(e.get("answer", e["op"]) for e in entries)
    unexpected = [e for e in entries if e.get("answer") not in ("ok", "conflict", "retryable")]
    assert not unexpected, unexpected[:5]
    assert len(entries) == WORKERS * OPS, answers  # no worker ran out of time
    retryable = [e for e in entries if e["answer"] == "retryable"]
    assert len(retryable) <= MAX_RETRYABLE_SHARE * len(entries), answers
    assert answers["ok"] > len(entries) / 2, answers
    raced = [e for e in entries if e["answer"] == "conflict" and e["expected"] == e["read_version"]]
    assert raced, "no revise lost a race: the workers did not overlap"

    with store.read(workspace) as tx:
        events = tx.events(ALL_EVENTS)
        memory_ids = sorted({e.target_id for e in events if e.target_type == "memory"})
        rows = {i: {v.version: v for v in tx.memory_versions(i)} for i in memory_ids}
        current = {m.id: m for m in tx.memories_at(None)}
    memory_events = [e for e in events if e.target_type == "memory"]

    check_replay(memory_events, rows, current)
    check_well_formed(memory_events, rows)
    check_acknowledged(entries, seeds, rows)
    check_revise_outcomes(entries, [e.seq for e in events], rows)


def check_replay(
    events: list[Event], rows: dict[str, dict[int, MemoryVersion]], current: dict[str, Memory]
) -> None:
    state: dict[str, Memory] = {}
    for event in events:
        assert event.op != "forget", event  # the workers never forget
        row = rows[event.target_id][event.version or 0]
        assert row.seq == event.seq, (event, row)
        assert row.memory is not None, row
        state[event.target_id] = row.memory
    assert state == current, "the current state differs from the replay of the events"


def check_well_formed(events: list[Event], rows: dict[str, dict[int, MemoryVersion]]) -> None:
    assert len(events) == sum(len(v) for v in rows.values()), "a version row without its event"
    for memory_id, versions in rows.items():
        numbers = sorted(versions)
        assert numbers == list(range(1, len(numbers) + 1)), (memory_id, numbers)
        seqs = [versions[n].seq for n in numbers]
        assert seqs == sorted(set(seqs)), (memory_id, seqs)


def content_matches(entry: dict[str, Any], memory: Memory) -> bool:
    if entry["op"] in ("remember", "revise"):
        return memory.text == entry["text"]
    return (memory.status, memory.status_note) == (entry["status"], entry["note"])


def check_acknowledged(
    entries: list[dict[str, Any]], seeds: list[Memory], rows: dict[str, dict[int, MemoryVersion]]
) -> None:
    """Every acknowledged write is there as acknowledged, and nothing else was written."""
    expected = {(m.id, 1) for m in seeds}
    for entry in entries:
        if entry["answer"] != "ok":
            continue
        if entry["op"] != "remember" and not entry["results"]:
            # A deliberately stale expected_version that another writer's change made right
            # (version 1 sent as 2): the status no longer qualifies, and nothing was written.
            assert entry["unmatched"], entry
            continue
        key = (entry["id"], entry["version"])
        assert key not in expected, ("two writes acknowledged as one version", entry)
        expected.add(key)
        row = rows.get(entry["id"], {}).get(entry["version"])
        assert row is not None, ("an acknowledged write is missing", entry)
        assert row.actor == ACTOR, (entry, row)
        assert row.memory is not None and content_matches(entry, row.memory), (entry, row)
    on_disk = {(i, v) for i, versions in rows.items() for v in versions}
    maybe = [e for e in entries if e.get("maybe_applied")]
    unexplained = on_disk - expected
    assert len(unexplained) <= len(maybe), ("writes nobody was told about", sorted(unexplained))


def version_at(versions: dict[int, MemoryVersion], seq: int) -> int:
    """The memory's version just after event `seq` (0: it did not exist yet)."""
    return max((v.version for v in versions.values() if v.seq <= seq), default=0)


def check_revise_outcomes(
    entries: list[dict[str, Any]], seqs: list[int], rows: dict[str, dict[int, MemoryVersion]]
) -> None:
    for entry in entries:
        if entry["op"] == "remember" or entry["answer"] == "retryable":
            continue
        versions = rows[entry["id"]]
        seen = entry["seen"]
        assert seen is not None, ("the write ran no transaction", entry)
        assert entry["before"] <= seen <= entry["after"], ("a stale write snapshot", entry)
        at_attempt = version_at(versions, seen)
        if entry["answer"] == "ok":
            assert entry["unmatched"] == [] and len(entry["results"]) == 1, entry
            assert entry["expected"] == at_attempt, ("succeeded with a wrong version", entry)
            assert entry["version"] == entry["expected"] + 1, entry
            first_after = min(s for s in seqs if s > seen)
            written = versions[entry["version"]].seq
            assert written == first_after, ("an event slipped in before this one", entry)
        else:
            assert entry["answer"] == "conflict", entry
            assert entry["expected"] != at_attempt, ("a conflict on the current version", entry)
