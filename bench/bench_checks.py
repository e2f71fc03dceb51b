"""How long `check DIR` takes, and what evidence costs recall and inspect.

A temporary project of 200 source files and 50 migrations; a SQLite store of `--memories`
notes, plus 100 rules with file checks (half on single files, half on the migrations
folder) and 100 facts anchored to files with a check as evidence. Prints p50 and p95 of
`check`, and of recall (limit 10, facts only, so every hit is read against the files) with
the project known and without it.

    .venv/bin/python bench/bench_checks.py [--memories 10000] [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from bench_core import timed
from palimpsest.domain.projects import Places, bind_project
from palimpsest.embed import load_embedder
from palimpsest.service import Service
from palimpsest.store import open_store


def project(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "migrations").mkdir()
    for i in range(200):
        body = "\n".join(f"def f{i}_{j}(): return {j}" for j in range(200))  # ~5 KB each
        (root / "src" / f"m{i}.py").write_text(body)
    for i in range(50):
        (root / "migrations" / f"{i:03}.sql").write_text("BEGIN;\nCREATE TABLE t();\nCOMMIT;\n")
    bind_project(root, "shop")


def fill(service: Service, memories: int) -> None:
    for i in range(memories):
        service.remember(notebook="shop", kind="note", text=f"note {i} on module m{i % 200}")
    for i in range(100):
        check = (
            {"kind": "absent", "path": f"src/m{i}.py", "literal": "eval("}
            if i % 2
            else {"kind": "requires", "path": "migrations", "literals": ["BEGIN", "COMMIT"]}
        )
        service.remember(notebook="shop", kind="rule", text=f"rule {i}", check=check,
                         falsifier="a counterexample", severity="costly")  # fmt: skip
        service.remember(notebook="shop", kind="fact", text=f"module m{i} defines f{i}_7",
                         anchors=[f"src/m{i}.py"],
                         check={"kind": "contains", "path": f"src/m{i}.py",
                                "literal": f"def f{i}_7"})  # fmt: skip


def report(name: str, samples: list[float]) -> None:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    print(f"{name:<40} p50 {statistics.median(ms):7.1f} ms   p95 {p95:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "shop"
        project(root)
        service = Service(open_store(str(Path(tmp) / "bench.db")), embedder=load_embedder("none"))
        service.places = Places(working_dir=root, allowed=None)
        fill(service, args.memories)
        runs = range(args.runs)
        report("check (200 checks)", timed(service.check for _ in runs))
        recall = lambda: service.recall(query="module defines", kind="fact")  # noqa: E731
        report("recall, 10 facts read against files", timed(recall for _ in runs))
        service.places = Places()
        report("recall, no project known", timed(recall for _ in runs))
        service.close()
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
