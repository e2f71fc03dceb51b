"""Recall quality on a user's own memory: `palimpsest bench recall`.

Questions whose answers are known are asked as recall queries (limit 10), once on full
text alone (a service with the null embedder over the same store) and once hybrid (the
service's embedder), and scored as LoCoMo scores retrieval (docs/recall.md):

    recall@k  the share of a question's expected answers among its top k hits
    hit@k     1 when any expected answer is among the top k (k = 1, 3, 5)
    no hit    1 when recall returned nothing (right for a question with no answer)

each averaged over the questions, overall and per category. A question whose `expected`
is empty has no answer in memory: it counts only towards `no hit`, and the figures of
the others are averaged over the questions that have an answer. Full text alone and
meaning alone (the nearest vectors, nothing fused) are measured as baselines, without the
relevance floor; hybrid as recall serves it, floor and all.

A questions file is JSON Lines, one question a line:

    {"question": "how do we ship?", "expected": ["<memory id>", ...],
     "category": "paraphrase", "notebook": "web"}

`category` and `notebook` are optional; `notebook` narrows the recall as its filter does.
`"expected": []` marks a question whose answer is in no memory. The whole file is checked
before the first question is asked: a bad line, or a notebook
the store does not hold, is refused by its line number; expected ids that are no memory of
the store (they can never be found) are listed by line in the answer, with a warning.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..domain.errors import NotFound, PalimpsestError, ValidationError
from ..embed import Embedder, NullEmbedder
from ..screening import gate
from ..service.base import MAX_ID
from ..service.vectors import model_tag
from ..store import SearchQuery

if TYPE_CHECKING:
    from ..service import Service

T = TypeVar("T")
# Wraps the items of a long step (a label for it, the items) to show progress; the
# adapter decides how (the CLI draws a bar on stderr).
Progress = Callable[[str, Sequence[Any]], Iterable[Any]]
LIMIT = 10
CUTS = (1, 5, 10)
HITS = (1, 3, 5)
NO_HIT = "no hit"
MAX_QUESTIONS = 100_000
FIELDS = {"question", "expected", "category", "notebook"}
MAX_CATEGORY = 100
LINES_NAMED = 20  # lines a warning names; `unknown_expected` lists them all


def quiet(label: str, items: Sequence[T]) -> Iterable[T]:
    del label
    return items


@dataclass(frozen=True)
class Question:
    question: str
    expected: tuple[str, ...]  # memory ids, or the labels `labels` maps memory ids to
    category: str | None = None
    notebook: str | None = None
    line: int = 0  # its line in the questions file (0: not from a file)


def jsonl_rows(path: Path, option: str) -> list[dict[str, Any]]:
    """The objects of a dev set's JSON Lines file; refused, naming the file and the
    `option` its folder was given by, when it is missing, not JSON Lines or not objects."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise ValidationError(
            f"{path.name} in the --{option} folder is missing or not JSON Lines.", field=option
        ) from None
    if not all(isinstance(row, dict) for row in rows):
        raise ValidationError(f"{path.name} holds a line that is no object.", field=option)
    return rows


def read_questions(path: Path) -> list[Question]:
    """The questions of a JSONL file; a bad line is refused by its number, not echoed."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        message = f"cannot read the questions file ({reason})."
        raise ValidationError(message, field="questions") from None
    questions = [_question(line, n) for n, line in enumerate(lines, 1) if line.strip()]
    if not questions or len(questions) > MAX_QUESTIONS:
        raise ValidationError(
            f"the questions file must hold from 1 to {MAX_QUESTIONS:,} questions, one JSON "
            'object a line: {"question": ..., "expected": [ids]}.',
            field="questions",
        )
    return questions


def _question(line: str, number: int) -> Question:
    where = f"line {number} of the questions file"
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        raise ValidationError(f"{where} is not JSON.", field="questions") from None
    if not isinstance(row, dict) or not FIELDS >= set(row) >= {"question", "expected"}:
        raise ValidationError(
            f'{where} must be an object with "question" and "expected" (and optionally '
            '"category" and "notebook"), nothing else.',
            field="questions",
        )
    expected = row["expected"]
    text_fields = [row["question"], row.get("category", ""), row.get("notebook", "")]
    if not all(isinstance(v, str) for v in text_fields) or not row["question"].strip():
        raise ValidationError(
            f'{where}: "question" must be non-empty text, "category" and "notebook" text.',
            field="questions",
        )
    category = row.get("category")
    if category is not None and (
        len(category) > MAX_CATEGORY or gate.record_flagged([("category", category)])
    ):
        # It is printed in the table of figures: a label, never a secret.
        raise ValidationError(
            f'{where}: "category" must be a short label ({MAX_CATEGORY} characters at most) '
            "holding no secret.",
            field="questions",
        )
    if not isinstance(expected, list) or not all(
        isinstance(e, str) and 0 < len(e) <= MAX_ID for e in expected
    ):
        raise ValidationError(
            f'{where}: "expected" must be a list of memory ids ([] for a question whose '
            "answer is in no memory).",
            field="questions",
        )
    return Question(row["question"], tuple(dict.fromkeys(expected)), row.get("category"),
                    row.get("notebook"), number)  # fmt: skip


def unknown_expected(service: Service, questions: Sequence[Question]) -> list[dict[str, Any]]:
    """Check every question against the store before any is asked: a notebook it does not
    hold is refused, naming the line; expected ids that are no memory of it (never made,
    or forgotten: they can never be found) are returned per line."""
    unknown = []
    with service.store.read(service.workspace) as tx:
        for question in questions:
            where = f"line {question.line} of the questions file"
            if question.notebook is not None:
                try:
                    service._find_notebook(tx, question.notebook)
                except PalimpsestError as exc:
                    problem = type(exc) if isinstance(exc, NotFound) else ValidationError
                    raise problem(f"{where}: {exc.message}", field="questions") from None
            missing = [e for e in question.expected if tx.get_memory(e) is None]
            if missing:
                shown = [gate.shown_reference(e) for e in missing]
                unknown.append({"line": question.line, "ids": shown})
    return unknown


def _unknown_warning(unknown: list[dict[str, Any]]) -> str:
    lines = [str(item["line"]) for item in unknown]
    named = ", ".join(lines[:LINES_NAMED]) + (
        f" and {len(lines) - LINES_NAMED} more" if len(lines) > LINES_NAMED else ""
    )
    return (
        f"expected ids on line(s) {named} are no memory of this store (mistyped, from "
        "another store, or forgotten): they can never be found and count as misses. "
        "`unknown_expected` lists them; fix the file or drop them."
    )


@dataclass
class _Tally:
    rows: list[tuple[str | None, dict[str, float]]]

    def figures(self) -> dict[str, Any]:
        by_category: dict[str, list[dict[str, float]]] = defaultdict(list)
        for category, row in self.rows:
            if category is not None:
                by_category[category].append(row)
        return {
            "all": _mean([row for _, row in self.rows]),
            "categories": {c: _mean(rows) for c, rows in sorted(by_category.items())},
        }


def _mean(rows: list[dict[str, float]]) -> dict[str, Any]:
    """Each figure averaged over the rows that have it (`no hit` over all of them)."""
    names = dict.fromkeys(name for row in rows for name in row)
    means: dict[str, Any] = {"questions": len(rows)}
    for name in names:
        values = [row[name] for row in rows if name in row]
        means[name] = round(statistics.fmean(values), 4)
    return means


def scored(ranked: Sequence[Iterable[str]], expected: set[str]) -> dict[str, float]:
    """One question's figures, from the names each hit stands for, best first."""
    row = {NO_HIT: 0.0 if ranked else 1.0}
    if not expected:
        return row
    for k in CUTS:
        found = expected.intersection(name for names in ranked[:k] for name in names)
        row[f"recall@{k}"] = len(found) / len(expected)
    for k in HITS:
        row[f"hit@{k}"] = 1.0 if expected.intersection(n for ns in ranked[:k] for n in ns) else 0.0
    return row


def measure(
    service: Service,
    questions: Sequence[Question],
    labels: Mapping[str, Sequence[str]] | None = None,
    progress: Progress = quiet,
    label: str = "asking",
    floor: bool = True,
) -> dict[str, Any]:
    """Ask every question of `service` and score its hits. `labels` maps a memory id to
    what `expected` calls it (LoCoMo's dialog ids); without it, `expected` holds ids.
    `floor` false counts what recall's relevance floor leaves out too (`near_misses`)."""

    def hits(question: Question) -> list[str]:
        answer = service.recall(query=question.question, notebook=question.notebook,
                                limit=LIMIT, near_misses=not floor)  # fmt: skip
        return [hit["id"] for hit in answer["hits"]]

    return _figures(questions, hits, labels, progress, label)


def measure_meaning(
    service: Service,
    questions: Sequence[Question],
    labels: Mapping[str, Sequence[str]] | None = None,
    progress: Progress = quiet,
) -> dict[str, Any]:
    """The same figures for the nearest vectors alone: each question embedded and its
    LIMIT nearest active memories (in its notebook, if it names one) taken as they come."""
    tag = model_tag(service.embedder)
    with service.store.read(service.workspace) as tx:

        def hits(question: Question) -> list[str]:
            scope = None
            if question.notebook is not None:
                scope = (service._find_notebook(tx, question.notebook).id,)
            vector = service.vectors.vector_of(question.question)
            assert vector is not None
            search = SearchQuery(text="", limit=LIMIT, notebook_ids=scope)
            return [found.id for found, _ in tx.nearest_found(vector, search, tag)]

        return _figures(questions, hits, labels, progress, "meaning")


def _figures(
    questions: Sequence[Question],
    hits: Callable[[Question], list[str]],
    labels: Mapping[str, Sequence[str]] | None,
    progress: Progress,
    label: str,
) -> dict[str, Any]:
    """Each question's `hits` (memory ids, best first) scored, then averaged."""
    tally = _Tally([])
    for question in progress(label, questions):
        ranked = [labels.get(h, ()) if labels is not None else (h,) for h in hits(question)]
        tally.rows.append((question.category, scored(ranked, set(question.expected))))
    return tally.figures()


def compare(
    service: Service,
    questions: Sequence[Question],
    labels: Mapping[str, Sequence[str]] | None = None,
    progress: Progress = quiet,
) -> dict[str, Any]:
    """The figures of full text alone and of hybrid recall on the service's store."""
    embedder: Embedder = service.embedder
    # Expected labels (LoCoMo's) name no memory: only ids are looked for in the store.
    unknown = unknown_expected(service, questions) if labels is None else []
    words = type(service)(service.store, actor=service.actor, workspace=service.workspace,
                          embedder=NullEmbedder())  # fmt: skip
    result: dict[str, Any] = {
        "questions": len(questions),
        "embedder": embedder.name,
        # The single methods are baselines: measured as they rank, with no floor.
        "full_text": measure(words, questions, labels, progress, "full text", floor=False),
        "meaning": None,
        "hybrid": None,
        "notes": [],
    }
    if unknown:
        result["unknown_expected"] = unknown
        result["warnings"] = [_unknown_warning(unknown)]
    if embedder.dimensions == 0:
        result["notes"].append("the embedder is `none`: hybrid is not measured")
        return result
    with service.store.read(service.workspace) as tx:
        unembedded = tx.stale_vectors(model_tag(embedder), 1)
    if unembedded:
        result["notes"].append(
            "some memories have no vector of this embedder, so hybrid misses them by "
            "meaning: run `palimpsest reindex` first"
        )
    result["meaning"] = measure_meaning(service, questions, labels, progress)
    result["hybrid"] = measure(service, questions, labels, progress, "hybrid")
    return result
