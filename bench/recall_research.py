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

    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        fused, bound = candidates(c, i, qv, tv)
        if feedback:
            top = sorted(fused, key=lambda t: -fused[t])[:feedback]
            again = qv + feedback_weight * tv[top].mean(axis=0)
            fused, bound = candidates(c, i, again / np.linalg.norm(again), tv)
        gained: dict[int, float] = defaultdict(float)
        for t in sorted(fused, key=lambda t: -fused[t])[:anchors] if context else []:
            for d in (1, 2):
                for other in (t - d, t + d):
                    if 0 <= other < len(tv):
                        gained[other] += context / d * fused[t]
        final = {t: s + gained.get(t, 0.0) for t, s in fused.items()}
        for t, gain in gained.items():
            final.setdefault(t, gain + (bound if base else 0.0))
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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=LOCOMO_DEV)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/palimpsest-recall-research"))
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    convs = words_ranked(args.data, args.cache)
    qvecs = question_vectors(convs, args.cache)
    plain = vectors(convs, args.cache, "plain")
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
