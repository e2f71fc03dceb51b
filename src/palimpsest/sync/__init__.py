"""A replica's side of sync over HTTP (docs/sync.md): rounds with the server it follows."""

from __future__ import annotations

from .client import Round, sync_round

__all__ = ["Round", "sync_round"]
