"""Export and import: records per second and peak memory, on SQLite and PostgreSQL.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_transfer.py                      # 10,000 memories, SQLite
    .venv/bin/python bench/bench_transfer.py --memories 100000 --embedder none
    .venv/bin/python bench/bench_transfer.py --postgres URL       # PostgreSQL too

Fills a SQLite store with bench_core's seeded corpus (a tenth of the memories revised
once, so there is history), exports it, then imports the file three ways: restored into
a fresh store, merged into a store that holds it already (every memory unchanged), and
merged into a store that holds something else (every memory filed anew). Each step runs
in a process of its own, so the peak resident memory printed is that step's alone. A
record is a line of the file (a notebook, memory, event, version, link...). For
PostgreSQL, `.venv/bin/python -m tests.local_postgres` starts a server and prints its URL;
each import goes into a schema of its own, dropped at the end.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bench_bulk import file_batch, status_mib
from bench_core import Corpus
from palimpsest.embed import DEFAULT_EMBEDDER, load_embedder
from palimpsest.service import Service
from palimpsest.store import open_store


def fill(db: str, memories: int) -> None:
    corpus = Corpus(seed=13)
    service = Service(open_store(db), actor="user:bench", embedder=load_embedder("none"))
    filed = 0
    while filed < memories:
        batch = [corpus.memory() for _ in range(min(256, memories - filed))]
        filed += file_batch(service, batch)
    with service.store.read(service.workspace) as tx:
        ids = [m.id for m in tx.memories_at(None)]
    for memory_id in ids[::10]:
        service.revise(id=memory_id, append="(checked again)")
    service.close()


def export(db: str, file: str) -> dict[str, Any]:
    service = Service(open_store(db), embedder=load_embedder("none"))
    with open(file, "w", encoding="utf-8") as out:
        answer = service.export(out)
    service.close()
    return answer


def import_into(target: str, file: str, embedder: str, holding: str | None) -> dict[str, Any]:
    """Import `file` into `target`; `holding`: "same" (the file imported first, outside
    the timing) or "other" (one memory of its own)."""
    service = Service(open_store(target), actor="user:importer", embedder=load_embedder(embedder))
    if holding == "same":  # with the same model: else the timed import embeds what it lacks
        service.import_file(Path(file))
    elif holding == "other":
        service.remember(notebook="mine", kind="fact", text="Filed before the import")
    started = time.perf_counter()
    answer: dict[str, Any] = {**service.import_file(Path(file))}
    answer["seconds"] = time.perf_counter() - started
    service.close()
    return answer


def in_child(fn: Callable[..., dict[str, Any]], *args: Any) -> tuple[dict[str, Any], float]:
    """`fn(*args)` in a process of its own: its answer and that process's peak RSS."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_measured, (fn, *args))


def _measured(fn: Callable[..., dict[str, Any]], *args: Any) -> tuple[dict[str, Any], float]:
    answer = fn(*args)
    return answer, status_mib("VmHWM")


@contextmanager
def fresh_targets(folder: Path, postgres: str | None) -> Iterator[Callable[[], str]]:
    """A maker of empty stores: SQLite files, or PostgreSQL schemas dropped at the end."""
    schemas: list[str] = []

    def make() -> str:
        if postgres is None:
            return str(folder / f"target-{uuid.uuid4().hex[:8]}.db")
        import psycopg

        name = f"bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(postgres, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}".encode())
        schemas.append(name)
        separator = "&" if "?" in postgres else "?"
        return f"{postgres}{separator}options={quote(f'-csearch_path={name}')}"

    try:
        yield make
    finally:
        if schemas:
            import psycopg

            with psycopg.connect(str(postgres), autocommit=True) as conn:
                for name in schemas:
                    conn.execute(f"DROP SCHEMA {name} CASCADE".encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--embedder", action="append", help=f"none and/or {DEFAULT_EMBEDDER} "
                        "(repeatable; default both)")  # fmt: skip
    parser.add_argument("--postgres", metavar="URL", help="import into PostgreSQL as well")
    args = parser.parse_args()
    embedders = args.embedder or ["none", DEFAULT_EMBEDDER]
    with tempfile.TemporaryDirectory(prefix="palimpsest-transfer-") as name:
        folder = Path(name)
        source, file = str(folder / "source.db"), str(folder / "export.jsonl")
        print(f"filing {args.memories:,} memories...", file=sys.stderr)
        fill(source, args.memories)
        started = time.perf_counter()
        exported, peak = in_child(export, source, file)
        seconds = time.perf_counter() - started
        records = sum(exported["counts"].values())
        size = Path(file).stat().st_size / 2**20
        print(f"export: {records:,} records ({size:.1f} MiB) in {seconds:.1f} s, "
              f"{records / seconds:,.0f} records/s, peak {peak:.0f} MiB")  # fmt: skip
        print(f"{'store':<10} {'embedder':<17} {'import':<22} {'records/s':>10} "
              f"{'memories/s':>10} {'seconds':>8} {'peak MiB':>9}")  # fmt: skip
        stores = [("SQLite", None)] + ([("PostgreSQL", args.postgres)] if args.postgres else [])
        for label, url in stores:
            with fresh_targets(folder, url) as fresh:
                for embedder in embedders:
                    for way, holding in (("restore (empty)", None), ("merge (new here)", "other"),
                                         ("merge (all unchanged)", "same")):  # fmt: skip
                        answer, peak = in_child(import_into, fresh(), file, embedder, holding)
                        took = answer["seconds"]
                        rates = f"{records / took:>10,.0f} {args.memories / took:>10,.0f}"
                        print(f"{label:<10} {embedder:<17} {way:<22} {rates} {took:>8.1f} "
                              f"{peak:>9.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
