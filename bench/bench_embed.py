"""How fast the default embedder loads and embeds, and what it costs in memory.

Run on demand, not by pytest (each run is a fresh process, so the load is cold):

    .venv/bin/python bench/bench_embed.py [--threads 2] [--seconds 3]

It prints the time to import the package and to load the model (the first embed), the
resident memory before and after, and sentences per second for short texts (~8 words)
and paragraphs (~110 words) given to `embed` one at a time (batch 1) and 32 at a time
(which `embed` still runs one by one: its vectors never depend on their companions).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

WORDS = (
    "deploy release migration database index cache token login password email queue worker "
    "shard backup restore config secret rotate review commit branch merge test flaky timeout "
    "retry server client latency memory disk network error fix rule decision pattern user team"
).split()


def resident_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def texts(count: int, words: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=words)) + "." for _ in range(count)]


def rate(
    embed: Callable[[list[str]], object], pool: list[str], batch: int, seconds: float
) -> float:
    done, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        chunk = [pool[(done + i) % len(pool)] for i in range(batch)]
        embed(chunk)
        done += batch
    return done / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime threads")
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    args = parser.parse_args()

    before = resident_mib()
    started = time.perf_counter()
    from palimpsest.embed import MiniLMEmbedder, default_embedder

    imported = time.perf_counter() - started
    embedder = default_embedder() if args.threads is None else MiniLMEmbedder(threads=args.threads)
    embedder.embed(["warm up"])
    loaded = time.perf_counter() - started
    print(f"import {imported * 1000:.0f} ms; import + load + first embed {loaded * 1000:.0f} ms")
    print(f"resident memory {before:.0f} MiB before import, {resident_mib():.0f} MiB after load")

    for label, words in (("short (8 words)", 8), ("paragraph (110 words)", 110)):
        pool = texts(256, words, seed=words)
        for batch in (1, 32):
            per_second = rate(embedder.embed, pool, batch, args.seconds)
            print(f"{label:24} batch {batch:2}: {per_second:7.1f} texts/s")
    print(f"resident memory {resident_mib():.0f} MiB at the end")


if __name__ == "__main__":
    main()
