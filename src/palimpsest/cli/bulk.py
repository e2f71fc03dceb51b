"""`remember --from FILE.jsonl`: file a file of memories, one JSON object a line.

The file is read twice, so memory stays bounded whatever its length: first to check that
every line is a JSON object (a broken file is refused, naming the line, before anything is
filed), then in batches of BATCH lines, each one remember with `items` (one transaction,
embedded together). A line the service refuses stops the run there, naming the line:
the batches before it are filed, and running the file again files only what is missing,
since a text already filed in its notebook answers as a duplicate instead of twice.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from ..domain.errors import PalimpsestError, Retryable, ValidationError
from ..service import Service

BATCH = 256  # lines per transaction: the model's batches fill, the answer stays small
Line = tuple[int, dict[str, Any]]  # (line number, from 1; the memory's fields)


def _lines(path: Path) -> Iterator[Line]:
    """Each non-blank line as a JSON object; a refusal names the line, never its content
    (which may hold the very secret the gate would refuse)."""
    try:
        with path.open(encoding="utf-8") as file:
            for number, raw in enumerate(file, start=1):
                if not raw.strip():
                    continue
                try:
                    fields = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise ValidationError(
                        f"line {number} is not JSON ({exc.msg} at column {exc.colno}): each "
                        'line is one memory\'s fields, e.g. {"kind": "fact", "text": ...}.',
                        field="from",
                    ) from None
                if not isinstance(fields, dict):
                    raise ValidationError(
                        f"line {number} is not a JSON object: each line is one memory's "
                        'fields, e.g. {"kind": "fact", "text": ...}.',
                        field="from",
                    )
                yield number, fields
    except UnicodeDecodeError:
        raise ValidationError(f"{path} is not UTF-8 text.", field="from") from None
    except OSError as exc:
        raise ValidationError(f"{path} cannot be read ({exc.strerror}).", field="from") from None


def _batches(path: Path) -> Iterator[list[Line]]:
    batch: list[Line] = []
    for line in _lines(path):
        batch.append(line)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def file_lines(
    service: Service, path: Path, *, notebook: str | None, kind: str, dry_run: bool
) -> dict[str, Any]:
    """File every line of `path` (`notebook` and `kind` for lines that name none)."""
    total = sum(1 for _ in _lines(path))  # the whole file checked before anything is filed
    answer: dict[str, Any] = {"lines": total, "filed": 0, "duplicates": 0}
    with ExitStack() as stack:
        advance: Callable[[int], None] = lambda _done: None  # noqa: E731
        if total > BATCH:
            bar = click.progressbar(length=total, label="Filing", file=sys.stderr)
            advance = stack.enter_context(bar).update
        for batch in _batches(path):
            items = [{"kind": kind, **fields} for _, fields in batch]
            try:
                done = service.remember(items=items, notebook=notebook, dry_run=dry_run)
            except PalimpsestError as exc:
                raise _at_line(exc, batch, answer["filed"] + answer["duplicates"]) from None
            for result in done["results"]:
                answer["duplicates" if "duplicate_of" in result else "filed"] += 1
            advance(len(batch))
    if dry_run:
        answer["dry_run"] = True
    return answer


def _at_line(error: PalimpsestError, batch: list[Line], done: int) -> PalimpsestError:
    """The service's refusal of batch item i, said of the file's line instead."""
    where = "" if error.item is None else f"line {batch[error.item][0]}: "
    message = error.message.split(": ", 1)[1] if error.item is not None else error.message
    if done:
        message += (
            f" The lines before line {batch[0][0]} are filed; once this is fixed, run the "
            "file again: what is filed already comes back as a duplicate, not twice."
        )
    if isinstance(error, Retryable):
        return Retryable(where + message, field=error.field)
    return type(error)(where + message, field=error.field)
