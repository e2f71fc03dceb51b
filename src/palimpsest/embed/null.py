"""The embedder that embeds nothing: Palimpsest on full text alone, with no model loaded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Vectors


class NullEmbedder:
    """dimensions 0: every text gets an empty vector, so callers keep one code path for
    shapes while knowing (from `dimensions == 0`) that there is no meaning to search."""

    name = "none"
    version = "0"
    dimensions = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):  # as the real embedders refuse it, so a mistake shows
            raise TypeError("embed takes a list of texts, not one text")
        import numpy as np  # only now (see base.py)

        return np.zeros((len(texts), 0), dtype=np.float32)
