"""`palimpsest hook ...`: the commands a coding agent's hooks run (before a command, at the
start and at the end of a session). Each reads the agent's JSON on stdin and answers in the
form the agent expects; each subcommand lives beside the operation it serves."""

from __future__ import annotations

from .app import group, palimpsest


@group(palimpsest, "hook", "palimpsest hook --help")
def hook() -> None:
    """Commands for a coding agent's hooks (Claude Code's settings, or any agent that runs a
    command and reads JSON): see docs/hooks.md."""
