"""Where a project's binding names no notebook of the workspace, the project's own rules
cannot be told. The guard then asks, rather than allows, a command that a forbidden rule
of some notebook (one of which may be the project's) would refuse."""

from __future__ import annotations

from collections.abc import Iterable

from ..domain.model import Memory
from .decide import decide
from .rules import applies


def refused_in_some_notebook(command: str, rules: Iterable[Memory], at: str) -> bool:
    """Whether a notebook's forbidden rule, where it applies, would refuse `command` (or
    cannot tell, the command being unreadable)."""
    own = [r for r in rules if r.scope != "workspace" and applies(r, r.notebook_id, at)]
    return bool(own) and decide(command, own).decision != "allow"
