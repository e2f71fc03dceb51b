"""The review queue of near-duplicates: `duplicates` lists the groups, `merge` keeps one
memory of a group and retires the others as superseded by it."""

from __future__ import annotations

from typing import Any

import click

from . import render
from .app import Env, command, emit, given, palimpsest, pass_env
from .memories import write_options


@command(palimpsest, "duplicates", "palimpsest duplicates -n web")
@click.option("-n", "--notebook", help="Only within this notebook (default: the workspace).")
@click.option("--limit", type=int, help="At most this many groups, 1 to 200 (default 20).")
@pass_env
def duplicates(env: Env, /, **options: Any) -> None:
    """Groups of active memories that say the same thing (the same text, or what remember
    would call a possible duplicate), the largest first: candidates for `merge`."""
    emit(env.service(create=False).duplicates(**given(**options)), groups)


@command(
    palimpsest,
    "merge",
    "palimpsest merge m_01ab m_01cd m_01ef --because 'one fact filed three times'",
)
@click.argument("keep")
@click.argument("ids", nargs=-1, required=True)
@click.option("--because", help="Why they say the same thing (required); kept in the history.")
@write_options
@pass_env
def merge(env: Env, /, keep: str, ids: tuple[str, ...], **options: Any) -> None:
    """Keep the memory KEEP and retire each of IDS as superseded by it, in one write: each
    gets a `supersedes` link from KEEP and an event naming you and --because. The kept
    one is not changed. Undo one with `revise ID --status active`."""
    emit(env.service(create=False).merge(keep=keep, ids=list(ids), **given(**options)))


def groups(result: dict[str, Any]) -> None:
    """Each group: how alike and why, then its memories."""
    found = result.get("groups", [])
    if not found:
        click.echo(
            f"No duplicates among {render.counted(result['examined'], 'memory', 'memories')}."
        )
    for group in found:
        mixed = f", mixed {' and '.join(group['mixed'])}" if group.get("mixed") else ""
        click.echo(
            f"{len(group['memories'])} alike by {group['by']} ({group['similarity']}{mixed})"
        )
        columns = [("id", "id"), ("kind", "kind"), ("updated", "updated_at"), *render.TEXT]
        render.table(group["memories"], columns)
        click.echo()
    if result.get("more"):
        click.echo("... and more groups (--limit shows more).")
    for warning in result.get("warnings", []):
        click.echo(warning)
