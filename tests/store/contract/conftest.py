"""The contract suites take the `store` fixture (tests/conftest.py): SQLite and PostgreSQL.
A copy needs a second, empty store of the same kind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.store import Store, open_store

from ...conftest import own_postgres_schema


@pytest.fixture
def empty_store(store: Store, tmp_path: Path) -> Iterator[Store]:
    """A new store of the kind `store` is: its own SQLite file, or its own PostgreSQL schema."""
    if store.url.endswith(".db"):
        opened = open_store(str(tmp_path / "empty.db"))
        yield opened
        opened.close()
        return
    with own_postgres_schema("contract_copy") as schema:
        opened = open_store(schema.url)
        yield opened
        opened.close()
