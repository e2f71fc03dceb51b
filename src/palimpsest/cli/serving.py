"""`palimpsest serve`: the memory for MCP clients, over stdio or streamable HTTP.

A module of its own, importing neither the service nor the store: over stdio the server
reads its configuration, answers `initialize`, and opens the store (loading the service
with it) only once the client has that answer (`_opened`), so a client waits for little
more than the MCP SDK's own import (docs/benchmarks.md).
"""

from __future__ import annotations

import functools
import json
import socket
import sys
from typing import TYPE_CHECKING

import click

from ..config import is_loopback
from ..domain.errors import ValidationError
from . import render
from .app import Env, command, palimpsest, pass_env
from .failures import JSON_KEY

if TYPE_CHECKING:
    from ..service import Service


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
    if http:
        serve_http(env, port, host, stateless)
        return
    if sys.stdin.isatty():  # typed by hand: it would wait in silence
        click.echo(
            "Waiting for an MCP client on standard input (Ctrl-C to stop). An agent starts "
            "this command itself: put it in the agent's MCP configuration (README.md).",
            err=True,
        )
    # The configuration is checked before a word is said on the wire (a bad value, an
    # actor that may not act), as every command checks it; a store that cannot be opened
    # ends the server once the client has its answer to `initialize`, refused as any
    # command refuses it.
    env.config()
    from ..mcp import serve as serve_over_stdio  # the SDK is only loaded when serving

    serve_over_stdio(functools.partial(_opened, env))


def _opened(env: Env) -> Service:
    """The service a stdio server acts on, opened as every command opens it."""
    service = env.service()
    _report_pending_scrubs(service)
    _keep_in_sync(env, service)
    return service


def _keep_in_sync(env: Env, service: Service) -> None:
    """With `sync.server` and `sync.key` set, the store is a replica kept in sync by a
    thread for as long as the server runs (docs/sync.md)."""
    config = env.config()
    server, key = config.values["sync.server"], config.values["sync.key"]
    if server is None or key is None:
        return
    from ..sync.keeper import Keeper

    keeper = Keeper(service, server, key, config.values["sync.every_seconds"]).start()
    env.ctx.call_on_close(keeper.stop)


def _report_pending_scrubs(service: Service) -> None:
    pending = service.pending_scrubs()
    if pending:  # reported only: a rewrite locks tables, so a server never starts one
        click.echo(
            f"{render.counted(len(pending), 'forget still waits', 'forgets still wait')} "
            "for their bytes to be erased from the "
            "store's files: run `palimpsest scrub` (see `palimpsest doctor`).",
            err=True,
        )


def serve_http(env: Env, port: int | None, host: str | None, stateless: bool | None) -> None:
    """Serve MCP at /mcp and the web page beside it (docs/web.md) until stopped."""
    from ..mcp import PATH
    from ..service import store_label
    from ..service.checks import served_places
    from ..web import serve_site

    config = env.config(**{"http.port": port, "http.host": host, "http.stateless": stateless})
    service = env.service()
    _report_pending_scrubs(service)
    _keep_in_sync(env, service)
    # it reads only the directories its owner configured: it has none of its own
    service.places = served_places(config.check_dirs, service.workspace, service.find_workspace)
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
    serve_site(service, host=config.http_host, port=config.http_port, limits=config.limits,
               stateless=config.http_stateless, behind_tls=config.http_behind_tls)  # fmt: skip


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
