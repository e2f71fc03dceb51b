"""Orient benchmark: the brief's time on a store of 10,000 memories (issue 11: within 1 s).

Run on demand, not by pytest:

    .venv/bin/python bench/bench_orient.py
    .venv/bin/python bench/bench_orient.py --memories 10000 --postgres postgresql://...

Fills a store through the service with bench_core's seeded corpus (5 notebooks), filed 200
days ago so that most memories are past their freshness window (the stale section's query
has the most to sift); then adds to the briefed notebook 300 rules (a third workspace-wide),
100 open issues and debts, 20 open disputes and usefulness marks. It times, after a warm-up,
`orient` of that notebook with the default budget and with a small one (where rules
overrun it and their ids are listed), and of the whole workspace; then `palimpsest hook
session-start` as a process, fed the JSON Claude Code sends. Prints p50 / p95 in ms, the
brief's size, and the load average beside them (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench_core import Corpus, percentiles, timed  # type: ignore[import-not-found]
from palimpsest.domain.errors import ValidationError
from palimpsest.domain.model import format_time
from palimpsest.domain.projects import bind_project
from palimpsest.service import Service, load_embedder
from palimpsest.store import open_store

NOTEBOOK = "bench-orient"
RULES, OPEN, DISPUTES = 300, 100, 20


class Clock:
    """Starts 200 days ago and moves a second per call: a history filed over time."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC) - timedelta(days=200)

    def __call__(self) -> str:
        self.now += timedelta(seconds=1)
        return format_time(self.now)


def fill(service: Service, count: int, seed: int) -> None:
    corpus = Corpus(seed, notebooks=5)
    corpus.notebooks[0] = NOTEBOOK
    for i in range(count):
        try:
            service.remember(**corpus.memory())
        except ValidationError:  # the gate may take a made-up word for a secret: skip it
            continue
        if (i + 1) % 2000 == 0:
            print(f"  filled {i + 1}/{count}", flush=True)
    facts = []
    for i in range(RULES):
        scope = "workspace" if i % 3 == 0 else None
        severity = ("irreversible", "costly", "house_style")[i % 3]
        service.remember(notebook=NOTEBOOK, kind="rule", text=f"Rule {i}: {corpus.text('fact')}",
                         falsifier="a case where it harms", severity=severity,
                         scope=scope)  # fmt: skip
    for i in range(OPEN):
        kind = "issue" if i % 2 else "debt"
        service.remember(notebook=NOTEBOOK, kind=kind, text=f"Open {i}: {corpus.text('fact')}")
    for i in range(DISPUTES * 2):
        facts.append(service.remember(notebook=NOTEBOOK, kind="fact",
                                      text=f"Claim {i}: {corpus.text('fact')}")["id"])  # fmt: skip
    for first, second in zip(facts[::2], facts[1::2], strict=True):
        service.dispute(action="open", ids=[first, second], reason="they disagree")
    for i, memory_id in enumerate(facts):
        service.revise(id=memory_id, feedback="helped" if i % 3 else "noise")


def hook_runs(db: str, runs: int) -> list[float]:
    """`palimpsest hook session-start` as Claude Code runs it: a process per session."""
    project = Path(tempfile.mkdtemp(prefix="palimpsest-orient-project-"))
    bind_project(project, NOTEBOOK)
    env = {**os.environ, "PALIMPSEST_DB": db, "PALIMPSEST_EMBEDDER": "none"}
    command = [sys.executable, "-m", "palimpsest", "hook", "session-start"]

    def run(n: int) -> None:
        body = json.dumps({"session_id": f"bench-{n}", "cwd": str(project),
                           "hook_event_name": "SessionStart", "source": "startup"})  # fmt: skip
        done = subprocess.run(command, input=body, env=env, capture_output=True, text=True)
        assert done.returncode == 0 and "hookSpecificOutput" in done.stdout, done.stderr

    try:
        return timed((lambda n=n: run(n)) for n in range(runs))
    finally:
        shutil.rmtree(project, ignore_errors=True)


def measure(service: Service, runs: int) -> dict[str, Any]:
    for _ in range(3):
        service.orient(notebook=NOTEBOOK)
    default = service.orient(notebook=NOTEBOOK)
    small = service.orient(notebook=NOTEBOOK, budget=2_000)
    return {
        "rows": {
            "orient notebook 8,000": percentiles(
                timed(lambda: service.orient(notebook=NOTEBOOK) for _ in range(runs))
            ),
            "orient notebook 2,000": percentiles(
                timed(lambda: service.orient(notebook=NOTEBOOK, budget=2_000) for _ in range(runs))
            ),
            "orient workspace": percentiles(timed(lambda: service.orient() for _ in range(runs))),
        },
        "sizes": (
            f"8,000: {default['used']} chars, {len(default['rules'])} rules, "
            f"{len(default['rules_left_out'])} named; 2,000: {small['used']} chars, "
            f"{len(small['rules'])} rules, {len(small['rules_left_out'])} named"
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30, help="timed calls per row")
    parser.add_argument("--hook-runs", type=int, default=5, help="hook processes (SQLite)")
    parser.add_argument("--postgres", default=os.environ.get("PALIMPSEST_TEST_POSTGRES"),
                        help="also run on this PostgreSQL URL, in a new workspace")  # fmt: skip
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="palimpsest-bench-orient-"))
    db = str(folder / "bench.db")
    targets = [("SQLite", db, "default")]
    if args.postgres:
        targets.append(("PostgreSQL", args.postgres, f"bench-{uuid.uuid4().hex[:8]}"))
    try:
        for label, url, workspace in targets:
            print(f"bench orient on {label}: {args.memories} memories", flush=True)
            store = open_store(url)
            try:
                service = Service(store, actor="agent:bench", workspace=workspace,
                                  clock=Clock(), embedder=load_embedder("none"))  # fmt: skip
                fill(service, args.memories, args.seed)
                service.clock = lambda: format_time(datetime.now(UTC))
                result = measure(service, args.runs)
            finally:
                store.close()
            print(f"{'p50 / p95 ms':<26}{label:>22}")
            for name, (p50, p95) in result["rows"].items():
                print(f"{name:<26}{p50:>11.1f}{p95:>11.1f}")
            print(f"brief sizes: {result['sizes']}")
            if label == "SQLite" and args.hook_runs:
                p50, p95 = percentiles(hook_runs(db, args.hook_runs))
                print(f"{'hook session-start (proc)':<26}{p50:>11.1f}{p95:>11.1f}")
            print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
