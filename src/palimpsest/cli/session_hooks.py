"""`palimpsest hook session-start` and `hook session-end`: orient at the start of a coding
agent's session, and a review at its end that asks, once, for what it learned.

Each reads the JSON the agent sends on stdin (Claude Code: `session_id`, `cwd`,
`hook_event_name`, and for Stop `stop_hook_active`) and answers in the agent's form:
Claude Code's (the default) or `--format generic` (one JSON object on stdout). A hook never
breaks the agent's session: a failure is said on stderr, and the exit status is 0.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any

import click

from ..domain.errors import PalimpsestError
from ..domain.text import one_line
from ..service.brief import LINE_CHARS, NOT_INSTRUCTIONS
from ..service.orient import DEFAULT_BUDGET
from .app import Env, command, pass_env
from .hooks import form_option, hook

ASK_CHARS = 1_000  # the request to file what was learned, with the notebook's name
FORM_HELP = "claude: Claude Code's hook output. generic: one JSON object on stdout."


def _agent_input() -> dict[str, Any]:
    """The agent's JSON from stdin; an empty or broken input reads as no fields."""
    try:
        body = json.loads(sys.stdin.read() or "{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return body if isinstance(body, dict) else {}


def _where(body: dict[str, Any], notebook: str | None) -> dict[str, Any]:
    """The notebook given, else the project of the agent's working directory."""
    if notebook is not None:
        return {"notebook": notebook}
    cwd = body.get("cwd")
    return {"dir": cwd if isinstance(cwd, str) and cwd else os.getcwd()}


def _session_id(body: dict[str, Any]) -> str | None:
    value = body.get("session_id")
    return value if isinstance(value, str) and value.strip() else None


def _failed(generic: bool, error: Exception) -> None:
    """Say why on stderr; answer as if there were nothing to say (exit 0)."""
    if isinstance(error, PalimpsestError):
        reason = error.message
    else:
        reason = f"unexpected {type(error).__name__}"
    click.echo(f"palimpsest hook: {reason}", err=True)
    if generic:
        click.echo(json.dumps({"error": reason}))


@command(hook, "session-start", "palimpsest hook session-start < session.json")
@click.option("-n", "--notebook", help="Brief this notebook instead of the cwd's project.")
@click.option("--budget", type=int, default=DEFAULT_BUDGET, show_default=True,
              help="The brief's size in characters.")  # fmt: skip
@form_option(FORM_HELP)
@pass_env
def session_start(env: Env, /, notebook: str | None, budget: int, form: str, generic: bool) -> None:
    """Print orient's brief for the session's project (Claude Code's SessionStart hook adds
    it to the agent's context) and note where the session began, by its session id."""
    generic = generic or form == "generic"
    body = _agent_input()
    try:
        result = env.service().session_start(
            session_id=_session_id(body), budget=budget, **_where(body, notebook)
        )
    except Exception as error:  # a hook must never stop the agent from starting
        _failed(generic, error)
        return
    if generic:
        click.echo(json.dumps(result, ensure_ascii=False))
        return
    for warning in result.get("warnings", []):
        click.echo(f"palimpsest hook: {warning}", err=True)
    context = {"hookEventName": "SessionStart", "additionalContext": result["brief"]}
    click.echo(json.dumps({"hookSpecificOutput": context}, ensure_ascii=False))


@command(hook, "session-end", "palimpsest hook session-end < stop.json")
@click.option("-n", "--notebook", help="Review this notebook instead of the cwd's project.")
@form_option(FORM_HELP)
@pass_env
def session_end(env: Env, /, notebook: str | None, form: str, generic: bool) -> None:
    """At the end of the agent's turn (Claude Code's Stop hook): list what the session
    wrote and what is open, and, once per session id, ask the agent to file what it
    learned before it stops. Never again for that session, and never while
    `stop_hook_active` says it is already continuing because of a stop hook."""
    generic = generic or form == "generic"
    body = _agent_input()
    try:
        result = env.service().session_end(
            session_id=_session_id(body),
            stop_hook_active=body.get("stop_hook_active") is True,
            **_where(body, notebook),
        )
    except Exception as error:  # a failing hook must not keep the agent from stopping
        _failed(generic, error)
        return
    if generic:
        click.echo(json.dumps(result, ensure_ascii=False))
    elif result["ask"]:
        click.echo(json.dumps({"decision": "block", "reason": _reason(result)}))


def _reason(result: Mapping[str, Any]) -> str:
    """What the agent reads when asked to go on: the request, what it wrote, what is open."""
    lines = [one_line(result["ask"], ASK_CHARS)]  # it names the notebook: a user's text
    if result["written"] or any(o.get("text") for o in result["open"]):
        # What follows is read as what to do next; anyone in the notebook wrote it.
        lines.append(NOT_INSTRUCTIONS)
    if result["written"]:
        lines.append(f"Written since the session began ({len(result['written'])}):")
        lines += [f"- {w['op']} {w['kind']} {w['id']}: {one_line(w['text'], LINE_CHARS)}"
                  for w in result["written"]]  # fmt: skip
    else:
        lines.append("Nothing was written to memory since the session began.")
    if result["open"]:
        lines.append("Open in the notebook:")
        lines += [f"- {o['kind']} {o['id']}" + (f": {one_line(o['text'], LINE_CHARS)}"
                  if o.get("text") else "") for o in result["open"]]  # fmt: skip
    return "\n".join(lines)
