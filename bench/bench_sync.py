"""Replicas (docs/sync.md): how long a laptop's first sync takes, a round with nothing new,
and the reads an agent waits on, served by a replica with its server stopped.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_sync.py                           # server on SQLite
    .venv/bin/python bench/bench_sync.py --postgres URL            # on an empty database

Fills the server's store (a temporary SQLite file, or the PostgreSQL database given, which
must be empty) through the service's remember with `items` (bench_core's seeded corpus,
embedded by the default model: vectors on, as a team runs it) plus a forbidding rule, makes
an owner's key, and serves it with a real `palimpsest serve --http`. Then, into a fresh
SQLite replica:

- the first sync, as a person runs it: `palimpsest sync --server URL`, the process's wall
  time from start to exit (target: under 10 s at 10,000 events on loopback);
- a round with nothing new, in one process (`sync_round`, each round its own connection):
  the median and p95 of 20 (target: a median under 50 ms), and once as a CLI process;
- a write queued on the replica while the server is down, with a keeper running (as
  `serve` keeps one): seconds from the server answering again to the write taken there
  (target: within 2 s);
- with the server stopped, `orient` of a notebook (in one process, p50 of 20) and the guard
  hook (`palimpsest hook guard`, the process an agent runs before each command, p50 of 15)
  on the replica, beside the same on a plain local store holding the same memories (the
  server's export imported into a new SQLite file).

For PostgreSQL, `.venv/bin/python -m tests.local_postgres` starts a server and prints the
URL to give.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_bulk import file_batch
from bench_core import Corpus
from bench_serve import http_server
from palimpsest.domain.projects import bind_project
from palimpsest.embed import DEFAULT_EMBEDDER, load_embedder
from palimpsest.service import Service
from palimpsest.store import open_store
from palimpsest.sync import sync_round
from palimpsest.sync.keeper import Keeper

BATCH = 250
RULE_NOTEBOOK = "ops"
FORCE = {"kind": "forbidden", "literals": ["git push --force"]}
ROUNDS, ORIENTS, HOOKS = 20, 20, 15


def filled(url: str, memories: int) -> str:
    """`memories` memories and a rule filed with vectors; an owner's key."""
    store = open_store(url)
    try:
        service = Service(store, actor="user:bench", embedder=load_embedder(DEFAULT_EMBEDDER))
        corpus = Corpus(seed=11)
        filed, started = 0, time.perf_counter()
        while filed < memories:
            batch = [corpus.memory() for _ in range(min(BATCH, memories - filed))]
            filed += file_batch(service, batch)
        service.remember(notebook=RULE_NOTEBOOK, kind="rule", text="Never force-push.",
                         falsifier="a force-push that harmed nothing", severity="irreversible",
                         check=FORCE)  # fmt: skip
        service.add_user(name="bench", role="owner")
        key = service.create_key(user="bench", note="bench_sync")["key"]
        print(f"filled {filed:,} memories in {time.perf_counter() - started:.1f} s", flush=True)
        return key
    finally:
        store.close()


def palimpsest(db: Path | str, env: dict[str, str], *args: str, stdin: str | None = None) -> float:
    """Seconds one `palimpsest --db DB ARGS` process took, start to exit."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "palimpsest", "--db", str(db), *args], env=env,
                   input=stdin, capture_output=True, text=True, check=True)  # fmt: skip
    return time.perf_counter() - started


def counted(db: Path, table: str) -> int:
    with sqlite3.connect(db) as raw:
        return int(raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def empty_rounds(replica: Path, server: str, key: str) -> list[float]:
    store = open_store(str(replica))
    try:
        service = Service(store, embedder=load_embedder(DEFAULT_EMBEDDER))
        times = []
        for _ in range(ROUNDS + 1):  # each round its own connection, as each CLI round's
            started = time.perf_counter()
            done = sync_round(service, server, key)
            times.append(time.perf_counter() - started)
            assert done.events == 0, done
        return times[1:]  # the first warms this process
    finally:
        store.close()


def orients(db: Path) -> list[float]:
    store = open_store(str(db))
    try:
        service = Service(store, embedder=load_embedder(DEFAULT_EMBEDDER))
        service.orient(notebook=RULE_NOTEBOOK)
        times = []
        for _ in range(ORIENTS):
            started = time.perf_counter()
            service.orient(notebook=RULE_NOTEBOOK)
            times.append(time.perf_counter() - started)
        return times
    finally:
        store.close()


def hooks(db: Path, env: dict[str, str], project: Path) -> list[float]:
    call = json.dumps({"session_id": "bench", "cwd": str(project), "hook_event_name":
                       "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "git push --force origin main"}})  # fmt: skip
    palimpsest(db, env, "hook", "guard", stdin=call)
    return [palimpsest(db, env, "hook", "guard", stdin=call) for _ in range(HOOKS)]


def pushed_after_return(replica: Path, url: str, env: dict[str, str], key: str) -> str:
    """A write queued while the server is down, with a keeper running as `serve` runs one:
    the seconds from the server accepting connections again to the write taken there."""
    store = open_store(str(replica))
    service = Service(store, embedder=load_embedder(DEFAULT_EMBEDDER))
    try:
        state = service.replica()
        assert state is not None
        port = int(state.server.rsplit(":", 1)[1])
        service.remember(notebook=RULE_NOTEBOOK, kind="fact", text="Queued while away")
        keeper = Keeper(service, state.server, key, every=600).start()
        try:
            with http_server(url, env, port=port):
                back = time.perf_counter()  # the server answers from here on
                while service.pending_writes():
                    assert time.perf_counter() - back < 60, "never pushed"
                    time.sleep(0.01)
                return f"{time.perf_counter() - back:6.2f} s after it answers again (target 2 s)"
        finally:
            keeper.stop()
    finally:
        store.close()


def ms(samples: list[float]) -> str:
    p95 = statistics.quantiles(samples, n=20, method="inclusive")[18]
    return f"p50 {statistics.median(samples) * 1000:7.1f} ms   p95 {p95 * 1000:7.1f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--postgres", help="an empty PostgreSQL database's URL")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="palimpsest-sync-") as folder:
        scratch = Path(folder)
        url = args.postgres or str(scratch / "server.db")
        replica, local, exported = scratch / "replica.db", scratch / "local.db", scratch / "x.jsonl"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
        env.update(HOME=str(scratch / "home"), PALIMPSEST_EMBEDDER=DEFAULT_EMBEDDER)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        key = filled(url, args.memories)
        print(f"sync at {args.memories:,} memories, server on "
              f"{'PostgreSQL' if args.postgres else 'SQLite'}, {os.cpu_count()} cores, "
              f"load {os.getloadavg()[0]:.1f}:")  # fmt: skip
        with http_server(url, env) as (port, _):
            server = f"http://127.0.0.1:{port}"
            first = palimpsest(replica, {**env, "PALIMPSEST_SYNC_KEY": key}, "sync",
                               "--server", server)  # fmt: skip
            print(f"  first sync (the CLI process)     {first:6.2f} s   "
                  f"{counted(replica, 'events'):,} events, "
                  f"{counted(replica, 'memory_vectors'):,} vectors")  # fmt: skip
            print(f"  a round with nothing new        {ms(empty_rounds(replica, server, key))}")
            nothing = palimpsest(replica, {**env, "PALIMPSEST_SYNC_KEY": key}, "sync",
                                 "--server", server)  # fmt: skip
            print(f"  the same, as a CLI process      {nothing * 1000:7.1f} ms")
        print(f"  a queued write, server back      {pushed_after_return(replica, url, env, key)}")
        palimpsest(url, env, "export", str(exported))
        palimpsest(local, env, "import", str(exported))
        project = scratch / "project"
        project.mkdir()
        bind_project(project, RULE_NOTEBOOK)
        print("  with the server stopped:")
        for name, db in (("replica", replica), ("local store", local)):
            print(f"    orient, {name:<12}            {ms(orients(db))}")
            print(f"    hook guard, {name:<12}        {ms(hooks(db, env, project))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
