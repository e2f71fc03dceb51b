"""export and import: a workspace to a file and back, and other servers' files in."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, TextIO

import click

from ..domain.errors import ValidationError
from .app import Env, command, emit, palimpsest, pass_env
from .render import counted, with_vectors

FORMATS = ("palimpsest", "mcp-memory", "markdown", "mem0")


@command(palimpsest, "export", "palimpsest export team.jsonl --notebook web")
@click.argument("file", required=False, metavar="FILE")
@click.option("--notebook", "notebooks", multiple=True, metavar="NAME",
              help="Only this notebook (repeatable); default: the whole workspace.")  # fmt: skip
@click.option(
    "--markdown",
    "markdown",
    metavar="DIR",
    help="Write markdown instead: a folder per notebook, a file per memory.",
)
@pass_env
def export(env: Env, /, file: str | None, notebooks: tuple[str, ...], markdown: str | None) -> None:
    """Write the workspace to FILE as JSON lines: its whole history and current state.

    FILE `-` (or none) writes to standard output. The file is written beside FILE and
    renamed when complete, so an interrupted export never leaves half a file under its
    name; it is readable by you alone, as it holds every memory. `palimpsest import`
    reads it back. With --markdown, writes a folder for people and git instead.
    """
    service = env.service(create=False)
    chosen = list(notebooks) or None
    if markdown is not None:
        if file is not None:
            raise ValidationError("Give FILE or --markdown DIR, not both.", field="markdown")
        emit(service.export_markdown(Path(markdown), notebooks=chosen))
        return
    if file in (None, "-"):
        answer = service.export(sys.stdout, notebooks=chosen)
        click.echo(_said(answer), err=True)
        return
    with _replacing(Path(file)) as out:
        answer = service.export(out, notebooks=chosen)
    emit({**answer, "file": file})


@command(palimpsest, "import", "palimpsest import team.jsonl --dry-run")
@click.argument("file", metavar="FILE")
@click.option(
    "--from",
    "source_format",
    type=click.Choice(FORMATS),
    default="palimpsest",
    show_default=True,
    help="What wrote FILE: Palimpsest's export, the reference MCP memory server's "
    "memory.jsonl, a folder of markdown notes, or mem0's JSON.",
)
@click.option(
    "--notebook",
    default="imported",
    show_default=True,
    metavar="NAME",
    help="Where another server's memories go when the file names no notebook.",
)
@click.option("--dry-run", is_flag=True, help="Check everything and say what would happen.")
@click.option("--strict", is_flag=True, help="Import nothing if any record would be refused.")
@pass_env
def import_(env: Env, /, file: str, source_format: str, notebook: str, dry_run: bool,
            strict: bool) -> None:  # fmt: skip
    """Bring FILE into the workspace.

    Into an empty workspace, a Palimpsest export is restored as it was: every event with
    its actor and time. Into one that holds memories (and from other servers), each
    memory is filed anew as an `import` event by you, naming the file. A memory refused
    (a secret, an id held here with other content, one forgotten here) is reported by
    line and field, and the rest goes in; importing the same file again changes nothing.
    FILE is read once, into memory, and what is written is what was checked: a pipe such
    as /dev/stdin works too.
    """
    service = env.service()
    with ExitStack() as stack:
        answer = service.import_file(
            Path(file),
            source_format=source_format,
            notebook=notebook,
            dry_run=dry_run,
            strict=strict,
            progress=_Bars(stack) if sys.stderr.isatty() else None,
        )
    emit(answer, with_vectors)


class _Bars:
    """A progress bar per step of an import, on standard error (a count when the total is
    not known ahead)."""

    def __init__(self, stack: ExitStack):
        self.stack = stack
        self.step: str | None = None
        self.bar: Any = None
        self.done = 0

    def __call__(self, step: str, done: int, total: int) -> None:
        if step != self.step:
            self.step, self.done = step, 0
            self.bar = None
            if total:
                bar = click.progressbar(length=total, label=step.capitalize(), file=sys.stderr)
                self.bar = self.stack.enter_context(bar)
        if self.bar is not None:
            self.bar.update(max(0, done - self.done))
        else:
            click.echo(f"\r{step.capitalize()}: {done}", nl=False, err=True)
        self.done = done


@contextmanager
def _replacing(path: Path) -> Iterator[TextIO]:
    """A file written beside `path`, only you may read, renamed over it once complete."""
    if path.is_dir():
        raise ValidationError(f"{path} is a folder: name the export file.", field="file")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ValidationError(f"No folder {folder}: create it first.", field="file")
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            yield out
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _said(answer: Mapping[str, Any]) -> str:
    counts = answer["counts"]
    memories = counted(counts["memories"], "memory", "memories")
    return f"Exported {memories}, {counted(counts['events'], 'event', 'events')}."
