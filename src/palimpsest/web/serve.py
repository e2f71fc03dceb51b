"""`serve --http` with the web page: the MCP server at /mcp, the HTTP API at /api/v1/ and
the page at every other path, one process, one store, the same keys."""

from __future__ import annotations

import functools

import anyio

from ..api import HttpAPI
from ..config import DEFAULT_LIMITS, Limits
from ..mcp import PATH, build_server
from ..mcp.server import prepare_in_background
from ..service import Service
from .app import Site
from .sessions import LocalLink, WebSessions


def local_hosts(port: int) -> set[str]:
    """The Host headers a one-time link is honoured under: this machine's loopback names."""
    return {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}


def serve_site(
    service: Service,
    *,
    host: str,
    port: int,
    limits: Limits = DEFAULT_LIMITS,
    stateless: bool = False,
    behind_tls: bool = False,
    local_link: LocalLink | None = None,
) -> None:
    """Serve until the process is stopped. `local_link`: `palimpsest web`'s one-time link."""
    from ..mcp.transport import serve_http  # uvicorn's pieces load only to serve HTTP

    server = build_server(
        service,
        threads=limits.store_threads,
        http=(host, port),
        calls_per_minute=limits.calls_per_minute,
    )
    assert server.verifier is not None  # built with `http`
    site = Site(
        service,
        server.verifier,
        server.threads,
        WebSessions(service, limits.web_sessions_per_key),
        behind_tls=behind_tls,
        local_link=local_link,
        local_hosts=local_hosts(port),
        bounds=server.bounds,
        requests_per_key=limits.requests_per_key,
    )
    try:
        prepare_in_background(service)
        run = functools.partial(
            serve_http,
            server,
            host=host,
            port=port,
            path=PATH,
            limits=limits,
            stateless=stateless,
            site=site,
            api=HttpAPI(server),
        )
        anyio.run(run)
    finally:
        server.close()
