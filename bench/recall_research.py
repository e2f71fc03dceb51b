"""Research for hybrid recall on LoCoMo: which fusion, which embedded text, which context.

Run on demand, not by pytest (the data is outside the repository and read by path):

    .venv/bin/python bench/recall_research.py [--data DIR] [--cache DIR]

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
from palimpsest.embed import default_embedder
from palimpsest.service import Service
from palimpsest.store import open_store

POOL = 50


@dataclass
class Conversation:
    name: str
    turns: list[dict[str, Any]]
    questions: list[dict[str, Any]]
    words: list[list[int]]  # per question: turn indexes ranked by full text (top POOL)
    word_scores: list[list[float]]


def words_ranked(data: Path, cache: Path) -> list[Conversation]:
    """Every conversation with the service's full-text ranking of each question (cached)."""
    out = cache / "words.json"
    if out.exists():
        return [Conversation(**c) for c in json.loads(out.read_text())]
    convs = []
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(str(Path(tmp) / "r.db"))
        service = Service(store, actor="agent:research")
        for path in conversations(data):
            name = path.name.removesuffix(".memories.jsonl")
            turns = read_jsonl(path)
            questions = read_jsonl(path.with_name(f"{name}.questions.jsonl"))
            memory_turns: dict[str, list[int]] = defaultdict(list)
            for index, turn in enumerate(turns):
                fields = {"notebook": name, "kind": "note"}
                fields["text"] = f"{turn['speaker']}: {turn['text']}"
                when = occurred_at(turn["session_date_time"])
                if when:
                    fields["occurred_at"] = when
                memory_turns[service.remember(**fields)["id"]].append(index)
            words, scores = [], []
            for q in questions:
                hits = service.recall(query=q["question"], notebook=name, limit=POOL)["hits"]
                words.append([memory_turns[h["id"]][0] for h in hits])
                scores.append([float(h["score"]) for h in hits])
            convs.append(Conversation(name, turns, questions, words, scores))
            print(f"  {name}: filed and asked", file=sys.stderr, flush=True)
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
    return c.words[i]


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


def fused(words: float, smooth: float = 0.0, span: int = 1, meaning_pool: int = 0) -> Ranker:
    """Score fusion: `words` x the full-text score scaled to 0-1 over the pool (min-max)
    plus (1 - words) x cosine; with `meaning_pool`, only that many nearest turns have a
    cosine and the rest get the pool's lowest (what the service knows). `smooth` adds that
    share of the fused score of the turns up to `span` before and after in the same
    session (divided by the distance): neighbouring context."""

    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        cos = tv @ qv
        if meaning_pool:
            nearest = np.argsort(-cos)[:meaning_pool]
            known = np.full(len(cos), cos[nearest].min())
            known[nearest] = cos[nearest]
            cos = known
        scaled = np.zeros(len(cos))
        scores = np.array(c.word_scores[i])
        for r, t in enumerate(c.words[i]):
            low = scores.min()
            scaled[t] = max(scaled[t], (scores[r] - low) / (scores.max() - low + 1e-9))
        f = words * scaled + (1 - words) * np.maximum(cos, 0)
        if smooth:
            session = np.array([t["session"] for t in c.turns])
            g = f.copy()
            for d in range(1, span + 1):
                same = session[d:] == session[:-d]
                g[d:] += smooth / d * f[:-d] * same
                g[:-d] += smooth / d * f[d:] * same
            f = g
        return list(np.argsort(-f)[:POOL])

    return rank


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=LOCOMO_DEV)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/palimpsest-recall-research"))
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    convs = words_ranked(args.data, args.cache)
    qvecs = question_vectors(convs, args.cache)
    rows: list[tuple[str, dict[str, float]]] = []
    plain_vecs = vectors(convs, args.cache, "plain")
    rows.append(("words (service today)", score(convs, qvecs, plain_vecs, words_only)))
    for recipe in TEXTS:
        tv = vectors(convs, args.cache, recipe)
        rows.append((f"meaning alone, {recipe}", score(convs, qvecs, tv, meaning_only)))
    dated_vecs = vectors(convs, args.cache, "dated")
    for w in (1.0, 0.5, 0.3):
        rows.append((f"rrf k60 meaning {w}, plain", score(convs, qvecs, plain_vecs, rrf(1, w))))
    for k, w in ((1, 0.4), (5, 0.7), (20, 0.4)):
        rows.append((f"rrf k{k} meaning {w}, dated", score(convs, qvecs, dated_vecs, rrf(1, w, k))))
    for a in (0.3, 0.5, 0.7):
        rows.append((f"scores, words {a}, dated", score(convs, qvecs, dated_vecs, fused(a))))
    for a in (0.3, 0.4, 0.5):
        recipe = fused(a, meaning_pool=50)
        rows.append((f"scores, words {a}, pool 50", score(convs, qvecs, dated_vecs, recipe)))
    for a, s, span, pool in ((0.4, 0.3, 1, 0), (0.4, 0.5, 1, 0), (0.4, 0.3, 2, 0),
                             (0.4, 0.3, 1, 50), (0.4, 0.3, 2, 50), (0.4, 0.3, 2, 200)):  # fmt: skip
        label = f"scores {a} + neighbours {s} span {span}" + (f", pool {pool}" if pool else "")
        rows.append((label, score(convs, qvecs, dated_vecs, fused(a, s, span, pool))))
    show(rows)
    return 0


def show(rows: list[tuple[str, dict[str, float]]]) -> None:
    names = list(rows[0][1])
    print(f"{'recipe':<44}" + "".join(f"{n[:9]:>10}" for n in names))
    for label, figures in rows:
        print(f"{label:<44}" + "".join(f"{figures[n]:>10.3f}" for n in names))


if __name__ == "__main__":
    sys.exit(main())
