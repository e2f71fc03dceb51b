"""The commands on disputes: open, list, rule, undo (DESIGN section 2, disputes)."""

from __future__ import annotations

from typing import Any

import click

from . import render
from .app import Env, command, emit, given, group, palimpsest, pass_env
from .memories import write_options

REASON_HELP = "Why, in a sentence (required); kept in the history."


@group(palimpsest, "dispute", "palimpsest dispute list --all")
def dispute() -> None:
    """Two memories that contradict each other, as a review queue: open a dispute, list
    the open ones, rule on one (the other retires as superseded), or undo a ruling."""


@command(
    dispute, "open", "palimpsest dispute open m_01ab m_01cd --reason 'both give the pool size'"
)
@click.argument("ids", nargs=-1, required=True)
@click.option("--reason", help=REASON_HELP)
@write_options
@pass_env
def dispute_open(env: Env, /, ids: tuple[str, ...], **options: Any) -> None:
    """Open a dispute between two active memories (IDS: their two ids). Both stay in
    recall, flagged, each naming the other, until a ruling."""
    emit(env.service(create=False).dispute(action="open", ids=list(ids), **given(**options)))


@command(dispute, "list", "palimpsest dispute list --memory m_01ab --all")
@click.option("--all", "include_closed", is_flag=True, help="Ruled and withdrawn ones too.")
@click.option("--memory", "ids", multiple=True, help="Only those naming this memory (repeatable).")
@click.option("--limit", type=int, help="At most this many, 1 to 200 (default 20).")
@pass_env
def dispute_list(env: Env, /, **options: Any) -> None:
    """List the open disputes, oldest first, with the two memories of each."""
    emit(env.service(create=False).dispute(action="list", **given(**options)), disputes)


@command(
    dispute,
    "rule",
    "palimpsest dispute rule dp_01ef --holds m_01cd --reason 'the config says 20' "
    "--evidence 'setup.cfg line 12'",
)
@click.argument("dispute_id", metavar="DISPUTE")
@click.option("--holds", help="The memory that holds (required); the other one retires.")
@click.option("--reason", help=REASON_HELP)
@click.option("--evidence", help="What shows it: a file, a test, a source, a measurement.")
@click.option("--because", help="Required when the losing memory is a rule: why it may go.")
@write_options
@pass_env
def dispute_rule(env: Env, /, dispute_id: str, **options: Any) -> None:
    """Rule on an open dispute: the memory --holds holds, the other retires as superseded
    by it (with a supersedes link)."""
    answer = env.service(create=False).dispute(action="rule", dispute=dispute_id,
                                               **given(**options))  # fmt: skip
    emit(answer)


@command(dispute, "undo", "palimpsest dispute undo dp_01ef --reason 'the config was stale'")
@click.argument("dispute_id", metavar="DISPUTE")
@click.option("--reason", help=REASON_HELP)
@write_options
@pass_env
def dispute_undo(env: Env, /, dispute_id: str, **options: Any) -> None:
    """Undo a ruling: the losing memory as it was before it, the dispute open again."""
    answer = env.service(create=False).dispute(action="undo", dispute=dispute_id,
                                               **given(**options))  # fmt: skip
    emit(answer)


def disputes(result: dict[str, Any]) -> None:
    """Each dispute: a line about it, then its two memories."""
    found = result.get("disputes", [])
    if not found:
        click.echo("No disputes.")
    for item in found:
        ruling = item.get("ruling")
        verdict = f", {ruling['holds']} holds" if ruling else ""
        click.echo(f"{item['id']}  {item['status']}{verdict}  {render.short(item['reason'])}")
        render.table(item["memories"], [("id", "id"), ("status", "status"), *render.TEXT])
        click.echo()
    if result.get("more"):
        click.echo(f"... and {result['more']} more (--limit shows more).")
