"""Fourth round of the LoCoMo recall research: the words side, sessions and speakers.

Run on demand, after `recall_research.py` has made its cache (same `--data`, `--cache`):

    .venv/bin/python bench/recall_fourth_round.py --data path/to/locomo/dev

Full text is recomputed here in numpy, as the service ranks it (FTS5's BM25, k1 1.2 and
b 0.75, over the whole store as `bench recall` files it; the store's own terms; memories
holding every query term first): on the 997 dev questions it gives the service's best 50
in the same order. On top of it, ideas that need no model: BM25's k1 and b, RM3 feedback
on the words, the previous turn's words indexed at a lower weight, a bonus for query
words found side by side, a session prior (each candidate gains a share of the best fused
score among the candidates of its session: in LoCoMo, the day in the notebook), and the
speakers a question names (their turns boosted, their names dropped from full text).
docs/recall.md ("Fourth round") has the figures and what the service would need.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from palimpsest.store.terms import STOPWORDS, index_terms, query_terms
from recall_research import (
    CATEGORIES,
    POOL,
    TODAY,
    Conversation,
    Ranker,
    _questions,
    as_served,
    held_out,
    loaded,
    plain,
    score,
    with_context,
)


class Index:
    """Term counts of every turn of every conversation (one store), for BM25 in numpy."""

    def __init__(self, convs: list[Conversation], extra: int = 2, texts: Any = None) -> None:
        self.convs = convs
        docs: list[list[str]] = []
        self.offset: dict[str, int] = {}
        for c in convs:
            self.offset[c.name] = len(docs)
            for k, t in enumerate(c.turns):
                text = texts(c, k) if texts else plain(t)
                docs.append(index_terms(text))
        self.vocab: dict[str, int] = {}
        rows, cols, vals = [], [], []
        for d, terms in enumerate(docs):
            counts: dict[int, int] = defaultdict(int)
            for term in terms:
                counts[self.vocab.setdefault(term, len(self.vocab))] += 1
            for j, n in counts.items():
                rows.append(d)
                cols.append(j)
                vals.append(n)
        self.tf = np.zeros((len(docs), len(self.vocab)), dtype=np.float32)
        self.tf[rows, cols] = vals
        self.length = np.array([len(d) + extra for d in docs], dtype=np.float64)
        self.n = len(docs)
        self.df = (self.tf > 0).sum(axis=0).astype(np.float64)
        idf = np.log((self.n - self.df + 0.5) / (self.df + 0.5))
        self.idf = np.where(idf <= 0, 1e-6, idf)
        self.docs = docs

    def column(self, term: str) -> np.ndarray:
        j = self.vocab.get(term)
        if j is None:
            return np.zeros(self.n)
        return self.tf[:, j].astype(np.float64)

    def bm25(self, terms: dict[str, float], k1: float = 1.2, b: float = 0.75,
             idf: np.ndarray | None = None, lo: int = 0, hi: int | None = None
             ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """Per turn in [lo, hi): the BM25 of the weighted terms and how many of them it holds."""
        hi = self.n if hi is None else hi
        avg = self.length.mean()
        norm = k1 * (1 - b + b * self.length[lo:hi] / avg)
        s = np.zeros(hi - lo)
        held = np.zeros(hi - lo)
        for term, w in terms.items():
            j = self.vocab.get(term)
            if j is None:
                continue
            tf = self.tf[lo:hi, j].astype(np.float64)
            i = (idf if idf is not None else self.idf)[j]
            s += w * i * (tf * (k1 + 1)) / (tf + norm)
            held += tf > 0
        return s, held

    def span(self, c: Conversation) -> tuple[int, int]:
        lo = self.offset[c.name]
        return lo, lo + len(c.turns)


def served_words(s: np.ndarray, held: np.ndarray, nterms: int, limit: int = POOL
                 ) -> tuple[list[int], list[float]]:  # fmt: skip
    """search_found's list: turns holding every term by score, then any term, `limit` in all
    (ties: the newest first, that is the higher index)."""
    idx = np.arange(len(s))
    every = idx[(held >= nterms) & (s > 0)] if nterms > 1 else np.array([], dtype=int)
    anyt = idx[held > 0]
    out: list[int] = []
    for group in (every, anyt):
        order = sorted(group.tolist(), key=lambda t: (-round(s[t], 9), -t))
        for t in order:
            if t not in out:
                out.append(t)
            if len(out) >= limit:
                break
        if len(out) >= limit:
            break
    return out, [float(s[t]) for t in out]


def pipeline(c: Conversation, qv: np.ndarray, tv: np.ndarray, wlist: list[int],
             wscores: list[float], words: float = 0.3, context: float = 0.3,
             anchors: int = 30, meaning_pool: int = 100, floor: float = 0.25,
             cos: np.ndarray | None = None
             ) -> tuple[dict[int, float], dict[int, float], float]:  # fmt: skip
    """served_scores with the recipe served before episodes, over a given full-text list:
    (fused, final, bound)."""
    cos = tv @ qv if cos is None else cos
    order = np.argsort(-cos)[:meaning_pool]
    near = {int(t): float(cos[t]) for t in order if cos[t] >= floor}
    lowest = min(near.values(), default=0.0)
    last = float(cos[order[-1]])
    scores = np.array(wscores)
    fused: dict[int, float] = {}
    if len(scores):
        span = scores.max() - scores.min()
        scaled = np.ones(len(scores)) if span < 1e-12 else (scores - scores.min()) / span
        for t, s in zip(wlist, scaled, strict=True):
            fused.setdefault(t, words * s + (1 - words) * max(near.get(t, lowest), 0.0))
    for t, similarity in near.items():
        fused.setdefault(t, (1 - words) * similarity)
    bound = (1 - words) * last if last >= floor else 0.0
    return fused, with_context(fused, len(tv), anchors, context, bound), bound


def top10(final: dict[int, float]) -> list[int]:
    return sorted(final, key=lambda t: -final[t])[:10]


# A words provider: (conversation, question index) -> (turns, scores), the full-text list.
WordsFn = Callable[[Conversation, int], tuple[list[int], list[float]]]


def cached_words(c: Conversation, i: int) -> tuple[list[int], list[float]]:
    return c.words[i][:POOL], c.word_scores[i][:POOL]


def with_words(wf: WordsFn, **kw: Any) -> Ranker:
    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        wl, ws = wf(c, i)
        return top10(pipeline(c, qv, tv, wl, ws, **kw)[1])

    return rank


def bm25_words(ix: Index, k1: float = 1.2, b: float = 0.75, idf: str = "store",
               drop: Callable[[Conversation, list[str]], list[str]] | None = None,
               every_first: bool = True, limit: int = POOL) -> WordsFn:  # fmt: skip
    """Full text recomputed: FTS5 BM25 with k1, b; IDF over the store or the conversation;
    `drop` removes query terms (e.g. speakers' names); every-term matches first or not."""
    conv_idf: dict[str, np.ndarray] = {}

    def words_of(c: Conversation, i: int) -> tuple[list[int], list[float]]:
        lo, hi = ix.span(c)
        terms = query_terms(c.questions[i]["question"])
        if drop:
            terms = drop(c, terms) or terms
        use = None
        if idf == "conversation":
            if c.name not in conv_idf:
                df = (ix.tf[lo:hi] > 0).sum(axis=0).astype(np.float64)
                v = np.log((hi - lo - df + 0.5) / (df + 0.5))
                conv_idf[c.name] = np.where(v <= 0, 1e-6, v)
            use = conv_idf[c.name]
        s, h = ix.bm25({t: 1.0 for t in terms}, k1, b, use, lo, hi)
        return served_words(s, h, len(terms) if every_first else 10**9, limit)

    return words_of


def speaker_terms(c: Conversation) -> dict[str, str]:
    """The stemmed term of each speaker's first name -> the speaker."""
    out = {}
    for sp in {t["speaker"] for t in c.turns}:
        for term in index_terms(sp)[:1]:
            out[term] = sp
    return out


def drop_speakers(c: Conversation, terms: list[str]) -> list[str]:
    names = speaker_terms(c)
    return [t for t in terms if t not in names]


def rm3_words(ix: Index, fb_docs: int = 5, fb_terms: int = 10, lam: float = 0.5,
              source: str = "words", use_idf: bool = True, every_first: bool = True,
              base: WordsFn | None = None, tv_cache: Any = None) -> WordsFn:  # fmt: skip
    """RM3 on the words side: the top `fb_docs` turns of full text (`source` words) or of
    the fused list served before episodes (`fused`, needs the vectors: handed per call via
    tv_cache) give a relevance model, each turn weighted by its score (scaled to sum 1),
    each term by its share of the turn's terms (x its IDF with `use_idf`); stopwords and
    single characters left out. The query becomes (1 - lam) x the question's terms (each
    1/n) + lam x the best `fb_terms` expansion terms (weights summing to 1), and BM25 ranks
    with those weights: turns holding every original term first (if `every_first`), then
    any term."""
    base = base or bm25_words(ix)

    def words_of(c: Conversation, i: int) -> tuple[list[int], list[float]]:
        lo, hi = ix.span(c)
        terms = query_terms(c.questions[i]["question"])
        if source == "words":
            wl, ws = base(c, i)
            docs, dscores = wl[:fb_docs], np.array(ws[:fb_docs])
        else:
            qv, tv = tv_cache(c, i)
            wl, ws = base(c, i)
            final = pipeline(c, qv, tv, wl, ws)[1]
            docs = top10(final)[:fb_docs]
            dscores = np.array([final[t] for t in docs])
        if not docs:
            return base(c, i)
        dscores = dscores / dscores.sum() if dscores.sum() > 0 else np.ones(len(docs)) / len(docs)
        model: dict[str, float] = defaultdict(float)
        for t, p in zip(docs, dscores, strict=True):
            dterms = ix.docs[lo + t]
            for term in dterms:
                if term in STOPWORDS or len(term) < 2 or term.isdigit():
                    continue
                j = ix.vocab[term]
                model[term] += p / len(dterms) * (ix.idf[j] if use_idf else 1.0)
        for sp in speaker_terms(c):
            model.pop(sp, None)  # every turn opens with its speaker's name
        best = sorted((t for t in model if t not in terms), key=lambda t: -model[t])[:fb_terms]
        total = sum(model[t] for t in best) or 1.0
        weights = {t: (1 - lam) / len(terms) for t in terms}
        for t in best:
            weights[t] = weights.get(t, 0.0) + lam * model[t] / total
        s, h_all = ix.bm25(weights, lo=lo, hi=hi)
        _, h = ix.bm25({t: 1.0 for t in terms}, lo=lo, hi=hi)
        wl2, _ = served_words(
            s, h if every_first else np.where(h_all > 0, 1, 0), len(terms) if every_first else 10**9
        )
        # any-term matches of the expanded query too (turns holding only expansion terms)
        if len(wl2) < POOL:
            rest = [t for t in np.argsort(-s) if s[t] > 0 and t not in wl2]
            wl2 = wl2 + [int(t) for t in rest[: POOL - len(wl2)]]
        return wl2, [float(s[t]) for t in wl2]

    return words_of


def session_prior(weight: float, agg: str = "max", on: str = "fused", spread_to: int = 0,
                  wf: WordsFn = cached_words) -> Ranker:  # fmt: skip
    """Today's list, each candidate gaining `weight` x its session's score: the max, or the
    mean of the best 3 (`top3`), or the sum (`sum`), of its turns' fused (`on` fused) or final
    scores. With `spread_to` N, every turn of the N best sessions becomes a candidate
    (a new one entering at the bound plus its gain)."""

    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        wl, ws = wf(c, i)
        fused, final, bound = pipeline(c, qv, tv, wl, ws)
        src = fused if on == "fused" else final
        per: dict[int, list[float]] = defaultdict(list)
        for t, s in src.items():
            per[c.turns[t]["session"]].append(s)
        sess = {}
        for k, v in per.items():
            v = sorted(v, reverse=True)
            sess[k] = v[0] if agg == "max" else sum(v[:3]) / 3 if agg == "top3" else sum(v)
        if agg == "sum":
            top = max(sess.values())
            sess = {k: v / top for k, v in sess.items()}
        out = dict(final)
        if spread_to:
            for k in sorted(sess, key=lambda k: -sess[k])[:spread_to]:
                for t, turn in enumerate(c.turns):
                    if turn["session"] == k:
                        out.setdefault(t, bound)
        for t in out:
            out[t] += weight * sess.get(c.turns[t]["session"], 0.0)
        return top10(out)

    return rank


def speaker_boost(weight: float, wf: WordsFn = cached_words, mode: str = "add",
                  only_one: bool = False) -> Ranker:  # fmt: skip
    """Today's list, a candidate spoken by a speaker the question names gaining `weight`
    (`add`) or `weight` x its score (`mul`); with `only_one`, only when one speaker is named."""

    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        wl, ws = wf(c, i)
        final = pipeline(c, qv, tv, wl, ws)[1]
        names = speaker_terms(c)
        named = {names[t] for t in query_terms(c.questions[i]["question"]) if t in names}
        if not named or (only_one and len(named) > 1):
            return top10(final)
        out = {t: s + (weight if mode == "add" else weight * s)
               * (c.turns[t]["speaker"] in named) for t, s in final.items()}  # fmt: skip
        return top10(out)

    return rank


def with_neighbour_terms(ix: Index, alpha: float, nxt: bool = False) -> Index:
    """A copy of `ix` where each turn's counts gain `alpha` x the previous turn's in its
    conversation (and the next's with `nxt`); the length counts those terms whole, as FTS5
    counts every column's length whatever its weight."""
    new = Index.__new__(Index)
    new.__dict__ = dict(ix.__dict__)
    tf = ix.tf.copy()
    length = ix.length.copy()
    for c in ix.convs:
        lo, hi = ix.span(c)
        raw = ix.length[lo:hi] - 2
        tf[lo + 1 : hi] += alpha * ix.tf[lo : hi - 1]
        length[lo + 1 : hi] += raw[:-1]
        if nxt:
            tf[lo : hi - 1] += alpha * ix.tf[lo + 1 : hi]
            length[lo : hi - 1] += raw[1:]
    new.tf = tf
    new.length = length
    new.df = (tf > 0).sum(axis=0).astype(np.float64)
    idf = np.log((new.n - new.df + 0.5) / (new.df + 0.5))
    new.idf = np.where(idf <= 0, 1e-6, idf)
    return new


def bigram_words(ix: Index, beta: float, k1: float = 1.2, b: float = 0.75,
                 drop: Any = None) -> WordsFn:  # fmt: skip
    """BM25 as served plus, per pair of query terms next to each other in the question
    (stopwords skipped), `beta` x the mean IDF of the two when a turn holds them next to
    each other (as an FTS5 phrase "a b" would find)."""
    base = bm25_words(ix, k1, b, drop=drop)

    def words_of(c: Conversation, i: int) -> tuple[list[int], list[float]]:
        wl, ws = base(c, i)
        terms = query_terms(c.questions[i]["question"])
        if drop:
            terms = drop(c, terms) or terms
        pairs = list(itertools.pairwise(terms))
        if not pairs:
            return wl, ws
        lo, hi = ix.span(c)
        s, h = ix.bm25({t: 1.0 for t in terms}, k1, b, None, lo, hi)
        for a, z in pairs:
            bonus = beta * (ix.idf[ix.vocab[a]] + ix.idf[ix.vocab[z]]) / 2 if (
                a in ix.vocab and z in ix.vocab) else 0.0  # fmt: skip
            if not bonus:
                continue
            for t in range(hi - lo):
                d = ix.docs[lo + t]
                if any(d[k] == a and d[k + 1] == z for k in range(len(d) - 1)):
                    s[t] += bonus
        return served_words(s, h, len(terms))

    return words_of


def combo(wf: WordsFn = cached_words, speaker: float = 0.0, speaker_mode: str = "add",
          session: float = 0.0, words: float = 0.3, context: float = 0.3) -> Ranker:  # fmt: skip
    """A words list, then the session prior (max of fused) and the speaker boost."""

    def rank(c: Conversation, i: int, qv: np.ndarray, tv: np.ndarray) -> list[int]:
        wl, ws = wf(c, i)
        fused, final, _ = pipeline(c, qv, tv, wl, ws, words=words, context=context)
        out = dict(final)
        if session:
            sess: dict[int, float] = defaultdict(float)
            for t, s in fused.items():
                k = c.turns[t]["session"]
                sess[k] = max(sess[k], s)
            for t in out:
                out[t] += session * sess.get(c.turns[t]["session"], 0.0)
        if speaker:
            names = speaker_terms(c)
            named = {names[t] for t in query_terms(c.questions[i]["question"]) if t in names}
            for t in out:
                if c.turns[t]["speaker"] in named:
                    out[t] += speaker if speaker_mode == "add" else speaker * out[t]
        return top10(out)

    return rank


def memo(wf: WordsFn) -> WordsFn:
    held: dict[tuple[str, int], tuple[list[int], list[float]]] = {}

    def words_of(c: Conversation, i: int) -> tuple[list[int], list[float]]:
        key = (c.name, i)
        if key not in held:
            held[key] = wf(c, i)
        return held[key]

    return words_of


def held_out_target(convs: list[Conversation], qvecs: list[np.ndarray],
                    tvecs: list[np.ndarray], choices: dict[str, Ranker], floor_name: str
                    ) -> tuple[dict[str, float], list[str]]:  # fmt: skip
    """Leave one conversation out, each fold choosing by the target: the highest lowest
    category recall@5 on the other four, among choices whose overall there is at least
    that of `floor_name` (the recipe before episodes); scored on the one left out."""
    per = {name: [_questions(convs[k], qvecs[k], tvecs[k], r) for k in range(len(convs))]
           for name, r in choices.items()}  # fmt: skip
    rows: list[dict[str, Any]] = []
    chose = []
    for k in range(len(convs)):

        def figures(name: str, k: int = k) -> tuple[float, float]:
            done = [r for j, fold in enumerate(per[name]) if j != k for r in fold]
            by: dict[int, list[float]] = defaultdict(list)
            for r in done:
                by[r["category"]].append(r["r@5"])
            return statistics.fmean(r["r@5"] for r in done), min(
                statistics.fmean(v) for v in by.values()
            )

        floor = figures(floor_name)[0]
        ok = [n for n in choices if figures(n)[0] >= floor] or list(choices)
        best = max(ok, key=lambda n: figures(n)[1])
        chose.append(best)
        rows += per[best][k]
    out = {"r@5": statistics.fmean(r["r@5"] for r in rows)}
    by_cat: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        by_cat[r["category"]].append(r["r@5"])
    out |= {CATEGORIES[k]: statistics.fmean(v) for k, v in sorted(by_cat.items())}
    return out, chose


def rescored_words(
    ix: Index, depth: int, b: float, drop: Any = None, ix_score: Index | None = None
) -> WordsFn:
    """What SQLite could do: FTS5's own list (b 0.75) to `depth`, re-scored in Python with
    `b` (and the terms `drop` leaves), its best POOL kept (every-term matches first)."""
    first = bm25_words(ix, limit=depth, drop=drop)
    sc = ix_score or ix

    def words_of(c: Conversation, i: int) -> tuple[list[int], list[float]]:
        wl, _ = first(c, i)
        lo, hi = sc.span(c)
        terms = query_terms(c.questions[i]["question"])
        if drop:
            terms = drop(c, terms) or terms
        s, h = sc.bm25({t: 1.0 for t in terms}, b=b, lo=lo, hi=hi)
        keep = np.zeros(len(s), dtype=bool)
        keep[wl] = True
        return served_words(np.where(keep, s, 0), np.where(keep, h, 0), len(terms))

    return words_of


def main() -> int:
    parser = argparse.ArgumentParser()
    grid = (
        "also a grid of 216 combinations and the recipe before episodes, held out twice (minutes)"
    )
    parser.add_argument("--grid", action="store_true", help=grid)
    args, convs, qvecs, tvecs = loaded(parser)
    ix = Index(convs)
    previous = with_neighbour_terms(ix, 0.2)
    served = as_served(**TODAY)  # the recipe before episodes
    rows: list[tuple[str, dict[str, float]]] = []

    def scored(label: str, ranker: Ranker) -> None:
        rows.append((label, score(convs, qvecs, tvecs, ranker)))

    def held(label: str, choices: dict[str, Ranker]) -> None:
        figures, chose = held_out(convs, qvecs, tvecs, choices)
        rows.append((f"{label}, held out", figures))
        print(f"{label}: the folds chose " + "; ".join(chose), file=sys.stderr)

    def words(index: Index = ix, b: float = 0.75, dropped: bool = False) -> WordsFn:
        return memo(bm25_words(index, b=b, drop=drop_speakers if dropped else None))

    def rm3(lam: float) -> WordsFn:
        fused_list = rm3_words(ix, 5, 20, lam, "fused", tv_cache=_vectors_of(convs, qvecs, tvecs))
        return memo(fused_list) if lam else words()

    scored("as served before episodes", served)
    scored("own BM25 in place of the service's", with_words(words()))
    held("BM25 b", {f"b {b}": with_words(words(b=b)) for b in (0.3, 0.5, 0.75)})
    held("session prior", {f"session {w}": combo(session=w) for w in (0, 0.1, 0.2, 0.3, 0.5)})
    held("speaker named", {f"speaker {w}": combo(speaker=w) for w in (0, 0.02, 0.05, 0.1, 0.15)})
    held("speaker names dropped", {"kept": served, "dropped": with_words(words(dropped=True))})
    held(
        "previous turn indexed",
        {f"previous {a}": with_words(words(with_neighbour_terms(ix, a))) for a in (0.2, 0.4)}
        | {"previous 0": with_words(words())},
    )
    held(
        "RM3 from the fused list", {f"lambda {lam}": with_words(rm3(lam)) for lam in (0, 0.05, 0.1)}
    )
    held(
        "query words side by side",
        {
            f"bonus {x}": with_words(memo(bigram_words(ix, x)) if x else words())
            for x in (0, 0.5, 1)
        },
    )
    best = words(previous, b=0.2, dropped=True)
    winner = combo(best, 0.1, session=0.7)
    scored("b 0.2, names dropped, previous 0.2, speaker 0.1, session 0.7", winner)
    rescored = rescored_words(previous, 100, 0.2, drop_speakers)
    scored("  full text's best 100 re-scored with b 0.2", combo(rescored, 0.1, session=0.7))
    scored("  without the previous turn", combo(words(b=0.2, dropped=True), 0.1, session=0.7))
    scored("  without the speaker boost", combo(best, 0.0, session=0.7))
    scored("  without the session prior", combo(best, 0.1, session=0.0))
    scored("  with b 0.75", combo(words(previous, dropped=True), 0.1, session=0.7))
    if args.grid:
        choices = {"before episodes": served}
        for b, dropped, alpha in itertools.product((0.2, 0.3, 0.5), (False, True), (0, 0.2, 0.3)):
            index = with_neighbour_terms(ix, alpha) if alpha else ix
            listed = words(index, b=b, dropped=dropped)
            for speaker, session in itertools.product((0.05, 0.1, 0.15, 0.2), (0.3, 0.5, 0.7)):
                label = f"b {b}, names dropped {dropped}, previous {alpha}"
                choices[f"{label}, speaker {speaker}, session {session}"] = combo(
                    listed, speaker, session=session
                )
        held("the grid, best overall", choices)
        figures, chose = held_out_target(convs, qvecs, tvecs, choices, "before episodes")
        rows.append(("the grid, best lowest category, held out", figures))
        print("by the lowest category: the folds chose " + "; ".join(chose), file=sys.stderr)
    columns = ["r@5", *(CATEGORIES[k] for k in sorted(CATEGORIES))]  # what held_out reports
    print(f"{'recipe':<62}" + "".join(f"{n[:9]:>10}" for n in columns))
    for label, figures in rows:
        print(f"{label:<62}" + "".join(f"{figures[n]:>10.3f}" for n in columns))
    for k, c in enumerate(convs):
        before = statistics.fmean(r["r@5"] for r in _questions(c, qvecs[k], tvecs[k], served))
        after = statistics.fmean(r["r@5"] for r in _questions(c, qvecs[k], tvecs[k], winner))
        print(f"{c.name}: before episodes {before:.3f}, the combination {after:.3f}")
    return 0


def _vectors_of(
    convs: list[Conversation], qvecs: list[np.ndarray], tvecs: list[np.ndarray]
) -> Callable[[Conversation, int], tuple[np.ndarray, np.ndarray]]:
    """(question vector, turn vectors) of a conversation's question, for RM3 on the fused list."""
    by_name = {c.name: (q, t) for c, q, t in zip(convs, qvecs, tvecs, strict=True)}

    def of(c: Conversation, i: int) -> tuple[np.ndarray, np.ndarray]:
        questions, turns = by_name[c.name]
        return questions[i], turns

    return of


if __name__ == "__main__":
    sys.exit(main())
