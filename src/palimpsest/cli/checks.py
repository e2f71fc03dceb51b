"""`palimpsest check [DIR]`: every check of a project's rules and evidence, as a CI gate."""

from __future__ import annotations

from typing import Any

import click

from .app import Env, command, emit, palimpsest, pass_env
from .render import counted, short


@command(palimpsest, "check", "palimpsest check --json")
@click.argument("directory", metavar="DIR", required=False)
@pass_env
def check(env: Env, /, directory: str | None) -> None:
    """Run every check that applies to the project holding DIR (default: here): those of
    its notebook's memories and of the workspace-wide rules; list what holds and what fails,
    each with its memory, file and literal.

    Exits 1 when a rule of severity irreversible or costly fails, so it can gate CI; a
    failing house_style rule or a fact's failing evidence is listed, and exits 0.
    """
    result = env.service(create=False).check(dir=directory)
    emit(result, _shown)
    if result["gating"]:
        click.get_current_context().exit(1)


def _shown(result: dict[str, Any]) -> None:
    checked = counted(result["checked"], "check", "checks")
    click.echo(
        f"{result['dir']} (notebook {result['notebook']}): {checked}, "
        f"{len(result['holds'])} hold, {len({f['id'] for f in result['fails']})} fail"
    )
    for fail in result["fails"]:
        literal = f" {fail['literal']!r}" if "literal" in fail else ""
        line = f":{fail['line']}" if "line" in fail else ""
        severity = f" [{fail['severity']}]" if fail.get("severity") else ""
        click.echo(f"FAIL {fail['id']}{severity} {fail['check']}: {fail['file']}{line} "
                   f"{fail['reason']}{literal}  ({short(fail['text'], 60)})")  # fmt: skip
    for held in result["holds"]:
        click.echo(f"ok   {held['id']} {held['check']}  ({short(held['text'], 60)})")
    if result["gating"]:
        failing = len(result["gating"])
        rules = "rule fails" if failing == 1 else "rules fail"
        click.echo(f"{failing} costly or irreversible {rules}.")
