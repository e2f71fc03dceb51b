"""`palimpsest bench recall`: recall quality on the user's store or on LoCoMo, full text
alone beside hybrid. The measuring is the service's (service/bench.py, service/locomo.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from ..errors import ValidationError
from ..service import bench, locomo
from .app import Env, command, emit, palimpsest, pass_env


@palimpsest.group("bench", epilog="\b\nExample:\n  palimpsest bench recall questions.jsonl")
def bench_group() -> None:
    """Measure Palimpsest on your own memory."""


@command(bench_group, "recall", "palimpsest bench recall questions.jsonl --json")
@click.argument("questions", required=False, type=click.Path(path_type=Path))
@click.option("--locomo", "locomo_dir", type=click.Path(path_type=Path), metavar="DIR",
              help="Measure on LoCoMo conversations in DIR (filed into a temporary store) "
              "instead of questions on the store.")  # fmt: skip
@pass_env
def recall(env: Env, /, questions: Path | None, locomo_dir: Path | None) -> None:
    """Recall@1/5/10 and hit@5 of questions whose answers are known, on full text alone
    and hybrid (words and meaning), overall and per category.

    QUESTIONS is a JSON Lines file, one question a line: {"question": "how do we ship?",
    "expected": ["<memory id>", ...], "category": "optional", "notebook": "optional"}.
    With --locomo DIR the conversations of LoCoMo are filed into a temporary store and
    their questions asked there (see docs/recall.md); the store is not touched.
    """
    if (questions is None) == (locomo_dir is None):
        raise ValidationError("Give a questions file, or --locomo DIR (not both).",
                              field="questions")  # fmt: skip
    if questions is not None:
        asked = bench.read_questions(questions)  # a bad file is refused before any store
        emit(bench.compare(env.service(create=False), asked, progress=_bar), _show)
        return
    assert locomo_dir is not None
    emit(locomo.measure_locomo(locomo_dir, env.config().embedder, env.actor, _bar), _show)


def _bar(label: str, items: Sequence[Any]) -> Iterator[Any]:
    with click.progressbar(items, label=f"{label:<10}", file=sys.stderr) as bar:
        yield from bar


def _show(result: dict[str, Any]) -> None:
    names = ["recall@1", "recall@5", "recall@10", "hit@5"]
    click.echo(f"{result['questions']} questions, embedder {result['embedder']}\n")
    click.echo(f"{'':<26}{'questions':>10}" + "".join(f"{n:>11}" for n in names))
    for mode, title in (("full_text", "full text"), ("hybrid", "hybrid")):
        figures = result[mode]
        if figures is None:
            continue
        rows = [(title, figures["all"])]
        rows += [(f"  {c}", f) for c, f in figures["categories"].items()]
        for label, row in rows:
            cells = "".join(f"{row[n]:>11.3f}" for n in names)
            click.echo(f"{label:<26}{row['questions']:>10}{cells}")
    for note in result["notes"]:
        click.echo(f"\nnote: {note}")
    for warning in result.get("warnings", []):
        click.echo(f"\nwarning: {warning}")
