"""Palimpsest as an MCP server: the service's operations as tools, over stdio or HTTP.

`server` builds the server and maps every refusal to a tool result; `tools` holds one thin
method per tool, with its parameters in `params`, its answer types in `results` and its
words in `descriptions`; `schema` keeps the published schemas lean and strict;
`stdio` and `transport` (HTTP) run the SDK's transports with their gaps closed.
"""

from .descriptions import TOOL_NAMES
from .server import DEFAULT_PORT, HOST, PATH, build_server, serve

__all__ = ["DEFAULT_PORT", "HOST", "PATH", "TOOL_NAMES", "build_server", "serve"]
