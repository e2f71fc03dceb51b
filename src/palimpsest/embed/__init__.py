"""Embedders: text to vectors for recall by meaning (contract in `base`).

    default_embedder()     all-MiniLM-L6-v2, int8 ONNX, offline (`minilm`)
    load_embedder(name)    by the name a setting or a store records: see EMBEDDERS
    NullEmbedder           embeds nothing: Palimpsest on full text alone

Each name gives one shared instance per process, so the model loads once, on its first
embed; importing this package loads no model and no inference library.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..domain.errors import ValidationError
from .base import Embedder, normalise
from .minilm import MiniLMEmbedder
from .null import NullEmbedder

if TYPE_CHECKING:
    from .base import Vectors
else:

    def __getattr__(name: str) -> Any:  # `Vectors` is made with numpy, on first use
        if name == "Vectors":
            from . import base

            return base.Vectors
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "Embedder",
    "MiniLMEmbedder",
    "NullEmbedder",
    "Vectors",
    "default_embedder",
    "load_embedder",
    "normalise",
]

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
# Each name an embedder answers to (its own `name`, plus a short alias) -> how to make it.
EMBEDDERS: dict[str, Callable[[], Embedder]] = {
    "all-MiniLM-L6-v2": MiniLMEmbedder,
    "minilm": MiniLMEmbedder,
    "none": NullEmbedder,
}

_shared: dict[str, Embedder] = {}
_shared_lock = threading.Lock()


def default_embedder() -> Embedder:
    return load_embedder(DEFAULT_EMBEDDER)


def load_embedder(name: str) -> Embedder:
    """The process's embedder of that name; the model itself loads on the first embed."""
    make = EMBEDDERS.get(name)
    if make is None:
        raise ValidationError(
            f"unknown embedder: choose one of {', '.join(sorted(EMBEDDERS))}", field="embedder"
        )
    key = make.__name__  # an alias shares the instance of the name it stands for
    with _shared_lock:
        if key not in _shared:
            _shared[key] = make()
        return _shared[key]
