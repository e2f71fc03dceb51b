"""Bulk remember: memories filed per second with embeddings, by batches of `items`.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_bulk.py                       # 100,000 on SQLite
    .venv/bin/python bench/bench_bulk.py --memories 20000 --postgres URL
    .venv/bin/python bench/bench_bulk.py --batch 64 --embedder none

Files bench_core's seeded corpus (the texts, kinds, tags and notebooks the other benchmarks
use) through the service's remember with `items`, as `palimpsest remember --from` does:
each batch checked whole, embedded in one model call before its transaction, written in
one transaction. Every `--every` memories it prints the rate of the last stretch and of
the whole fill, the share of the time the model took, and the process's resident memory
(now and its peak), so a rate that falls as the store grows shows where. For PostgreSQL,
`.venv/bin/python -m tests.local_postgres` starts a server and prints the URL to give.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench_core import Corpus
from palimpsest.domain.errors import ValidationError
from palimpsest.embed import DEFAULT_EMBEDDER, Embedder, Vectors, load_embedder
from palimpsest.service import Service
from palimpsest.store import open_store


def status_mib(field: str) -> float:
    """VmRSS (resident now) or VmHWM (its peak), in MiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Timed:
    """The embedder, counting the seconds its model runs (the rest is the write)."""

    def __init__(self, inner: Embedder):
        self.inner = inner
        self.name, self.version, self.dimensions = inner.name, inner.version, inner.dimensions
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> Vectors:
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started


def file_batch(service: Service, batch: list[dict[str, Any]]) -> int:
    """File `batch`, leaving out an item the gate refuses (a made-up tag may look like a
    secret) rather than losing the batch; the memories filed."""
    while batch:
        try:
            done = service.remember(items=batch)
            return sum(1 for r in done["results"] if "duplicate_of" not in r)
        except ValidationError as exc:
            if exc.item is None:
                raise
            batch = batch[: exc.item] + batch[exc.item + 1 :]
    return 0


def fill(service: Service, timed: Timed, memories: int, batch_size: int, every: int) -> None:
    corpus = Corpus(seed=11)
    filed, started = 0, time.perf_counter()
    mark, mark_filed, mark_model = started, 0, 0.0
    print(f"{'memories':>9} {'last /s':>8} {'all /s':>7} {'model %':>8} {'RSS MiB':>8} "
          f"{'peak':>6}  load")  # fmt: skip
    while filed < memories:
        batch = [corpus.memory() for _ in range(min(batch_size, memories - filed))]
        filed += file_batch(service, batch)
        if filed - mark_filed >= every or filed >= memories:
            now = time.perf_counter()
            model = (timed.seconds - mark_model) / (now - mark)
            print(f"{filed:>9,} {(filed - mark_filed) / (now - mark):>8.0f} "
                  f"{filed / (now - started):>7.0f} {model:>8.0%} {status_mib('VmRSS'):>8.0f} "
                  f"{status_mib('VmHWM'):>6.0f}  {os.getloadavg()[0]:.1f}")  # fmt: skip
            mark, mark_filed, mark_model = now, filed, timed.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=256, help="items per remember call")
    parser.add_argument("--every", type=int, default=10_000, help="print a line this often")
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="none: full text alone")
    parser.add_argument("--postgres", metavar="URL", help="fill this PostgreSQL database")
    parser.add_argument("--db", type=Path, help="the SQLite file (default: a temporary one)")
    args = parser.parse_args()
    timed = Timed(load_embedder(args.embedder))
    with ExitStack() as stack:
        if args.postgres:
            target = args.postgres
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="palimpsest-bulk-"))
            target = str(args.db or Path(folder) / "bulk.db")
        store = open_store(target)
        stack.callback(store.close)
        service = Service(store, actor="user:bench", embedder=timed)
        print(f"filing {args.memories:,} memories, {args.batch} per call, embedder "
              f"{args.embedder}, on {'PostgreSQL' if args.postgres else 'SQLite'}")  # fmt: skip
        fill(service, timed, args.memories, args.batch, args.every)


if __name__ == "__main__":
    main()
