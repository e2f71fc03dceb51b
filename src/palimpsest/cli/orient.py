"""`palimpsest orient`: the brief an agent starting work should read (DESIGN section 2)."""

from __future__ import annotations

import os
from typing import Any

import click

from ..service.orient import DEFAULT_BUDGET
from . import render
from .app import Env, command, emit, palimpsest, pass_env


def brief(result: dict[str, Any]) -> None:
    click.echo(result["brief"])
    if result.get("pending"):
        click.echo("\nWritten here, not on the server yet (pending):")
        render.pending(result["pending"])


@command(palimpsest, "orient", "palimpsest orient --dir . --budget 4000")
@click.option("-n", "--notebook", help="Brief this notebook (name or id).")
@click.option(
    "--dir",
    "directory",
    metavar="DIR",
    help="Brief the notebook DIR's project file names (found by walking up). Default: here.",
)
@click.option(
    "--budget",
    type=int,
    default=DEFAULT_BUDGET,
    show_default=True,
    help="The brief's size in characters, 500 to 100,000.",
)
@pass_env
def orient(env: Env, /, notebook: str | None, directory: str | None, budget: int) -> None:
    """What to have in mind before working here: the rules that bind (all of them, or the
    ids of those past the budget), open issues and debts, open disputes, memories waiting
    for a check, then recent and useful memories. Without --notebook or --dir, the project
    of the working directory; outside any project, only the workspace-wide rules."""
    if notebook is None and directory is None:
        directory = os.getcwd()
    result = env.service(create=False).orient(notebook=notebook, dir=directory, budget=budget)
    emit(result, brief)
