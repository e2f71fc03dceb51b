"""Start-up of `palimpsest serve` (stdio): seconds from starting the process to its first
answers, beside the floor (a process that only imports the MCP SDK), and where the time goes.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_startup.py --db /tmp/store.db --runs 7
    .venv/bin/python bench/bench_startup.py --db /tmp/store.db --runs 7 --cold
    .venv/bin/python bench/bench_startup.py --importtime   # what it imports beyond the SDK
    .venv/bin/python bench/bench_startup.py --db /tmp/store.db --runs 15 --against /tmp/old/src

Each run starts a real server with the MiniLM embedder and speaks JSON-RPC on its pipes:
`initialize` (what a client waits for before anything else), `tools/list`, a recall of an
empty query (filters alone), then a recall by words and meaning (the model must be loaded
by then). Figures are seconds since the process was started, median over the runs, and the
CPU seconds the server had used by then (what a busy machine inflates least).

The floor: each run also starts a process that imports the SDK's server and says so, timed
the same way, just before the server; nothing we do can answer `initialize` sooner.

`--cold`: before each process, the page cache is emptied of the files a start reads (the
interpreter's standard library, the environment's packages, this package, the model and
the store), as after a reboot. Without it the runs are warm: all of that is in memory.

Bytecode is compiled first, as an installed package has it: an editable checkout run with
PYTHONDONTWRITEBYTECODE would compile this package's modules again at every start.

`--against SRC`: another tree's `src/` (an earlier commit's, from `git archive`) is started
too, its runs and these in turn one by one, so that a busy machine weighs on both alike.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"},
}


# A process that imports what `serve` imports of the SDK, and says so: the floor.
FLOOR = "import mcp.server.mcpserver, sys; print('ready', flush=True); sys.stdin.read()"


def cpu_seconds(pid: int) -> float:
    """CPU seconds process `pid` has used so far (a busy machine inflates it far less than
    the wall time)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def floor_run() -> dict[str, float]:
    """Seconds from starting a process to its word that the SDK is imported."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", FLOOR], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    ready = process.stdout.readline()
    figures = {"SDK import (floor)": time.perf_counter() - started}
    figures["floor, CPU s"] = cpu_seconds(process.pid)
    process.stdin.close()
    process.wait(timeout=60)
    if ready != "ready\n":
        raise RuntimeError("the floor's process failed: is the MCP SDK installed?")
    return figures


def start_files(db: Path) -> list[Path]:
    """The files a start may read: the standard library, the environment's packages (the
    model's among them), this package, the interpreter and the store."""
    paths = sysconfig.get_paths()
    spec = importlib.util.find_spec("palimpsest")
    assert spec is not None and spec.origin is not None
    roots = {paths["stdlib"], paths["platstdlib"], paths["purelib"], paths["platlib"],
             str(Path(spec.origin).parent)}  # fmt: skip
    files = [Path(sys.executable).resolve(), db, Path(f"{db}-wal"), Path(f"{db}-shm")]
    library = Path(str(sysconfig.get_config_var("LIBDIR"))) / str(
        sysconfig.get_config_var("LDLIBRARY")
    )
    files.append(library)
    for root in sorted(roots):
        for folder, _, names in os.walk(root):
            files += [Path(folder, name) for name in names]
    return [f for f in files if f.is_file()]


def evict(files: list[Path]) -> None:
    """Drop `files` from the page cache (pages another process has mapped stay), so the
    next start reads them from the disk, as after a reboot."""
    for path in files:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


class Server:
    """One `palimpsest serve` process over stdio, timed from its start."""

    def __init__(self, db: Path, embedder: str, source: Path | None = None):
        env = {**os.environ, "PALIMPSEST_EMBEDDER": embedder}
        if source is not None:  # that tree's package, not the one installed
            env["PYTHONPATH"] = str(source)
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "palimpsest", "--db", str(db), "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, text=True,
        )  # fmt: skip
        self.number = 0

    def cpu(self) -> float:
        return cpu_seconds(self.process.pid)

    def ask(self, method: str, params: dict[str, Any]) -> float:
        """Seconds from the start to the answer of `method`."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.number += 1
        message = {"jsonrpc": "2.0", "id": self.number, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the server ended before answering {method}")
            if json.loads(line).get("id") == self.number:
                return time.perf_counter() - self.started

    def tell(self, method: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.process.stdin.flush()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def one_run(
    db: Path, embedder: str, cold: list[Path] | None, source: Path | None = None
) -> dict[str, float]:
    """The floor, then the server, each started cold when `cold` lists the files to evict."""
    if cold is not None:
        evict(cold)
    figures = floor_run()
    if cold is not None:
        evict(cold)
    server = Server(db, embedder, source)
    try:
        figures["initialize"] = server.ask("initialize", INITIALIZE)
        figures["initialize, CPU s"] = server.cpu()
        server.tell("notifications/initialized")
        figures["tools/list"] = server.ask("tools/list", {})
        call = {"name": "recall", "arguments": {"query": "", "limit": 5}}
        figures["recall, no query"] = server.ask("tools/call", call)
        call = {"name": "recall", "arguments": {"query": "why is the deploy slow?", "limit": 5}}
        figures["recall by meaning"] = server.ask("tools/call", call)
        figures["recall by meaning, CPU s"] = server.cpu()
    finally:
        server.close()
    figures["initialize over the floor"] = figures["initialize"] - figures["SDK import (floor)"]
    figures["over the floor, CPU s"] = figures["initialize, CPU s"] - figures["floor, CPU s"]
    return figures


def slowest_imports(db: Path, embedder: str, count: int) -> tuple[float, list[tuple[float, str]]]:
    """What `palimpsest serve` imports before its first answer beyond what the SDK's own
    import does (the floor): the seconds those modules take by themselves, and the slowest
    of them with what they import beyond the floor."""
    floor = {name for _, name, _ in _imported(
        [sys.executable, "-X", "importtime", "-c", "import mcp.server.mcpserver"]
    )}  # fmt: skip
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}
    command = [sys.executable, "-X", "importtime", "-m", "palimpsest", "--db", str(db), "serve"]
    served = _imported(command, json.dumps(hello) + "\n", {"PALIMPSEST_EMBEDDER": embedder})
    # -X importtime lists a module after its imports, one level deeper: sum them upwards.
    below: dict[int, float] = {}
    rows = []
    for depth, name, own in served:
        total = (0.0 if name in floor else own) + below.pop(depth + 1, 0.0)
        below[depth] = below.get(depth, 0.0) + total
        if name not in floor:
            rows.append((total, name))
    beyond = sum(own for _, name, own in served if name not in floor)
    return beyond, sorted(rows, reverse=True)[:count]


def _imported(
    command: list[str], stdin: str = "", env: dict[str, str] | None = None
) -> list[tuple[int, str, float]]:
    """Each module `command` imports (under -X importtime), in its order: its depth, its
    name and the seconds it took by itself. Given `stdin`, a server: up to its first answer,
    as it is stopped once that is read (it loads the service later, at the end of its
    input if nothing asked for it before)."""
    with tempfile.TemporaryFile("w+") as listing:  # a pipe could fill before the answer
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=listing,
            text=True, env={**os.environ, **(env or {})},
        )  # fmt: skip
        assert process.stdin is not None and process.stdout is not None
        if stdin:
            process.stdin.write(stdin)
            process.stdin.flush()
            if not process.stdout.readline():
                raise RuntimeError(f"{' '.join(command[-2:])} ended before answering")
            process.kill()
        process.communicate(timeout=120)
        if not stdin and process.returncode != 0:
            raise RuntimeError(f"{' '.join(command[-2:])} failed")
        listing.seek(0)
        lines = listing.read().splitlines()
    modules = []
    for line in lines:
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            name = parts[2].rstrip()
            depth = (len(name) - len(name.lstrip())) // 2
            modules.append((depth, name.strip(), int(parts[0].rsplit(":", 1)[1]) / 1e6))
    return modules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="the store (default: a new one)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--cold", action="store_true", help="empty the page cache first")
    parser.add_argument("--importtime", action="store_true", help="list the slowest imports")
    parser.add_argument("--against", type=Path, metavar="SRC",
                        help="another tree's src/, started in turn with this one")  # fmt: skip
    args = parser.parse_args(argv)
    own_folder = None if args.db else Path(tempfile.mkdtemp(prefix="palimpsest-start-"))
    db = args.db if own_folder is None else own_folder / "start.db"
    spec = importlib.util.find_spec("palimpsest")
    assert spec is not None and spec.origin is not None
    sources: dict[str, Path | None] = {"this": None}
    packages = [Path(spec.origin).parent]
    if args.against is not None:
        sources[f"against {args.against}"] = args.against.resolve()
        packages.append(args.against.resolve() / "palimpsest")
    for package in packages:
        compileall.compile_dir(package, quiet=1)
    load_before = os.getloadavg()
    try:
        if not db.exists():  # the first start makes the store: not what is timed here
            one_run(db, args.embedder, None)
        cold = None
        if args.cold:
            cold = start_files(db) + [f for p in packages[1:] for f in p.rglob("*") if f.is_file()]
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
        for number in range(args.runs):  # in turn, each first every other run
            for name, source in sorted(sources.items(), reverse=number % 2 == 1):
                runs[name].append(one_run(db, args.embedder, cold, source))
        imports = slowest_imports(db, args.embedder, 25) if args.importtime else None
    finally:
        if own_folder is not None:
            shutil.rmtree(own_folder)
    loads = ", ".join(f"{a:.1f}" for a in (load_before[0], os.getloadavg()[0]))
    print(f"`palimpsest serve` on {db}, {args.runs} {'cold' if args.cold else 'warm'} runs, "
          f"load average {loads} (before, after):")  # fmt: skip
    figures: dict[str, dict[str, float]] = {}
    for tree, done in runs.items():
        if len(runs) > 1:
            print(f" {tree}:")
        figures[tree] = {}
        for name in done[0]:
            values = [run[name] for run in done]
            figures[tree][name] = round(statistics.median(values), 3)
            print(f"  {name:<26} median {figures[tree][name]:6.3f} s  (min {min(values):.3f})")
    if imports is not None:
        print(f"imported beyond the SDK's own imports: {imports[0]:.3f} s by themselves; "
              "the slowest (s, with what they import):")  # fmt: skip
        for seconds, module in imports[1]:
            print(f"  {seconds:6.3f} {module}")
    print(json.dumps(figures if len(figures) > 1 else figures["this"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
