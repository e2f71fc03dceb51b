"""The `palimpsest` command line: one subcommand per service operation, `--json` on each.

`app` holds the group and what every subcommand is built from; the commands live by
concept in `memories`, `notebooks`, `disputes`, `admin` and `settings` (config and
settings); `render` prints answers for a person.
"""

from . import (  # noqa: F401  (each registers its commands)
    admin,
    bench,
    checks,
    disputes,
    guard,
    hooks,
    memories,
    notebooks,
    orient,
    projects,
    session_hooks,
    settings,
)
from .app import main, palimpsest

__all__ = ["main", "palimpsest"]
