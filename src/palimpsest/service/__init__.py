"""The one API every adapter calls. It owns transactions, the clock, ids and every rule.

Answers are JSON-ready dicts; refusals are the errors of `palimpsest.errors`. The
operations are grouped by concept in the modules beside this one.
"""

from __future__ import annotations

from .base import DEFAULT_WORKSPACE
from .doctor import DoctorOps
from .history import HistoryOps
from .memories import MemoryOps
from .notebooks import NotebookOps
from .recall import RecallOps
from .settings import SettingsOps

__all__ = ["DEFAULT_WORKSPACE", "Service"]


class Service(MemoryOps, RecallOps, HistoryOps, NotebookOps, DoctorOps, SettingsOps):
    """remember, recall, revise, revert, forget, inspect, history, notebooks, links, doctor,
    settings."""
