"""Read speed at scale: hybrid recall (words and meaning) in process, where its time goes,
and resident memory, on SQLite and (with --postgres) PostgreSQL.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_read.py --memories 100000 --db /tmp/read100k.db
    .venv/bin/python bench/bench_read.py --db /tmp/read100k.db --postgres postgresql://...

The store is filled as bench_vectors.py fills it (the store API, corpus texts, real
all-MiniLM-L6-v2 vectors reused with noise) and reused when --db names an existing file.
Questions are question-style ("why does the cache timeout break the deploy?"), made from
the corpus's words, and asked through `Service.recall` with the MiniLM embedder: each
figure is a whole recall (the query embedded, full text, nearest vectors, fusion,
neighbouring context, the answer built). The breakdown times the store's two searches
alone under each filter, as recall asks for them. A store that holds memories is reused
as it is (`--postgres` names a database: give each size a database of its own).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench_core import Corpus, percentiles  # type: ignore[import-not-found]
from bench_vectors import POOL, fill, rss_mib  # type: ignore[import-not-found]
from palimpsest.embed import load_embedder
from palimpsest.service import Service
from palimpsest.service.recall import MEANING_POOL
from palimpsest.service.recall import POOL as RECALL_POOL
from palimpsest.service.vectors import model_tag
from palimpsest.store import SearchQuery, Store, open_store

QUESTIONS = (
    "why does the {a} {b} {v} the {c}?",
    "what did we decide about the {a} {b}?",
    "how do we fix {a} {b} when the {c} {d} fails?",
    "which {a} {b} {v} {c} in {d}?",
    "when did the {a} {b} break?",
)


def questions(corpus: Corpus, count: int) -> list[str]:
    from bench_core import VERBS  # type: ignore[import-not-found]

    asked = []
    for _ in range(count):
        slots = {s: corpus.word() for s in "abcd"} | {"v": corpus.rnd.choice(VERBS)}
        asked.append(corpus.rnd.choice(QUESTIONS).format(**slots))
    return asked


def cpu_timed(calls: list[Callable[[], Any]]) -> tuple[list[float], list[float]]:
    """Each call's wall time and the process's CPU time during it (which a busy machine
    inflates far less than the wall time)."""
    wall, cpu = [], []
    for call in calls:
        started, used = time.perf_counter(), time.process_time()
        call()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - used)
    return wall, cpu


def shown(name: str, samples: list[float], cpu: list[float] | None = None) -> list[float]:
    p50, p95 = percentiles(samples)
    line = f"  {name:<40} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms"
    figures = [round(p50, 1), round(p95, 1)]
    if cpu:
        c50, c95 = percentiles(cpu)
        line += f"   CPU p50 {c50:6.1f} ms  p95 {c95:6.1f} ms"
        figures += [round(c50, 1), round(c95, 1)]
    print(f"{line}  (n={len(samples)})")
    return figures


def filter_cases(service: Service) -> dict[str, dict[str, Any]]:
    """Recall's filters measured: none, a kind, a notebook, a tag (as `recall` takes them)."""
    with service.store.read("default") as tx:
        notebook = next(nb.name for nb in tx.list_notebooks() if nb.name.startswith("proj-"))
    return {
        "recall": {},
        "recall, kind fact": {"kind": "fact"},
        "recall, notebook": {"notebook": notebook},
        "recall, tag": {"tags": ["index"]},  # one of the corpus's 100 tags
    }


def measure_recall(service: Service, asked: list[str], label: str) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    started = time.perf_counter()
    service.recall(query=asked[0])  # the first builds the in-memory copies
    first = (time.perf_counter() - started) * 1000
    print(f"  {label}: the first recall (building the copies) {first:7.0f} ms")
    figures[f"{label} first recall"] = round(first)
    started = time.perf_counter()
    service.recall(query=asked[0], kind="fact")  # PostgreSQL's first filtered one: its vectors
    first = (time.perf_counter() - started) * 1000
    print(f"  {label}: the first filtered recall           {first:7.0f} ms")
    figures[f"{label} first filtered recall"] = round(first)
    for name, filters in filter_cases(service).items():
        wall, cpu = cpu_timed([lambda q=q, f=filters: service.recall(query=q, **f) for q in asked])
        figures[f"{label} {name}"] = shown(f"{label}: {name}", wall, cpu)
    return figures


def measure_parts(service: Service, asked: list[str], label: str) -> dict[str, Any]:
    """The store's parts of a hybrid recall timed alone (wall and CPU) under each filter:
    full text's and the nearest vectors' pools, as recall asks for them (the query
    embedded first, timed once)."""
    model = model_tag(service.embedder)
    wall: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)

    def part(name: str, call: Callable[[], Any]) -> Any:
        started, used = time.perf_counter(), time.process_time()
        answer = call()
        wall[name].append(time.perf_counter() - started)
        cpu[name].append(time.process_time() - used)
        return answer

    with service.store.read("default") as tx:
        notebooks = {nb.name: nb.id for nb in tx.list_notebooks()}
    for case, filters in filter_cases(service).items():
        narrowed = {
            "kinds": (filters["kind"],) if "kind" in filters else (),
            "notebook_ids": (notebooks[filters["notebook"]],) if "notebook" in filters else None,
            "tags": tuple(filters.get("tags", ())),
        }
        name = case.replace("recall", "").strip(", ") or "no filter"
        for question in asked:
            vector = part("embed", lambda q=question: service.embedder.embed([q])[0])
            words = SearchQuery(text=question, limit=RECALL_POOL, **narrowed)
            meaning = replace(words, limit=max(RECALL_POOL, MEANING_POOL))
            with service.store.read("default") as tx:
                part(f"words, {name}", lambda t=tx, w=words: t.search_found(w))
                part(
                    f"meaning, {name}",
                    lambda t=tx, m=meaning, v=vector: t.nearest_found(v, m, model),
                )
    return {f"{label} part {n}": shown(f"{label} part: {n}", wall[n], cpu[n]) for n in wall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--db", type=Path, help="SQLite store: filled if new, else reused")
    parser.add_argument("--postgres", help="also fill (if empty) and measure this store")
    parser.add_argument("--no-sqlite", action="store_true", help="measure PostgreSQL alone")
    args = parser.parse_args(argv)
    path = args.db or Path(tempfile.mkdtemp(prefix="palimpsest-read-")) / "bench.db"
    embedder = load_embedder("minilm")
    model = model_tag(embedder)
    corpus = Corpus(seed=11)
    pool = embedder.embed([corpus.text(corpus.rnd.choice(corpus.kinds)) for _ in range(POOL)])
    asked = questions(corpus, args.questions)
    figures: dict[str, Any] = {}
    targets: list[tuple[str, str]] = [] if args.no_sqlite else [("sqlite", str(path))]
    if args.postgres:
        targets.append(("postgres", args.postgres))
    for label, url in targets:
        store: Store = open_store(url)
        with store.read("default") as tx:
            empty = tx.is_empty()
        if empty:
            print(f"filling {args.memories:,} memories into {label} ...")
            fill(store, corpus, args.memories, pool, model)  # type: ignore[arg-type]
        service = Service(store, actor="user:bench", embedder=embedder)
        print(f"{label}: hybrid recall, {len(asked)} questions, limit 10:")
        figures |= measure_recall(service, asked, label)
        figures |= measure_parts(service, asked, label)
        figures[f"{label} rss_mib"] = round(rss_mib())
        print(f"  resident with the model loaded and the copy built: {rss_mib():.0f} MiB")
        print(f"  load average {os.getloadavg()[0]:.1f} at the end")
        store.close()
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
