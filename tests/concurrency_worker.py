"""One writer of tests/store/test_concurrency.py: mixed writes on a shared store, all logged.

Run as `python -m tests.concurrency_worker SPEC` (SPEC: JSON with url, workspace, worker,
ops, seed, hot, log, deadline). The worker opens the store, prints `ready`, waits for a
line on stdin (so that every worker starts writing at once), then makes `ops` writes:
remember, or a revise of a memory read just before (a text change, a retire, or a
reactivation) with `expected_version` from that read — now and then deliberately stale.

Every outcome is one JSON line in the log, flushed at once: what was asked, the answer
(`ok` with id and version; or the error class), and three event sequence numbers
that place the attempt in the history: `before` (the last event in the snapshot the
memory was read from), `seen` (the last event the write transaction itself saw when it
began, noted by `Observed`) and `after` (the last event in a snapshot read after the
answer came back).
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from palimpsest.domain.errors import PalimpsestError, Retryable
from palimpsest.embed import NullEmbedder
from palimpsest.service import Service
from palimpsest.store import Store, StoreWriter, open_store

STALE_SHARE = 0.1  # revises sent with a version that was not the one just read
DISCOVER_EVERY = 50  # ops between looks at which memories exist (other workers' too)


# Every worker writes as one actor, the seed's: concurrency is what this measures, and
# ownership would refuse most cross-worker edits (tests/memory/test_operations.py covers it).
# Which worker wrote what is still told apart by the token each write carries.
ACTOR = "agent:load"


class Observed:
    """The real store; each write transaction notes the last event it saw on entering.

    Inside the transaction (after SQLite's BEGIN IMMEDIATE, after PostgreSQL's workspace
    lock) that is exactly the state the service's `expected_version` check runs against.
    """

    def __init__(self, store: Store):
        self.store = store
        self.url = store.url
        self.replicates = store.replicates
        self.seen: int | None = None

    def read(self, workspace: str) -> Any:
        return self.store.read(workspace)

    @contextmanager
    def write(self, workspace: str) -> Iterator[StoreWriter]:
        with self.store.write(workspace) as tx:
            last = tx.last_event()
            self.seen = last.seq if last else 0
            yield tx

    def scrub(self, workspace: str | None = None) -> bool:
        return self.store.scrub(workspace)

    def close(self) -> None:
        self.store.close()


class Worker:
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec
        self.number = spec["worker"]
        self.workspace = spec["workspace"]
        self.store = Observed(open_store(spec["url"]))
        self.service = Service(
            self.store,  # type: ignore[arg-type]
            workspace=self.workspace,
            actor=ACTOR,
            embedder=NullEmbedder(),  # concurrency, not meaning: no model (as in conftest)
        )
        self.rng = random.Random(spec["seed"])
        self.hot: list[str] = list(spec["hot"])
        self.others: list[str] = []

    def last_seq(self) -> int:
        with self.store.read(self.workspace) as tx:
            last = tx.last_event()
            return last.seq if last else 0

    def discover(self) -> None:
        with self.store.read(self.workspace) as tx:
            self.others = [m.id for m in tx.memories_at(None) if m.id not in self.hot]

    def run(self, log: Any) -> None:
        for step in range(self.spec["ops"]):
            if time.time() > self.spec["deadline"]:
                log.write(json.dumps({"step": step, "op": "deadline"}) + "\n")
                return
            if step % DISCOVER_EVERY == 0:
                self.discover()
            entry = self.remember(step) if self.rng.random() < 0.25 else self.revise(step)
            log.write(json.dumps(entry) + "\n")
            log.flush()

    def remember(self, step: int) -> dict[str, Any]:
        token = f"w{self.number}-{step}"
        notebook = self.rng.choice(["shared-a", "shared-b", f"own-w{self.number}"])
        entry: dict[str, Any] = {"step": step, "op": "remember", "token": token}
        entry["text"] = f"{token}: filed by worker {self.number}"
        return self.attempt(
            entry, lambda: self.service.remember(notebook=notebook, kind="fact", text=entry["text"])
        )

    def revise(self, step: int) -> dict[str, Any]:
        token = f"w{self.number}-{step}"
        pool = self.others if self.others and self.rng.random() < 0.25 else self.hot
        memory_id = self.rng.choice(pool)
        with self.store.read(self.workspace) as tx:
            memory = tx.get_memory(memory_id)
            last = tx.last_event()
        assert memory is not None, memory_id  # nothing here forgets
        expected = memory.version
        if self.rng.random() < STALE_SHARE:
            expected = expected - 1 if expected > 1 else expected + 1
        changes: dict[str, Any]
        if memory.status == "active" and self.rng.random() < 0.3:
            op, changes = "retire", {"status": "retracted", "because": "a test", "note": token}
        elif memory.status != "active" and self.rng.random() < 0.5:
            op, changes = "reactivate", {"status": "active", "note": token}
        else:
            op, changes = "revise", {"text": f"{token}: revised by worker {self.number}"}
        entry = {
            "step": step,
            "op": op,
            "token": token,
            "id": memory_id,
            "expected": expected,
            "read_version": memory.version,
            "before": last.seq if last else 0,
            **changes,
        }
        return self.attempt(
            entry,
            lambda: self.service.revise(id=memory_id, expected_version=expected, **changes),
        )

    def attempt(self, entry: dict[str, Any], write: Any) -> dict[str, Any]:
        self.store.seen = None
        try:
            answer = write()
        except PalimpsestError as exc:
            entry["answer"] = exc.error_class
            entry["message"] = exc.message
            entry["maybe_applied"] = isinstance(exc, Retryable) and exc.maybe_applied
        else:
            entry["answer"] = "ok"
            if entry["op"] == "remember":
                entry.update(id=answer["id"], version=answer["version"])
            else:
                entry["results"] = answer["results"]
                entry["unmatched"] = answer["unmatched"]
                if len(answer["results"]) == 1:
                    result = answer["results"][0]
                    entry.update(version=result.get("version"))
        entry["seen"] = self.store.seen
        entry["after"] = self.last_seq()
        return entry


def main() -> None:
    spec = json.loads(sys.argv[1])
    worker = Worker(spec)
    print("ready", flush=True)
    sys.stdin.readline()
    try:
        with open(spec["log"], "w", encoding="utf-8") as log:
            worker.run(log)
    finally:
        worker.store.close()


if __name__ == "__main__":
    main()
