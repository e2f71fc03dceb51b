"""What a memory's vector is made from, and writing it with every version.

    embedding_text(memory, notebook)  the one place that decides the text a vector embeds
    model_tag(embedder)               recorded beside every vector: when it differs from
                                      the current one, the vector is stale (`reindex`)
    VectorWriter                      the service's part: embeds (with a small cache, so
                                      remember embeds before its transaction) and stores
                                      one vector per version written

A version whose embedded text is the same as its predecessor's (a retirement, a new tag
when tags are not embedded, a verification) takes the predecessor's vector instead of
running the model again. With the null embedder (dimensions 0) nothing is embedded or
stored, and recall runs on full text alone.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..domain.model import Memory, Notebook
from ..embed import Embedder
from ..store import Store, StoreReader, StoreWriter
from .admin_answers import ReindexAnswer

if TYPE_CHECKING:
    from ..embed import Vectors

# The number of the recipe below: raise it whenever `embedding_text` changes, so that
# every vector made by the old recipe is stale and `palimpsest reindex` makes it anew.
RECIPE = 1
# Whether the recipe reads the notebook: when not, a write looks up no notebook for it.
USES_NOTEBOOK = False
CACHE_TEXTS = 256  # texts embedded ahead of their transaction (remember), newest kept
# Versions embedded per step of a reindex: one batch of the model, then one short write.
REINDEX_BATCH = 64
REINDEX_RECENT = 4096  # texts a reindex keeps embedded, for versions that repeat them

Progress = Callable[[int, int], None]  # (versions done, versions to do)


def embedding_text(memory: Memory, notebook: Notebook | None) -> str:
    """The text a memory version's vector is made from: its title, then its text.

    Everything it reads must be in the version itself (a notebook's name is not: renaming
    a notebook writes no memory version, so its memories' vectors would silently differ
    from the recipe until a reindex).
    """
    del notebook  # not embedded by this recipe (see above)
    if memory.title:
        return f"{memory.title}\n{memory.text}"
    return memory.text


def model_tag(embedder: Embedder) -> str:
    """The embedder's name and version and the recipe number, recorded beside each vector."""
    return f"{embedder.name} {embedder.version} recipe={RECIPE}"


class VectorWriter:
    """Embeds texts with one embedder and writes each memory version's vector."""

    def __init__(self, embedder: Embedder):
        self.embedder = embedder
        self.model = model_tag(embedder)
        self.enabled = embedder.dimensions > 0
        self._cache: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self._held = threading.local()  # `holding`: per thread, as each runs its own write

    def vector_of(self, text: str) -> Vectors | None:
        """`text` embedded (None with the null embedder); recently warmed texts come from
        the cache, so the model does not run inside the write transaction."""
        if not self.enabled:
            return None
        held: Mapping[str, Vectors] = getattr(self._held, "vectors", {})
        if text in held:
            return held[text]
        with self._lock:
            cached = self._cache.get(text)
        if cached is not None:
            return cached
        vector: Vectors = self.embedder.embed([text])[0]
        self._remember(text, vector)
        return vector

    def vector_soon(self, text: str) -> Callable[[], Vectors | None]:
        """`text` embedded on another thread while the caller does other work (recall's
        full-text search: the model and SQL each keep a core busy); call the answer for
        the vector. A cached text, or the null embedder, costs no thread."""
        if not self.enabled:
            return lambda: None
        with self._lock:
            cached = self._cache.get(text)
        if cached is not None:
            return lambda: cached
        pending = _embedding_thread().submit(self.vector_of, text)
        return pending.result

    def warm(self, texts: list[str]) -> None:
        """Embed `texts` now, in one batch, outside any transaction, for writes to come."""
        if not self.enabled:
            return
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._remember(text, vector)

    def embedded(self, texts: list[str]) -> dict[str, Vectors]:
        """Each of `texts` embedded, the model run once over those not cached (a batch
        remember's, which may be more than the cache keeps: see `holding`)."""
        if not self.enabled:
            return {}
        unique = list(dict.fromkeys(texts))
        with self._lock:
            found = {t: self._cache[t] for t in unique if t in self._cache}
        missing = [t for t in unique if t not in found]
        if missing:
            found.update(zip(missing, self.embedder.embed(missing), strict=True))
        return found

    @contextmanager
    def holding(self, vectors: Mapping[str, Vectors]) -> Iterator[None]:
        """Within it, this thread's writes take these texts' vectors: a batch embedded
        before its transaction, without passing through (and flushing) the small cache."""
        self._held.vectors = vectors
        try:
            yield
        finally:
            self._held.vectors = {}

    def warm_filed(self, values: Mapping[str, Any], workspace: str, actor: str) -> None:
        """Embed what remember will file with `values`, before its transaction begins."""
        if not self.enabled:
            return
        try:
            draft = Memory(id="", workspace=workspace, notebook_id="", version=1,
                           recorded_at="", author=actor, owner=actor, **values)  # fmt: skip
        except TypeError:  # a field this draft cannot take: the write embeds it instead
            return
        self.warm([embedding_text(draft, None)])

    def _remember(self, text: str, vector: Vectors) -> None:
        with self._lock:
            self._cache[text] = vector
            self._cache.move_to_end(text)
            while len(self._cache) > CACHE_TEXTS:
                self._cache.popitem(last=False)

    def write(self, tx: StoreWriter, old: Memory | None, new: Memory, seq: int) -> None:
        """Store the vector of `new`, the version event `seq` wrote."""
        if not self.enabled:
            return
        text = embedding_text(new, _notebook(tx, new))
        if old is not None and embedding_text(old, _notebook(tx, old)) == text:
            previous = tx.vector_of(old.id, old.version, self.model)
            if previous is not None:
                tx.put_vector(new.id, seq, previous, self.model)
                return
        vector = self.vector_of(text)
        assert vector is not None  # enabled
        tx.put_vector(new.id, seq, vector, self.model)


@functools.cache
def _embedding_thread() -> ThreadPoolExecutor:
    # One per process: the model already runs on every core, so more would only queue.
    return ThreadPoolExecutor(1, thread_name_prefix="palimpsest-embed")


def _notebook(tx: StoreReader, memory: Memory) -> Notebook | None:
    return tx.get_notebook(memory.notebook_id) if USES_NOTEBOOK else None


def reindex(
    store: Store, workspace: str, vectors: VectorWriter, progress: Progress | None = None
) -> ReindexAnswer:
    """Make anew every vector whose model tag is not the current one (or that is missing).

    Vectors are derived data: no event is written. The model runs outside any
    transaction; each batch is then written in a short one, so writers are held up for
    milliseconds only, and a reindex stopped half-way resumes where it stopped.
    """
    answer: ReindexAnswer = {"model": vectors.model, "reindexed": 0, "stale": 0}
    if not vectors.enabled:
        answer["note"] = "the embedder is `none`: recall runs on full text, with no vectors"
        return answer
    with store.read(workspace) as tx:
        total = tx.stale_vector_count(vectors.model)
    answer["stale"] = total
    done = 0
    recent: OrderedDict[str, Vectors] = OrderedDict()
    while done < total:  # versions written meanwhile have their vectors already
        with store.read(workspace) as tx:
            batch = tx.stale_vectors(vectors.model, REINDEX_BATCH)
        if not batch:
            break
        texts = [embedding_text(memory, None) for memory in batch]
        # A version often says what an earlier one said (a link, a retirement, a tag):
        # each text is embedded once per batch, and a recent one not again.
        missing = [t for t in dict.fromkeys(texts) if t not in recent]
        if missing:
            for text, vector in zip(missing, vectors.embedder.embed(missing), strict=True):
                recent[text] = vector
        made = [recent[text] for text in texts]
        while len(recent) > REINDEX_RECENT:
            recent.popitem(last=False)
        with store.write(workspace) as tx:
            tx.reindexed_vectors(list(zip(batch, made, strict=True)), vectors.model)
        done += len(batch)
        if progress is not None:
            progress(min(done, total), total)
    answer["reindexed"] = done
    return answer
