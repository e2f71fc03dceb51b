"""What every embedder promises, so the store and recall never ask which one they hold.

Contract:
- `name` and `version` are what the store records beside each vector: when either
  differs from what a store holds, its vectors are stale and `reindex` rebuilds them.
- `dimensions` is the length of every vector. 0 means the embedder embeds nothing (the
  null embedder): callers skip vector work and recall runs on full text alone.
- `embed(texts)` returns a float32 array of shape (len(texts), dimensions), one row per
  text in order, each row of L2 norm 1 (or all zeros for the null embedder). No text is
  refused: empty text embeds, long text is truncated to what the model reads.
- An embedder may be called from several threads at once.

numpy is imported where a vector is made, not with this package: every command and
`palimpsest serve` import it, and most of them never embed (numpy alone takes about 0.1 s
to import on a 2-core machine). `Vectors` is a type for annotations; at run time it is made
on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]
else:

    def __getattr__(name: str) -> Any:
        if name == "Vectors":
            import numpy as np
            import numpy.typing as npt

            return npt.NDArray[np.float32]
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@runtime_checkable
class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


def normalise(rows: npt.NDArray[np.floating]) -> Vectors:
    """Rows scaled to unit length; an all-zero row stays zero instead of becoming NaN."""
    import numpy as np

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: Vectors = (rows / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return unit
