"""`palimpsest serve` loads the embedding model on a thread of its own as it starts, so the
first recall by meaning does not wait for it and answers that need no meaning never do."""

from __future__ import annotations

from pathlib import Path

from palimpsest.embed import NullEmbedder
from palimpsest.embed.minilm import MiniLMEmbedder
from palimpsest.mcp.server import load_model_in_background
from palimpsest.service import Service
from palimpsest.store import open_store


def test_the_model_is_loaded_in_the_background(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder()  # a new one: the shared one of load_embedder may be loaded
    assert embedder._runtime is None  # loaded on the first embed, not before
    thread = load_model_in_background(
        Service(open_store(str(tmp_path / "s.db")), embedder=embedder)
    )
    assert thread is not None and thread.daemon
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert embedder._runtime is not None


def test_nothing_is_loaded_for_the_null_embedder(tmp_path: Path) -> None:
    service = Service(open_store(str(tmp_path / "s.db")), embedder=NullEmbedder())
    assert load_model_in_background(service) is None
