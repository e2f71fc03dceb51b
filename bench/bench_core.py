"""Core benchmark: fill a store through the service, then time remember and recall.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_core.py --memories 100000
    .venv/bin/python bench/bench_core.py --memories 5000 --queries 200 --db /tmp/p.db

Texts come from a seeded generator: a Zipf-weighted vocabulary (a few hundred common
engineering words plus a long tail of made-up ones) set in templates per kind, so common
words match many memories and rare ones few, as in real notes. If the LoCoMo dev
conversations are next to the repository (../shared/bench/locomo/dev), some of their
sentences are mixed in, read at run time. Memories spread over 50 notebooks with tags.

Reports p50/p95 of remember (the last 1000 inserts, at full size), of recall (1-4 word
queries, without and with a notebook filter), the file size (db + wal) and peak RSS.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from palimpsest.domain.errors import ValidationError
from palimpsest.service import Service, load_embedder
from palimpsest.store import open_store

REPO = Path(__file__).resolve().parents[1]
LOCOMO = REPO.parent / "shared" / "bench" / "locomo" / "dev"

_COMMON_TEXT = """
the a to of and in for on with is was be by that it from at as this when not after before
service database cache queue worker request response client server api endpoint token user
session config deploy release build test migration schema index query table column row
latency timeout retry error failure crash bug fix patch rollback feature flag branch commit
merge review pipeline job cron log metric alert dashboard trace span memory cpu disk network
replica primary shard pool connection thread lock transaction commit write read scan sort
limit page cursor batch stream event message topic consumer producer partition offset lag
auth login password permission role admin tenant account billing invoice payment customer
order cart product search ranking filter tag notebook note decision pattern rule check file
path module package dependency version upgrade library framework python rust go typescript
docker kubernetes pod node cluster region zone bucket object storage backup restore snapshot
encryption key certificate secret vault proxy gateway load balancer dns http grpc websocket
json yaml csv parquet sqlite postgres redis kafka nginx linux mac windows browser mobile
slow fast large small high low new old first last every never always only still again
uses needs breaks fixes adds removes moves keeps returns raises blocks drops skips caches
because since until unless while during between across under over into onto through
"""
COMMON = _COMMON_TEXT.split()

TEMPLATES = {
    "fact": [
        "The {a} {b} {v} the {c} {d} in {e}.",
        "{A} {b} is {n} {c} on the {d} {e}.",
        "Our {a} {b} {v} {c} through the {d} {e} {f}.",
    ],
    "decision": [
        "We chose {a} {b} over {c} {d} because the {e} {f} {v} {g}.",
        "Decided to keep the {a} {b} in {c} until the {d} {e} {v}.",
    ],
    "error": [
        "{A} {b} {v} with {c} {d} when the {e} {f} is over {n}.",
        "Saw {a} {b} {c} after {d} {e}; the fix {v} the {f} {g}.",
    ],
    "pattern": [
        "When a {a} {b} {v}, check the {c} {d} first, then the {e} {f}.",
        "Every {a} {b} {v} the {c} {d} before {e} {f} {g}.",
    ],
    "note": [
        "{A} {b} {c}: {d} {e} {f} {g} {h}, see {i} {j}.",
        "Remember that {a} {b} {v} {c} {d} on {e} {f}.",
    ],
    "reference": [
        "The {a} {b} docs explain {c} {d} and {e} {f} {g}.",
        "See the {a} {b} runbook for {c} {d} {e}.",
    ],
}
KIND_WEIGHTS = {
    "fact": 35,
    "decision": 12,
    "error": 12,
    "pattern": 8,
    "note": 25,
    "reference": 8,
}
VERBS = COMMON[COMMON.index("uses") : COMMON.index("drops") + 1]


class Corpus:
    """A seeded source of memory texts, tags, notebooks and queries."""

    def __init__(self, seed: int, notebooks: int = 50, tail: int = 20_000):
        self.rnd = random.Random(seed)
        syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
        made_up: set[str] = set()
        while len(made_up) < tail:
            parts = self.rnd.randint(2, 4)
            made_up.add("".join(self.rnd.choice(syllables) for _ in range(parts)))
        self.words = COMMON + sorted(made_up)
        # Zipf-like: the k-th word weighs 1/k, so "the", "service", "cache" dominate.
        self.cum_weights = list(itertools.accumulate(1 / (k + 1) for k in range(len(self.words))))
        self.notebooks = [f"proj-{self.word(rare=True)}-{i}" for i in range(notebooks)]
        self.tag_pool = [f"{w}" for w in COMMON[40:120]] + [f"team-{i}" for i in range(20)]
        self.sentences = _locomo_sentences()
        self.kinds = list(KIND_WEIGHTS)
        self.kind_weights = list(KIND_WEIGHTS.values())

    def word(self, rare: bool = False) -> str:
        if rare:
            return self.rnd.choice(self.words[len(COMMON) :])
        return self.rnd.choices(self.words, cum_weights=self.cum_weights)[0]

    def text(self, kind: str) -> str:
        if self.sentences and self.rnd.random() < 0.2:
            base = self.rnd.choice(self.sentences)
            return f"{base} ({self.word()} {self.word(rare=True)})"
        template = self.rnd.choice(TEMPLATES[kind])
        slots = {s: self.word() for s in "abcdefghij"}
        slots["A"] = slots["a"].capitalize()
        slots["v"] = self.rnd.choice(VERBS)
        slots["n"] = str(self.rnd.randint(2, 5000))
        text = template.format(**slots)
        extra = self.rnd.randint(0, 3)
        if extra:
            text += " " + " ".join(self.word() for _ in range(extra * 4)) + "."
        return text

    def memory(self) -> dict[str, Any]:
        kind = self.rnd.choices(self.kinds, weights=self.kind_weights)[0]
        fields: dict[str, Any] = {
            "notebook": self.rnd.choice(self.notebooks),
            "kind": kind,
            "text": self.text(kind),
        }
        tags = self.rnd.sample(self.tag_pool, self.rnd.choice([0, 1, 1, 2, 2, 3]))
        if tags:
            fields["tags"] = tags
        if self.rnd.random() < 0.3:
            fields["title"] = " ".join(self.word() for _ in range(self.rnd.randint(2, 5)))
        if self.rnd.random() < 0.2:
            fields["why"] = " ".join(self.word() for _ in range(self.rnd.randint(4, 12)))
        return fields

    def query(self) -> str:
        return " ".join(self.word() for _ in range(self.rnd.randint(1, 4)))


def _locomo_sentences() -> list[str]:
    sentences = []
    for path in sorted(LOCOMO.glob("*.memories.jsonl")) if LOCOMO.is_dir() else []:
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                text = json.loads(line).get("text", "")
                if 20 <= len(text) <= 600:
                    sentences.append(text)
    return sentences


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p95) in milliseconds."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49] * 1000, cuts[94] * 1000


def timed(calls: Iterable[Callable[[], Any]]) -> list[float]:
    samples = []
    for call in calls:
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return samples


def fill(service: Service, corpus: Corpus, count: int) -> list[float]:
    """File `count` memories, printing progress every 5%; return each call's duration."""
    step = max(1, count // 20)
    samples: list[float] = []
    started = time.perf_counter()
    for i in range(1, count + 1):
        fields = corpus.memory()
        start = time.perf_counter()
        try:
            service.remember(**fields)
        except ValidationError:  # the write gate may take a made-up tag for a secret: skip it
            continue
        samples.append(time.perf_counter() - start)
        if i % step == 0 or i == count:
            elapsed = time.perf_counter() - started
            print(
                f"  filled {i:>8}/{count} ({100 * i // count:3d}%)  "
                f"{i / elapsed:7.0f}/s  elapsed {elapsed:6.1f}s",
                flush=True,
            )
    return samples


def file_size(db: Path) -> int:
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


def measure(service: Service, corpus: Corpus, args: argparse.Namespace) -> dict[str, Any]:
    """Fill the store behind `service`, then time remember and recall on it."""
    fill_start = time.perf_counter()
    remember_samples = fill(service, corpus, args.memories)
    fill_seconds = time.perf_counter() - fill_start
    queries = [corpus.query() for _ in range(args.queries)]
    scoped = [(corpus.query(), corpus.rnd.choice(corpus.notebooks)) for _ in queries]
    tagged = [(corpus.query(), corpus.rnd.choice(corpus.tag_pool)) for _ in queries]
    for q in queries[:20]:  # warm the page cache and statement cache
        service.recall(query=q)
    plain = timed((lambda q=q: service.recall(query=q)) for q in queries)
    with_nb = timed((lambda q=q, nb=nb: service.recall(query=q, notebook=nb)) for q, nb in scoped)
    with_tag = timed((lambda q=q, t=t: service.recall(query=q, tags=[t])) for q, t in tagged)
    hits = [len(service.recall(query=q)["hits"]) for q in queries[:100]]
    return {
        "rows": {
            "remember (last 1000)": percentiles(remember_samples[-1000:]),
            "remember (all)": percentiles(remember_samples),
            "recall": percentiles(plain),
            "recall + notebook": percentiles(with_nb),
            "recall + tag": percentiles(with_tag),
        },
        "fill": f"{fill_seconds:.1f} s ({args.memories / fill_seconds:.0f}/s)",
        "hits": f"{statistics.mean(hits):.1f} (limit 10)",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000, help="memories to file")
    parser.add_argument("--db", type=Path, help="SQLite file (default: a temporary one)")
    parser.add_argument(
        "--postgres",
        default=os.environ.get("PALIMPSEST_TEST_POSTGRES"),
        help="also run on this PostgreSQL URL, in a new workspace "
        "(default: $PALIMPSEST_TEST_POSTGRES; '' for SQLite only)",
    )
    parser.add_argument("--queries", type=int, default=500, help="recall queries per variant")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--keep", action="store_true", help="keep the temporary database")
    parser.add_argument(
        "--embedder",
        default="none",
        help="the embedder (default none: full text alone, the figures of the README's "
        "table; bench/bench_vectors.py measures what vectors add)",
    )
    args = parser.parse_args(argv)
    if args.memories < 1000:
        parser.error("--memories must be at least 1000 (remember is timed on the last 1000)")

    temp_dir = None
    db = args.db
    if db is None:
        temp_dir = Path(tempfile.mkdtemp(prefix="palimpsest-bench-"))
        db = temp_dir / "bench.db"
    targets = [("SQLite", str(db), "default")]
    if args.postgres:
        targets.append(("PostgreSQL", args.postgres, f"bench-{uuid.uuid4().hex[:8]}"))
    results = {}
    try:
        for label, url, workspace in targets:
            corpus = Corpus(args.seed)
            print(f"palimpsest bench on {label}: {args.memories} memories "
                  f"({len(corpus.sentences)} LoCoMo sentences mixed in)", flush=True)  # fmt: skip
            store = open_store(url)
            try:
                service = Service(store, actor="agent:bench", workspace=workspace,
                                  embedder=load_embedder(args.embedder))  # fmt: skip
                results[label] = measure(service, corpus, args)
            finally:
                store.close()
        labels = list(results)
        print()
        print(f"{'p50 / p95 ms':<22}" + "".join(f"{label:>22}" for label in labels))
        for name in results[labels[0]]["rows"]:
            cells = [results[label]["rows"][name] for label in labels]
            print(f"{name:<22}" + "".join(f"{p50:>11.2f}{p95:>11.2f}" for p50, p95 in cells))
        print()
        for key, title in (("fill", "fill time"), ("hits", "mean hits/recall")):
            print(f"{title:<22}" + "".join(f"{results[label][key]:>22}" for label in labels))
        size = file_size(db)
        print(
            f"SQLite file db+wal    {size / 2**20:8.1f} MiB ({size / args.memories:.0f} B/memory)"
        )
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS              {rss:8.1f} MiB")
    finally:
        if temp_dir is not None and not args.keep:
            shutil.rmtree(temp_dir, ignore_errors=True)
        elif temp_dir is not None:
            print(f"kept {db}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
