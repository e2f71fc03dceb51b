"""Shared fixtures: a real SQLite file in a temporary folder, and a service over it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.service import Service
from palimpsest.store import Store, open_store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "palimpsest.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    opened = open_store(str(db_path))
    yield opened
    opened.close()


@pytest.fixture
def service(store: Store) -> Service:
    return Service(store)
