"""How long the guard's hook makes a coding agent wait: the whole process, from start to
the answer read and the process gone, as Claude Code runs it before every command.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_guard.py --runs 40 --memories 2000 --rules 30

It makes a SQLite store in a temporary directory (memories of every kind, `--rules`
forbidding rules in the project's notebook and workspace-wide), binds a project to it,
and runs `palimpsest hook guard --format claude` `--runs` times, fed PreToolUse JSON for
commands that are allowed, denied, and hard to read. It prints the wall time's p50 and
p95 in ms, the CPU time's p50 (which the machine's other work hurts less), a bare Python
start beside them, and the load average, twice: with the runs back to back, and with each
run started once the previous one's child has kept its command. An agent's next command
comes after a model's reply, seconds later, so the second is what an agent waits; the
first adds the child competing for the two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from palimpsest.domain.projects import bind_project
from palimpsest.service import Service
from palimpsest.store import open_store

COMMANDS = [
    "git status",
    "git push -f origin main",
    "make test && git push --force-with-lease",
    "bash -c 'cd web && npm publish'",
    "FOO=1 sudo -u ci timeout 30 terraform destroy -auto-approve",
    'echo "$(git rev-parse HEAD)" | xargs -I{} git tag v1 {}',
]


def fill(db: Path, memories: int, rules: int) -> None:
    store = open_store(str(db))
    service = Service(store, actor="user:bench")
    kinds = ("fact", "decision", "note", "pattern", "error")
    for i in range(memories):
        text = f"Memory number {i} about module m{i % 97} and its settings."
        service.remember(notebook="web" if i % 3 else "ops", kind=kinds[i % len(kinds)], text=text)
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


def one_run(env: dict[str, str], payload: str) -> tuple[float, float]:
    """Wall and CPU milliseconds of one hook process (CPU: the load hurts it less)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "palimpsest"), "hook", "guard", "--format", "claude"],
        input=payload, capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.stdout.strip().startswith("{"), done.stdout
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return elapsed * 1000, cpu * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--rules", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        project = Path(scratch) / "project"
        project.mkdir()
        bind_project(project, "web")
        fill(home / "palimpsest.db", args.memories, args.rules)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
        env["PALIMPSEST_HOME"] = str(home)
        # As installed: byte-code compiled once (a shell that forbids writing it would time
        # the compiler, at every run, instead of the hook).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        one_run(env, json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}}))
        db = home / "palimpsest.db"
        print(f"hook guard: {args.runs} runs, {args.memories} memories, {args.rules + 1} rules")
        for label, settle in (("back to back", False), ("each after the last child", True)):
            _wait_for_kept(db, _kept(db) + 1)
            times, cpus = [], []
            for i in range(args.runs):
                payload = json.dumps({
                    "session_id": "bench", "cwd": str(project), "hook_event_name": "PreToolUse",
                    "tool_name": "Bash", "tool_input": {"command": COMMANDS[i % len(COMMANDS)]},
                })  # fmt: skip
                before = _kept(db)
                wall, cpu = one_run(env, payload)
                times.append(wall)
                cpus.append(cpu)
                if settle:
                    _wait_for_kept(db, before + 1)
            bare = sorted(_bare_python() for _ in range(10))
            load = os.getloadavg()[0]
            print(f"{label}: wall p50 {statistics.median(times):.0f} ms, p95 {_p95(times):.0f} "
                  f"ms; CPU p50 {statistics.median(cpus):.0f} ms; a bare `python -c pass` p50 "
                  f"{statistics.median(bare):.0f} ms (load {load:.2f})")  # fmt: skip
        kept = _wait_for_kept(db, 2 * args.runs + 1)
        print(f"{kept} commands kept by the hooks' children")


def _kept(db: Path) -> int:
    """The commands kept so far, read with sqlite3 alone (cheap beside the hooks)."""
    with sqlite3.connect(db, timeout=30) as connection:
        return int(connection.execute("SELECT count(*) FROM seen_commands").fetchone()[0])


def _wait_for_kept(db: Path, expected: int) -> int:
    """How many commands the hooks' children kept, once they reach `expected` (at most a
    minute): they run after each answer, and the store must not be removed under them."""
    deadline = time.monotonic() + 60
    while (kept := _kept(db)) < expected and time.monotonic() < deadline:
        time.sleep(0.02)
    return kept


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def _bare_python() -> float:
    """The wall time of starting Python and doing nothing: the floor under the load."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.perf_counter() - started) * 1000


if __name__ == "__main__":
    main()
