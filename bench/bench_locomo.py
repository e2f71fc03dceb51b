"""Recall quality on LoCoMo: does recall find the turns that answer a question?

Run on demand, not by pytest:

    .venv/bin/python bench/bench_locomo.py
    .venv/bin/python bench/bench_locomo.py --store postgresql://localhost/palimpsest
    .venv/bin/python bench/bench_locomo.py --compare postgresql://localhost/palimpsest

`palimpsest bench recall --locomo DIR` gives the same figures for full text and hybrid side
by side (evaluation/bench.py); this script adds latency and the store comparison. It runs
with the embedder `--embedder` names (default all-MiniLM-L6-v2: hybrid; `none`: full text).

The data is not in this repository: by default it is read from ../shared/bench/locomo/dev
beside it (`--data DIR` names another folder).

Each dev conversation of LoCoMo (Maharana et al., "Evaluating Very Long-Term
Conversational Memory of LLM Agents", ACL 2024) is filed through the service, one memory
per dialog turn ("<speaker>: <text>", kind note, in a notebook named after the
conversation, occurred_at from the session's date). Then every question of that
conversation is asked as a recall query in its notebook (limit 10) and scored as
../shared/bench/locomo/README.md defines it: recall@k is the share of the question's
evidence turns in the top k, hit@k whether any is, each averaged over questions
(category 5 included). The data is read at run time and never copied: it is licensed for
evaluation only.

`--compare URL` runs the same questions on a fresh SQLite file and on the PostgreSQL at URL
(`--store` is then not used) and counts the questions the two stores answer alike: both
index the same terms (store/terms.py) and rank by the same BM25, so they should all be.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palimpsest.domain.errors import ValidationError
from palimpsest.embed import DEFAULT_EMBEDDER, EMBEDDERS, load_embedder
from palimpsest.evaluation.locomo import CATEGORIES, occurred_at
from palimpsest.service import Service
from palimpsest.store import open_store, shown

REPO = Path(__file__).resolve().parents[1]
LOCOMO_DEV = REPO.parent / "shared" / "bench" / "locomo" / "dev"
WHERE = (
    "LoCoMo's data is not in this repository: pass --data DIR, the folder of "
    "<id>.memories.jsonl and <id>.questions.jsonl, by default ../shared/bench/locomo/dev "
    "beside the repository."
)
LIMIT = 10
CUTS = (1, 5, 10)


@dataclass
class Scores:
    """Per-question figures, kept whole so any average can be taken at the end."""

    recall: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in CUTS})
    hit5: list[float] = field(default_factory=list)
    by_category: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    latency: list[float] = field(default_factory=list)
    answers: list[list[str]] = field(default_factory=list)  # each question's ranked turns
    memories: int = 0
    duplicates: int = 0
    refused: int = 0


def conversations(data: Path) -> list[Path]:
    """The conversations' memory files in `data`, each with its questions beside it.

    Exits with one line saying what is missing: the data lives outside the repository.
    """
    if not data.exists():
        sys.exit(f"bench_locomo: {data} does not exist. {WHERE}")
    if not data.is_dir():
        sys.exit(f"bench_locomo: {data} is not a folder. {WHERE}")
    found = sorted(data.glob("*.memories.jsonl"))
    if not found:
        sys.exit(f"bench_locomo: no *.memories.jsonl in {data}. {WHERE}")
    for path in found:
        questions = path.name.removesuffix(".memories.jsonl") + ".questions.jsonl"
        if not (data / questions).is_file():
            sys.exit(f"bench_locomo: {path.name} has no {questions} beside it in {data}.")
    return found


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every line's object; one line names the first line that is not JSON."""
    rows = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                sys.exit(f"bench_locomo: {path} line {number} is not JSON ({exc.msg}).")
    return rows


def file_turns(
    service: Service, notebook: str, turns: list[dict[str, Any]], scores: Scores
) -> dict[str, list[str]]:
    """Remember every turn; return memory id -> the LoCoMo dialog ids it stands for."""
    dialog_ids: dict[str, list[str]] = defaultdict(list)
    for turn in turns:
        fields: dict[str, Any] = {"notebook": notebook, "kind": "note"}
        fields["text"] = f"{turn['speaker']}: {turn['text']}"
        when = occurred_at(turn.get("session_date_time", ""))
        if when:
            fields["occurred_at"] = when
        try:
            answer = service.remember(**fields)
        except ValidationError as exc:  # the write gate may refuse a turn; count it
            print(f"  {notebook} {turn['id']} refused: {exc}", file=sys.stderr)
            scores.refused += 1
            continue
        scores.duplicates += "duplicate_of" in answer
        scores.memories += "duplicate_of" not in answer
        dialog_ids[answer["id"]].append(turn["id"])
    return dialog_ids


def ask(service: Service, notebook: str, questions: list[dict[str, Any]],
        dialog_ids: dict[str, list[str]], scores: Scores) -> None:  # fmt: skip
    """Recall each question in its conversation's notebook and score the ranked hits."""
    for question in questions:
        start = time.perf_counter()
        hits = service.recall(query=question["question"], notebook=notebook, limit=LIMIT)["hits"]
        scores.latency.append(time.perf_counter() - start)
        ranked = [dialog_ids.get(hit["id"], []) for hit in hits]
        scores.answers.append([turn[0] if turn else "" for turn in ranked])
        evidence = set(question["evidence"])
        for k in CUTS:
            found = evidence.intersection(d for turn in ranked[:k] for d in turn)
            scores.recall[k].append(len(found) / len(evidence))
            if k == 5:
                scores.hit5.append(1.0 if found else 0.0)
                scores.by_category[question["category"]].append(len(found) / len(evidence))


def run(store_url: str, workspace: str, files: list[Path], embedder: str) -> Scores:
    scores = Scores()
    store = open_store(store_url)
    try:
        service = Service(store, actor="agent:bench-locomo", workspace=workspace,
                          embedder=load_embedder(embedder))  # fmt: skip
        for path in files:
            conversation = path.name.removesuffix(".memories.jsonl")
            questions = read_jsonl(path.with_name(f"{conversation}.questions.jsonl"))
            started = time.perf_counter()
            dialog_ids = file_turns(service, conversation, read_jsonl(path), scores)
            filed = time.perf_counter() - started
            ask(service, conversation, questions, dialog_ids, scores)
            print(f"  {conversation}: {sum(map(len, dialog_ids.values()))} turns filed in "
                  f"{filed:.1f} s, {len(questions)} questions", flush=True)  # fmt: skip
    finally:
        store.close()
    return scores


def report(scores: Scores) -> None:
    n = len(scores.hit5)
    mean = statistics.fmean
    cuts = statistics.quantiles(scores.latency, n=100, method="inclusive")
    print(f"\n{n} questions, {scores.memories} memories "
          f"({scores.duplicates} duplicate turns, {scores.refused} refused)\n")  # fmt: skip
    print(f"{'':<24}{'value':>8}")
    for k in CUTS:
        print(f"{f'recall@{k}':<24}{mean(scores.recall[k]):>8.3f}")
    print(f"{'hit@5':<24}{mean(scores.hit5):>8.3f}")
    print(f"\n{'recall@5 by category':<24}{'value':>8}{'questions':>11}")
    for category in sorted(scores.by_category):
        values = scores.by_category[category]
        label = f"{category} {CATEGORIES.get(category, '')}"
        print(f"{label:<24}{mean(values):>8.3f}{len(values):>11}")
    print(f"\nrecall latency p50 / p95  {cuts[49] * 1000:.2f} / {cuts[94] * 1000:.2f} ms")


def agreement(first: Scores, second: Scores, names: tuple[str, str]) -> None:
    """How many questions the two stores answered with the same turns."""
    pairs = list(zip(first.answers, second.answers, strict=True))
    same_found = sum(set(a) == set(b) for a, b in pairs)
    same_top5 = sum(set(a[:5]) == set(b[:5]) for a, b in pairs)
    same_order = sum(a == b for a, b in pairs)
    print(f"\n{names[0]} and {names[1]} on {len(pairs)} questions:")
    print(f"{'same 10 hits':<24}{same_found:>8}")
    print(f"{'same top 5':<24}{same_top5:>8}")
    print(f"{'same order':<24}{same_order:>8}")


def fresh_sqlite() -> tuple[Path, str]:
    temp_dir = Path(tempfile.mkdtemp(prefix="palimpsest-locomo-"))
    return temp_dir, str(temp_dir / "locomo.db")


def measured(url: str, workspace: str, files: list[Path], data: Path, embedder: str) -> Scores:
    print(f"LoCoMo recall on {shown(url)} (workspace {workspace}, embedder {embedder}), "
          f"data {data}", flush=True)  # fmt: skip
    scores = run(url, workspace, files, embedder)
    report(scores)
    return scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=LOCOMO_DEV,
        help="folder of <id>.memories.jsonl and <id>.questions.jsonl; LoCoMo is not in this "
        "repository: by default ../shared/bench/locomo/dev beside it",
    )
    parser.add_argument(
        "--store",
        help="a SQLite path or postgresql:// URL, filled in a new workspace "
        "(default: a fresh SQLite file in a temporary folder)",
    )
    parser.add_argument(
        "--compare",
        metavar="URL",
        help="run on a fresh SQLite file and on this postgresql:// URL, and count the "
        "questions both answer alike",
    )
    parser.add_argument("--embedder", choices=sorted(EMBEDDERS), default=DEFAULT_EMBEDDER,
                        help="none: full text alone")  # fmt: skip
    args = parser.parse_args(argv)
    files = conversations(args.data)
    workspace = f"locomo-{uuid.uuid4().hex[:8]}"
    if args.store and not args.compare:
        measured(args.store, workspace, files, args.data, args.embedder)
        return 0
    temp_dir, url = fresh_sqlite()
    try:
        scores = measured(url, "default", files, args.data, args.embedder)
    finally:
        shutil.rmtree(temp_dir, ignore_errors=True)
    if args.compare:
        print()
        other = measured(args.compare, workspace, files, args.data, args.embedder)
        agreement(scores, other, ("SQLite", "PostgreSQL"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
