"""`palimpsest sync`: bring a replica up to date with the server it follows (docs/sync.md)."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..domain.errors import ValidationError
from .app import Env, command, emit, palimpsest, pass_env


@command(palimpsest, "sync", "PALIMPSEST_SYNC_KEY=palimpsest_k_... palimpsest sync --server "
         "https://memory.example.org")  # fmt: skip
@click.option("--server", help="The server this store follows (else `sync.server`).")
@click.option("--status", is_flag=True, help="Say what this store knows of its server; no sync.")
@pass_env
def sync(env: Env, /, server: str | None, status: bool) -> None:
    """Pull what changed on the Palimpsest server this store follows (a replica): its
    events since the last round, as they are, with their actors, times and reasons; a
    forget there erases the text here too. Reads (recall, orient, guard, hooks) are then
    served from this store, fast and with the server down. The key comes from
    `sync.key` (PALIMPSEST_SYNC_KEY); a store that holds memories of its own is refused:
    a replica starts empty (`--db` a new file)."""
    config = env.config(**{"sync.server": server})
    service = env.service()
    if status:
        state = service.replica()
        emit({"replica": None} if state is None else {"replica": vars(state)}, _status)
        return
    target, key = config.values["sync.server"], config.values["sync.key"]
    if target is None:
        raise ValidationError(
            "Name the server to follow: `--server https://...` or `sync.server` in the "
            "configuration (`palimpsest config`).",
            field="server",
        )
    if key is None:
        raise ValidationError(
            "Give the replica its key: PALIMPSEST_SYNC_KEY in the environment (or `sync.key` "
            "in the configuration file), a key the server's owner made with `palimpsest key "
            "create`.",
            field="sync.key",
        )
    from ..sync import sync_round

    done = sync_round(service, target, key, progress=_counter() if sys.stderr.isatty() else None)
    emit(
        {"server": done.server, "events": done.events, "position": done.position,
         "role": done.role},
        _synced,
    )  # fmt: skip


def _counter() -> Any:
    def show(events: int) -> None:
        click.echo(f"\rPulled {events:,} events", nl=False, err=True)

    return show


def _synced(answer: dict[str, Any]) -> None:
    if sys.stderr.isatty():
        click.echo("", err=True)
    new = answer["events"]
    click.echo(
        f"Synced with {answer['server']}: {new:,} new event{'s' if new != 1 else ''} "
        f"(as {answer['role']} there)."
    )


def _status(answer: dict[str, Any]) -> None:
    state = answer["replica"]
    if state is None:
        click.echo("This store follows no server (`palimpsest sync --server URL` starts).")
        return
    click.echo(f"Follows workspace {state['server_workspace']} of {state['server']} as "
               f"{state['role']}; last synced {state['synced_at'] or 'never'}.")  # fmt: skip
    if state["refused"]:
        click.echo(f"Sync stopped: {state['refused']}")
