"""`palimpsest project bind|show`: the file at a project's root naming its notebook."""

from __future__ import annotations

import click

from .app import Env, command, emit, group, palimpsest, pass_env


@group(palimpsest, "project", "palimpsest project bind . --notebook shop")
def project() -> None:
    """A project directory bound to a notebook: `check` (and anchors) read it to know which
    rules apply there. The binding is `.palimpsest.toml` at the project's root, found from
    any directory below it."""


@command(project, "bind", "palimpsest project bind ~/code/shop --notebook shop")
@click.argument("directory", metavar="DIR", default=".")
@click.option("--notebook", "-n", required=True, help="The notebook's name or id.")
@click.option("--create", is_flag=True, help="Create the notebook if there is none of that name.")
@pass_env
def project_bind(env: Env, /, directory: str, notebook: str, create: bool) -> None:
    """Bind DIR (default: here) to a notebook by writing .palimpsest.toml at its root,
    replacing an earlier binding. The file records the notebook's name and id: renaming
    the notebook later keeps the binding. The notebook must exist, or --create makes it: a typo
    would otherwise bind an empty notebook, and `check` would pass with nothing to check."""
    emit(env.service().bind_project(dir=directory, notebook=notebook, create=create))


@command(project, "show", "palimpsest project show src/api")
@click.argument("directory", metavar="DIR", required=False)
@pass_env
def project_show(env: Env, /, directory: str | None) -> None:
    """Show the project holding DIR (default: here): its root and its notebook."""
    emit(env.service(create=False).project(dir=directory))
