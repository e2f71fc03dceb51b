"""`palimpsest web`: the web page for the person at this machine, signed in by a link."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
import webbrowser

import click

from ..service import store_label
from ..service.checks import served_places
from .app import Env, command, palimpsest, pass_env
from .failures import JSON_KEY
from .serving import check_port_free

HOST = "127.0.0.1"  # only this machine: the link signs in the store's owner
OPEN_WAIT_SECONDS = 10.0  # for the server to listen before the browser asks


@command(palimpsest, "web", "palimpsest web --port 8765")
@click.option("--port", type=click.IntRange(1, 65535), help="The port on 127.0.0.1 (default 8765).")
@click.option("--no-open", is_flag=True, help="Print the link; do not open a browser.")
@pass_env
def web(env: Env, /, port: int | None, no_open: bool) -> None:
    """Open the web page on this machine, signed in as the store's owner.

    Starts the HTTP server (the page at /, MCP at /mcp) on 127.0.0.1 and prints a link
    that signs in once, within two minutes, and only from this machine; the browser opens
    it when there is a terminal and a browser. Stop it with Ctrl-C. For others, or over a
    network, run `palimpsest serve --http` and sign in with a key (docs/web.md).
    """
    from ..web import LocalLink, serve_site  # the server's pieces load only to serve

    config = env.config(**{"http.port": port})
    service = env.service()
    # As `serve --http`: a server reads only the directories its owner configured.
    service.places = served_places(config.check_dirs, service.workspace, service.find_workspace)
    port = config.http_port
    check_port_free(HOST, port)
    link = LocalLink()
    url = f"http://{HOST}:{port}/sign-in/local?token={link.token}"
    if click.get_current_context().meta.get(JSON_KEY):
        click.echo(json.dumps({"url": url, "store": store_label(env.db)}), err=True)
    else:
        click.echo(f"Palimpsest's page for you, once, within two minutes: {url}\n"
                   f"(store: {store_label(env.db)}; Ctrl-C stops it)", err=True)  # fmt: skip
    if not no_open and sys.stdin.isatty():
        threading.Thread(target=_open_when_listening, args=(url, port), daemon=True).start()
    serve_site(service, host=HOST, port=port, limits=config.limits, local_link=link)


def _open_when_listening(url: str, port: int) -> None:
    deadline = time.monotonic() + OPEN_WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                webbrowser.open(url)
                return
        except OSError:
            time.sleep(0.1)
