"""The commands on the store and the process: migrate, copy, doctor, scrub, reindex, serve,
demo."""

from __future__ import annotations

import functools
import json
import os
import shlex
import shutil
import socket
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from ..config import is_loopback
from ..domain.errors import ValidationError
from ..service import DEFAULT_WORKSPACE, copy_between, store_label
from ..service.checks import served_places
from . import render
from .app import Env, command, emit, palimpsest, pass_env
from .demo import run_demo
from .failures import JSON_KEY


@command(palimpsest, "migrate", "palimpsest migrate  # with PALIMPSEST_DB=postgresql://...")
@pass_env
def migrate(env: Env, /) -> None:
    """Create the store's schema, or upgrade it to this version of Palimpsest.

    Any command does this on first use; migrate does only that, for deployments that
    upgrade the database before starting servers.
    """
    emit({"schema_version": env.service().schema_version()})


@command(
    palimpsest,
    "copy",
    "palimpsest copy --from ~/.local/share/palimpsest/palimpsest.db --to postgresql://...",
    uses_store=False,
)
@click.option("--from", "source", required=True, help="The store to copy from (path or URL).")
@click.option("--to", "target", required=True, help="The store to copy to (path or URL).")
@click.option(
    "--workspace", default=DEFAULT_WORKSPACE, show_default=True, help="The workspace to copy."
)
@pass_env
def copy(env: Env, /, source: str, target: str, workspace: str) -> None:
    """Copy a whole workspace, history included, to another store (SQLite or PostgreSQL).

    The target must not hold that workspace yet. Nothing is removed from the source.
    """
    emit(copy_between(source, target, workspace))


# -- doctor ----------------------------------------------------------------------------


@command(palimpsest, "doctor", "palimpsest doctor --json")
@click.option("--dir", "directory", metavar="DIR", help="A project directory (default: here).")
@pass_env
def doctor(env: Env, /, directory: str | None) -> None:
    """List what needs a person: secrets that got in, stale, expired and ownerless memories.

    Each secret comes with the forget command that removes it. In a project (DIR, or the
    one holding the working directory) it also lists the rules whose checks fail and the
    memories its files show to be stale. Doctor also finishes a scrub that a forget left
    pending.
    """
    emit(env.service(create=False).doctor(dir=directory), render.doctor)


@command(palimpsest, "scrub", "palimpsest scrub --db postgresql://... --json")
@pass_env
def scrub(env: Env, /) -> None:
    """Erase from the store's files what forgets left there, and say how long it locked.

    On PostgreSQL a forget is logical at once, but the old row versions keep the bytes in
    the table and index files until this rewrites each table that held them (one at a
    time, each copied while in use and locked only to swap the copy in). On SQLite it
    finishes a pending checkpoint.
    """
    emit(env.service(create=False).scrub(), render.scrub)


# -- reindex ---------------------------------------------------------------------------


@command(palimpsest, "reindex", "palimpsest reindex --db postgresql://... --json")
@pass_env
def reindex(env: Env, /) -> None:
    """Make anew the vectors (recall by meaning) that another model made, or none did.

    Needed after the `embedder` setting changed, or after an update changed what a
    memory's vector is made from: until then recall by meaning leaves those memories out.
    Every memory version with a stale or missing vector is embedded again, in batches,
    with a progress bar on standard error. Vectors are derived from the memories, so no
    event is written and the history is unchanged; a reindex stopped half-way resumes
    where it stopped when run again.
    """
    service = env.service(create=False)
    with ExitStack() as stack:
        bars: list[Any] = []

        def progress(done: int, total: int) -> None:
            if not bars:  # made at the first batch, once the total is known
                bar = click.progressbar(length=total, label="Reindexing", file=sys.stderr)
                bars.append(stack.enter_context(bar))
            bars[0].update(done - bars[0].pos)

        answer = service.reindex(progress)
    emit(answer, lambda r: click.echo(f"vectors: {render.vectors_made(r)}"))


# -- serve -----------------------------------------------------------------------------


@command(palimpsest, "serve", "palimpsest serve --http --port 8765")
@click.option("--http", is_flag=True, help="Speak streamable HTTP instead of stdio.")
@click.option("--port", type=click.IntRange(1, 65535), help="With --http: the port (default 8765).")
@click.option(
    "--host",
    help="With --http: the address to listen on (default 127.0.0.1); beyond this machine "
    "only once the store has keys.",
)
@click.option(
    "--stateless",
    is_flag=True,
    default=None,
    help="With --http: keep no MCP session, so that several processes can serve one "
    "address behind a reverse proxy.",
)
@pass_env
def serve(
    env: Env, /, http: bool, port: int | None, host: str | None, stateless: bool | None
) -> None:
    """Serve the memory to MCP clients (agents): over stdio, or streamable HTTP at /mcp
    (with the web page for people at /, where each signs in with a key: docs/web.md).

    Without --http the client starts this command and speaks MCP on its standard input
    and output. With --http it listens on 127.0.0.1 (or --host), and every request must
    carry a key once the store has one (`palimpsest key create`); the address goes to
    standard error (as JSON with --json). The port, host and limits may also come from the
    configuration (`palimpsest config`).
    """
    if not http and (port is not None or host is not None or stateless):
        raise ValidationError(
            "`--port`, `--host` and `--stateless` are for `--http`: without it the server "
            "speaks over stdio. Add it, or leave them out.",
            field="port" if port is not None else "host" if host is not None else "stateless",
        )
    if not http and sys.stdin.isatty():  # typed by hand: it would wait in silence
        click.echo(
            "Waiting for an MCP client on standard input (Ctrl-C to stop). An agent starts "
            "this command itself: put it in the agent's MCP configuration (README.md).",
            err=True,
        )
    from ..mcp import PATH, serve  # the SDK is only loaded when serving

    config = env.config(**{"http.port": port, "http.host": host, "http.stateless": stateless})
    service = env.service()
    pending = service.pending_scrubs()
    if pending:  # reported only: a rewrite locks tables, so a server never starts one
        click.echo(
            f"{render.counted(len(pending), 'forget still waits', 'forgets still wait')} "
            "for their bytes to be erased from the "
            "store's files: run `palimpsest scrub` (see `palimpsest doctor`).",
            err=True,
        )
    if http:  # it reads only the directories its owner configured: it has none of its own
        service.places = served_places(config.check_dirs, service.workspace,
                                       service.find_workspace)  # fmt: skip
        host, port = config.http_host, config.http_port
        if not is_loopback(host) and not service.has_keys():
            raise ValidationError(
                f"`serve --http` listens on {host} (beyond this machine) only once the store "
                "has keys, so that no request gets in without one: `palimpsest user add NAME "
                "--role editor`, then `palimpsest key create --user NAME`. Or listen on "
                "127.0.0.1.",
                field="http.host",
            )
        check_port_free(host, port)  # before printing an address nobody will answer at
        url = f"http://{host}:{port}{PATH}" if ":" not in host else f"http://[{host}]:{port}{PATH}"
        if click.get_current_context().meta.get(JSON_KEY):
            click.echo(json.dumps({"url": url, "store": store_label(env.db)}), err=True)
        else:
            page = url.removesuffix(PATH) + "/"
            click.echo(f"Palimpsest MCP at {url}, the web page at {page} (store: "
                       f"{store_label(env.db)})", err=True)  # fmt: skip
    if http:  # the web page beside /mcp (docs/web.md)
        from ..web import serve_site

        serve_site(service, host=config.http_host, port=config.http_port, limits=config.limits,
                   stateless=config.http_stateless, behind_tls=config.http_behind_tls)  # fmt: skip
    else:
        serve(service, http=False)


def check_port_free(host: str, port: int) -> None:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        # as the server will: a port left in TIME_WAIT by a server just stopped is free
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            raise ValidationError(
                f"Port {port} on {host} is taken by another program: stop it, or choose "
                "another with `port`.",
                field="port",
            ) from None


# -- demo ------------------------------------------------------------------------------


@command(palimpsest, "demo", "palimpsest demo")
@click.option("-n", "--notebook", default="demo", show_default=True, help="Notebook to use.")
@pass_env
def demo(env: Env, /, notebook: str) -> None:
    """A short guided tour: remember, revise, recall and history, in a store of its own.

    Without --db the tour makes a new store in a temporary directory, so your memory is
    never touched; with --db it uses that store, in a notebook that must not exist yet.
    """
    as_json = bool(click.get_current_context().meta.get(JSON_KEY))
    label = store_label(env.db)
    own_folder = None
    if not env.db_typed:
        own_folder = tempfile.mkdtemp(prefix="palimpsest-demo-")
        if as_json:  # no next step points into it: it goes once the store is closed
            remove = functools.partial(shutil.rmtree, own_folder, ignore_errors=True)
            env.ctx.call_on_close(remove)  # before the store's own close, so run after it
        env.db = str(Path(own_folder) / "demo.db")
        label = f"{env.db} (new, for this tour only: your own memory is not touched)"
    # As the user ran it: `./scripts/run` says so, as `palimpsest` may not be on PATH.
    prog = os.environ.get("PALIMPSEST_PROG") or "palimpsest"
    command = f"{prog} --db {shlex.quote(store_label(env.db))}"
    tour = run_demo(env.service(), notebook, label, command, quiet=as_json)
    if as_json:
        emit(tour)
    elif own_folder is not None:  # kept for the next step above, which looks into it
        click.echo(f"The tour's store stays until you remove it: rm -r {shlex.quote(own_folder)}")
