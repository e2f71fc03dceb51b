"""Palimpsest: long-term memory for AI agents. Memory changes, but nothing is lost silently.

The layers, each importing only those below it (tests/test_layers.py holds them to it):

- `model`, `errors`, `ids`, `views`: what a memory, notebook, link and event are; the
  refusals; how they read as JSON. No I/O.
- `secret_rules` (the formats, as data), `secrets` (the detector) and `gate`: what may
  never be stored.
- `revise`: the decisions about one memory, as pure functions.
- `store`: one interface, with SQLite and PostgreSQL behind it.
- `service`: the one API every adapter calls; it owns transactions, the clock and the rules.
- `mcp` and `cli`: thin adapters over the service.

The public API for a program is the service: `open_service(location, actor=...)`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

# numpy's OpenBLAS starts a thread per core for every product, even a small one: on a
# busy machine those threads spin and wait for each other (a 4,000-row product took 7 ms
# of CPU instead of 0.2). Our products are small and a server shares its cores, so one
# thread, unless the user chose. It must be set before numpy is first imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .domain.errors import PalimpsestError

if TYPE_CHECKING:
    from .service import Service, open_service

__all__ = ["PalimpsestError", "Service", "open_service"]


def __getattr__(name: str) -> Any:
    # The service (and the secret detector it loads) is imported on first use, not by every
    # `import palimpsest.x`: the guard's hook answers before it could load.
    if name in ("Service", "open_service"):
        from . import service

        return getattr(service, name)
    raise AttributeError(f"module 'palimpsest' has no attribute {name!r}")
