"""Vectors on SQLite at scale: nearest (exact, the sign-code cache, sqlite-vec), resident
memory with the model loaded, remember with embeddings, and where start-up goes.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_vectors.py --memories 100000
    PYTHONPATH=/path/with/sqlean-and-sqlite-vec .venv/bin/python bench/bench_vectors.py

The store is filled through the store API in large transactions (the service's remember,
one memory and one model run at a time, would take most of an hour at 100,000). Texts
come from bench_core's seeded corpus. Vectors: a pool of real all-MiniLM-L6-v2 vectors of
corpus texts, each used many times with a little noise (then normalised), so that the
store holds real-looking clusters without embedding 100,000 texts; questions are real
embeddings of corpus queries. sqlite-vec is measured only where the packages `sqlean-py`
and `sqlite-vec` can be imported (they are not dependencies: this Python's sqlite3 cannot
load extensions, and sqlean would have to replace the driver of the whole store).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench_core import Corpus, percentiles, timed  # type: ignore[import-not-found]
from palimpsest.domain.errors import ValidationError
from palimpsest.domain.ids import new_id
from palimpsest.domain.model import Event, Memory, Notebook, now_utc
from palimpsest.embed import Vectors, load_embedder
from palimpsest.revise import parse_fields
from palimpsest.service import Service
from palimpsest.service.vectors import embedding_text, model_tag
from palimpsest.store import SearchQuery, open_store
from palimpsest.store.sqlite import SqliteStore

POOL = 1_000  # real vectors; each memory takes one of them, with noise
NOISE = 0.02  # per dimension, before normalising: cosine ~0.93 to its pool vector
BATCH = 5_000  # memories per fill transaction


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fill(store: SqliteStore, corpus: Corpus, count: int, pool: Vectors, model: str) -> None:
    rng = np.random.default_rng(7)
    notebooks: dict[str, str] = {}
    now = now_utc()
    done, started = 0, time.perf_counter()
    while done < count:
        with store.write("default") as tx:
            for _ in range(min(BATCH, count - done)):
                fields = corpus.memory()
                name = fields.pop("notebook")
                if name not in notebooks:
                    notebook = Notebook(new_id("nb"), "default", name, now)
                    tx.put_notebook(notebook)
                    notebooks[name] = notebook.id
                memory = Memory(
                    id=new_id("m"), workspace="default", notebook_id=notebooks[name],
                    version=1, recorded_at=now, author="user:bench", owner="user:bench",
                    kind=fields["kind"], text=fields["text"], title=fields.get("title"),
                    why=fields.get("why"), tags=tuple(fields.get("tags", ())),
                )  # fmt: skip
                event = Event(0, new_id("op"), now, "user:bench", "remember", "memory",
                              memory.id, memory.notebook_id, 1, ("created",))  # fmt: skip
                seq = tx.append_event(event)
                tx.put_memory(memory, seq)
                noisy = pool[done % len(pool)] + rng.normal(0, NOISE, pool.shape[1])
                vector = (noisy / np.linalg.norm(noisy)).astype(np.float32)
                tx.put_vector(memory.id, seq, vector, model)
                done += 1
        rate = done / (time.perf_counter() - started)
        print(f"  filled {done:>8,}/{count:,}  {rate:6.0f}/s", flush=True)


def shown(name: str, samples: list[float]) -> None:
    p50, p95 = percentiles(samples)
    print(f"  {name:<44} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms   (n={len(samples)})")


def nearest_ids(store: SqliteStore, vector: Vectors, model: str, **filters: Any) -> list[str]:
    with store.read("default") as tx:
        found = tx.nearest(vector, SearchQuery(text="", limit=10, **filters), model)
    return [memory.id for memory, _ in found]


def measure_nearest(
    store: SqliteStore, questions: Vectors, model: str, *, quick: bool = False
) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    exact_answers: list[list[str]] = []
    with store.read("default") as tx:  # asked by event number: the column, never the copy
        last = tx._last_seq()
    samples = timed([lambda q=q: exact_answers.append(nearest_ids(store, q, model, at_seq=last))
                     for q in questions[: 5 if quick else 30]])  # fmt: skip
    shown("nearest, exact from the column, unfiltered", samples)
    figures["exact_ms"] = percentiles(samples)
    started = time.perf_counter()
    nearest_ids(store, questions[0], model)
    figures["cache_build_s"] = round(time.perf_counter() - started, 2)
    print(f"  cache built on the first question in {figures['cache_build_s']} s")
    cached_answers: list[list[str]] = []
    samples = timed([lambda q=q: cached_answers.append(nearest_ids(store, q, model))
                     for q in questions])  # fmt: skip
    shown("nearest, in-memory copy, unfiltered", samples)
    figures["cached_ms"] = percentiles(samples)
    overlap = [len(set(a) & set(b)) / max(1, len(a)) for a, b in zip(exact_answers,
               cached_answers[: len(exact_answers)], strict=True)]  # fmt: skip
    figures["cached_recall_at_10"] = round(float(np.mean(overlap)), 4)
    print(f"  copy's top 10 vs exact top 10 (recall@10): {figures['cached_recall_at_10']}")
    with store.read("default") as tx:  # one of the corpus's 50 (not `bench`, of the start-up)
        notebook = next(nb.id for nb in tx.list_notebooks() if nb.name.startswith("proj-"))
    samples = timed([lambda q=q: nearest_ids(store, q, model, notebook_ids=(notebook,))
                     for q in questions[:50]])  # fmt: skip
    shown("nearest, copy under a notebook filter", samples)
    figures["notebook_ms"] = percentiles(samples)
    samples = timed([lambda q=q: nearest_ids(store, q, model, kinds=("fact",))
                     for q in questions[:20]])  # fmt: skip
    shown("nearest, copy under a kind filter (broad)", samples)
    figures["kind_ms"] = percentiles(samples)
    return figures


def measure_sqlite_vec(path: Path, questions: Vectors, model: str) -> dict[str, Any]:
    try:
        import sqlean  # type: ignore[import-not-found]
        import sqlite_vec  # type: ignore[import-not-found]
    except ImportError:
        print("  sqlite-vec: not measured (install sqlean-py and sqlite-vec to compare)")
        return {}
    conn = sqlean.connect(str(path))
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    figures: dict[str, Any] = {}
    scan = (
        "SELECT v.rowid, vec_distance_cosine(mv.vector, ?) AS d FROM memory_versions v "
        "JOIN memory_vectors mv ON mv.version_rowid = v.rowid WHERE v.workspace = 'default' "
        "AND v.to_seq IS NULL AND v.scrubbed = 0 AND v.status = 'active' AND mv.model = ? "
        "ORDER BY d LIMIT 10"
    )
    samples = timed([lambda q=q: conn.execute(scan, (q.tobytes(), model)).fetchall()
                     for q in questions[:30]])  # fmt: skip
    shown("sqlite-vec: vec_distance_cosine over the column", samples)
    figures["sqlite_vec_scan_ms"] = percentiles(samples)
    started = time.perf_counter()
    conn.execute("CREATE VIRTUAL TABLE temp.vecs USING vec0(embedding float[384] "
                 "distance_metric=cosine)")  # fmt: skip
    conn.execute("INSERT INTO temp.vecs(rowid, embedding) SELECT version_rowid, vector "
                 "FROM memory_vectors")  # fmt: skip
    figures["vec0_build_s"] = round(time.perf_counter() - started, 2)
    knn = "SELECT rowid, distance FROM temp.vecs WHERE embedding MATCH ? AND k = 10"
    samples = timed([lambda q=q: conn.execute(knn, (q.tobytes(),)).fetchall()
                     for q in questions[:50]])  # fmt: skip
    shown("sqlite-vec: vec0 KNN (no filters, a copy)", samples)
    figures["vec0_knn_ms"] = percentiles(samples)
    conn.close()
    return figures


def embedded(fields: dict[str, Any]) -> str:
    """The text remember will embed for `fields` (as parsed: trimmed, normalised)."""
    values = parse_fields({k: v for k, v in fields.items() if k != "notebook"})
    draft = Memory(id="", workspace="", notebook_id="", version=1, recorded_at="",
                   author="", owner=None, **values)  # fmt: skip
    return embedding_text(draft, None)


def file(service: Service, fields: dict[str, Any]) -> None:
    with contextlib.suppress(ValidationError):  # the gate may take a made-up tag for a secret
        service.remember(**fields)


def measure_remember(store: SqliteStore, corpus: Corpus, count: int) -> dict[str, Any]:
    service = Service(store, actor="user:bench", embedder=load_embedder("minilm"))
    texts = [corpus.memory() for _ in range(2 * count)]
    started = time.perf_counter()
    for fields in texts[:count]:
        file(service, fields)
    one_by_one = count / (time.perf_counter() - started)
    print(f"  remember with embeddings, one call each: {one_by_one:6.0f}/s")
    started = time.perf_counter()
    rest = texts[count:]
    for start in range(0, len(rest), 64):  # what a bulk import could do: embed 64 at once
        batch = rest[start : start + 64]
        service.vectors.warm([embedded(fields) for fields in batch])
        for fields in batch:
            file(service, fields)
    batched = count / (time.perf_counter() - started)
    print(f"  remember with embeddings made 64 at a time: {batched:6.0f}/s")
    return {"remember_per_s": round(one_by_one), "remember_batched_per_s": round(batched)}


def measure_start(path: Path) -> dict[str, Any]:
    """Seconds from starting `palimpsest serve` (stdio) to its first answers."""
    env = {**os.environ, "PALIMPSEST_EMBEDDER": "minilm"}
    figures: dict[str, Any] = {}
    for module in ("palimpsest.cli", "palimpsest.mcp", "palimpsest.embed", "numpy", "mcp"):
        done = subprocess.run([sys.executable, "-c", f"import time; t=time.perf_counter(); "
                               f"import {module}; print(time.perf_counter()-t)"],
                              capture_output=True, text=True, env=env, check=True)  # fmt: skip
        figures[f"import {module} s"] = round(float(done.stdout), 3)
    server = subprocess.Popen(
        [sys.executable, "-m", "palimpsest", "--db", str(path), "serve"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        text=True,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None
    started = time.perf_counter()

    def ask(number: int, method: str, params: dict[str, Any]) -> float:
        message = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        server.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
        server.stdin.flush()  # type: ignore[union-attr]
        while True:
            line = server.stdout.readline()  # type: ignore[union-attr]
            if json.loads(line).get("id") == number:
                return round(time.perf_counter() - started, 3)

    figures["initialize answered s"] = ask(1, "initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}})  # fmt: skip
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    server.stdin.write("\n")
    args = {"query": "deploy cache timeout", "limit": 5}
    figures["first recall answered s"] = ask(2, "tools/call", {"name": "recall", "arguments": args})
    remember = {"notebook": "bench", "kind": "fact", "text": "The first write loads the model."}
    figures["first remember answered s"] = ask(
        3, "tools/call", {"name": "remember", "arguments": remember}
    )
    server.stdin.close()
    server.wait(timeout=30)
    for name, value in figures.items():
        print(f"  {name:<32} {value:6.3f}")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--remember", type=int, default=300, help="remember calls timed")
    parser.add_argument(
        "--quick", action="store_true", help="leave out the slow exact and sqlite-vec scans"
    )
    parser.add_argument(
        "--db", type=Path, help="the store: filled if new, else reused (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="palimpsest-vectors-"))
    path = args.db or folder / "bench.db"
    embedder = load_embedder("minilm")
    model = model_tag(embedder)
    corpus = Corpus(seed=11)
    print(f"embedding a pool of {POOL:,} corpus texts and {args.questions} questions ...")
    started = time.perf_counter()
    pool = embedder.embed([corpus.text(corpus.rnd.choice(corpus.kinds)) for _ in range(POOL)])
    questions = embedder.embed([corpus.query() for _ in range(args.questions)])
    print(f"  {(POOL + args.questions) / (time.perf_counter() - started):.0f} texts/s in batches")
    print(f"  resident with the model loaded: {rss_mib():.0f} MiB")
    reused = args.db is not None and args.db.exists()  # asked before opening creates it
    store = open_store(str(path))
    assert isinstance(store, SqliteStore)
    if reused:  # measured in a process that did not fill it
        print(f"reusing {path}: resident memory is then that of a server, not of the fill")
    else:
        print(f"filling {args.memories:,} memories into {path} ...")
        fill(store, corpus, args.memories, pool, model)
    print(f"nearest at {args.memories:,} memories (limit 10):")
    figures = measure_nearest(store, questions, model, quick=args.quick)
    figures["rss_after_search_mib"] = round(rss_mib())
    print(f"  resident with the model loaded and the cache built: {rss_mib():.0f} MiB "
          f"(peak {peak_mib():.0f} MiB, the fill included)")  # fmt: skip
    if not args.quick:
        figures |= measure_sqlite_vec(path, questions, model)
    print(f"remember at {args.memories:,} memories:")
    figures |= measure_remember(store, corpus, args.remember)
    figures["rss_end_mib"] = round(rss_mib())
    print(f"  resident at the end: {figures['rss_end_mib']} MiB")
    store.close()
    print("start-up of `palimpsest serve` (stdio) on that store:")
    figures |= measure_start(path)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
