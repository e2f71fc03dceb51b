"""`palimpsest bench recall`: recall quality on the user's store or on LoCoMo, full text
alone beside hybrid. The measuring is in evaluation/ (bench.py, locomo.py, devset.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from ..domain.errors import ValidationError
from ..evaluation import bench, devset, locomo
from .app import Env, command, emit, palimpsest, pass_env


@palimpsest.group("bench", epilog="\b\nExample:\n  palimpsest bench recall questions.jsonl")
def bench_group() -> None:
    """Measure Palimpsest on your own memory."""


@command(bench_group, "recall", "palimpsest bench recall questions.jsonl --json")
@click.argument("questions", required=False, type=click.Path(path_type=Path))
@click.option("--locomo", "locomo_dir", type=click.Path(path_type=Path), metavar="DIR",
              help="Measure on LoCoMo conversations in DIR (filed into a temporary store) "
              "instead of questions on the store.")  # fmt: skip
@click.option("--projects", "projects", is_flag=False, flag_value=".", default=None,
              metavar="[DIR]", help="Measure on Palimpsest's own dev set of project memory "
              "(filed into a temporary store), or on a set of that form in DIR.")  # fmt: skip
@pass_env
def recall(
    env: Env, /, questions: Path | None, locomo_dir: Path | None, projects: str | None
) -> None:
    """Recall@1/5/10, hit@1/3/5 and how often nothing was found, for questions whose
    answers are known: on full text alone, meaning alone and hybrid (words and meaning
    fused, as recall serves), overall and per category.

    QUESTIONS is a JSON Lines file, one question a line: {"question": "how do we ship?",
    "expected": ["<memory id>", ...], "category": "optional", "notebook": "optional"};
    `"expected": []` marks a question with no answer in memory. With --projects or
    --locomo DIR a dev set is filed into a temporary store and its questions asked there
    (see docs/recall.md); your store is not touched.
    """
    if sum(given is not None for given in (questions, locomo_dir, projects)) != 1:
        raise ValidationError("Give a questions file, --projects or --locomo DIR (one).",
                              field="questions")  # fmt: skip
    embedder, actor = env.config().embedder, env.actor
    if questions is not None:
        asked = bench.read_questions(questions)  # a bad file is refused before any store
        emit(bench.compare(env.service(create=False), asked, progress=_bar), _show)
    elif locomo_dir is not None:
        emit(locomo.measure_locomo(locomo_dir, embedder, actor, _bar), _show)
    else:
        folder = None if projects == "." else Path(str(projects))
        emit(devset.measure_devset(folder, embedder, actor, _bar), _show)


def _bar(label: str, items: Sequence[Any]) -> Iterator[Any]:
    with click.progressbar(items, label=f"{label:<10}", file=sys.stderr) as bar:
        yield from bar


NAMES = ["recall@1", "recall@5", "recall@10", "hit@1", "hit@3", "hit@5", bench.NO_HIT]
MODES = (("full_text", "full text"), ("meaning", "meaning"), ("hybrid", "hybrid"))


def _show(result: dict[str, Any]) -> None:
    click.echo(f"{result['questions']} questions, embedder {result['embedder']}\n")
    click.echo(f"{'':<24}{'questions':>10}" + "".join(f"{n:>10}" for n in NAMES))
    for mode, title in MODES:
        figures = result.get(mode)
        if figures is None:
            continue
        rows = [(title, figures["all"])]
        rows += [(f"  {c}", f) for c, f in figures["categories"].items()]
        for label, row in rows:
            cells = "".join(f"{row[n]:>10.3f}" if n in row else f"{'':>10}" for n in NAMES)
            click.echo(f"{label:<24}{row['questions']:>10}{cells}")
    for note in result["notes"]:
        click.echo(f"\nnote: {note}")
    for warning in result.get("warnings", []):
        click.echo(f"\nwarning: {warning}")
