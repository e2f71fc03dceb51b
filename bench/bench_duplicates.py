"""duplicates at scale on SQLite: the review queue's groups of near-duplicate memories.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_duplicates.py --memories 10000

The store is filled as bench_vectors.py fills it (through the store API, texts from
bench_core's corpus, real all-MiniLM-L6-v2 vectors of a pool of corpus texts, each reused
with a little noise: many memories sit near one another, the hard case for grouping).
Then `duplicates` is timed over the whole workspace (by meaning, and with the embedder
`none`, by words) and within one notebook.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_core import Corpus  # type: ignore[import-not-found]
from bench_vectors import POOL, fill  # type: ignore[import-not-found]
from palimpsest.embed import load_embedder
from palimpsest.service import Service
from palimpsest.service.vectors import model_tag
from palimpsest.store import open_store
from palimpsest.store.sqlite import SqliteStore


def timed(name: str, call: Any, runs: int) -> dict[str, Any]:
    seconds = []
    answer: dict[str, Any] = {}
    for _ in range(runs):
        started = time.perf_counter()
        answer = call()
        seconds.append(time.perf_counter() - started)
    best, worst = min(seconds), max(seconds)
    groups = answer["groups"]
    print(f"  {name:<40} {best:7.2f} s best, {worst:7.2f} s worst of {runs}; "
          f"{answer['examined']:,} examined, {len(groups)} groups shown")  # fmt: skip
    return {"best_s": round(best, 3), "worst_s": round(worst, 3), "examined": answer["examined"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--db", type=Path, help="the store: filled if new, else reused")
    args = parser.parse_args(argv)
    path = args.db or Path(tempfile.mkdtemp(prefix="palimpsest-duplicates-")) / "bench.db"
    embedder = load_embedder("minilm")
    model = model_tag(embedder)
    reused = args.db is not None and args.db.exists()
    store = open_store(str(path))
    assert isinstance(store, SqliteStore)
    if not reused:
        corpus = Corpus(seed=11)
        texts = [corpus.text(corpus.rnd.choice(corpus.kinds)) for _ in range(POOL)]
        print(f"filling {args.memories:,} memories into {path} ...")
        fill(store, corpus, args.memories, embedder.embed(texts), model)
    meaning = Service(store, actor="user:bench", embedder=embedder)
    words = Service(store, actor="user:bench", embedder=load_embedder("none"))
    with store.read("default") as tx:
        notebook = next(nb.name for nb in tx.list_notebooks() if nb.name.startswith("proj-"))
    print(f"duplicates at {args.memories:,} memories:")
    figures = {
        "meaning_workspace": timed("by meaning, whole workspace", meaning.duplicates, args.runs),
        "meaning_notebook": timed(
            "by meaning, one notebook", lambda: meaning.duplicates(notebook=notebook), args.runs
        ),
        "words_workspace": timed("by words (embedder none), workspace", words.duplicates, 1),
    }
    store.close()
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
