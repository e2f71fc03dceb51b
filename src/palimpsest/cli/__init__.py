"""The `palimpsest` command line: one subcommand per service operation, `--json` on each.

`app` holds the group and what every subcommand is built from; the commands live by
concept in `memories`, `merging`, `notebooks`, `disputes`, `admin` and `settings` (config
and settings); `render` prints answers for a person.

A command imports only the modules it is defined in (`COMMANDS`), not every command's:
the group loads them as it resolves the name (`app._Group`), so `palimpsest serve` starts
without the rest. Listing the commands (`--help`), a name no module is known to define,
or `palimpsest` imported from here load them all.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, Any

# Each command -> the modules that define it and its subcommands (tests/cli/test_cli.py
# checks this against what the modules register).
COMMANDS: dict[str, tuple[str, ...]] = {
    "bench": ("bench",),
    "check": ("checks",),
    "config": ("settings",),
    "copy": ("admin",),
    "demo": ("admin",),
    "dispute": ("disputes",),
    "doctor": ("admin",),
    "duplicates": ("merging",),
    "export": ("transfer",),
    "forget": ("memories",),
    "guard": ("guard",),
    "history": ("memories",),
    "import": ("transfer",),
    "hook": ("hooks", "guard", "session_hooks"),
    "inspect": ("memories",),
    "key": ("access",),
    "link": ("memories",),
    "merge": ("merging",),
    "migrate": ("admin",),
    "notebook": ("notebooks",),
    "orient": ("orient",),
    "project": ("projects",),
    "recall": ("memories",),
    "reindex": ("admin",),
    "remember": ("memories",),
    "revert": ("memories",),
    "revise": ("memories",),
    "scrub": ("admin",),
    "secret": ("secret",),
    "seen": ("guard",),
    "served": ("served",),
    "serve": ("serving",),
    "settings": ("settings",),
    "sync": ("sync",),
    "user": ("access",),
    "web": ("web",),
    "workspace": ("access",),
}


def load_commands(name: str | None = None) -> None:
    """Import the modules that define command `name`; every module of the package for
    None or a name not in COMMANDS (importing one already imported costs nothing)."""
    modules = COMMANDS.get(name) if name is not None else None
    if modules is None:
        modules = tuple(info.name for info in pkgutil.iter_modules(__path__))
    for module in modules:
        importlib.import_module(f"{__name__}.{module}")


if TYPE_CHECKING:
    from .app import main, palimpsest
else:

    def __getattr__(name: str) -> Any:
        if name in ("main", "palimpsest"):
            load_commands()
            from . import app

            globals()[name] = value = getattr(app, name)
            return value
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["COMMANDS", "load_commands", "main", "palimpsest"]
