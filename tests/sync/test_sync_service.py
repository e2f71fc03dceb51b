"""Sync's service, one behaviour at a time: a server's answers and a replica writing them
(tests/sync/test_sync_converges.py drives random sequences of the same)."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest.domain.errors import Conflict, ValidationError
from palimpsest.service import Service
from palimpsest.store import open_store

from .world import World


@pytest.fixture
def world(tmp_path: Path) -> World:
    server = open_store(str(tmp_path / "server.db"))
    made = World(server, tmp_path / "replica.db")
    yield made
    made.close()
    server.close()


def test_a_settings_change_is_pulled_with_the_workspace_settings(world: World) -> None:
    world.remember("alpha", "pool")
    world.server.change_settings(changes={"recall.min_similarity": 0.3}, because="tuning")
    world.pull_all(limit=1)
    world.assert_converged()
    assert world.replica.settings() == world.server.settings()
