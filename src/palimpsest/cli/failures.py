"""How the CLI says a refusal: the service's message with its fields named as the flags a
user types, as text or JSON, and the exit code (1 refused, 2 usage, 3 try again or report)."""

from __future__ import annotations

import json
import re
from typing import Any

import click

JSON_KEY = "palimpsest.json"
COMMAND_KEY = "palimpsest.command"  # the subcommand being run, for its flags' names

# Exit codes: 1 the request was refused (fix it; also when every target of a write was),
# 2 click's usage errors, 3 try again or report.
EXIT_CODES = {"validation": 1, "not_found": 1, "conflict": 1, "forbidden": 1}
# API names whose CLI option has another name (the option's parameter name, see _flag_names).
API_ALIASES = {
    "texts": "text_match",
    "id": "ids",
    "type": "type_",
    "diff_from": "diff",
    "diff_to": "diff",
    "from": "source",
    "to": "target",
    "from_domain": "source",
    "to_domain": "target",
}


def bad_parameter(exc: click.BadParameter) -> dict[str, Any]:
    """click's refusal of an option value, said without the value (click quotes it)."""
    if exc.param is None:
        return {"error_class": "validation", "message": "An option has a wrong value."}
    hint = exc.param.get_error_hint(exc.ctx) if exc.ctx else exc.param.name
    command = exc.ctx.command_path if exc.ctx else "palimpsest"
    if isinstance(exc, click.MissingParameter):
        return {
            "error_class": "validation",
            "message": f"{hint} is missing; see `{command} --help`.",
            "field": exc.param.name,
        }
    kind = exc.param.type
    if isinstance(kind, click.Choice):
        wanted = f"one of: {', '.join(map(str, kind.choices))}"
    elif isinstance(kind, click.IntRange):
        wanted = f"a whole number from {kind.min} to {kind.max}"
    elif isinstance(kind, click.types.IntParamType):
        wanted = "a whole number"
    else:
        wanted = f"a {kind.name} value"
    return {
        "error_class": "validation",
        "message": f"{hint} takes {wanted}; see `{command} --help`.",
        "field": exc.param.name,
    }


def fail(ctx: click.Context, body: dict[str, Any], code: int) -> None:
    command = ctx.meta.get(COMMAND_KEY)
    if command is not None:
        body = {**body, "message": _in_cli_terms(body["message"], _flag_names(command))}
    if ctx.meta.get(JSON_KEY):
        click.echo(json.dumps(body, indent=2, ensure_ascii=False))
    else:
        click.echo(f"error ({body['error_class']}): {body['message']}", err=True)
    ctx.exit(code)


def _flag_names(command: click.Command) -> dict[str, str]:
    """The command's parameter names (and the API's names for them) -> what a user types."""
    names: dict[str, str] = {}
    for param in command.params:
        if param.name is None:
            continue
        if isinstance(param, click.Option):
            names[param.name] = max(param.opts, key=len)  # --notebook rather than -n
        else:
            names[param.name] = param.human_readable_name.strip("[].").upper()
    for api_name, param_name in API_ALIASES.items():
        if api_name not in names and param_name in names:
            names[api_name] = names[param_name]
    return names


def _in_cli_terms(message: str, names: dict[str, str]) -> str:
    """A service message with each `api_field` named as the CLI's flag or argument."""
    message = re.sub(r"`([a-z_]+)`", lambda m: f"`{names.get(m.group(1), m.group(1))}`", message)
    return _say_once(message)


NAMED = re.compile(r"(, | and | or |/| \(or )?(`[^`]+`)(\))?")


def _say_once(message: str) -> str:
    """Drop a flag named twice in a list (`id` and `ids` are both `--id`).

    "`ID`, `--diff` and `--diff`" reads "`ID` and `--diff`"; "`ID` (or `ID`)" reads "`ID`".
    """
    pieces: list[str] = []
    seen: set[str] = set()
    kept: list[int] = []  # where each kept name's connector and name sit in `pieces`
    last = 0
    for match in NAMED.finditer(message):
        pieces.append(message[last : match.start()])
        last = match.end()
        connector, name = match.group(1) or "", match.group(2)
        if name not in seen:
            seen.add(name)
            kept.append(len(pieces))
            pieces.append(match.group(0))
        elif connector in (" and ", " or ") and kept and pieces[kept[-1]].startswith(", "):
            pieces[kept[-1]] = connector + pieces[kept[-1]][2:]  # the list's last word moves
    pieces.append(message[last:])
    return "".join(pieces)
