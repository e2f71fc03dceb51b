"""The commands on the store and the process: migrate, copy, doctor, scrub, reindex, demo
(`serve` has a module of its own, `serving`)."""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from ..service import DEFAULT_WORKSPACE, copy_between, store_label
from . import render
from .app import Env, command, emit, palimpsest, pass_env
from .demo import run_demo
from .failures import JSON_KEY


@command(palimpsest, "migrate", "palimpsest migrate  # with PALIMPSEST_DB=postgresql://...")
@pass_env
def migrate(env: Env, /) -> None:
    """Create the store's schema, or upgrade it to this version of Palimpsest.

    Any command does this on first use; migrate does only that, for deployments that
    upgrade the database before starting servers.
    """
    emit({"schema_version": env.service().schema_version()})


@command(
    palimpsest,
    "copy",
    "palimpsest copy --from ~/.local/share/palimpsest/palimpsest.db --to postgresql://...",
    uses_store=False,
)
@click.option("--from", "source", required=True, help="The store to copy from (path or URL).")
@click.option("--to", "target", required=True, help="The store to copy to (path or URL).")
@click.option(
    "--workspace", default=DEFAULT_WORKSPACE, show_default=True, help="The workspace to copy."
)
@pass_env
def copy(env: Env, /, source: str, target: str, workspace: str) -> None:
    """Copy a whole workspace, history included, to another store (SQLite or PostgreSQL).

    The target must not hold that workspace yet. Nothing is removed from the source.
    """
    emit(copy_between(source, target, workspace))


# -- doctor ----------------------------------------------------------------------------


@command(palimpsest, "doctor", "palimpsest doctor --json")
@click.option("--dir", "directory", metavar="DIR", help="A project directory (default: here).")
@pass_env
def doctor(env: Env, /, directory: str | None) -> None:
    """List what needs a person: secrets that got in, stale, expired and ownerless memories.

    Each secret comes with the forget command that removes it. In a project (DIR, or the
    one holding the working directory) it also lists the rules whose checks fail and the
    memories its files show to be stale. Doctor also finishes a scrub that a forget left
    pending.
    """
    emit(env.service(create=False).doctor(dir=directory), render.doctor)


@command(palimpsest, "scrub", "palimpsest scrub --db postgresql://... --json")
@pass_env
def scrub(env: Env, /) -> None:
    """Erase from the store's files what forgets left there, and say how long it locked.

    On PostgreSQL a forget is logical at once, but the old row versions keep the bytes in
    the table and index files until this rewrites each table that held them (one at a
    time, each copied while in use and locked only to swap the copy in). On SQLite it
    finishes a pending checkpoint.
    """
    emit(env.service(create=False).scrub(), render.scrub)


# -- reindex ---------------------------------------------------------------------------


@command(palimpsest, "reindex", "palimpsest reindex --db postgresql://... --json")
@pass_env
def reindex(env: Env, /) -> None:
    """Make anew the vectors (recall by meaning) that another model made, or none did.

    Needed after the `embedder` setting changed, or after an update changed what a
    memory's vector is made from: until then recall by meaning leaves those memories out.
    Every memory version with a stale or missing vector is embedded again, in batches,
    with a progress bar on standard error. Vectors are derived from the memories, so no
    event is written and the history is unchanged; a reindex stopped half-way resumes
    where it stopped when run again.
    """
    service = env.service(create=False)
    with ExitStack() as stack:
        bars: list[Any] = []

        def progress(done: int, total: int) -> None:
            if not bars:  # made at the first batch, once the total is known
                bar = click.progressbar(length=total, label="Reindexing", file=sys.stderr)
                bars.append(stack.enter_context(bar))
            bars[0].update(done - bars[0].pos)

        answer = service.reindex(progress)
    emit(answer, lambda r: click.echo(f"vectors: {render.vectors_made(r)}"))


# -- demo ------------------------------------------------------------------------------


@command(palimpsest, "demo", "palimpsest demo")
@click.option("-n", "--notebook", default="demo", show_default=True, help="Notebook to use.")
@pass_env
def demo(env: Env, /, notebook: str) -> None:
    """A short guided tour: remember, revise, recall and history, in a store of its own.

    Without --db the tour makes a new store in a temporary directory, so your memory is
    never touched; with --db it uses that store, in a notebook that must not exist yet.
    """
    as_json = bool(click.get_current_context().meta.get(JSON_KEY))
    label = store_label(env.db)
    own_folder = None
    if not env.db_typed:
        own_folder = tempfile.mkdtemp(prefix="palimpsest-demo-")
        if as_json:  # no next step points into it: it goes once the store is closed
            remove = functools.partial(shutil.rmtree, own_folder, ignore_errors=True)
            env.ctx.call_on_close(remove)  # before the store's own close, so run after it
        env.db = str(Path(own_folder) / "demo.db")
        label = f"{env.db} (new, for this tour only: your own memory is not touched)"
    # As the user ran it: `./scripts/run` says so, as `palimpsest` may not be on PATH.
    prog = os.environ.get("PALIMPSEST_PROG") or "palimpsest"
    command = f"{prog} --db {shlex.quote(store_label(env.db))}"
    tour = run_demo(env.service(), notebook, label, command, quiet=as_json)
    if as_json:
        emit(tour)
    elif own_folder is not None:  # kept for the next step above, which looks into it
        click.echo(f"The tour's store stays until you remove it: rm -r {shlex.quote(own_folder)}")
