"""`palimpsest sync`: bring a replica up to date with the server it follows (docs/sync.md)."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..domain.errors import ValidationError
from . import render
from .app import Env, command, emit, palimpsest, pass_env


@command(palimpsest, "sync", "PALIMPSEST_SYNC_KEY=palimpsest_k_... palimpsest sync --server "
         "https://memory.example.org")  # fmt: skip
@click.option("--server", help="The server this store follows (else `sync.server`).")
@click.option("--status", is_flag=True, help="Say where this store follows, and what waits.")
@click.option("--retry", metavar="QUEUED", help="Send a refused or conflicting write again.")
@click.option("--drop", metavar="QUEUED", help="Give up a queued write (with --because).")
@click.option("--because", help="Why the write is dropped.")
@pass_env
def sync(
    env: Env, /, server: str | None, status: bool, retry: str | None, drop: str | None,
    because: str | None,
) -> None:  # fmt: skip
    """Sync this store with the Palimpsest server it follows (a replica): send the writes
    made here (queued: remember, revise, revert, link, dispute, merge), in order, then pull
    the server's events since the last round, as they are, with their actors, times and
    reasons; a forget there erases the text here too. Reads (recall, orient, guard, hooks)
    are served from this store, fast and with the server down. The key comes from
    `sync.key` (PALIMPSEST_SYNC_KEY); a store that holds memories of its own is refused:
    a replica starts empty (`--db` a new file)."""
    chosen = [name for name, given in (("--status", status), ("--retry", retry is not None),
                                       ("--drop", drop is not None)) if given]  # fmt: skip
    if len(chosen) > 1:
        raise ValidationError(f"{' and '.join(chosen)} do not go together: one at a time.",
                              field=chosen[1].lstrip("-"))  # fmt: skip
    if because is not None and drop is None:
        raise ValidationError("`--because` says why a write is dropped: it goes with "
                              "`--drop QUEUED`.", field="because")  # fmt: skip
    config = env.config(**{"sync.server": server})
    service = env.service()
    if status:
        state = service.replica()
        replica = None if state is None else vars(state)
        emit({"replica": replica, **service.queued_writes()}, _status)
        return
    if retry is not None:
        emit(service.retry_queued(id=retry))
        return
    if drop is not None:
        emit(service.drop_queued(id=drop, because=because), _status_of_writes)
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
         "role": done.role, "pushed": done.pushed},
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
    pushed = ", ".join(f"{n} {how}" for how, n in sorted(answer["pushed"].items()))
    click.echo(
        f"Synced with {answer['server']}: {new:,} new event{'s' if new != 1 else ''} "
        f"(as {answer['role']} there)" + (f"; writes sent: {pushed}." if pushed else ".")
    )
    if answer["pushed"].get("refused") or answer["pushed"].get("conflict"):
        click.echo("Some writes were not taken: `palimpsest sync --status` lists them.")


def _status(answer: dict[str, Any]) -> None:
    state = answer["replica"]
    if state is None:
        click.echo("This store follows no server (`palimpsest sync --server URL` starts).")
        return
    click.echo(f"Follows workspace {state['server_workspace']} of {state['server']} as "
               f"{state['role']}; last synced {state['synced_at'] or 'never'}.")  # fmt: skip
    if state["refused"]:
        click.echo(f"Sync stopped: {state['refused']}")
    _status_of_writes(answer)


def _status_of_writes(answer: dict[str, Any]) -> None:
    render.pending(answer["writes"])
    if any(item["state"] in ("refused", "conflict") for item in answer["writes"]):
        click.echo("`palimpsest sync --retry QUEUED` sends one again (checked anew); "
                   "`--drop QUEUED --because WHY` gives it up.")  # fmt: skip
