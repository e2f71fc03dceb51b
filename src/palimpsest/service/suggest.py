"""Suggestions on write (DESIGN section 4): what a memory just filed or changed may connect
to, repeat or contradict, and the rules it falls under. Candidates only: nothing here
writes, and nothing is ever retired because of a suggestion.

Candidates are the memory's nearest active memories by meaning when the service embeds
(cosine of vectors), else by words (a full-text search on its content words, judged by
the Jaccard overlap of content terms). Each candidate goes in one list at most:
- `possible_contradicts`: in the same domain (a notebook without a domain: the same
  notebook), about the same thing (`about`) and showing a sign that the two say different
  things (`difference`); or holding the same `key` with another text;
- `possible_duplicates`: near-identical, with no sign of a difference;
- `suggested_connections`: similar enough to be worth a link.
Memories already linked to it, or in an open dispute with it, are left out: how they
relate is known. Each list holds at most LIMIT entries, best first, and an empty list is
left out of the answer: agents pay for every token.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from ..domain.model import SEVERITIES, Memory, Notebook
from ..store import SearchQuery, StoreReader
from ..store.terms import STOPWORDS, index_terms, words
from .answers import RuleLine, Suggested, Suggestions

LIMIT = 3  # entries per list
RULES = 5  # applicable rules shown; recall lists them all
CANDIDATES = 12  # nearest memories examined
QUERY_WORDS = 24  # content words of a long text searched for (its first ones)
SNIPPET = 100  # characters of a candidate's text shown

LISTS = ("possible_contradicts", "possible_duplicates", "suggested_connections")


@dataclass(frozen=True)
class Thresholds:
    connect: float  # worth a link
    duplicate: float  # says the same thing
    about: float  # about the same thing, so a difference may be a contradiction


# Cosine of all-MiniLM-L6-v2 vectors, as measured: unrelated sentences 0.05-0.15; "password
# reset mails are not arriving" and "login emails are dropped by the mail relay" 0.54; the
# same fact with another port 0.74, another database name 0.86, a "not" 0.94 (the sign tells
# those apart from duplicates); a repeat with a full stop added 0.97, with words added 0.90.
BY_MEANING = Thresholds(connect=0.5, duplicate=0.92, about=0.7)
# Jaccard of content terms. `about` compares what is left once the differing numbers and
# names are set aside ("Port 8080" and "Port 9090" are both about the port).
BY_WORDS = Thresholds(connect=0.25, duplicate=0.8, about=0.6)

# -- signs that two texts say different things (pure) ---------------------------------------

NEGATIONS = frozenset(
    """
    not no never none nobody nothing nowhere neither nor cannot without
    dont doesnt didnt isnt arent wasnt werent wont cant couldnt shouldnt wouldnt hasnt
    havent hadnt mustnt neednt aint
    """.split()
)  # as `words` gives them: folded, apostrophes dropped ("don't" is dont)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[^\W\d_][\w]*")
_SENTENCE_END = (".", "!", "?", ":", ";", "\n", "-", "*", "•", "(")


# The readings below are pure functions of a text, asked of the same texts again and again
# (a memory is a candidate for every write near it): each keeps its last answers.
_READ = functools.lru_cache(maxsize=2048)


@_READ
def numbers(text: str) -> frozenset[str]:
    """The numbers a text states (`3.5`, `8080`, `2026`)."""
    return frozenset(_NUMBER.findall(text))


@_READ
def names(text: str) -> frozenset[str]:
    """Names, by their capitals: capitalised words inside a sentence, and anywhere a word
    with a capital past its first letter (PostgreSQL, API). A sentence's first word is no
    name by its capital alone ("Deploys run on Fridays")."""
    found = set()
    for match in _WORD.finditer(text):
        word = match.group()
        if len(word) < 2 or not word[0].isupper():
            continue
        if not _opens_sentence(text, match.start()) or any(c.isupper() for c in word[1:]):
            found.add(word)
    return frozenset(found)


def _opens_sentence(text: str, start: int) -> bool:
    """Whether the word at `start` opens a sentence: the first non-space before it ends
    one. (Looked for backwards from `start`, not by stripping all that precedes it, which
    made a long text's names cost the square of its length.)"""
    if start == 0:
        return True
    before = start - 1
    while before >= 0 and text[before].isspace():
        before -= 1
    return before >= 0 and text[before] in _SENTENCE_END


@_READ
def negated(text: str) -> bool:
    """Whether the text holds a negation word (English: not, never, don't, ...)."""
    return any(word in NEGATIONS for word in words(text))


def difference(
    text: str, other: str, key: str | None = None, other_key: str | None = None
) -> str | None:
    """A sign that `text` and `other` say different things, or None: the same key with
    another text, a negation in one only, or another number or name in place of one."""
    if key is not None and key == other_key and _norm(text) != _norm(other):
        return f"same key {key}, another text"
    if negated(text) != negated(other):
        return "negation in " + ("this one" if negated(text) else "the other")
    for kind, found in (("number", numbers), ("name", names)):
        mine = {value.casefold(): value for value in found(text)}
        theirs = {value.casefold(): value for value in found(other)}
        if mine.keys() - theirs.keys() and theirs.keys() - mine.keys():
            said = mine[min(mine.keys() - theirs.keys())]
            instead = theirs[min(theirs.keys() - mine.keys())]
            return f"{kind} {said} vs {instead}"
    return None


@_READ
def content_terms(text: str) -> frozenset[str]:
    """The stemmed words that say what a text is about: no stopwords, no negations."""
    return frozenset(
        term
        for word, term in zip(words(text), index_terms(text), strict=True)
        if word not in STOPWORDS and word not in NEGATIONS
    )


@_READ
def frame_terms(text: str) -> frozenset[str]:
    """Content terms without numbers and names: what a text is about, whatever it states."""
    named = {name.casefold() for name in names(text)}
    return frozenset(
        term
        for word, term in zip(words(text), index_terms(text), strict=True)
        if word not in STOPWORDS and word not in NEGATIONS and word not in named
        and not any(c.isdigit() for c in word)
    )  # fmt: skip


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


# -- finding and sorting candidates ---------------------------------------------------------


@dataclass(frozen=True)
class _Said:
    """What a text says, as the judgements compare it (computed once per text)."""

    memory: Memory
    content: frozenset[str]
    frame: frozenset[str]

    @classmethod
    def of(cls, memory: Memory) -> _Said:
        return cls(memory, content_terms(memory.text), frame_terms(memory.text))


@dataclass(frozen=True)
class _Judged:
    memory: Memory
    similarity: float  # cosine, or Jaccard of content terms without vectors
    list: str
    sign: str | None = None
    by_key: bool = False  # the same key: the surest sign, shown first


def suggestions(
    tx: StoreReader,
    memory: Memory,
    at: str,
    nearest: list[tuple[Memory, float]] | None = None,
) -> Suggestions:
    """The suggestions for `memory`, just written in `tx`: the non-empty lists only.

    `nearest`: the active memories nearest by meaning with their cosine, when the service
    embeds; without it, candidates come from a full-text search of the memory's words.
    """
    answer: Suggestions = {}
    if memory.status != "active":
        return answer
    notebooks: dict[str, Notebook | None] = {}
    by_meaning = nearest is not None
    candidates = nearest if nearest is not None else by_words(tx, memory, at)
    linked = {end for link in tx.links(memory.id) for end in (link.source_id, link.target_id)}
    disputed = set(tx.disputed_with([memory.id]).get(memory.id, []))
    judged: list[_Judged] = []
    seen = {memory.id} | linked | disputed
    mine = _Said.of(memory)
    for other in _same_key(tx, memory, at):
        if other.id not in seen and _same_domain(tx, memory, other, notebooks):
            seen.add(other.id)
            sign = difference(memory.text, other.text, memory.key, other.key)
            if sign:
                alike = jaccard(mine.content, content_terms(other.text))
                judged.append(_Judged(other, alike, LISTS[0], sign, by_key=True))
    for other, score in candidates:
        if other.id in seen or other.status != "active":
            continue
        seen.add(other.id)
        verdict = _judge(tx, mine, _Said.of(other), score if by_meaning else None, notebooks)
        if verdict is not None:
            judged.append(verdict)

    def listed(name: str) -> list[Suggested]:
        chosen = sorted(
            (j for j in judged if j.list == name), key=lambda j: (not j.by_key, -j.similarity)
        )
        return [_view(tx, j, notebooks) for j in chosen[:LIMIT]]

    if contradicts := listed(LISTS[0]):
        answer["possible_contradicts"] = contradicts
    if duplicates := listed(LISTS[1]):
        answer["possible_duplicates"] = duplicates
    if connections := listed(LISTS[2]):
        answer["suggested_connections"] = connections
    rules = applicable_rules(tx, memory, at)
    if rules:
        answer["applicable_rules"] = [_rule_view(rule) for rule in rules]
    return answer


def _judge(
    tx: StoreReader,
    mine: _Said,
    theirs: _Said,
    cosine: float | None,
    notebooks: dict[str, Notebook | None],
) -> _Judged | None:
    """Which list `theirs` belongs in, if any; `cosine` is None on full text alone."""
    memory, other = mine.memory, theirs.memory
    words_alike = jaccard(mine.content, theirs.content)
    similarity = words_alike if cosine is None else cosine

    def passes(by_meaning: float, by_words: float) -> bool:  # either measure may hold
        return (cosine is not None and cosine >= by_meaning) or words_alike >= by_words

    sign = difference(memory.text, other.text, memory.key, other.key)
    if sign is not None:
        frame_alike = jaccard(mine.frame, theirs.frame)
        about = frame_alike >= BY_WORDS.about or (cosine or 0.0) >= BY_MEANING.about
        if about and _same_domain(tx, memory, other, notebooks):
            return _Judged(other, similarity, LISTS[0], sign)
    elif _repeats(cosine, words_alike):
        return _Judged(other, similarity, LISTS[1])
    if passes(BY_MEANING.connect, BY_WORDS.connect):
        return _Judged(other, similarity, LISTS[2])
    return None


def _repeats(cosine: float | None, words_alike: float) -> bool:
    """Whether two texts showing no sign of a difference say the same thing: by meaning
    or by their content words (either measure may hold)."""
    by_meaning = cosine is not None and cosine >= BY_MEANING.duplicate
    return by_meaning or words_alike >= BY_WORDS.duplicate


def says_the_same(
    memory: Memory, other: Memory, cosine: float | None, words_alike: float | None = None
) -> float | None:
    """How alike `other` is to `memory` when a write of `memory` would list it among its
    `possible_duplicates` (the same rule and thresholds: duplicates.py groups by it), else
    None. `cosine` is None on full text alone; `words_alike`, the overlap of their content
    terms, when the caller has it. The answer is the cosine, else the overlap."""
    if words_alike is None:
        words_alike = jaccard(content_terms(memory.text), content_terms(other.text))
    if not _repeats(cosine, words_alike):  # the cheaper test first
        return None
    if difference(memory.text, other.text, memory.key, other.key) is not None:
        return None
    return words_alike if cosine is None else cosine


def by_words(tx: StoreReader, memory: Memory, at: str) -> list[tuple[Memory, float]]:
    """Active memories sharing the memory's content words, best first (BM25, not used)."""
    chosen = [w for w in dict.fromkeys(words(memory.text)) if w not in STOPWORDS]
    if not chosen:
        return []
    query = SearchQuery(text=" ".join(chosen[:QUERY_WORDS]), limit=CANDIDATES, alive_at=at)
    return tx.search(query)


def _same_key(tx: StoreReader, memory: Memory, at: str) -> list[Memory]:
    if memory.key is None:
        return []
    return [
        m
        for m in tx.memories_with_key(memory.key, None)
        if m.id != memory.id and m.status == "active" and not m.expired(at)
    ]


def _notebook(
    tx: StoreReader, notebook_id: str, notebooks: dict[str, Notebook | None]
) -> Notebook | None:
    if notebook_id not in notebooks:
        notebooks[notebook_id] = tx.get_notebook(notebook_id)
    return notebooks[notebook_id]


def _same_domain(
    tx: StoreReader, memory: Memory, other: Memory, notebooks: dict[str, Notebook | None]
) -> bool:
    """Contradictions are looked for within a domain; a notebook without one is its own."""
    if memory.notebook_id == other.notebook_id:
        return True
    mine = _notebook(tx, memory.notebook_id, notebooks)
    theirs = _notebook(tx, other.notebook_id, notebooks)
    return bool(mine and theirs and mine.domain and mine.domain == theirs.domain)


def applicable_rules(tx: StoreReader, memory: Memory, at: str) -> list[Memory]:
    """The active rules binding the memory's notebook: its own and the workspace-wide ones
    (the same rules recall lists; no rule scope names a domain yet), gravest first."""
    own = SearchQuery(text="", limit=RULES + 1, kinds=("rule",), alive_at=at,
                      notebook_ids=(memory.notebook_id,))  # fmt: skip
    found: dict[str, Memory] = {}
    for query in (own, replace(own, notebook_ids=None, scopes=("workspace",))):
        found.update((m.id, m) for m, _ in tx.search(query) if m.id != memory.id)
    graver = sorted(found.values(), key=lambda m: -_gravity(m))
    return graver[:RULES]


def _gravity(rule: Memory) -> int:
    return SEVERITIES.index(rule.severity) + 1 if rule.severity in SEVERITIES else 0


def snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…"


def _view(tx: StoreReader, judged: _Judged, notebooks: dict[str, Notebook | None]) -> Suggested:
    other = judged.memory
    notebook = _notebook(tx, other.notebook_id, notebooks)
    view: Suggested = {
        "id": other.id,
        "kind": other.kind,
        "notebook": notebook.name if notebook else other.notebook_id,
        "text": snippet(other.text),
        "similarity": round(judged.similarity, 2),
    }
    if judged.sign:
        view["sign"] = judged.sign
    return view


def _rule_view(rule: Memory) -> RuleLine:
    return {"id": rule.id, "severity": rule.severity, "text": snippet(rule.text)}
