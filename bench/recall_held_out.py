"""Recall's weights held out on LoCoMo: each chosen on four conversations, scored on the fifth.

Run on demand, as served (the service itself, not a model of it):

    .venv/bin/python bench/recall_held_out.py --data path/to/locomo/dev \
        --setting recall.weight.author=0.1,0.15,0.2 --setting recall.weight.episode=0.3,0.5,0.7

The conversations are filed once into a temporary store (as `palimpsest bench recall
--locomo` files them); each combination of the settings given is then set on it and every
question asked. For each conversation, the combination with the best recall@5 over the
other four (`--by lowest`: the best lowest category, issue 10's other aim) is scored on
it; the five held-out scores are pooled, overall and per category. A choice that only fits
the conversations it was made on shows here as a drop.
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from palimpsest.embed import load_embedder
from palimpsest.service import Service, bench, locomo
from palimpsest.store import open_store

Figures = dict[str, tuple[int, float]]  # "conversation|category" -> (questions, recall@5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo's converted folder")
    parser.add_argument("--setting", action="append", default=[], metavar="NAME=V1,V2",
                        help="a setting and the values to try (repeatable)")  # fmt: skip
    parser.add_argument("--by", choices=("overall", "lowest"), default="overall",
                        help="choose by recall@5 overall or by the lowest category's")  # fmt: skip
    args = parser.parse_args()
    grid = {name: [float(v) for v in values.split(",")]
            for name, values in (s.split("=", 1) for s in args.setting)}  # fmt: skip
    combinations = [
        dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())
    ]
    scratch = Path(tempfile.mkdtemp(prefix="palimpsest-held-out-"))
    try:
        store = open_store(str(scratch / "locomo.db"))
        service = Service(store, actor="user:bench", embedder=load_embedder("all-MiniLM-L6-v2"))
        filed = locomo.file_locomo(service, locomo.read_locomo(args.data))
        questions = [replace(q, category=f"{q.notebook}|{q.category}") for q in filed.questions]
        measured: list[Figures] = []
        for combination in combinations:
            if combination:
                service.change_settings(changes=combination, because="held out")
            categories = bench.measure(service, questions, filed.labels)["categories"]
            measured.append({k: (v["questions"], v["recall@5"]) for k, v in categories.items()})
            print(f"{_label(combination)}: {_recall(measured[-1], lambda k: True):.3f}", flush=True)
        store.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    held: Figures = {}
    for conversation in sorted({k.split("|")[0] for k in measured[0]}):
        others = [_chosen_by(m, conversation, args.by) for m in measured]
        best = max(range(len(measured)), key=others.__getitem__)
        print(f"{conversation}: chose {_label(combinations[best])}")
        held |= {k: v for k, v in measured[best].items() if k.startswith(conversation + "|")}
    shown = [f"all {_recall(held, lambda k: True):.3f}"]
    for category in sorted({k.split("|")[1] for k in held}):
        shown.append(f"{category} {_recall(held, lambda k, c=category: k.endswith('|' + c)):.3f}")
    print("held out: " + ", ".join(shown))
    return 0


def _chosen_by(figures: Figures, left_out: str, by: str) -> float:
    """What a combination scores on the conversations other than `left_out`."""
    others = {k: v for k, v in figures.items() if not k.startswith(left_out + "|")}
    if by == "overall":
        return _recall(others, lambda k: True)
    categories = {k.split("|")[1] for k in others}
    return min(_recall(others, lambda k, c=c: k.endswith("|" + c)) for c in categories)


def _recall(figures: Figures, chosen: Callable[[str], bool]) -> float:
    """recall@5 over the questions of the chosen keys, each question counting once."""
    totals: dict[str, float] = defaultdict(float)
    for key, (questions, recall) in figures.items():
        if chosen(key):
            totals["questions"] += questions
            totals["found"] += questions * recall
    return totals["found"] / totals["questions"] if totals["questions"] else 0.0


def _label(combination: dict[str, float]) -> str:
    return ", ".join(f"{name} {value}" for name, value in combination.items()) or "defaults"


if __name__ == "__main__":
    raise SystemExit(main())
