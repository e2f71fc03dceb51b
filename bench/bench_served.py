"""The served record's cost (issue 32: keeping it costs a recall under 0.3 ms).

Run on demand, not by pytest:

    .venv/bin/python bench/bench_served.py
    .venv/bin/python bench/bench_served.py --memories 2000 --postgres postgresql://...

Fills a store through the service with bench_core's seeded corpus (full text alone: the
embedder `none`), then, after a warm-up, times: what recall adds when it serves a session
(keeping one serving of its 10 hits and its rules, the query redacted: the call recall makes,
alone, so the figure is not lost in the recall's own time), and recalls alternately with and
without a session, whose difference says the same with the noise of a whole recall.
Where servings are written in batches (PostgreSQL: every 64th serving writes the batch, in
the loop timed), the mean is what a serving costs with its share of the batch's write.
Prints p50 / p95 in ms and the load average beside them (the machine may be shared).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
import uuid
from pathlib import Path

from bench_core import Corpus, percentiles, timed  # type: ignore[import-not-found]
from palimpsest.domain.errors import ValidationError
from palimpsest.service import Service, load_embedder
from palimpsest.service.served_record import record_served, shown_of
from palimpsest.store import Store, open_store

QUERIES = ["deploy pipeline cache", "postgres pool size", "flaky login test", "rotate the keys"]


def fill(service: Service, count: int, seed: int) -> None:
    corpus = Corpus(seed, notebooks=5)
    for _ in range(count):
        # the gate may take a made-up word for a secret: that one is skipped
        with contextlib.suppress(ValidationError):
            service.remember(**corpus.memory())


def bench(store: Store, workspace: str, args: argparse.Namespace, label: str) -> None:
    service = Service(store, workspace=workspace, embedder=load_embedder("none"))
    fill(service, args.memories, args.seed)
    agent = service.in_session("bench-session")
    answers = [service.recall(query=q, limit=10) for q in QUERIES]
    for _ in range(50):  # warm-up: connections, statements, the secret patterns
        agent.recall(query=QUERIES[0], limit=10)
    who = ("bench-session", service.actor, None)

    def keep(n: int) -> None:
        answer = answers[n % len(answers)]
        shown = [*shown_of(answer["hits"]), *((r["id"], None, None) for r in answer["rules"])]
        request = {"query": QUERIES[n % len(QUERIES)], "limit": 10}
        record_served(service.served_log, workspace, who, "recall", request, shown,
                      clock=service.clock, keep_days=30)  # fmt: skip

    kept = timed(lambda n=n: keep(n) for n in range(args.calls))
    flushed = timed([service.served_log.flush])  # what still waits (PostgreSQL's batches)
    plain: list[float] = []
    served: list[float] = []
    for n in range(args.calls):
        query = QUERIES[n % len(QUERIES)]
        plain += timed([lambda q=query: service.recall(query=q, limit=10)])
        served += timed([lambda q=query: agent.recall(query=q, limit=10)])
    k50, k95 = percentiles(kept)
    p50, p95 = percentiles(plain)
    s50, s95 = percentiles(served)
    hits = sum(len(a["hits"]) for a in answers) / len(answers)
    print(f"{label}: {args.memories:,} memories, {hits:.1f} hits a recall, {args.calls} calls, "
          f"load {os.getloadavg()[0]:.2f}")  # fmt: skip
    mean = sum(kept + flushed) / len(kept) * 1000  # with the batches' writes, where batched
    print(f"  keeping one serving (what recall adds)  p50 {k50:.3f} ms  p95 {k95:.3f} ms  "
          f"mean {mean:.3f} ms")  # fmt: skip
    print(f"  recall without a session               p50 {p50:.3f} ms  p95 {p95:.3f} ms")
    print(f"  recall serving a session               p50 {s50:.3f} ms  p95 {s95:.3f} ms")
    print(f"  difference of the medians              {s50 - p50:+.3f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2_000)
    parser.add_argument("--calls", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--postgres", help="also a PostgreSQL URL (a workspace of its own)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-served-"))
    try:
        store = open_store(str(folder / "bench.db"))
        try:
            bench(store, "default", args, "SQLite")
        finally:
            store.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if args.postgres:
        store = open_store(args.postgres)
        try:
            bench(store, f"bench-served-{uuid.uuid4().hex[:8]}", args, "PostgreSQL")
        finally:
            store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
