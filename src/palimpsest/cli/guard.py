"""`palimpsest guard COMMAND`, `palimpsest hook guard` (a coding agent's pre-command hook)
and `palimpsest seen` (the commands the guard kept for trials)."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

import click

from .. import hook_guard
from .app import Env, command, emit, given, palimpsest, pass_env
from .hooks import form_option, hook

# Exit codes of `palimpsest guard`, as the generic hook's: a script can act on them.
EXIT = hook_guard.EXIT


@command(palimpsest, "guard", "palimpsest guard 'git push -f origin main' --dir .")
@click.argument("command_line", metavar="COMMAND")
@click.option("--dir", "dir_", metavar="DIR", help="Where it would run (default: here).")
@click.option("-n", "--notebook", help="Judge under this notebook's rules instead of DIR's.")
@pass_env
def guard(env: Env, /, command_line: str, dir_: str | None, notebook: str | None) -> None:
    """Would a forbidden rule refuse COMMAND? Prints allow, deny or ask with the rules that
    refuse it; exits 0 (allow), 2 (deny) or 3 (ask). A person's question: the command is
    not kept for trials (the hook keeps what agents run)."""
    service = env.service(create=False)
    if notebook is not None:
        answer = service.guard(command=command_line, notebook=notebook)
    else:
        answer = service.guard(command=command_line, dir=dir_ or os.getcwd())
    emit(answer, _decision)
    click.get_current_context().exit(EXIT[answer["decision"]])


def _decision(answer: dict[str, Any]) -> None:
    click.echo(f"{answer['decision']}: {answer['reason']}")
    for refusal in answer.get("refused_by", []):
        named = refusal.get("title") or refusal.get("text")
        click.echo(f"  {refusal['id']}  {refusal['decision']}  `{refusal['literal']}`  {named}")


@command(hook, "guard", "palimpsest hook guard --format claude < pretooluse.json")
@form_option(
    "claude: Claude Code's PreToolUse JSON in, permissionDecision out, exit 0. "
    "generic: {command, cwd, session_id} in, JSON out, exit 0 allow, 2 deny, 3 ask."
)
@pass_env
def hook_guard_command(env: Env, /, form: str, generic: bool) -> None:
    """Judge the command an agent is about to run (JSON on stdin), for its pre-command hook.
    If the guard itself fails, the answer is ask. See docs/hooks.md."""

    def judge(call: hook_guard.Call) -> hook_guard.Verdict:
        service = env.service(create=False)
        assert call.command is not None
        answer = service.guard(command=call.command, dir=call.cwd)
        body: dict[str, Any] = {**answer}
        return hook_guard.Verdict(answer["decision"], body)

    form = "generic" if generic else form
    code, call, verdict = hook_guard.answer(sys.stdin.read(), form, judge, sys.stdout)
    sys.stdout.flush()
    if call is not None and call.command is not None and "refused_by" in verdict.body:
        # Kept by a child process the agent does not wait for, as on the fast path; the
        # answer is out, so nothing here may fail the hook.
        with contextlib.suppress(Exception):
            hook_guard.keep_later(env.db, call, verdict)
    click.get_current_context().exit(code)


@command(palimpsest, "seen", "palimpsest seen --days 7")
@click.option("--days", type=int, help="Kept in the last this many days (default 30).")
@pass_env
def seen(env: Env, /, **options: Any) -> None:
    """The commands the guard has seen (credentials redacted), newest first: what a new
    forbidden check is tried against. Erase one with `palimpsest forget ID --because ...`."""
    emit(env.service(create=False).seen(**given(**options)), _seen)


def _seen(answer: dict[str, Any]) -> None:
    for item in answer["commands"]:
        click.echo(f"{item['id']}  {item['seen_at'][:19]}  {item['decision']:5}  {item['command']}")
    if not answer["commands"]:
        click.echo("No command seen.")
