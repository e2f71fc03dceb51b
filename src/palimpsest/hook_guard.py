"""`palimpsest hook guard`: a coding agent's pre-command hook, answering before the rest of
Palimpsest could even load.

An agent waits on this process before every command it runs, so its answer is what counts:
it reads the rules from a SQLite store with `sqlite3` alone (store/guard_rows.py), decides
with the pure `guard` package, prints, and only then keeps the command for trials, in a
forked child that loads the service (and the gate, which redacts credentials) while the
agent goes on. Anything it cannot handle this way (a PostgreSQL store, a configuration
file, options it does not know) goes through the ordinary command line, which answers
the same. If the guard itself fails, the answer is "ask".

Forms: `claude` reads Claude Code's PreToolUse JSON (`tool_name`, `tool_input.command`,
`cwd`, `session_id`) and prints `hookSpecificOutput` with a `permissionDecision` for deny
and ask, exit 0; `generic` reads `{"command", "cwd", "session_id"}` and prints the
decision as JSON, exit 0 allow, 2 deny, 3 ask.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

FORMATS = ("claude", "generic")
EXIT = {"allow": 0, "deny": 2, "ask": 3}
WORKSPACE = "default"
ACTOR = "agent:guard"


@dataclass(frozen=True)
class Call:
    """What the agent is about to run, and where."""

    command: str | None  # None: not a shell command (another tool): nothing to judge
    cwd: str | None
    session: str | None


@dataclass(frozen=True)
class Verdict:
    decision: str
    body: dict[str, Any]
    notebook_id: str | None = None  # where the command ran, for keeping it (not printed)


def read_call(raw: str, form: str) -> Call:
    """The call in the JSON an agent sent; ValueError when it is not what the form says."""
    payload = json.loads(raw)
    if not isinstance(payload, dict):
        raise ValueError("the hook's input is not a JSON object")
    session = payload.get("session_id")
    cwd = payload.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError("the hook's `cwd` is not a string")
    if form == "claude":
        if payload.get("tool_name") != "Bash":
            return Call(None, None, None)
        tool_input = payload.get("tool_input")
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
    else:
        command = payload.get("command")
    if not isinstance(command, str):
        raise ValueError("the hook's input holds no command (a string)")
    from .domain.model import MAX_COMMAND

    if len(command) > MAX_COMMAND:
        raise ValueError(f"the command is longer than {MAX_COMMAND:,} characters")
    return Call(command, cwd, session if isinstance(session, str) else None)


def failed(why: str) -> Verdict:
    reason = f"The guard could not judge this command ({why}): a person decides."
    return Verdict("ask", {"decision": "ask", "reason": reason, "refused_by": []})


def render(verdict: Verdict, form: str, out: TextIO) -> int:
    """Print the answer in the agent's form; the process's exit code."""
    if form == "generic":
        out.write(json.dumps(verdict.body) + "\n")
        return EXIT[verdict.decision]
    if verdict.decision == "allow":
        # No decision at all, rather than "allow": Claude Code's own permission prompts
        # and rules then apply as without the hook (an "allow" would skip them).
        out.write("{}\n")
        return 0
    output = {
        "hookEventName": "PreToolUse",
        "permissionDecision": verdict.decision,
        "permissionDecisionReason": "Palimpsest guard: " + verdict.body["reason"],
    }
    out.write(json.dumps({"hookSpecificOutput": output}) + "\n")
    return 0


Judge = Callable[[Call], Verdict]


def answer(raw: str, form: str, judge: Judge, out: TextIO) -> tuple[int, Call | None, Verdict]:
    """Read, judge and print; any failure of the guard itself is answered "ask"."""
    call: Call | None = None
    try:
        call = read_call(raw, form)
        if call.command is None:
            verdict = Verdict("allow", {"decision": "allow", "reason": "not a shell command"})
        else:
            verdict = judge(call)
    except Exception as error:  # the guard failing must never let a command through
        verdict = failed(_describe(error))
    return render(verdict, form, out), call, verdict


def _describe(error: Exception) -> str:
    if isinstance(error, json.JSONDecodeError):
        return "its input is not JSON"
    message = getattr(error, "message", None) or str(error) or type(error).__name__
    return message.splitlines()[0][:300]


# -- the fast path ------------------------------------------------------------------------


def fast_main(argv: list[str]) -> int | None:
    """Answer `hook guard` from a SQLite store without loading the service; None when this
    call needs the ordinary command line (then nothing was read or printed)."""
    form = _fast_options(argv)
    if form is None:
        return None
    path = _sqlite_store(argv)
    if path is None:
        return None
    raw = sys.stdin.read()
    code, call, verdict = answer(raw, form, lambda c: _judge_sqlite(path, c), sys.stdout)
    sys.stdout.flush()
    if call is not None and call.command is not None and verdict.body.get("refused_by") is not None:
        keep_later(str(path), call, verdict)
    return code


def _fast_options(argv: list[str]) -> str | None:
    """The form, when `argv` is `hook guard [--format F | --generic] [--db PATH]` and
    nothing else."""
    words = [w for w in argv if w not in ("hook", "guard")]
    if argv[:2] != ["hook", "guard"] and argv[2:4] != ["hook", "guard"]:
        return None
    form = "claude"
    i = 0
    while i < len(words):
        if words[i] == "--generic":  # the spelling the session hooks took first
            form, i = "generic", i + 1
            continue
        if words[i] == "--format" and i + 1 < len(words) and words[i + 1] in FORMATS:
            form = words[i + 1]
        elif words[i] != "--db" or i + 1 >= len(words):
            return None
        i += 2
    return form


def _sqlite_store(argv: list[str]) -> Path | None:
    """The SQLite file the command would use, when nothing but the flag, the environment
    or the default decides it (a configuration file: the ordinary path reads it)."""
    if os.environ.get("PALIMPSEST_CONFIG") or os.environ.get("PALIMPSEST_WORKSPACE"):
        return None
    db = argv[argv.index("--db") + 1] if "--db" in argv else os.environ.get("PALIMPSEST_DB")
    home = os.environ.get("PALIMPSEST_HOME")
    if home:
        if (Path(home).expanduser() / "config.toml").exists():
            return None
        folder = Path(home).expanduser()
    else:
        import platformdirs

        config_dir = Path(platformdirs.user_config_dir("palimpsest", appauthor=False))
        if (config_dir / "config.toml").exists():
            return None
        folder = Path(platformdirs.user_data_dir("palimpsest", appauthor=False))
    if db is None:
        path = folder / "palimpsest.db"
    elif "://" in db or "=" in db:
        return None
    else:
        path = Path(db).expanduser()
    return path if path.is_file() else None


def _judge_sqlite(path: Path, call: Call) -> Verdict:
    from .domain.model import now_utc
    from .domain.projects import find_project
    from .guard import decide
    from .guard.rules import applying
    from .guard.unbound import refused_in_some_notebook
    from .store.guard_rows import read_forbidding_rules

    assert call.command is not None
    project = find_project(Path(call.cwd or os.getcwd()))  # no `cwd`: where the agent ran it
    found, rules = read_forbidding_rules(path, WORKSPACE, project.refs if project else ())
    at = now_utc()
    notebook_id, name = found or (None, project.notebook if project else None)
    decision = decide(call.command, applying(rules, notebook_id, at))
    body = decision.to_dict()
    body["notebook"] = name
    unbound = project if project is not None and notebook_id is None else None
    if (
        unbound
        and body["decision"] == "allow"
        and refused_in_some_notebook(call.command, rules, at)
    ):
        body |= {"decision": "ask", "reason": unbound.ask_reason()}  # as the service's guard asks
    elif unbound:  # as the service's guard warns
        body["warnings"] = [unbound.unknown_notebook()]
    return Verdict(body["decision"], body, notebook_id)


def keep_later(db: str, call: Call, verdict: Verdict) -> None:
    """Keep the command for trials once the agent has its answer: in a forked child that
    lets go of the agent's pipes first, so the agent never waits for it."""
    if not hasattr(os, "fork"):
        return
    if os.fork() != 0:
        return
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        from .service import open_service

        service = open_service(db, actor=ACTOR, create=False)
        try:
            assert call.command is not None
            notebook = verdict.notebook_id or verdict.body.get("notebook")  # id: the surest
            service.keep_seen(call.command, verdict.decision, notebook, call.session)
        finally:
            service.close()
    finally:
        os._exit(0)
