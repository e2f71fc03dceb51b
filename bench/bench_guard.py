"""How long the guard's hook makes a coding agent wait: the whole process, from start to
the answer read and the process gone, as Claude Code runs it before every command.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_guard.py --runs 40 --memories 2000 --rules 30

It makes a SQLite store in a temporary directory (memories of every kind, `--rules`
forbidding rules in the project's notebook and workspace-wide), binds a project to it,
and runs `palimpsest hook guard --format claude` `--runs` times, fed PreToolUse JSON for
commands that are allowed, denied, and hard to read. It prints p50 and p95 in ms, and the
load average beside them (the machine's other work slows a process start).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from palimpsest.projects import bind_project
from palimpsest.service import Service
from palimpsest.store import open_store

COMMANDS = [
    "git status",
    "git push -f origin main",
    "make test && git push --force-with-lease",
    "bash -c 'cd web && npm publish'",
    "FOO=1 sudo -u ci timeout 30 terraform destroy -auto-approve",
    "echo \"$(git rev-parse HEAD)\" | xargs -I{} git tag v1 {}",
]


def fill(db: Path, memories: int, rules: int) -> None:
    store = open_store(str(db))
    service = Service(store, actor="user:bench")
    kinds = ("fact", "decision", "note", "pattern", "error")
    for i in range(memories):
        service.remember(notebook="web" if i % 3 else "ops", kind=kinds[i % len(kinds)],
                         text=f"Memory number {i} about module m{i % 97} and its settings.")  # fmt: skip
    for i in range(rules):
        service.remember(
            notebook="web", kind="rule", text=f"Never run tool{i} wipe.", falsifier="f",
            severity="irreversible", scope="workspace" if i % 2 else None,
            check={"kind": "forbidden", "literals": [f"tool{i} wipe", f"tool{i} purge --all"]},
        )  # fmt: skip
    service.remember(notebook="web", kind="rule", text="Never force-push.", falsifier="f",
                     severity="irreversible",
                     check={"kind": "forbidden", "literals": ["git push --force"]})  # fmt: skip
    store.close()


def one_run(env: dict[str, str], payload: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "palimpsest"), "hook", "guard", "--format", "claude"],
        input=payload, capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    assert done.stdout.strip().startswith("{"), done.stdout
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--rules", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        project = Path(scratch) / "project"
        project.mkdir()
        bind_project(project, "web")
        fill(home / "palimpsest.db", args.memories, args.rules)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
        env["PALIMPSEST_HOME"] = str(home)
        times = []
        for i in range(args.runs):
            payload = json.dumps({
                "session_id": "bench", "cwd": str(project), "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": COMMANDS[i % len(COMMANDS)]},
            })  # fmt: skip
            times.append(one_run(env, payload))
        times.sort()
        p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
        load = os.getloadavg()[0]
        print(f"hook guard: {args.runs} runs, {args.memories} memories, {args.rules + 1} rules")
        print(f"p50 {statistics.median(times):.0f} ms, p95 {p95:.0f} ms (load {load:.2f})")


if __name__ == "__main__":
    main()
