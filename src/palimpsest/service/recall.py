"""Finding what is known: recall, by words, meaning and filters, now or as of a past time.

With an embedder (dimensions > 0) a query is matched by words (the store's full-text
search) and by meaning (the nearest vectors), and the two are fused (fusion.py); with the
null embedder recall is full text alone. Exact id and key lookups come first either way.

A relevance floor (floor.py) keeps out what does not answer: a query no memory matches well
enough gets no hits, and a hit far below the best is left out, unless the caller asks for
`near_misses`. Each hit says how it matched: the query's words it holds and its similarity.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from ..domain.errors import ValidationError
from ..domain.model import STATUSES, Memory, Notebook
from ..domain.views import compact, lean
from ..revise import parse_fields
from ..screening import gate
from ..store import Found, SearchQuery, StoreReader
from .answers import Hit, Recalled
from .authors import name_terms, named_authors, with_authors
from .base import MAX_LIMIT, ServiceBase, checked_budget, choices, parse_time_arg, refuse_nul
from .checks import here, stale_by_evidence
from .context import with_context
from .episodes import with_episodes
from .floor import Floor, above_floor
from .fusion import LISTED, WORDS, Candidate, Fused, Weights, fuse, spread
from .matched import explained
from .pending import pending_into_hits, waiting_writes
from .served_record import KEEP_SETTING, shown_of
from .settings import current_settings, freshness_days
from .shown import hit_view, mark_disputed, mark_stale, rule_view
from .usefulness import by_usefulness
from .vectors import model_tag

if TYPE_CHECKING:
    from ..embed import Vectors

_WORDS = re.compile(r"[^\W_]")  # a letter or a digit: something a search can match
# Candidates taken from each side before fusing: enough that the right memory is in
# either pool (LoCoMo dev: 70% of evidence in the full-text top 20, 77% in the top 50),
# few enough to stay cheap. Meaning takes more: its 100 nearest raised LoCoMo dev recall@5
# by 0.006 over 50 (every leave-one-conversation-out fold chose it), full text's 100 did
# worse than its 50 (when full text was scaled min-max, over weaker matches).
POOL = 50
MEANING_POOL = 100
NOTHING_MATCHES = (
    "No memory matches this well enough: the answer is likely not in memory. Recall with "
    "other words, or with `near_misses` (`--near-misses` in the CLI) to see the closest "
    "anyway."
)
NOTHING_CLOSE = (  # near_misses asked already: no memory passes the filters, or none shares
    "No memory matches, not even loosely: none that passes the filters shares a word or "
    "comes near in meaning. Recall with other words or fewer filters."
)


PENDING_ONLY = (
    "Nothing synced from the server matches; `pending` holds writes made here that match, "
    "not yet on the server."
)


class RecallOps(ServiceBase):
    def recall(
        self,
        *,
        query: str = "",
        notebook: str | None = None,
        domain: str | None = None,
        kind: str | list[str] | None = None,
        tags: list[str] | None = None,
        status: str | list[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = 10,
        include_retired: bool = False,
        as_of: str | None = None,
        near_misses: bool = False,
        budget: int | None = None,
    ) -> Recalled:
        """Find memories by words and filters, in the current state or as of a past time;
        `near_misses` lists what the relevance floor leaves out too, marked; `budget`
        fills that many characters with the best hits and names the rest."""
        if not isinstance(query, str):
            raise ValidationError("`query` must be a string.", field="query")
        if len(refuse_nul("query", query)) > gate.LIMITS["text"]:
            raise ValidationError(
                f"`query` is {len(query):,} characters; recall takes {gate.LIMITS['text']:,} "
                "at most: search by the few words that matter, a memory id or a key.",
                field="query",
            )
        if query.strip() and not _WORDS.search(query):
            # Searching for no word would rank every memory alike: an answer that misleads.
            raise ValidationError(
                "`query` holds no word to search for (no letter or digit): give words, a "
                "memory id or a key, or leave it empty to list by the filters.",
                field="query",
            )
        if domain is not None:
            if not isinstance(domain, str):
                raise ValidationError("`domain` must be a string.", field="domain")
            gate.check_length("domain", refuse_nul("domain", domain))
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            raise ValidationError(f"`limit` must be from 1 to {MAX_LIMIT}.", field="limit")
        if budget is not None:
            budget = checked_budget(budget)
        if not isinstance(near_misses, bool):
            raise ValidationError("`near_misses` must be true or false.", field="near_misses")
        kinds = choices(kind, "kind")
        statuses = choices(status, "status") or (STATUSES if include_retired else ("active",))
        bad = [s for s in statuses if s not in STATUSES]
        if bad:
            raise ValidationError(f"`status` filters among {', '.join(STATUSES)}.", field="status")
        since_t = parse_time_arg(since, "since")
        until_t = parse_time_arg(until, "until")
        as_of_t = parse_time_arg(as_of, "as_of")
        tag_filter = tuple(parse_fields({"tags": tags})["tags"]) if tags else ()
        # Embedded on another thread while the transaction below looks up the words.
        vector_of = self.vectors.vector_soon(query) if query.strip() else lambda: None
        with self.store.read(self.workspace) as tx:
            notebooks = self._notebooks(tx)
            scope: tuple[str, ...] | None = None
            if notebook is not None:
                scope = (self._find_notebook(tx, notebook).id,)
            if domain is not None:
                in_domain = tuple(nb.id for nb in notebooks.values() if nb.domain == domain)
                scope = in_domain if scope is None else tuple(set(scope) & set(in_domain))
            at = as_of_t or self.clock()
            at_seq = tx.seq_at(as_of_t) if as_of_t else None
            search = SearchQuery(
                text=query,
                limit=limit,
                notebook_ids=scope,
                kinds=kinds,
                tags=tag_filter,
                statuses=statuses,
                since=since_t,
                until=until_t,
                at_seq=at_seq,
                alive_at=None if include_retired else at,
            )
            settings = current_settings(tx)
            fused, apart = self._ranked(tx, search, vector_of, settings, near_misses)
            floor = _floor(settings)
            found, missed = above_floor(by_usefulness(tx, fused), floor, apart, near_misses)
            exact = self._exact(tx, query.strip(), search)
            first = max([hit.score for hit in found], default=0.0) + 1.0
            chosen = [Fused[Candidate](m, first, "id" if m.id == query.strip() else "key")
                      for m in exact]  # fmt: skip
            chosen += [hit for hit in found if hit.memory.id not in {e.id for e in exact}]
            ranked = _read(tx, chosen[:limit])
            touched = {hit.memory.notebook_id for hit in ranked}
            rules = self._standing_rules(tx, touched, at_seq, at)
            freshness = freshness_days(tx, at_seq)  # the windows of that time
            disputed = tx.disputed_with([hit.memory.id for hit in ranked], at_seq)  # then too
            project = here(tx, self.places) if as_of_t is None else None  # files are of now
        shown = [_shown(hit, notebooks, at, freshness, query, missed) for hit in ranked]
        mark_disputed(shown, disputed)
        mark_stale(shown, stale_by_evidence(project, [hit.memory for hit in ranked]))
        answer: Recalled = {"hits": shown, "rules": [rule_view(r) for r in rules],
                                  "as_of": as_of_t}  # fmt: skip
        if not shown and query.strip():
            answer["note"] = NOTHING_CLOSE if near_misses else NOTHING_MATCHES
        waiting = waiting_writes(self.store, self.workspace)
        if waiting:
            pending = pending_into_hits(cast(list[dict[str, Any]], shown), waiting, query)
            if pending:
                answer["pending"] = pending
                if not shown:
                    answer["note"] = PENDING_ONLY
        if budget is not None:
            answer["hits"], left_out = _within(shown, budget)
            if left_out:
                answer["left_out"] = left_out
        if self.session is not None:
            asked = {"query": query, "notebook": notebook, "domain": domain, "kind": kind,
                     "tags": tags, "status": status, "since": since, "until": until,
                     "limit": limit, "include_retired": include_retired, "as_of": as_of,
                     "near_misses": near_misses, "budget": budget}  # fmt: skip
            request = {k: v for k, v in asked.items() if v not in (None, False)}
            seen = [*shown_of(answer["hits"]), *((r["id"], None, None) for r in answer["rules"])]
            self._record_served("recall", request, seen, keep_days=settings[KEEP_SETTING])
        return answer

    def _ranked(
        self,
        tx: StoreReader,
        search: SearchQuery,
        vector_of: Callable[[], Vectors | None],
        settings: dict[str, Any],
        near_misses: bool = False,
    ) -> tuple[list[Fused[Candidate]], float | None]:
        """The hits for the query's words and for its vector (`vector_of` answers it, or
        None: full text alone), best first, before exact lookups, most not read yet; and
        how far the nearest memory stands apart from the rest (fusion.py's `spread`; None
        without meaning).
        `near_misses`: the nearest memories are candidates however far they are."""
        if not search.text.strip():
            return [Fused[Candidate](m, s, LISTED) for m, s in tx.search_found(search)], None
        if not self.vectors.enabled:  # full text alone: each match by its own words
            found = tx.search_found(search)
            return [Fused[Candidate](m, s, WORDS, min(s, 1.0)) for m, s in found], None
        weights = _weights(settings)
        # Context off: no memory comes in for being filed beside a match, by words either.
        search = replace(search, beside=weights.context > 0)
        pooled = replace(search, limit=max(search.limit, POOL))
        words = tx.search_found(pooled)
        vector = vector_of()
        assert vector is not None  # the embedder embeds
        nearest = replace(search, limit=max(search.limit, MEANING_POOL))
        meaning = tx.nearest_found(vector, nearest, model_tag(self.embedder))
        facts = tx.facts_of_rows(sorted({found.rowid for found, _ in words + meaning}))
        named: set[str] = set()
        if weights.author > 0:  # the words again, without the names of the people named
            authors = {rowid: fact.author for rowid, fact in facts.items()}
            named = named_authors(authors, search.terms())
            if named:
                names = frozenset().union(*map(name_terms, named))
                words = tx.search_found(replace(pooled, without=names))
        fused = fuse(words, meaning, weights, every=near_misses)
        hits = with_context(tx, fused, search.at_seq, weights.context)
        hits = with_episodes(tx, fused, hits, weights.episode, facts)
        return with_authors(tx, hits, named, weights.author, facts), spread(meaning)

    def _exact(self, tx: StoreReader, query: str, search: SearchQuery) -> list[Memory]:
        """Memories whose id or key is exactly the query and that pass the filters: first."""
        if not query or len(query) > 200:
            return []
        at_seq = search.at_seq
        memory = tx.get_memory(query) if at_seq is None else tx.memory_at(query, at_seq)
        found = [memory] if memory is not None else []
        found += [m for m in tx.memories_with_key(query, at_seq) if m not in found]
        return [m for m in found if _passes(m, search)]

    def _standing_rules(
        self, tx: StoreReader, notebook_ids: set[str], at_seq: int | None, at: str
    ) -> list[Memory]:
        """The rules binding the touched notebooks: their own and the workspace-wide ones."""
        if not notebook_ids:
            return []
        rules: dict[str, Memory] = {}
        for narrowed in ({"notebook_ids": tuple(sorted(notebook_ids))}, {"scopes": ("workspace",)}):
            search = SearchQuery(
                text="", limit=MAX_LIMIT, kinds=("rule",), at_seq=at_seq, alive_at=at, **narrowed
            )
            rules.update((m.id, m) for m, _ in tx.search(search))
        return list(rules.values())


def _read(tx: StoreReader, hits: list[Fused[Candidate]]) -> list[Fused[Memory]]:
    """The hits to show, each version read whole (ranking read only those it had to)."""
    rows = tx.versions_of_rows([hit.memory.rowid for hit in hits if isinstance(hit.memory, Found)])
    return [
        replace(hit, memory=rows[c.rowid] if isinstance(c := hit.memory, Found) else c)  # type: ignore[misc]
        for hit in hits
    ]


def _weights(settings: dict[str, Any]) -> Weights:
    """The workspace's fusion weights, as chosen today (a ranking preference, not history)."""
    return Weights(
        words=settings["recall.weight.words"],
        meaning=settings["recall.weight.meaning"],
        min_similarity=settings["recall.min_similarity"],
        context=settings["recall.weight.context"],
        episode=settings["recall.weight.episode"],
        author=settings["recall.weight.author"],
    )


def _within(hits: list[Hit], budget: int) -> tuple[list[Hit], list[str]]:
    """The best `hits` whose text, as an agent reads it (lean, compact), fits in `budget`
    characters, and the ids of the rest: a hit too long to fit is named, never cut."""
    kept: list[Hit] = []
    used = 0
    for n, hit in enumerate(hits):
        size = len(compact(lean(hit))) + 1  # and its comma
        if used + size > budget:
            return kept, [later["id"] for later in hits[n:]]
        kept.append(hit)
        used += size
    return kept, []


def _floor(settings: dict[str, Any]) -> Floor:
    return Floor(
        similarity=settings["recall.floor.similarity"],
        words=settings["recall.floor.words"],
        share=settings["recall.floor.share"],
    )


def _shown(
    hit: Fused[Memory],
    notebooks: dict[str, Notebook],
    at: str,
    freshness: dict[str, int | None],
    query: str,
    missed: set[str],
) -> Hit:
    view = hit_view(hit.memory, hit.score, notebooks, at, freshness, hit.matched)
    explained(view, hit, query)
    if hit.memory.id in missed:
        view["below_floor"] = True
    return view


def _passes(memory: Memory, search: SearchQuery) -> bool:
    """Whether `memory` passes the filters of `search` (the store applies the same ones)."""
    when = memory.occurred_at or memory.recorded_at
    return (
        (search.notebook_ids is None or memory.notebook_id in search.notebook_ids)
        and (not search.kinds or memory.kind in search.kinds)
        and (not search.statuses or memory.status in search.statuses)
        and set(search.tags) <= set(memory.tags)
        and (search.since is None or when >= search.since)
        and (search.until is None or when <= search.until)
        and (search.alive_at is None or not memory.expired(search.alive_at))
    )
