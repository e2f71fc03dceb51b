"""Start-up of `palimpsest serve` (stdio): seconds from starting the process to its first
answers, and where the time goes.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_startup.py --db /tmp/store.db --runs 5
    .venv/bin/python bench/bench_startup.py --importtime   # the slowest imports too

Each run starts a real server with the MiniLM embedder and speaks JSON-RPC on its pipes:
`initialize` (what a client waits for before anything else), `tools/list`, a recall of an
empty query (filters alone), then a recall by words and meaning (the model must be loaded
by then). Figures are seconds since the process was started, median over the runs,
and the CPU seconds the server had used by then (what a busy machine inflates least).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"},
}


class Server:
    """One `palimpsest serve` process over stdio, timed from its start."""

    def __init__(self, db: Path, embedder: str):
        env = {**os.environ, "PALIMPSEST_EMBEDDER": embedder}
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "palimpsest", "--db", str(db), "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, text=True,
        )  # fmt: skip
        self.number = 0

    def cpu(self) -> float:
        """CPU seconds the server has used so far (a busy machine inflates it far less
        than the wall time)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

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


def one_run(db: Path, embedder: str) -> dict[str, float]:
    server = Server(db, embedder)
    try:
        figures = {"initialize": server.ask("initialize", INITIALIZE)}
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
    return figures


def slowest_imports(count: int) -> list[tuple[float, str]]:
    """The modules `palimpsest serve` imports that take longest, themselves included."""
    code = "import palimpsest.cli, palimpsest.mcp"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]) / 1e6, parts[2].rstrip()))
    return sorted(rows, reverse=True)[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="the store (default: a new one)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--importtime", action="store_true", help="list the slowest imports")
    args = parser.parse_args(argv)
    own_folder = None if args.db else Path(tempfile.mkdtemp(prefix="palimpsest-start-"))
    db = args.db if own_folder is None else own_folder / "start.db"
    try:
        runs = [one_run(db, args.embedder) for _ in range(args.runs)]
    finally:
        if own_folder is not None:
            shutil.rmtree(own_folder)
    load = os.getloadavg()[0]
    print(f"`palimpsest serve` on {db}, {args.runs} runs, load average {load:.1f}:")
    figures = {}
    for name in runs[0]:
        values = [run[name] for run in runs]
        figures[name] = round(statistics.median(values), 3)
        print(f"  {name:<20} median {figures[name]:6.3f} s  (min {min(values):.3f})")
    if args.importtime:
        print("slowest imports (cumulative s):")
        for seconds, module in slowest_imports(25):
            print(f"  {seconds:6.3f} {module}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
