"""MCP benchmark: round-trip latency of recall and remember through `palimpsest serve`.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_mcp.py
    .venv/bin/python bench/bench_mcp.py --memories 10000 --calls 300
    .venv/bin/python bench/bench_mcp.py --embedder none    # full text alone
    .venv/bin/python bench/bench_mcp.py --copy-of store.db  # a copy of a filled store
    .venv/bin/python bench/bench_mcp.py --memories 5000 --servers 5  # p50 of each server

Fills a store with seeded memories through the service directly (fast), then starts the
real `palimpsest serve` process and times calls made with the official MCP client: over
stdio, then over streamable HTTP, then over HTTP again once the store has a key (each
request carries it and the server checks it against the store). Each figure is one full
call as an agent makes it: request, JSON-RPC framing, argument validation, the service
call in a worker thread, and the structured answer. The same calls made on the service
in process are the baseline, so the difference is what MCP costs.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bench_serve import http_server
from palimpsest.embed import DEFAULT_EMBEDDER, load_embedder
from palimpsest.service import Service
from palimpsest.store import SearchQuery, open_store

WORDS = """
service database cache queue worker request response client server api endpoint token user
session config deploy release build test migration schema index query table column latency
timeout retry error failure crash bug fix patch rollback feature flag branch commit merge
review pipeline job cron log metric alert dashboard trace memory cpu disk network replica
primary shard pool connection thread lock transaction write read scan sort limit page cursor
batch stream event message topic consumer producer partition offset auth login permission
role tenant billing invoice payment customer order cart product search ranking filter docker
kubernetes cluster region bucket storage backup restore snapshot certificate proxy gateway
""".split()
KINDS = ["fact", "decision", "pattern", "error", "note", "debt"]
FILL_BATCH = 256


def sentence(rng: random.Random, serial: int) -> str:
    words = rng.choices(WORDS, k=rng.randint(6, 14))
    return f"{' '.join(words).capitalize()} (#{serial})."


def opened(db: Path) -> Service:
    """The service with the embedder chosen (the server reads the same variable)."""
    embedder = load_embedder(os.environ.get("PALIMPSEST_EMBEDDER", DEFAULT_EMBEDDER))
    return Service(open_store(str(db)), embedder=embedder)


def fill(db: Path, count: int, rng: random.Random) -> None:
    """`count` memories filed by batches of `items` (embedded together, so the model's
    time per text is a fraction of one-by-one's)."""
    service = opened(db)
    for start in range(0, count, FILL_BATCH):
        items = [
            {
                "notebook": f"project-{serial % 20}",
                "kind": KINDS[serial % len(KINDS)],
                "text": sentence(rng, serial),
                "tags": [rng.choice(WORDS)],
            }
            for serial in range(start, min(start + FILL_BATCH, count))
        ]
        service.remember(items=items)
    service.store.close()


# Questions as an agent asks them (issue 10 times recall on question-style queries).
QUESTIONS = (
    "why does the {a} {b} break the {c}?",
    "what did we decide about the {a} {b}?",
    "how do we fix the {a} {b} when the {c} fails?",
    "which {a} uses the {b} in {c}?",
    "when did the {a} {b} start to fail?",
)


def queries(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(QUESTIONS).format(**{slot: rng.choice(WORDS) for slot in "abc"})
        for _ in range(count)
    ]


def percentiles(samples: list[float]) -> str:
    cuts = statistics.quantiles(samples, n=100)
    return f"p50 {cuts[49] * 1000:6.2f} ms   p95 {cuts[94] * 1000:6.2f} ms"


async def timed(call: Callable[[], Awaitable[Any]], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return samples


async def measure(client: Client, calls: int, rng: random.Random) -> dict[str, list[float]]:
    asked = iter(queries(rng, calls * 2))
    serial = iter(range(10**9, 2 * 10**9))

    async def recall() -> None:
        result = await client.call_tool("recall", {"query": next(asked), "limit": 10})
        assert not result.is_error, result.content

    async def remember() -> None:
        arguments = {"notebook": "bench", "kind": "note", "text": sentence(rng, next(serial))}
        result = await client.call_tool("remember", arguments)
        assert not result.is_error, result.content

    await timed(recall, 10)  # warm the worker threads, caches and connections
    return {"recall": await timed(recall, calls), "remember": await timed(remember, calls)}


def in_process(db: Path, calls: int, rng: random.Random) -> dict[str, list[float]]:
    service = opened(db)
    asked = iter(queries(rng, calls * 2))
    results: dict[str, list[float]] = {"recall": [], "remember": []}
    for name in results:
        for n in range(calls):
            start = time.perf_counter()
            if name == "recall":
                service.recall(query=next(asked), limit=10)
            else:
                service.remember(notebook="bench", kind="note", text=sentence(rng, -n - 1))
            results[name].append(time.perf_counter() - start)
    results["suggest"] = suggesting(service, calls)
    results["embed one"] = embedding(service, calls, rng)
    service.store.close()
    return results


def suggesting(service: Service, calls: int) -> list[float]:
    """What the suggestions alone cost a remember: the same work, on memories in the store,
    in a read transaction (remember does it in its write transaction, after the write)."""
    with service.store.read(service.workspace) as tx:
        memories = [m for m, _ in tx.search(SearchQuery(text="", limit=calls))]
        now = service.clock()
        samples = []
        for memory in memories:
            start = time.perf_counter()
            service._suggest(tx, memory, now)  # by meaning when the service embeds
            samples.append(time.perf_counter() - start)
    return samples


def embedding(service: Service, calls: int, rng: random.Random) -> list[float]:
    """What the model alone costs a remember: one new text embedded (nothing if `none`)."""
    samples = []
    for n in range(calls):
        text = sentence(rng, -(10**6) - n)
        start = time.perf_counter()
        service.embedder.embed([text])
        samples.append(time.perf_counter() - start)
    return samples


def serve_command(db: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "palimpsest", "--db", str(db), "serve", *extra]


async def over_stdio(db: Path, calls: int, rng: random.Random) -> dict[str, list[float]]:
    command = serve_command(db)
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params) as client:
        return await measure(client, calls, rng)


def make_key(db: Path) -> str:
    """A user and a personal key: from now on every HTTP request must carry one."""
    service = opened(db)
    try:
        service.add_user(name="bench", role="editor")
        return str(service.create_key(user="bench")["key"])
    finally:
        service.close()


@asynccontextmanager
async def http_client(url: str, key: str | None) -> AsyncIterator[Client]:
    if key is None:
        async with Client(url) as client:
            yield client
        return
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def over_http(
    db: Path, calls: int, rng: random.Random, key: str | None = None
) -> dict[str, list[float]]:
    with http_server(db) as (port, _):
        async with http_client(f"http://127.0.0.1:{port}/mcp", key) as client:
            return await measure(client, calls, rng)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=300, help="timed calls per operation")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--servers", type=int, default=1, help="stdio servers timed one after "
                        "another (on a small VM a server's p50 varies by ~1 ms from one "
                        "process to the next)")  # fmt: skip
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="none: full text alone")
    parser.add_argument("--copy-of", type=Path, help="time a copy of this SQLite store instead "
                        "of filling one (filling 5,000 with the model takes minutes)")  # fmt: skip
    args = parser.parse_args()
    os.environ["PALIMPSEST_EMBEDDER"] = args.embedder  # for the servers started too
    os.environ["PALIMPSEST_HTTP_CALLS_PER_MINUTE"] = "100000"  # time calls, not the bound
    folder = Path(tempfile.mkdtemp(prefix="palimpsest-bench-mcp-"))
    try:
        db = folder / "bench.db"
        started = time.perf_counter()
        if args.copy_of:
            shutil.copyfile(args.copy_of, db)
            print(f"timing a copy of {args.copy_of} (embedder {args.embedder})")
        else:
            fill(db, args.memories, random.Random(args.seed))
            seconds = time.perf_counter() - started
            print(f"filled {args.memories:,} memories in {seconds:.1f} s (embedder "
                  f"{args.embedder}; remember answers with suggestions)")  # fmt: skip
        print(f"{args.calls} calls of each, one at a time, after 10 warm-up recalls\n")
        baseline = in_process(db, args.calls, random.Random(args.seed + 1))
        servers = [
            anyio.run(over_stdio, db, args.calls, random.Random(args.seed + 2 + 10 * n))
            for n in range(args.servers)
        ]
        runs = {
            "in process": baseline,
            "MCP stdio": {name: [t for run in servers for t in run[name]] for name in servers[0]},
            "MCP HTTP": anyio.run(over_http, db, args.calls, random.Random(args.seed + 3)),
        }
        # The same over HTTP with a key: each request reads and checks it in the store.
        key = make_key(db)
        runs["HTTP + key"] = anyio.run(over_http, db, args.calls, random.Random(args.seed + 4), key)
        for transport, results in runs.items():
            for operation, samples in results.items():
                print(f"{transport:<11} {operation:<10} {percentiles(samples)}")
        if len(servers) > 1:
            print(f"\np50 of each of the {len(servers)} stdio servers:")
            for operation in servers[0]:
                each = sorted(statistics.median(run[operation]) * 1000 for run in servers)
                print(
                    f"  {operation:<10} {each[0]:.2f} to {each[-1]:.2f} ms, median "
                    f"{statistics.median(each):.2f}: {', '.join(f'{x:.2f}' for x in each)}"
                )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
