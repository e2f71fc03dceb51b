"""The commands on notebooks: list, create, edit, merge-domains."""

from __future__ import annotations

from typing import Any

import click

from . import render
from .app import Env, command, emit, given, group, palimpsest, pass_env
from .memories import write_options


@group(palimpsest, "notebook", "palimpsest notebook list")
def notebook() -> None:
    """List, create and edit notebooks."""


@command(notebook, "list", "palimpsest notebook list --json")
@pass_env
def notebook_list(env: Env, /) -> None:
    """List the notebooks."""
    emit(env.service(create=False).notebooks(), render.notebooks)


@command(notebook, "create", "palimpsest notebook create myproj --domain work --summary 'API'")
@click.argument("name")
@click.option("--summary", help="What the notebook is about.")
@click.option(
    "--redact", is_flag=True, help="Store the summary with credentials as [REDACTED:kind]."
)
@click.option("--domain", help="The domain it belongs to.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@write_options
@pass_env
def notebook_create(env: Env, /, **options: Any) -> None:
    """Create a notebook (remember also creates one on first use)."""
    emit(env.service().create_notebook(**given(**options)))


@command(notebook, "edit", "palimpsest notebook edit myproj --name api-server --clear summary")
@click.argument("notebook")
@click.option("--name", help="Rename it (the id never changes).")
@click.option("--summary", help="Replace the summary.")
@click.option(
    "--redact", is_flag=True, help="Store the summary with credentials as [REDACTED:kind]."
)
@click.option("--domain", help="Replace the domain.")
@click.option("--tag", "tags", multiple=True, help="Replace the tags (repeatable).")
@click.option("--clear", multiple=True, help="Clear summary, domain or tags (repeatable).")
@write_options
@pass_env
def notebook_edit(env: Env, /, **options: Any) -> None:
    """Rename a notebook, or replace its summary, domain or tags."""
    emit(env.service(create=False).edit_notebook(**given(**options)))


@command(
    notebook, "merge-domains", "palimpsest notebook merge-domains ops infra --because 'same team'"
)
@click.argument("source")
@click.argument("target")
@click.option("--because", help="Why (required).")
@write_options
@pass_env
def notebook_merge_domains(env: Env, /, **options: Any) -> None:
    """Move every notebook of domain SOURCE into domain TARGET."""
    emit(env.service(create=False).merge_domains(**given(**options)))
