"""The search terms of a text, the same for every store: what a memory is found by.

Agreement by construction: SQLite and PostgreSQL index the terms this module makes, and
both search with the terms it makes of a query, so the two find the same memories for the
same words. Neither database's own word rules (SQLite's Porter tokenizer, PostgreSQL's
English parser, stemmer and stopwords) are used: they disagreed on stems, stopwords,
accents, numbers, e-mail addresses, paths and non-Latin scripts.

A term is made in four steps:
1. Unicode compatibility forms folded (`ﬁ` is `fi`, full-width letters plain), case folded
   (`Straße` is `strasse`), accents of Latin, Greek and Cyrillic letters dropped (`café`
   is `cafe`); an apostrophe inside a word is dropped (`don't` is `dont`).
2. Words are runs of letters, digits and combining marks; anything else separates them
   (`e-mail` is `e mail`, `snake_case` is `snake case`, `3.5` is `3 5`).
3. Each word is stemmed with the Snowball English stemmer (`deployment`, `deploying` and
   `deployed` are all `deploy`), cut at MAX_TERM characters.
4. A query drops stopwords (`the`, `was`) unless it holds nothing else; an index keeps them.

The stemmer is the pure-Python `snowballstemmer`, pinned, so every process that writes to
or searches one store makes the same terms (the folding follows the Unicode tables of the
running Python, which change only for rare characters). Changing any rule here changes
what stored indexes hold: it needs a migration that re-indexes (REINDEX_AFTER in
store/sqlite.py and store/postgres.py).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import cache, lru_cache

# Longer words are cut: PostgreSQL refuses a lexeme over 2,047 bytes, and no one types one.
MAX_TERM = 100

# Words too common to say what a memory is about; dropped unless nothing else is left.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves
    """.split()
)

# Letters that carry their accent in the letter itself, not as a combining mark.
_UNMARKED = str.maketrans({"ø": "o", "ł": "l", "đ": "d", "ħ": "h", "ı": "i"})
# The combining accents of Latin, Greek and Cyrillic letters (other scripts' marks are
# part of their letters and stay).
_ACCENTS = re.compile("[\u0300-\u036f]")
_APOSTROPHE = re.compile(r"(?<=\w)['’](?=\w)")
_ASCII_WORD = re.compile(r"[a-z0-9]+")
_stemmers = threading.local()  # a Snowball stemmer keeps state while it works


def index_terms(text: str | None) -> list[str]:
    """Every term of `text` in order, repeats kept: what a store indexes."""
    if not text:
        return []
    return [_stem(word) for word in words(text)]


def query_terms(text: str) -> list[str]:
    """The distinct terms of a query, stopwords dropped unless all its words are stopwords."""
    found = list(dict.fromkeys(words(text)))
    content = [w for w in found if w not in STOPWORDS]
    return list(dict.fromkeys(_stem(w) for w in content or found))


def index_text(text: str | None) -> str:
    """The terms of `text` joined by spaces: what SQLite's full-text index is given."""
    return " ".join(index_terms(text))


def words(text: str) -> list[str]:
    """The folded words of `text` (steps 1 and 2), not yet stemmed."""
    if text.isascii():  # most text: nothing to fold but case, and no marks (same words)
        return _ASCII_WORD.findall(_APOSTROPHE.sub("", text.lower()))
    return unicode_words(text)


def unicode_words(text: str) -> list[str]:
    """`words` for any text: compatibility forms, case and Latin accents folded."""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_UNMARKED)
    plain = unicodedata.normalize("NFC", _ACCENTS.sub("", unicodedata.normalize("NFD", folded)))
    return _word_pattern().findall(_APOSTROPHE.sub("", plain))


@cache
def _word_pattern() -> re.Pattern[str]:
    """Runs of letters, digits and marks. `\\w` alone splits words of scripts whose vowels
    are marks (Devanagari, Thai, ...), so the marks are listed; done once, on first use."""
    marks = "".join(
        re.escape(chr(c)) for c in range(0x20000) if unicodedata.category(chr(c))[0] == "M"
    )
    return re.compile(f"(?:[^\\W_]|[{marks}])+")


def _stem(word: str) -> str:
    # Every English suffix is letters, so a word ending in a digit keeps its form: a port,
    # a version or an id costs no stemming (20 us each in pure Python) and no cache room.
    if word[-1].isdigit():
        return word[:MAX_TERM]
    return _stemmed(word)


@lru_cache(maxsize=65_536)
def _stemmed(word: str) -> str:
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        # Imported on the first word, not with the store: the package imports the stemmers
        # of all its 30 languages (15 ms), which a command that reads no text never needs.
        from snowballstemmer.english_stemmer import (  # type: ignore[import-untyped]
            EnglishStemmer,
        )

        stemmer = _stemmers.english = EnglishStemmer()
    return str(stemmer.stemWord(word))[:MAX_TERM]
