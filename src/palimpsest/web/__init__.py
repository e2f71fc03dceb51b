"""The web page for people: search the memory, read a memory's fields, links and history.

A thin adapter, as the MCP server and the CLI are: every answer comes from the service,
acting as the signed-in key's holder in the key's workspace. `serve` runs it beside /mcp
(`palimpsest serve --http`, `palimpsest web`); `app` is the ASGI app (routes, sign-in,
checks in order); `forms` what a request brings; `sessions` who is signed in; `guard` the
headers, cookie and cross-site checks; `pages` and `html` the HTML, escaped by default;
`static/` its only style and script files. docs/web.md describes it for its users.
"""

from .serve import local_hosts, serve_site
from .sessions import LocalLink

__all__ = ["LocalLink", "local_hosts", "serve_site"]
