"""`palimpsest config` (the process's configuration) and `palimpsest settings` (the
workspace's settings, changed as events). The rules live in config.py and the service."""

from __future__ import annotations

from typing import Any

import click

from ..service import DEFAULT_WORKSPACE, default_store_path
from .app import (
    JSON_OPTION,
    Env,
    command,
    data_dir,
    default_actor,
    emit,
    palimpsest,
    pass_env,
    shared_options,
)
from .render import table

# -- config ------------------------------------------------------------------------------


@command(palimpsest, "config", "palimpsest config --json")
@pass_env
def config(env: Env, /) -> None:
    """Show the effective configuration and where each value came from.

    A value comes from a flag, else the environment, else the configuration file, else
    the default; a password in a postgresql:// URL is never shown. See docs/configuration.md.
    """
    fallbacks = {"db": str(default_store_path(data_dir())), "actor": default_actor(),
                 "workspace": DEFAULT_WORKSPACE}  # fmt: skip
    emit(env.config().described(fallbacks), _show_config)


def _show_config(result: dict[str, Any]) -> None:
    click.echo(f"file: {result['file'] or '(none: every value is a flag, env or default)'}")
    rows = [
        {"key": name, "value": key["value"], "from": _origin(key)}
        for name, key in result["keys"].items()
    ]
    table(rows, [("key", "key"), ("value", "value"), ("from", "from")])


def _origin(key: dict[str, Any]) -> str:
    return f"{key['from']} {key['where']}" if key["from"] in ("flag", "env") else key["from"]


# -- settings -----------------------------------------------------------------------------


@palimpsest.group(
    invoke_without_command=True,
    epilog="\b\nExample:\n  palimpsest settings --history",
)
@click.option("--history", is_flag=True, help="List the changes of the settings instead.")
@click.option("--limit", type=int, default=100, help="With --history: at most this many.")
@JSON_OPTION
@click.pass_context
def settings(ctx: click.Context, history: bool, limit: int) -> None:
    """Show this workspace's settings (freshness windows...), or the history of their changes.

    Each change is an event with who made it and why (`settings set`). Agents do not
    change settings: there is no MCP tool for them.
    """
    if ctx.invoked_subcommand is not None:
        return
    env = ctx.find_object(Env)
    assert env is not None
    service = env.service(create=False)
    if history:
        emit(service.settings_history(limit=limit), _show_history)
    else:
        emit(service.settings(), _show_settings)


settings.params.extend(shared_options(settings))


@command(
    settings,
    "set",
    "palimpsest settings set freshness_days.fact 30 --because 'our facts age fast'",
)
@click.argument("key")
@click.argument("value")
@click.option("--because", help="Why (required): the history keeps it.")
@click.option("--dry-run", is_flag=True, help="Show before and after, change nothing.")
@pass_env
def settings_set(env: Env, /, key: str, value: str, because: str | None, dry_run: bool) -> None:
    """Set KEY to VALUE (`never`: no window; `default`: back to the default)."""
    done = env.service().change_settings(changes={key: value}, because=because, dry_run=dry_run)
    emit(done, _show_change)


def _value(value: Any) -> str:
    return "never" if value is None else str(value)


def _show_settings(result: dict[str, Any]) -> None:
    rows = [
        {"key": name, "value": _value(s["value"]), "default": _value(s["default"]),
         "about": s["about"]}
        for name, s in result["settings"].items()
    ]  # fmt: skip
    table(rows, [("key", "key"), ("value", "value"), ("default", "default"), ("about", "about")])


def _show_change(result: dict[str, Any]) -> None:
    if result.get("unchanged"):
        click.echo("Nothing changed: the settings already hold these values.")
    for name, change in result["changes"].items():
        click.echo(f"{name}: {_value(change['old'])} -> {_value(change['new'])}")
    if result.get("dry_run"):
        click.echo("(dry run: nothing was changed)")


def _show_history(result: dict[str, Any]) -> None:
    if not result["events"]:
        click.echo("No setting was changed yet: every one has its default.")
    for event in result["events"]:
        changes = "; ".join(
            f"{name}: {_value(old)} -> {_value(new)}" for name, (old, new) in event["data"].items()
        )
        click.echo(f"{event['at']}  {event['actor']}  {changes}  ({event['note']})")
