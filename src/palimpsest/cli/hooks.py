"""`palimpsest hook ...`: the commands a coding agent's hooks run (before a command, at the
start and at the end of a session). Each reads the agent's JSON on stdin and answers in the
form the agent expects; each subcommand lives beside the operation it serves."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from .app import group, palimpsest

F = TypeVar("F", bound=Callable[..., Any])
FORMS = ("claude", "generic")


@group(palimpsest, "hook", "palimpsest hook session-start --format generic < session.json")
def hook() -> None:
    """Commands for a coding agent's hooks (Claude Code's settings, or any agent that runs a
    command and reads JSON): see docs/hooks.md."""


def form_option(help_text: str) -> Callable[[F], F]:
    """`--format claude|generic` (the documented spelling), and `--generic` for `--format
    generic` on every hook, as the session hooks first spelled it."""

    def decorate(fn: F) -> F:
        fn = click.option("--generic", is_flag=True, hidden=True, help="--format generic.")(fn)
        return click.option("--format", "form", type=click.Choice(FORMS), default="claude",
                            show_default=True, help=help_text)(fn)  # fmt: skip

    return decorate
